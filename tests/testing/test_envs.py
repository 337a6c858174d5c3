"""The env-contract kit checked against envs with planted bugs: each bug is caught, by the
check that names it, with a counterexample; a correct env passes in every form the kit
accepts (id, factory, instance; a TextEnv or a plain gymnasium.Env)."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.spaces import Text

from rlenvs.core import DatasetSource, Judgement, Task, TextEnv, UnicodeText
from rlenvs.testing.envs import CHECKS, GARBAGE_CORPUS, NORMAL_REPLIES, EnvReport, check_text_env

REPO = Path(__file__).resolve().parents[2]
WORDS = (
    "apple river stone cloud maple tiger lemon piano candle forest mirror rocket garden "
    "violet harbor pepper silver anchor marble falcon orbit canyon meadow lantern copper "
    "thunder velvet walnut glacier saddle"
).split()
WORD_ENV_ID = "rlenvs_test/Word-v0"
WRONG_ORACLE_ENV_ID = "rlenvs_test/WrongOracle-v0"


# --- a correct env -------------------------------------------------------------------------


@dataclass(frozen=True)
class WordTask(Task):
    word: str


def word_task(index: int, word: str) -> WordTask:
    return WordTask(task_id=f"words/{index}", prompt=f"Reply with the word {word!r} and nothing else.", word=word)


class WordEnv(TextEnv[WordTask]):
    """Reply with the word the prompt names: small enough to read, complete enough to pass."""

    def __init__(self, max_turns: int = 1, render_mode: str | None = None) -> None:
        tasks = DatasetSource([word_task(i, word) for i, word in enumerate(WORDS)], name="words")
        super().__init__(tasks, max_turns=max_turns, render_mode=render_mode)

    def task_from_row(self, row: Mapping[str, Any]) -> WordTask:
        return word_task(-1, str(row["word"]))

    def judge(self, task: WordTask, reply: str) -> Judgement:
        if reply.strip() == task.word:
            return Judgement(reward=1.0, resolved=True, correct=True, stop_reason="answered")
        return Judgement(reward=0.0, resolved=False, correct=False, feedback=f"Reply with {task.word!r} only.")

    def oracle_reply(self, task: WordTask, turn: int) -> str:
        return task.word


class PlainGuessEnv(gym.Env):
    """Guess a digit in at most five tries, with hints: a plain gymnasium.Env with text spaces,
    no oracle, no reward_range, no max_turns and no chat convention."""

    metadata = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space = UnicodeText()
        self.action_space = UnicodeText()
        self.secret: int | None = None
        self.tries = 0
        self.over = False

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        self.secret, self.tries, self.over = int(self.np_random.integers(10)), 0, False
        return f"Guess my digit (puzzle {self.np_random.integers(1 << 30)}).", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        if not isinstance(action, str):
            raise TypeError(f"step expects the guess as a str, got {type(action).__name__}")
        if self.secret is None or self.over:
            raise ResetNeeded("the episode has ended or not begun: call reset()")
        self.tries += 1
        guess = action.strip()
        right = guess == str(self.secret)
        self.over = right or self.tries >= 5
        # isascii: "²".isdigit() is True but int("²") raises (the kit's garbage check found that here).
        number = guess.isascii() and guess.isdigit()
        hint = "" if self.over else ("higher" if number and int(guess) < self.secret else "try again")
        return hint, float(right), right, self.over and not right, {"tries": self.tries}


# --- planted bugs, one per env --------------------------------------------------------------


class AsciiOnlyEnv(WordEnv):
    """Bug: the verifier encodes the reply as ASCII, so unicode crashes step."""

    def judge(self, task: WordTask, reply: str) -> Judgement:
        reply.encode("ascii")
        return super().judge(task, reply)


class TwoCharacterCrashEnv(WordEnv):
    """Bug: a reply of exactly two characters crashes the verifier (no corpus reply has two)."""

    def judge(self, task: WordTask, reply: str) -> Judgement:
        if len(reply) == 2:
            raise IndexError("two-character replies are not handled")
        return super().judge(task, reply)


class DoubleRewardEnv(WordEnv):
    """Bug: rewards 2.0 while declaring reward_range (0, 1); `step` is overridden because
    TextEnv's own step refuses an out-of-range reward."""

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, _reward, terminated, truncated, info = super().step(action)
        return obs, 2.0, terminated, truncated, info


class GlobalRandomEnv(WordEnv):
    """Bug: draws the task with Python's global random module instead of self.np_random."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        return super().reset(seed=seed, options=options or {"task_index": random.randrange(len(WORDS))})


class OneTaskEnv(WordEnv):
    """Bug: ignores the seed altogether and always poses the first task."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        return super().reset(seed=seed, options=options or {"task_index": 0})


class WrongOracleEnv(WordEnv):
    """Bug: the oracle misspells the word."""

    def oracle_reply(self, task: WordTask, turn: int) -> str:
        return super().oracle_reply(task, turn) + "s"


class EndlessEnv(PlainGuessEnv):
    """Bug: declares max_turns=3 but never ends an episode."""

    max_turns = 3

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        obs, reward, *_, info = super().step(action)
        self.over = False
        return obs or "again", reward, False, False, info


class SharedInfoEnv(WordEnv):
    """Bug: returns the same info dict object from every reset and step."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.info: dict[str, Any] = {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        self.info.clear()
        self.info.update(info)
        return obs, self.info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = super().step(action)
        self.info.clear()
        self.info.update(info)
        return obs, reward, terminated, truncated, self.info


class AlphanumericSpaceEnv(WordEnv):
    """Bug: gymnasium's stock Text space, whose members are alphanumeric only."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.action_space = Text(max_length=1000)


class BrokenRenderEnv(WordEnv):
    """Bug: render raises."""

    def render(self) -> str | None:
        raise RuntimeError("renderer not wired up")


for env_id, env_class in ((WORD_ENV_ID, WordEnv), (WRONG_ORACLE_ENV_ID, WrongOracleEnv)):
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=env_class)


def failed(report: EnvReport) -> set[str]:
    return {check.name for check in report.failures}


# --- a correct env passes ------------------------------------------------------------------


def test_a_correct_env_passes_every_check_by_id() -> None:
    report = check_text_env(WORD_ENV_ID)
    assert report.passed, f"\n{report}"
    assert [check.name for check in report.checks] == ["make", *CHECKS]
    assert not any(check.skipped for check in report.checks), f"\n{report}"
    assert str(report).startswith(f"{WORD_ENV_ID}: passed {len(CHECKS) + 1} checks (0 skipped)")


def test_a_correct_env_passes_as_an_instance_and_a_factory() -> None:
    instance = WordEnv(max_turns=2)
    instance.reset(seed=0)
    instance.step("a first try")
    state = (instance.task, instance.turn, list(instance.transcript))
    by_instance = check_text_env(instance)
    by_factory = check_text_env(lambda: WordEnv(max_turns=2))
    for report in (by_instance, by_factory):
        assert report.passed, f"\n{report}"
        assert report["vector_envs"].skipped and "needs a registered id" in report["vector_envs"].message
        assert report["render_modes"].skipped and not report["oracle_maximality"].skipped
    assert (instance.task, instance.turn, instance.transcript) == state  # the checks worked on copies
    assert "step before reset not checked" in by_instance["misuse_errors"].message
    assert "step before reset not checked" not in by_factory["misuse_errors"].message


def test_a_plain_gymnasium_env_is_held_to_the_generic_checks() -> None:
    report = check_text_env(PlainGuessEnv)
    assert report.passed, f"\n{report}"
    skipped = {check.name for check in report.checks if check.skipped}
    assert skipped == {"oracle_maximality", "chat_messages", "render_modes", "vector_envs"}
    assert "no oracle_action" in report["oracle_maximality"].message


# --- each planted bug is caught by its check -----------------------------------------------


def test_unicode_crash_is_caught_by_garbage_action_totality() -> None:
    report = check_text_env(AsciiOnlyEnv)
    check = report["garbage_action_totality"]
    assert not check.passed
    assert check.message.startswith("step raised UnicodeEncodeError")
    assert "in judge" in check.message  # where the env raised
    (action,) = check.counterexample["actions"]
    assert len(action) == 1 and not action.isascii()  # the shortest failing reply
    assert "counterexample: {'seed': " in str(report)


def test_hypothesis_finds_and_shrinks_a_crash_the_corpus_misses() -> None:
    assert all(len(garbage) != 2 for garbage in GARBAGE_CORPUS)
    check = check_text_env(TwoCharacterCrashEnv)["garbage_action_totality"]
    assert not check.passed and check.message.startswith("step raised IndexError: two-character replies")
    assert len(check.counterexample["actions"][-1]) == 2


def test_out_of_range_reward_is_caught_by_garbage_action_totality() -> None:
    report = check_text_env(DoubleRewardEnv)
    check = report["garbage_action_totality"]
    assert not check.passed
    assert "reward 2.0 outside the declared reward_range (0.0, 1.0)" in check.message
    assert "oracle_maximality" in failed(report)  # 2.0 is not the maximum either


def test_global_random_is_caught_by_seeding_determinism() -> None:
    report = check_text_env(GlobalRandomEnv)
    check = report["seeding_determinism"]
    assert not check.passed and "self.np_random" in check.message
    assert check.counterexample["first"] != check.counterexample["second"]


def test_a_constant_task_is_caught_by_seed_variety() -> None:
    report = check_text_env(OneTaskEnv)
    assert failed(report) == {"seed_variety"}, f"\n{report}"
    check = report["seed_variety"]
    assert f"only 1 distinct task, expected more than 10 of {len(WORDS)}" in check.message


def test_a_wrong_oracle_is_caught_by_oracle_maximality() -> None:
    report = check_text_env(WrongOracleEnv)
    assert failed(report) == {"oracle_maximality"}, f"\n{report}"
    check = report["oracle_maximality"]
    assert check.message.startswith("the oracle earned 0.0 on seed=0, not the maximum reward 1.0")
    assert check.counterexample["seed"] == 0 and check.counterexample["actions"][0].endswith("s")


def test_an_endless_episode_is_caught_by_episode_length_bound() -> None:
    report = check_text_env(EndlessEnv)
    check = report["episode_length_bound"]
    assert not check.passed
    assert check.message.startswith("the episode was not over after 3 steps (max_turns=3)")
    assert check.counterexample["actions"] == ["no idea"] * 3
    assert "garbage_action_totality" in failed(report)  # its loops are bounded too


def test_a_shared_info_dict_is_caught_by_fresh_objects() -> None:
    report = check_text_env(SharedInfoEnv)
    assert report["seeding_determinism"].passed  # a shared dict is not mistaken for unseeded draws
    check = report["fresh_objects"]
    assert not check.passed
    assert "returned as info the same object that reset 1 returned as info" in check.message


def test_a_stock_alphanumeric_text_space_is_caught_by_spaces() -> None:
    report = check_text_env(AlphanumericSpaceEnv)
    check = report["spaces"]
    assert not check.passed and "rlenvs.UnicodeText" in check.message
    assert check.counterexample == NORMAL_REPLIES[0]


def test_an_exception_inside_a_check_is_reported_with_where_it_was_raised() -> None:
    report = check_text_env(lambda: BrokenRenderEnv(render_mode="ansi"))
    check = report["render_modes"]
    assert not check.passed
    assert check.message.startswith("raised RuntimeError: renderer not wired up")
    assert "in render" in check.message
    assert report["spaces"].passed and report["copy_and_pickle"].passed  # the rest still ran


# --- inputs the kit refuses ----------------------------------------------------------------


def test_bad_input_is_an_error_that_names_it() -> None:
    with pytest.raises(ValueError, match="unknown env id 'rlenvs/Nope-v0'.*rlenvs/GSM8K-v1"):
        check_text_env("rlenvs/Nope-v0")
    with pytest.raises(ValueError, match="make_kwargs=.*apply only to an id"):
        check_text_env(WordEnv, make_kwargs={"max_turns": 2})
    with pytest.raises(ValueError, match="skip=\\['oracle'\\] names no check.*oracle_maximality"):
        check_text_env(WORD_ENV_ID, skip=["oracle"])
    with pytest.raises(TypeError, match="got int"):
        check_text_env(3)  # type: ignore[arg-type]


def test_an_env_that_cannot_be_made_fails_make_and_skips_the_rest() -> None:
    report = check_text_env(WORD_ENV_ID, make_kwargs={"max_turns": 0})
    assert not report.passed and failed(report) == {"make"}
    assert "max_turns must be an int >= 1, got 0" in report["make"].message
    assert all(check.skipped for check in report.checks[1:])


def test_skip_leaves_a_check_out() -> None:
    report = check_text_env(WrongOracleEnv, skip=["oracle_maximality"])
    assert report.passed, f"\n{report}"
    assert report["oracle_maximality"].skipped and "skip=" in report["oracle_maximality"].message


def test_the_corpus_covers_what_the_contract_names() -> None:
    assert "" in GARBAGE_CORPUS and any(len(g) >= 100_000 for g in GARBAGE_CORPUS)
    assert any(any(0xD800 <= ord(c) <= 0xDFFF for c in g) for g in GARBAGE_CORPUS)  # lone surrogates
    assert any(any(ord(c) < 32 and c not in "\n\t" for c in g) for g in GARBAGE_CORPUS)  # control characters
    assert any(g.count("{") != g.count("}") for g in GARBAGE_CORPUS)  # unbalanced braces
    assert any("<script>" in g for g in GARBAGE_CORPUS)  # markup
    assert any(ord(c) > 0xFFFF for g in GARBAGE_CORPUS for c in g)  # astral-plane unicode


def test_the_kit_works_without_hypothesis() -> None:
    # A fresh interpreter in which `import hypothesis` fails, as on a machine without it.
    script = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "from rlenvs.testing.envs import check_text_env\n"
        "import tests.testing.test_envs as t\n"
        "report = check_text_env(t.WordEnv, garbage_examples=40)\n"
        "print(report)\n"
        "assert report.passed\n"
        "assert 'from the corpus only (hypothesis is not installed)' in report['garbage_action_totality'].message\n"
        "bug = check_text_env(t.AsciiOnlyEnv)['garbage_action_totality']\n"
        "assert not bug.passed and 'UnicodeEncodeError' in bug.message, bug\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the command line ----------------------------------------------------------------------


def rlenvs_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlenvs.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_check_env_cli_passes_a_correct_env() -> None:
    result = rlenvs_cli("check-env", "rlenvs/GSM8K-v1", "--env-arg", "split=test")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("rlenvs/GSM8K-v1: passed 14 checks (0 skipped)")
    assert "PASS  oracle_maximality" in result.stdout


def test_check_env_cli_fails_a_buggy_env() -> None:
    # 'module:id' imports the module that registers the id, as gym.make does.
    result = rlenvs_cli("check-env", f"tests.testing.test_envs:{WRONG_ORACLE_ENV_ID}", "--seeds", "3", "--no-vector")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL  oracle_maximality" in result.stdout and "counterexample: {'seed': 0" in result.stdout
    assert "SKIP  vector_envs" in result.stdout


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_check_env_cli_rejects_bad_input() -> None:
    unknown = rlenvs_cli("check-env", "rlenvs/Nope-v0")
    assert unknown.returncode == 2 and "unknown env id 'rlenvs/Nope-v0'" in unknown.stderr
    unmakeable = rlenvs_cli("check-env", "rlenvs/GSM8K-v1", "--env-arg", "split=nope")
    assert unmakeable.returncode == 2 and "unknown GSM8K split 'nope'" in unmakeable.stdout
    malformed = rlenvs_cli("check-env", "rlenvs/GSM8K-v1", "--env-arg", "split")
    assert malformed.returncode == 2 and "must look like KEY=VALUE" in malformed.stderr
