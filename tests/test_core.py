"""The contract's building blocks: UnicodeText, task sources and selection, registration."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from dataclasses import FrozenInstanceError, dataclass

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.spaces import Text

import rlenvs
from rlenvs.core import DatasetSource, GeneratorSource, Task, UnicodeText, select_task
from rlenvs.core.registration import EnvEntry, register

# --- UnicodeText ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "hello world\n", "\\boxed{42}", "def f():\n\treturn 1", "中文 😀 −½", "\x00"])
def test_unicode_text_contains_any_string_within_bounds(text: str) -> None:
    assert UnicodeText(100).contains(text)


def test_unicode_text_rejects_non_strings_and_lengths() -> None:
    space = UnicodeText(5, min_length=2)
    assert not space.contains("a") and not space.contains("abcdef")
    assert not space.contains(b"abc") and not space.contains(None) and not space.contains(["abc"])


def test_unicode_text_is_a_text_space_that_copies_and_compares() -> None:
    space = UnicodeText(1000, seed=0)
    assert isinstance(space, Text)
    assert repr(space) == "UnicodeText(min_length=0, max_length=1000)"
    assert space == UnicodeText(1000) and space != UnicodeText(999) and space != Text(1000)
    for clone in (copy.deepcopy(space), pickle.loads(pickle.dumps(space))):
        assert clone == space and clone.sample() == copy.deepcopy(space).sample()


def test_unicode_text_samples_are_members() -> None:
    space = UnicodeText(seed=1)
    samples = [space.sample() for _ in range(50)]
    assert all(space.contains(s) for s in samples)
    assert max(len(s) for s in samples) <= 1024
    assert len(UnicodeText(10).sample(mask=(7, None))) == 7


# --- tasks and selection -------------------------------------------------------------------


@dataclass(frozen=True)
class NumberTask(Task):
    number: int


def number_task(index: int) -> NumberTask:
    rng = np.random.default_rng(index)
    n = int(rng.integers(1000))
    return NumberTask(task_id=f"numbers/{index}", prompt=f"Repeat {n}", number=n)


def from_row(row) -> NumberTask:
    return NumberTask(task_id="custom", prompt=row["prompt"], number=row["number"])


def test_tasks_are_immutable() -> None:
    task = number_task(0)
    with pytest.raises(FrozenInstanceError):
        task.prompt = "changed"  # type: ignore[misc]


def test_dataset_source_get_find_and_errors() -> None:
    source = DatasetSource([number_task(i) for i in range(5)], name="numbers")
    assert len(source) == 5 and source.get(2) == number_task(2)
    assert source.find("numbers/3") == number_task(3)
    with pytest.raises(KeyError, match="ids look like 'numbers/0'"):
        source.find("nope")
    with pytest.raises(IndexError, match="0..4"):
        source.get(5)
    with pytest.raises(ValueError, match="empty"):
        DatasetSource([], name="nothing")


def test_generator_source_rebuilds_tasks_from_their_index() -> None:
    infinite = GeneratorSource(number_task, name="numbers")
    assert not infinite.sized and infinite.get(123) == number_task(123)
    assert infinite.find("numbers/77") == number_task(77)
    with pytest.raises(TypeError, match="infinite"):
        len(infinite)
    with pytest.raises(KeyError, match="numbers/17"):
        infinite.find("other/3")
    sized = GeneratorSource(number_task, name="numbers", size=10)
    assert len(sized) == 10
    with pytest.raises(IndexError):
        sized.get(10)


@pytest.mark.parametrize(
    "source",
    [
        DatasetSource([number_task(i) for i in range(50)], name="numbers"),
        GeneratorSource(number_task, name="numbers"),
    ],
)
def test_select_task_is_seeded_and_follows_options(source) -> None:
    draw = lambda seed, options=None: select_task(source, options, np.random.default_rng(seed), from_row)  # noqa: E731
    assert draw(1) == draw(1)
    assert len({draw(seed).task_id for seed in range(20)}) > 10
    assert draw(0, {"task_index": 7}) == number_task(7)
    assert draw(0, {"task_id": "numbers/9"}) == number_task(9)
    assert draw(0, {"task": {"prompt": "Repeat 5", "number": 5}}).number == 5


# --- registration --------------------------------------------------------------------------


def test_every_catalog_id_is_registered_lazily() -> None:
    for entry in rlenvs.CATALOG:
        spec = gym.spec(entry.id)
        assert isinstance(spec.entry_point, str) and spec.max_episode_steps is None


def test_registration_is_idempotent_and_refuses_clashes() -> None:
    rlenvs.register_envs()
    rlenvs.register_envs()
    entry = rlenvs.CATALOG[0]
    clash = EnvEntry(**{**entry.__dict__, "entry_point": "elsewhere:Env"})
    with pytest.raises(RuntimeError, match="already registered"):
        register([clash])
    with pytest.raises(ValueError, match="namespace"):
        register([EnvEntry(**{**entry.__dict__, "id": "GSM8K-v1"})])


def fresh_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_with_module_prefix_in_a_fresh_interpreter_without_torch() -> None:
    out = fresh_python(
        "import sys, gymnasium as gym\n"
        "env = gym.make('rlenvs:rlenvs/GSM8K-v1', split='test')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(env.step(env.unwrapped.oracle_action())[1], 'torch' in sys.modules)\n"
    )
    assert out.split() == ["1.0", "False"]


def test_import_rlenvs_loads_no_env_module() -> None:
    out = fresh_python("import sys, rlenvs\nprint(any(m.startswith('rlenvs.envs.math') for m in sys.modules))")
    assert out.strip() == "False"


def test_a_make_keyword_typo_names_the_env_keywords() -> None:
    """`gym.make(id, max_turn=2)`: the error names the bad keyword, the close one and every
    keyword the env takes, not Python's bare "__init__() got an unexpected keyword"."""
    with pytest.raises(TypeError) as raised:
        gym.make("rlenvs/Arithmetic-v1", max_turn=2)
    message = str(raised.value)
    assert message.startswith(
        "ArithmeticEnv got an unexpected keyword argument 'max_turn'; did you mean 'max_turns'? "
        "(its keywords: level, max_turns, system_prompt, render_mode)"
    ), message
    with pytest.raises(TypeError, match=r"arguments 'lvl', 'colour'; did you mean 'level' for 'lvl'\? \(its keywords"):
        gym.make("rlenvs/Arithmetic-v1", lvl=2, colour="red")
    assert gym.make("rlenvs/Arithmetic-v1", level=2, max_turns=2).unwrapped.max_turns == 2


class _OwnEnv(rlenvs.TextEnv):
    """A user's TextEnv subclass: the keyword check holds for it too."""

    def __init__(self, size: int = 3) -> None:
        super().__init__(DatasetSource([Task("own/0", "say hi")], name="own"))
        self.size = size

    def task_from_row(self, row):
        return Task("own/row", row["prompt"])

    def judge(self, task, reply):
        return rlenvs.Judgement(1.0, resolved=True)

    def oracle_reply(self, task, turn):
        return "hi"


class _AnyKeywords(_OwnEnv):
    def __init__(self, **kwargs) -> None:  # forwards what it gets: any keyword may be right
        super().__init__(size=kwargs.get("size", 3))


def test_the_keyword_check_covers_subclasses_and_copies() -> None:
    with pytest.raises(TypeError, match=r"_OwnEnv got an unexpected keyword argument 'sise'; did you mean 'size'\?"):
        _OwnEnv(sise=4)
    assert _AnyKeywords(size=5, anything=1).size == 5
    env = _OwnEnv(size=4)
    assert copy.deepcopy(env).size == 4 and pickle.loads(pickle.dumps(env)).size == 4
