"""`dataset_env`: a single-turn env from rows of questions and answers and a reward function.

The common case of a user's own env is a data set of questions with their answers and a
function that scores a reply against an answer. Writing a `TextEnv` subclass for it means a
task type, a loader, `task_from_row`, `judge` and `oracle_reply`: 60 lines that are the same
in every such env. `dataset_env` writes them from a description:

    from rlenvs import dataset_env
    from rlenvs.rewards.text import text_answer_score

    CapitalsEnv = dataset_env(
        "CapitalsEnv",
        data="capitals.jsonl",                      # beside this module
        prompt="What is the capital of {country}?",  # a template over a row's fields, or one field's name
        answer="capital",                            # the field holding the gold answer
        reward=text_answer_score,                    # (reply, answer) -> float in [0, 1]
        system_prompt="Answer with the city's name only, as \\\\boxed{City}.",
    )

The result is a real `TextEnv` subclass, not a wrapper: `gym.make` builds it from a string
entry point ("my_pkg.env:CapitalsEnv"), it pickles by reference (AsyncVectorEnv, Ray), its
`reset` chooses tasks by seed, `task_index`, `task_id` or a row of the user's own
(`options["task"]`, in the data's row format), and `oracle_action()` plays the gold reply.

Decisions, and why:

- **The name is explicit and must be the name the class is assigned to, at module level.**
  Pickling and string entry points find a class by module and name; a class that cannot be
  found that way works in one process and fails in the first vector worker. The first
  construction checks it and says what to write.
- **Nothing is read when the module is imported.** `rlenvs list` and entry-point discovery
  import packages; a data set is read on the first construction (once per process, per split
  and file version), so a missing or malformed file fails `gym.make` with the file's name and
  row, not `import`.
- **A relative path is relative to the module that calls `dataset_env`**, not to the working
  directory: a package's data lives beside its code, and `gym.make` runs from anywhere.
- **Every row is checked before the first episode**: its fields (a missing one is named with
  the fields the row has), a non-empty prompt, a gold answer that is a str, a number, or a list
  of them (aliases), no prompt posed twice (a duplicate skews sampling; two golds for one
  prompt make the reward contradict itself), no id used twice. Then, on the first task, the
  reward function must pay 1.0 for the oracle's reply and 0.0 for an empty reply: this catches
  the usual slips (an oracle in another format than the reward reads, arguments swapped so
  that `answer in reply` became `reply in answer`, a reward that always pays) at `gym.make`.
- **A reward function that raises, or returns anything but a number in [0, 1], is an error
  (`RewardFunctionError`), never a silent 0.** The env contract says a reply never makes
  `step` raise, and an env built here keeps it exactly as far as its reward function does. A
  function that raises on some reply is a bug in it; scoring that reply 0 would hide the bug
  while training goes on (and could pay nothing for a right answer the function happened to
  choke on). Raising with the function's name, the task and the reply makes `rlenvs certify`
  and the contract kit (`rlenvs.testing.check_text_env`), which play empty, garbage and 100 KB
  replies, report it before any training does.
- **Ids come from content**: a row's own `id` field where it has one, else a hash of the
  prompt the agent sees and the gold answer. Reordering the file or adding a column renames
  no task, and a row posed through `options["task"]` gets the same id as the same row in the
  file.
- **`max_turns` as every env has it, with the code envs' rule**: a reply the reward function
  pays 1.0 ends the episode; any other reply, while turns remain, earns 0 and gets a
  "try again" message; the last reply earns what the function pays it. An episode's return
  is therefore at most 1.0 (partial credit is not collected once per attempt), and with
  `max_turns=1` (the default) it is exactly the reward of the one reply.

Anything else (several answer fields, a reward that needs other columns, tools, feedback of
its own) is a `TextEnv` subclass; see CONTRIBUTING.md.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import numbers
import os
import string
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.task import DatasetSource, Task

Row = Mapping[str, Any]
RowSource = str | os.PathLike[str] | Sequence[Row] | Callable[[], Iterable[Row]]
"""Where rows come from: a JSONL, JSONL.gz, JSON or Parquet file; the rows themselves; or a
function returning them, called on first use (a Hugging Face data set:
`lambda: datasets.load_dataset("org/name", split="train")`)."""

RETRY_FEEDBACK = "That is not the answer. Try again."
"""The message after a reply that is not paid in full, while turns remain: it says only what
the reward already said, never what the verdict checks."""

_SCALAR_ANSWER = (str, int, float)


class RewardFunctionError(RuntimeError):
    """The reward function (or the oracle) of a `dataset_env` broke its contract on some
    input: it raised, or returned anything but a number in [0, 1] (a str for the oracle)."""


@dataclass(frozen=True)
class AnswerTask(Task):
    """A question and its gold answer (a str, a number, or a tuple of them: aliases)."""

    answer: Any


@dataclass(frozen=True)
class DatasetEnvDefinition:
    """What `dataset_env` was told, checked: the class's `definition`."""

    name: str
    sources: Mapping[str, RowSource] | None
    """Each split's rows, or None where there is one source (`source`) and no splits."""
    source: RowSource | None
    prompt: str
    template_fields: tuple[str, ...] | None
    """The fields a prompt template names; None where `prompt` is a field's name."""
    answer: str
    reward: Callable[[str, Any], Any]
    oracle: Callable[[Any], str] | None
    system_prompt: str | None

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields every row must have."""
        prompt_fields = self.template_fields if self.template_fields is not None else (self.prompt,)
        return tuple(dict.fromkeys((*prompt_fields, self.answer)))


def dataset_env(
    name: str,
    *,
    data: RowSource | Mapping[str, RowSource],
    prompt: str,
    answer: str,
    reward: Callable[[str, Any], float],
    oracle: Callable[[Any], str] | None = None,
    system_prompt: str | None = None,
) -> type[DatasetEnv]:
    """A `TextEnv` class posing each row's prompt and paying `reward(reply, gold_answer)`.

    `name`: the class's name, which it must be assigned to at module level (module docstring).
    `data`: a `RowSource` (a file path, relative to the calling module's folder; a list of
    rows; a function returning rows), or `{split: RowSource}`, which gives the class a `split`
    keyword (default: the first split).
    `prompt`: the field holding the question, or a template naming fields in braces
    (`"What is the capital of {country}?"`; any text with a `{` is a template, `{{` a brace).
    `answer`: the field holding the gold answer: a str, a number, or a list of them (aliases,
    which reach `reward` as a tuple).
    `reward`: `(reply, answer) -> float` in [0, 1], 1.0 meaning right; bools count as 0 and 1.
    One of rlenvs' verifiers fits as it is: `rlenvs.rewards.text.text_answer_score` (short
    text answers, aliases), `rlenvs.rewards.math.math_answer_score` (math answers).
    `oracle`: `answer -> reply`, the gold reply (`oracle_action`, SFT data, self-checks);
    default: the answer boxed, `\\boxed{Paris}` (the first alias), the marked final answer
    rlenvs' verifiers read first and the format their envs' prompts ask for. Pass one where
    the reward reads another format, or the prompt asks for one (it is what SFT data teaches).
    `system_prompt`: the system message of every episode (also a keyword of the class).
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"dataset_env name must be a Python identifier (the class's name), got {name!r}")
    caller = sys._getframe(1).f_globals
    module = caller.get("__name__", "__main__")
    folder = Path(caller["__file__"]).resolve().parent if caller.get("__file__") else Path.cwd()
    if isinstance(data, Mapping):
        if not data or not all(isinstance(split, str) and split for split in data):
            raise ValueError(
                f"{name}: data as a mapping is {{split name: rows}} with at least one split, got keys {list(data)}"
            )
        sources: dict[str, RowSource] | None = {split: _source(name, rows, folder) for split, rows in data.items()}
        source = None
    else:
        sources, source = None, _source(name, data, folder)
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"{name}: prompt must be a field name or a template such as 'Capital of {{country}}?'")
    if not isinstance(answer, str) or not answer:
        raise ValueError(f"{name}: answer must be the name of the field holding the gold answer, got {answer!r}")
    if system_prompt is not None and not isinstance(system_prompt, str):
        raise TypeError(f"{name}: system_prompt must be a str or None, got {type(system_prompt).__name__}")
    _check_callable(name, "reward", reward, ("reply", "answer"), "(reply, answer) -> float in [0, 1]")
    if oracle is not None:
        _check_callable(name, "oracle", oracle, ("answer",), "answer -> the gold reply (str)")
    definition = DatasetEnvDefinition(
        name, sources, source, prompt, _template_fields(name, prompt), answer, reward, oracle, system_prompt
    )
    namespace = {
        "definition": definition,
        "__init__": _constructor(definition),
        "__module__": module,
        "__qualname__": name,
        "__doc__": f"{name}: a single-turn env over {_describe(definition)}, built by rlenvs.dataset_env.",
    }
    return type(name, (DatasetEnv,), namespace)


class DatasetEnv(TextEnv[AnswerTask]):
    """What every `dataset_env` class is; its `definition` says what it reads and how it scores."""

    definition: ClassVar[DatasetEnvDefinition]
    """What `dataset_env` was told (not `spec`, which gymnasium's `make` sets to the registered id's)."""

    def __init__(
        self,
        split: str | None = None,
        max_turns: int = 1,
        system_prompt: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        cls = type(self)
        if not hasattr(cls, "definition"):
            raise TypeError("DatasetEnv is made by rlenvs.dataset_env(...), not constructed or subclassed directly")
        _check_reachable(cls)
        definition = cls.definition
        if definition.sources is not None and split not in definition.sources:
            raise ValueError(f"{definition.name} has no split {split!r}: choose one of {list(definition.sources)}")
        tasks = _tasks(cls, split, _version(_source_of(definition, split)))
        label = definition.name if split is None else f"{definition.name}/{split}"
        super().__init__(
            DatasetSource(tasks, name=label), max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode
        )
        self.split = split

    def task_from_row(self, row: Row) -> AnswerTask:
        return _task(type(self).definition, row, "options['task']")

    def judge(self, task: AnswerTask, reply: str) -> Judgement:
        score = _score(type(self).definition, task, reply)
        info = {"reply_score": score}
        if score >= 1.0:
            return Judgement(score, resolved=True, correct=True, stop_reason="solved", info=info)
        if self.turn < self.max_turns:
            return Judgement(0.0, resolved=False, correct=False, feedback=RETRY_FEEDBACK, info=info)
        return Judgement(score, resolved=False, correct=False, info=info)

    def oracle_reply(self, task: AnswerTask, turn: int) -> str:
        return _oracle_reply(type(self).definition, task)


# --- the class --------------------------------------------------------------------------------


def _constructor(definition: DatasetEnvDefinition) -> Callable[..., None]:
    """The class's `__init__`, with its definition's defaults in its signature (what `rlenvs info`
    shows and what a keyword typo is checked against); `split` only where there are splits."""
    if definition.sources is None:

        def one_source(
            self: DatasetEnv,
            max_turns: int = 1,
            system_prompt: str | None = definition.system_prompt,
            render_mode: str | None = None,
        ) -> None:
            DatasetEnv.__init__(self, None, max_turns, system_prompt, render_mode)

        return one_source
    first = next(iter(definition.sources))

    def with_splits(
        self: DatasetEnv,
        split: str = first,
        max_turns: int = 1,
        system_prompt: str | None = definition.system_prompt,
        render_mode: str | None = None,
    ) -> None:
        DatasetEnv.__init__(self, split, max_turns, system_prompt, render_mode)

    return with_splits


def _source_of(definition: DatasetEnvDefinition, split: str | None) -> RowSource:
    if definition.sources is None:
        assert definition.source is not None
        return definition.source
    assert split is not None
    return definition.sources[split]


def _check_reachable(cls: type[DatasetEnv]) -> None:
    found = getattr(sys.modules.get(cls.__module__), cls.__qualname__, None)
    if found is not cls:
        raise TypeError(
            f"{cls.__qualname__} from dataset_env({cls.__qualname__!r}) is not the module-level name "
            f"{cls.__module__}.{cls.__qualname__}: write `{cls.__qualname__} = dataset_env({cls.__qualname__!r}, ...)` "
            "at the top level of its module, so that gym.make's entry point and pickling (vector envs, Ray) find it"
        )


def _describe(definition: DatasetEnvDefinition) -> str:
    def one(source: RowSource) -> str:
        return str(source) if isinstance(source, (str, os.PathLike)) else type(source).__name__

    if definition.sources is None:
        assert definition.source is not None
        return one(definition.source)
    return ", ".join(f"{split}: {one(source)}" for split, source in definition.sources.items())


# --- checking what dataset_env was given ----------------------------------------------------------


def _source(name: str, data: Any, folder: Path) -> RowSource:
    if isinstance(data, (str, os.PathLike)):
        path = Path(data).expanduser()
        return path if path.is_absolute() else folder / path
    if callable(data) or (isinstance(data, Sequence) and not isinstance(data, (str, bytes))):
        return data
    raise TypeError(
        f"{name}: data must be a path to a JSONL, JSON or Parquet file, a list of rows (dicts), a function "
        f"returning rows, or {{split: one of those}}; got {type(data).__name__}"
    )


def _check_callable(name: str, what: str, function: Any, arguments: tuple[str, ...], shape: str) -> None:
    if not callable(function):
        raise TypeError(f"{name}: {what} must be a function {shape}, got {type(function).__name__}")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # a builtin without a signature: its first call tells
    try:
        signature.bind(*arguments)
    except TypeError as error:
        raise TypeError(f"{name}: {what}={_function_name(function)} must take {shape}, but {error}") from None


def _template_fields(name: str, prompt: str) -> tuple[str, ...] | None:
    """The fields a template names (None where `prompt` is a field name): plain names only,
    so that a row's text never decides which attribute of which object is formatted."""
    if "{" not in prompt:
        return None
    try:
        parsed = list(string.Formatter().parse(prompt))
    except ValueError as error:
        raise ValueError(
            f"{name}: prompt template {prompt!r} does not parse ({error}); write a brace as {{{{"
        ) from None
    fields = [field for _, field, _, _ in parsed if field is not None]
    bad = [field for field in fields if not field or not field.replace("-", "_").replace(" ", "_").isidentifier()]
    if bad or not fields:
        raise ValueError(
            f"{name}: prompt template {prompt!r} must name row fields in braces, as in 'Capital of {{country}}?'"
            + (f"; {bad} are not field names (no positions, attributes or indices)" if bad else "")
        )
    return tuple(dict.fromkeys(fields))


def _function_name(function: Any) -> str:
    return getattr(function, "__qualname__", None) or repr(function)


# --- reading the data -------------------------------------------------------------------------------


def _version(source: RowSource | None) -> tuple[str, int, int] | None:
    """Part of the cache key: a file's path, mtime and size, so an edited file is read again."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(
                f"data file {path} not found (a relative data= path is read beside the module that calls dataset_env); "
                "for an installed package, declare the file as package data in its pyproject.toml"
            )
        stat = path.stat()
        return (str(path), stat.st_mtime_ns, stat.st_size)
    return None


@functools.lru_cache(maxsize=64)
def _tasks(cls: type[DatasetEnv], split: str | None, version: Any) -> tuple[AnswerTask, ...]:
    """Every task of `split`, each row checked, and the reward and oracle tried on the first."""
    definition = cls.definition
    source = _source_of(definition, split)
    label = definition.name if split is None else f"{definition.name} split {split!r}"
    tasks: list[AnswerTask] = []
    by_prompt: dict[str, str] = {}
    by_id: dict[str, str] = {}
    for row, where in _rows(source, label):
        task = _task(definition, row, where)
        for seen, key, what in ((by_prompt, task.prompt, "prompt"), (by_id, task.task_id, "task id")):
            if key in seen:
                raise ValueError(
                    f"{where}: the same {what} as {seen[key]} ({key[:80]!r}); each task must be posed once: "
                    "remove the duplicate row"
                )
            seen[key] = where
        tasks.append(task)
    if not tasks:
        raise ValueError(f"{label}: the data has no rows")
    _try_reward(definition, tasks[0])
    return tuple(tasks)


def _rows(source: RowSource, label: str) -> list[tuple[Any, str]]:
    if isinstance(source, (str, os.PathLike)):
        # Read with the data package's reader (JSONL, JSONL.gz, JSON, Parquet, each row with its
        # file:line), imported here: `import rlenvs` stays free of pyarrow, and core of data.
        from rlenvs.data.loading import read_rows

        return [(row, str(where)) for row, where in read_rows(source)]
    rows = source() if callable(source) else source
    try:
        return [(row, f"{label} row {i}") for i, row in enumerate(rows)]
    except TypeError:
        raise TypeError(f"{label}: data must give rows (dicts), got {type(rows).__name__}") from None


def _task(definition: DatasetEnvDefinition, row: Any, where: str) -> AnswerTask:
    """One row as a task; ValueError naming the row (`where`) and what is wrong with it."""
    if not isinstance(row, Mapping):
        raise TypeError(f"{where}: a row is a dict of fields, got {type(row).__name__}")
    missing = [field for field in definition.fields if field not in row]
    if missing:
        raise ValueError(
            f"{where}: no field {', '.join(map(repr, missing))} (the row has {sorted(map(str, row))}); pass "
            f"dataset_env's prompt= and answer= the field names the data uses"
        )
    if definition.template_fields is None:
        prompt = row[definition.prompt]
        if not isinstance(prompt, str):
            raise ValueError(
                f"{where}: field {definition.prompt!r} (the prompt) must be text, got {type(prompt).__name__}"
            )
    else:
        empty = [field for field in definition.template_fields if row[field] is None]
        if empty:
            raise ValueError(f"{where}: field {', '.join(map(repr, empty))} of the prompt template is null")
        try:
            prompt = definition.prompt.format_map(row)
        except (ValueError, TypeError) as error:
            raise ValueError(
                f"{where}: prompt template {definition.prompt!r} does not format this row: {error}"
            ) from None
    prompt = prompt.strip()
    if not prompt:
        raise ValueError(f"{where}: the prompt is empty")
    gold = _gold(row[definition.answer], definition.answer, where)
    own_id = row.get("id")
    if isinstance(own_id, (str, int)) and not isinstance(own_id, bool) and str(own_id).strip():
        task_id = str(own_id)
    else:
        digest = hashlib.sha1(json.dumps([prompt, gold], ensure_ascii=False).encode()).hexdigest()
        task_id = f"{definition.name}/{digest[:12]}"
    return AnswerTask(task_id=task_id, prompt=prompt, answer=gold)


def _gold(value: Any, field: str, where: str) -> Any:
    """A gold answer as a task holds it: a str, a finite number, or a tuple of them."""
    items = tuple(value) if isinstance(value, (list, tuple)) else (value,)
    good = bool(items) and all(
        isinstance(item, _SCALAR_ANSWER)
        and not isinstance(item, bool)
        and (item.strip() if isinstance(item, str) else math.isfinite(item))
        for item in items
    )
    if not good:
        raise ValueError(
            f"{where}: field {field!r} (the answer) must be a non-empty str, a finite number, or a non-empty list "
            f"of them (aliases), got {value!r}"
        )
    return items if isinstance(value, (list, tuple)) else value


# --- scoring ------------------------------------------------------------------------------------------


def _score(definition: DatasetEnvDefinition, task: AnswerTask, reply: str) -> float:
    """`definition.reward(reply, task.answer)`, held to its contract (module docstring)."""
    function = _function_name(definition.reward)
    try:
        value = definition.reward(reply, task.answer)
    except Exception as error:
        raise RewardFunctionError(
            f"{definition.name}'s reward function {function} raised {type(error).__name__}: {error} on task {task.task_id} "
            f"for the reply {_preview(reply)}; a reward function must return a number in [0, 1] for any reply "
            "(empty, garbage, 100 KB): fix it, then run `rlenvs certify` on the env"
        ) from error
    if isinstance(value, np.bool_):
        value = bool(value)  # `np.isclose(...)`: a verdict, as a bool is
    if not isinstance(value, numbers.Real) or not math.isfinite(value) or not 0.0 <= float(value) <= 1.0:
        raise RewardFunctionError(
            f"{definition.name}'s reward function {function} returned {value!r} on task {task.task_id} for the reply "
            f"{_preview(reply)}: it must return a number in [0, 1] (1.0 for a right answer)"
        )
    return float(value)


def _oracle_reply(definition: DatasetEnvDefinition, task: AnswerTask) -> str:
    if definition.oracle is None:
        gold = task.answer[0] if isinstance(task.answer, tuple) else task.answer
        return f"\\boxed{{{gold}}}"
    reply = definition.oracle(task.answer)
    if not isinstance(reply, str):
        raise RewardFunctionError(
            f"{definition.name}'s oracle {_function_name(definition.oracle)} returned {type(reply).__name__} for task "
            f"{task.task_id}: it must return the gold reply as a str"
        )
    return reply


def _try_reward(definition: DatasetEnvDefinition, task: AnswerTask) -> None:
    """The reward function pays the oracle's reply in full and an empty reply nothing."""
    function = _function_name(definition.reward)
    gold = _oracle_reply(definition, task)
    paid = _score(definition, task, gold)
    if paid < 1.0:
        fix = "pass oracle= a function writing the reply it reads" if definition.oracle is None else "fix one of them"
        raise RewardFunctionError(
            f"{definition.name}: the reward function {function} pays {paid} for the oracle's reply {_preview(gold)} to task "
            f"{task.task_id} (answer {task.answer!r}); the gold reply must earn 1.0: {fix}"
        )
    if (empty := _score(definition, task, "")) != 0.0:
        raise RewardFunctionError(
            f"{definition.name}: the reward function {function} pays {empty} for an empty reply to task {task.task_id}; "
            "a reply that says nothing must earn 0 (are its arguments in the order (reply, answer)?)"
        )


def _preview(reply: str) -> str:
    return repr(reply) if len(reply) <= 80 else f"{reply[:80]!r}... ({len(reply):,} characters)"
