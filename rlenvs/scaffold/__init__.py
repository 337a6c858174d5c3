"""`rlenvs new NAME`: a package of your own env, generated ready to install, test, certify,
serve and train on, with tests that pass as generated.

    rlenvs new letter-count --kind procedural     # ./letter-count/, the env letter-count/LetterCount-v0
    pip install -e ./letter-count && rlenvs list  # the id, with the package letter-count

Three kinds, each modelled on an example package of examples/ but smaller:

- `single`: a single-turn env from a data file of questions and answers and a reward
  function, one `rlenvs.dataset_env` call (as examples/capitals);
- `tool`: a multi-turn env whose replies call a tool before they answer, on `ToolTurns` (as
  examples/org-chart);
- `procedural`: tasks generated per level and index with exact answers, a `ProceduralEnv`
  (as examples/date-shift).

The files are the templates under templates/: `common/` (pyproject.toml with the `rlenvs.envs`
entry point, README.md, train.yaml) and one folder per kind (the package and its tests).
`{{key}}` in a template's text or path is one of the names `Names.values` derives from NAME;
a template naming any other key is refused, so a template cannot ship with a hole in it.

Why the tests pass as generated: a procedural env's tests (the `procedural` and `tool` kinds
generate their tasks) hold its tasks to a pinned tests/task_hashes.json, which must exist for
the `task_hashes` fixture to pass, and a first run with `--rlenvs-pin-hashes` would be a step
the user must know to take. So the generator pins it itself, from the env module it has just written, imported in a child
Python (`_pin_task_hashes`): the file records what the package generates at its birth, and
from then on every change that moves a task fails until the id's `-vN` is bumped and re-pinned.
The child keeps the new module out of the caller's process (a test suite or a notebook would
otherwise hold it under the package's name before it is installed).
"""

from __future__ import annotations

import keyword
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from importlib.util import find_spec
from pathlib import Path

from rlenvs.core.registration import NAMESPACE

TEMPLATES = "templates"
"""The templates' folder in this package (package data: pyproject.toml ships it in the wheel)."""
SUFFIX = ".tmpl"
"""Every template file ends with it (the name it is written under does not), so that the
repository's linters and type checker leave the templates alone."""
PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*")
"""What NAME may be: ASCII letters and digits, words joined by single '-' or '_', a letter first."""
RESERVED_PACKAGES = frozenset({NAMESPACE, "rlenvs_train", "tests"})
"""Import names a generated package must not take: rlenvs' own, and its tests folder's."""
PINNED_HASHES = Path("tests") / "task_hashes.json"


@dataclass(frozen=True)
class Kind:
    """What differs between the kinds beyond their own template folder: the README's and
    train.yaml's few kind-specific lines, and whether the env's tasks are pinned."""

    summary: str
    example_task: str
    """What the generated env asks, the example a user replaces."""
    example_reply: str
    """A Python literal: the reply README's `env.step(...)` shows."""
    train_env_kwargs: str
    """train.yaml's `data.env_kwargs`, as a YAML flow mapping."""
    train_tasks: str
    """train.yaml's `data.num_train_tasks`: null (every row) for a data set, a number for generated tasks."""
    pins_tasks: bool
    """A procedural env: its generated tasks are pinned in tests/task_hashes.json."""
    files_table: str = ""
    """README table rows for the kind's own files, each ending in a newline."""
    tests_also: str = ""
    change_also: str = ""
    version_also: str = ""


PINNED_ROW = "| `tests/task_hashes.json` | the hashes of the first tasks of each level, pinned when the package was generated |\n"
PINNED_RULE = (
    " The pinned tasks hold the package to it: a change to what the generators make fails the tests until the id"
    " is bumped and the new id pinned with `pytest --rlenvs-pin-hashes` (the old id's hashes stay in the file)."
)

KINDS: Mapping[str, Kind] = {
    "single": Kind(
        summary="a single-turn env from a data file of questions and answers and a reward function",
        example_task="for the plural of an English noun",
        example_reply='"\\\\boxed{mice}"',
        train_env_kwargs="{}",
        train_tasks="null",
        pins_tasks=False,
        files_table='| `src/{{package}}/data.jsonl` | the data, one row a line: `{"word": ..., "plural": ...}` |\n',
        change_also=" Your rows go in `data.jsonl`, which installs with the code (package data).",
    ),
    "tool": Kind(
        summary="a multi-turn env whose replies call a tool before they answer",
        example_task="for a warehouse's total stock of some items, each looked up with a tool",
        example_reply='"<stock>apples</stock>"',
        train_env_kwargs="{level: 1, max_turns: 3}",
        train_tasks="64",
        pins_tasks=True,
        files_table=PINNED_ROW,
        tests_also=", its tasks pinned",
        version_also=PINNED_RULE,
    ),
    "procedural": Kind(
        summary="a procedural env, tasks generated per level with exact answers",
        example_task="how many times a letter occurs in a word or a phrase",
        example_reply='"\\\\boxed{3}"',
        train_env_kwargs="{level: 1}",
        train_tasks="64",
        pins_tasks=True,
        files_table=PINNED_ROW,
        tests_also=", its tasks pinned",
        version_also=PINNED_RULE,
    ),
}


@dataclass(frozen=True)
class Names:
    """Every name a generated package takes, derived from NAME: `letter-count` (or
    `letter_count`, `LetterCount`) gives the distribution `letter-count`, the package
    `letter_count`, the env id `letter-count/LetterCount-v0` and the class `LetterCountEnv`."""

    given: str
    words: tuple[str, ...]

    @property
    def distribution(self) -> str:
        """The name pip installs and `rlenvs list` shows (also the default folder and the namespace)."""
        return "-".join(self.words)

    @property
    def package(self) -> str:
        return "_".join(self.words)

    @property
    def namespace(self) -> str:
        return self.distribution

    @property
    def camel(self) -> str:
        return "".join(word[:1].upper() + word[1:] for word in self.words)

    @property
    def env_name(self) -> str:
        return f"{self.camel}-v0"

    @property
    def env_id(self) -> str:
        return f"{self.namespace}/{self.env_name}"

    @property
    def env_class(self) -> str:
        return f"{self.camel}Env"

    def values(self, kind: str) -> dict[str, str]:
        """What each `{{key}}` of the templates becomes."""
        about = KINDS[kind]
        values = {
            "name": self.given,
            "kind": kind,
            "distribution": self.distribution,
            "package": self.package,
            "namespace": self.namespace,
            "camel": self.camel,
            "env_name": self.env_name,
            "env_id": self.env_id,
            "env_class": self.env_class,
            "task_class": f"{self.camel}Task",
            "summary": about.summary,
            "example_reply": about.example_reply,
            "train_env_kwargs": about.train_env_kwargs,
            "train_tasks": about.train_tasks,
            "tests_also": about.tests_also,
            "change_also": about.change_also,
            "version_also": about.version_also,
            "example_task": about.example_task,
        }
        values["files_table"] = render(about.files_table, values, "the kind's README rows")
        return values


def names_of(name: str) -> Names:
    """The names NAME gives (`Names`), or a ValueError that says what is wrong and what to write."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ValueError(
            f"NAME {name!r} is not a package name rlenvs new can use: write ASCII letters and digits, words joined "
            "by '-' or '_', starting with a letter, e.g. letter-count"
        )
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name)  # LetterCount: letter-count
    names = Names(name, tuple(word.lower() for word in re.split(r"[-_]", spaced)))
    package = names.package
    if names.namespace == NAMESPACE or package in RESERVED_PACKAGES:
        raise ValueError(
            f"NAME {name!r} is taken: the `{NAMESPACE}` namespace and package are rlenvs' own; choose another"
        )
    if keyword.iskeyword(package) or package in sys.stdlib_module_names:
        raise ValueError(
            f"NAME {name!r} gives the package {package!r}, a Python keyword or standard module: choose another"
        )
    found = find_spec(package)
    if found is not None:
        raise ValueError(
            f"NAME {name!r} gives the package {package!r}, but a module of that name is already importable here "
            f"({found.origin or 'a namespace package'}): a second would shadow it; choose another NAME, or "
            "pip uninstall the package that provides it"
        )
    return names


@dataclass(frozen=True)
class NewPackage:
    """What `new_package` wrote."""

    root: Path
    names: Names
    kind: str
    files: tuple[Path, ...] = field(default=())
    """Every file written, relative to `root`, in order."""


def new_package(name: str, kind: str = "single", directory: str | Path | None = None) -> NewPackage:
    """Write the package NAME of `kind` into `directory` (default: ./<distribution name>).

    Refuses a folder that exists and is not empty. On any failure, what was written is removed."""
    if kind not in KINDS:
        raise ValueError(f"--kind {kind!r} is not a kind of env rlenvs new writes: choose one of {', '.join(KINDS)}")
    names = names_of(name)
    root = Path(directory if directory is not None else names.distribution).expanduser().absolute()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ValueError(
            f"{root} already exists and is not an empty folder: pass --dir a new or empty folder, or remove it"
        )
    existed = root.exists()
    values = names.values(kind)
    try:
        files = [_write(root, relative, text, values) for relative, text in _templates(kind)]
        if KINDS[kind].pins_tasks:
            _pin_task_hashes(root, names)
            files.append(PINNED_HASHES)
    except BaseException:
        if existed:
            for child in root.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        else:
            shutil.rmtree(root, ignore_errors=True)
        raise
    return NewPackage(root, names, kind, tuple(files))


def render(text: str, values: Mapping[str, str], where: str) -> str:
    """`text` with every `{{key}}` replaced by `values[key]`; a key `values` lacks is a
    template bug, named with `where` it is."""

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"template {where} names {{{{{key}}}}}, which rlenvs new does not fill: {sorted(values)}")
        return values[key]

    return PLACEHOLDER.sub(value, text)


def _templates(kind: str) -> list[tuple[str, str]]:
    """(relative path, text) of every template of `kind`: the common ones, then its own."""
    base = resources.files(__name__) / TEMPLATES
    found: dict[str, str] = {}
    for folder in ("common", kind):
        for path, text in _walk(base / folder, ""):
            if path in found:
                raise KeyError(f"template {path} is both common and {kind}'s: keep one")
            found[path] = text
    return list(found.items())


def _walk(folder: Traversable, prefix: str) -> list[tuple[str, str]]:
    templates: list[tuple[str, str]] = []
    for entry in sorted(folder.iterdir(), key=lambda entry: entry.name):
        relative = f"{prefix}{entry.name}"
        if entry.is_dir():
            templates += _walk(entry, relative + "/")
        elif entry.name.endswith(SUFFIX):
            templates.append((relative.removesuffix(SUFFIX), entry.read_text(encoding="utf-8")))
    return templates


def _write(root: Path, relative: str, text: str, values: Mapping[str, str]) -> Path:
    path = Path(render(relative, values, relative))
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(text, values, relative), encoding="utf-8")
    return path


PIN_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])  # the src folder
from importlib import import_module
from rlenvs.testing.task_hashes import check_pinned
check_pinned(getattr(import_module(sys.argv[2]), sys.argv[3]), sys.argv[4], env_id=sys.argv[5], pin=True)
"""
"""What the child Python runs: import the env module from the folder just written and pin its
tasks, as the package's own `task_hashes` fixture will check them (`check_pinned`)."""


def _pin_task_hashes(root: Path, names: Names) -> None:
    """Write tests/task_hashes.json: the env's task hashes, computed from its module as
    written (module docstring)."""
    child = subprocess.run(
        [
            sys.executable, "-c", PIN_CHILD, str(root / "src"), f"{names.package}.env", names.env_class,
            str(root / PINNED_HASHES), names.env_id,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    if child.returncode != 0:
        raise RuntimeError(
            f"rlenvs new could not pin the task hashes of {names.env_id} (its env module failed to import or to "
            f"generate tasks): {child.stderr.strip()[-2000:]}"
        )
