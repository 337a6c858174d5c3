"""Test scripts that fetch their test tools, run offline: their install steps found and taken out.

Terminal-Bench 1's run-tests.sh and Harbor's tests/test.sh mostly begin by fetching what
runs the tests: curl with apt, uv with its install script (or `pip install uv`), a fresh
environment (`uv venv .tbench-testing` and `source .tbench-testing/bin/activate`, or `uv
init`), the test packages (`uv pip install pytest==8.4.1 numpy`, `uv add pytest`, `pip
install ...`, `uvx --with pytest==8.4.1 pytest`), then run pytest (`uv run pytest ...`,
`pytest ...`, `python -m pytest ...`). The sandbox has no network when the tests run, and
all of that only gets the packages. So rather than match one script line for line, each
line of a script is read for what it does (`offline_runner`):

- a step that only fetches tools (apt-get update, apt-get install of curl or Python itself,
  uv's installer, `pip install uv`, `uv venv`, `python3 -m venv`, activating a venv, `uv
  init`, putting ~/.local/bin on PATH) becomes `:`, so `if`/`fi` around it still parse;
- an install of test packages (`uv pip install`, `uv add`, `pip install`, `python3 -m pip
  install`, and `uvx --with`) becomes `:` too, and what it names joins `requirements`: the
  loader installs those when the folder loads, from PyPI, into the verdict's own packages
  (rlenvs.images.verdict_packages) on the backends that build images, or checks that the
  host's python3 has them;
- a run of pytest through uv (`uv run pytest`, `uvx ... pytest`) or through the venv
  (`pytest`, `python -m pytest`) becomes `python3 -m pytest` with the same arguments, but
  `--ctrf FILE` (a JSON report the reward does not read, written by a plugin the reward
  does not need); `uv run CMD` becomes CMD;
- every other line stays as it is, the reward lines of a Harbor script and the working-folder
  check of Terminal-Bench's included, and the file keeps its line numbers.

What a line does is read from its words, not its spelling: options that change nothing
offline (`-y`, `-q`, `--no-cache-dir`, redirections to /dev/null) may be there or not. A
line that fetches anything else (apt-get install of other packages, `pip install -r
file`, a URL, another host) is not one of these and stays, for the loader's network check
to refuse by line. A script with none of these steps is left alone (None). What differs
from running the original: the tests run on the image's python3 (a `uv venv -p 3.12` does
not pick another Python), with the image's site packages visible after the verdict's own.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

OFFLINE_NOTE = "# rlenvs, offline:"
"""What a taken-out step becomes: `:` and this note with the step's text."""
_COMMENT = re.compile(r"(^|\s)#.*$")
_QUIET = re.compile(r"\s*(\d?>>?\s*/dev/null|2>&1|\|\|\s*true)")
"""Redirections that only silence a step (and `|| true`): no part of what it does."""
_APT_TOOLS = frozenset(
    ("curl", "ca-certificates", "python3", "python3-pip", "python3-venv", "python-is-python3", "python3-pytest")
)
"""What an apt-get install fetches only to run the tests: curl for uv's installer, Python, and
Debian's pytest (the verdict brings its own)."""
_PROVISIONING = tuple(
    re.compile(pattern)
    for pattern in (
        r"(sudo )?apt(-get)? update( -y)?( -qq?)?",
        r"curl( -[A-Za-z]+)* (--proto '?=https'? )?(--tlsv1\.2 )?https://astral\.sh/uv/([\w.]+/)?install\.sh \| (sh|bash)",
        r"wget -q?O- https://astral\.sh/uv/([\w.]+/)?install\.sh \| (sh|bash)",
        r'(source|\.) "?(\$HOME|\$\{HOME\}|~|/root)/\.local/bin/env"?',
        r'export PATH="?(\$HOME|\$\{HOME\}|~|/root)/\.(local|cargo)/bin:\$PATH"?',
        r"(python3?(\.\d+)? -m )?pip3? install( --no-cache-dir| -q| --quiet| --break-system-packages| -U| --upgrade)* uv(==[\w.]+)?",
        r"uvx? --version",
        r"(command -v|which) uv",
        r"uv venv( (-p|--python)[ =]\S+| --seed| --clear| -q| --quiet)*( \S+)?( (-p|--python)[ =]\S+)*",
        r"python3?(\.\d+)? -m venv( --\w[\w-]*)* \S+",
        r"(source|\.) \"?\S+/bin/activate\"?",
        r"uv init( --\w[\w-]*| \S+)*",
        r"uv sync( --\w[\w-]*)*",
    )
)
"""Steps that only fetch the test tools: each becomes `:`."""
_INSTALL = re.compile(r"(?:uv pip install|uv add|(?:python3?(?:\.\d+)? -m )?pip3? install)(?:\s+(?P<words>.*))?")
_INSTALL_OPTIONS = frozenset(
    ("-q", "--quiet", "--no-cache-dir", "--system", "--break-system-packages", "-U", "--upgrade", "--dev",
     "--no-warn-script-location", "--disable-pip-version-check", "--root-user-action=ignore")
)  # fmt: skip
"""Options of an install step that change nothing of what it installs."""
_UVX_PYTEST = re.compile(r"\buvx(?P<options>(\s+(-p|--python|-w|--with)[ =]\S+)*)\s+pytest\b")
_UV_RUN = re.compile(r"\buv run(?P<options>(\s+(--with|-w)[ =]\S+|\s+--no-project|\s+--active|\s+-q)*)\s+")
_PYTHON_PYTEST = re.compile(r"(?<![\w./-])python3?(\.\d+)? -m pytest\b")
_BARE_PYTEST = re.compile(r"(^|(?<=[;&|(]\s)|(?<=[;&|(])|(?<=\bthen\s)|(?<=\bdo\s)|(?<=\btime\s))pytest(?=\s|$)")
_CTRF = re.compile(r"\s--ctrf[ =]\S+")
_TEST_TOOLS = frozenset(("pytest", "pytest-json-ctrf"))
"""What the scripts fetch only to run the tests: pytest (the verdict brings its own, or the
host's) and the plugin behind `--ctrf`, which the rewritten line no longer asks for."""


@dataclass(frozen=True)
class OfflineRunner:
    """What replaces a recognised test script: the script, and what its install steps named."""

    script: str
    packages: tuple[str, ...]
    """The distributions it installs besides pytest and its plugins, lower-case with `_` for
    `-` (`numpy`, `scikit_learn`): the host's python3 must have them."""
    plugins: tuple[str, ...] = ()
    """pytest plugins among them (`pytest_timeout`)."""
    requirements: tuple[str, ...] = ()
    """Every requirement as the script wrote it (`pytest==8.4.1`, `numpy==2.1.0`,
    `pytest-timeout`), but the `--ctrf` plugin: what the verdict's own packages hold."""


def offline_runner(text: str) -> OfflineRunner | None:
    """The script `text` with its steps that fetch test tools taken out and its pytest run
    on the image's python3 (the module docstring says how each line is read); None when it
    has no such step, or reads the `--ctrf` report the rewritten run no longer writes."""
    requirements: list[str] = []
    rewritten, found, ctrf_dropped = [], False, False
    for line, spanned in _logical_lines(text):
        code = _COMMENT.sub("", line).strip()
        indent = line[: len(line) - len(line.lstrip())]
        steps = _steps(code)
        if steps is not None:
            requirements += steps
            line, found = f"{indent}:  {OFFLINE_NOTE} {code}", True
        elif code:
            new = _run_line(code, requirements)
            if new != code:
                found = True
                ctrf_dropped = ctrf_dropped or bool(_CTRF.search(code))
                line = indent + new
            elif "ctrf" in code:
                return None  # the JSON report is read: dropping --ctrf would change the reward
        rewritten += [line] + [""] * (spanned - 1)  # the file's line numbers kept, for messages
    if not found:
        return None
    kept = tuple(dict.fromkeys(r for r in requirements if _name(r) != "pytest-json-ctrf"))
    names = {_name(r).replace("-", "_") for r in kept if _name(r) not in _TEST_TOOLS}
    plugins = sorted(name for name in names if name.startswith("pytest_"))
    script = "\n".join(rewritten) + "\n"
    return OfflineRunner(script, tuple(sorted(names - set(plugins))), tuple(plugins), kept)


harbor_offline_runner = offline_runner
"""Harbor's tests/test.sh is read the same way (its reward lines stay as they are)."""


def _steps(code: str) -> list[str] | None:
    """The requirements the line installs when every command of it (`a && b`) is a step that
    fetches test tools ([] when none installs packages); None when any command is not."""
    if not code:
        return None
    found: list[str] = []
    for part in re.split(r"\s*(?:&&|\|\||;)\s*", _QUIET.sub("", code).strip()):
        if not part:
            continue
        if any(pattern.fullmatch(part) for pattern in _PROVISIONING):
            continue
        if apt := re.fullmatch(r"(sudo )?apt(-get)? install (?P<words>.+)", part):
            words = [w for w in apt.group("words").split() if not w.startswith("-")]
            if words and set(words) <= _APT_TOOLS:
                continue
            return None
        install = _INSTALL.fullmatch(part)
        if install is None:
            return None
        try:
            words = shlex.split(install.group("words") or "")
        except ValueError:
            return None
        if any(word.startswith("-") and word not in _INSTALL_OPTIONS for word in words):
            return None  # -r file, -e path, --index-url: not a package by name
        specs = [word for word in words if not word.startswith("-")]
        if not specs or any(not re.match(r"[A-Za-z0-9]", spec) or "/" in spec or ":" in spec for spec in specs):
            return None
        found += specs
    return found


def _run_line(code: str, requirements: list[str]) -> str:
    """A line with its pytest run through uv or a venv made `python3 -m pytest` (without
    `--ctrf FILE`), `uv run CMD` made CMD; what `uvx --with` / `uv run --with` add joins
    `requirements`."""

    def uvx(match: re.Match[str]) -> str:
        options = re.findall(r"(-p|--python|-w|--with)[ =](\S+)", match.group("options"))
        requirements.extend(value for flag, value in options if flag in ("-w", "--with"))
        return "python3 -m pytest"

    def uv_run(match: re.Match[str]) -> str:
        requirements.extend(re.findall(r"(?:--with|-w)[ =](\S+)", match.group("options")))
        return ""

    new = _UVX_PYTEST.sub(uvx, code)
    new = _UV_RUN.sub(uv_run, new)
    new = re.sub(r"(?<![\w./-])python(?= )", "python3", new) if new != code else new
    new = _PYTHON_PYTEST.sub("python3 -m pytest", new)
    new = _BARE_PYTEST.sub("python3 -m pytest", new)
    if "python3 -m pytest" in new:
        new = _CTRF.sub("", new)
    return new


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\[=<>!~;@ ]", requirement, maxsplit=1)[0]).lower()


def _logical_lines(text: str) -> list[tuple[str, int]]:
    """The script's lines with backslash continuations joined, and how many lines each spans."""
    found: list[tuple[str, int]] = []
    parts: list[str] = []
    for line in text.splitlines():
        if line.endswith("\\"):
            parts.append(line[:-1])
            continue
        found.append((" ".join([*parts, line]) if parts else line, len(parts) + 1))
        parts = []
    if parts:
        found.append((" ".join(parts), len(parts)))
    return found
