"""Terminal-Bench 1's standard `run-tests.sh`, recognised and run offline.

Nearly every Terminal-Bench 1 task ships the same test runner: it installs curl with apt,
downloads uv with curl, makes a uv project in the working folder, adds pytest to it and runs
`uv run pytest $TEST_DIR/test_outputs.py -rA`. All of that needs the network, which the
sandbox does not give the test run, and all of it only gets pytest. So a runner that is this
boilerplate, line for line (comments, blank lines and the versions aside), is replaced by the
one command it comes to, run with the pytest the image (here: the host's python3) already has:

    python3 -m pytest $TEST_DIR/test_outputs.py -rA

What differs: `uv init` wrote a pyproject.toml, main.py, README.md and .python-version into the
working folder before the tests ran, and uv ran them with the Python it downloaded; the
offline runner writes nothing and uses the image's python3. Extra packages the runner adds
(`uv add pytest==8.4.1 numpy`) must already be importable there: `packages` names them so the
loader can check. Any other runner is left to the loader's network check, which refuses it by
line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_STEPS = (
    r"apt-get update",
    r"apt-get install -y curl",
    r"curl -LsSf https://astral\.sh/uv/[\w.]+/install\.sh \| sh",
    r"source \$HOME/\.local/bin/env",
    r'if \[ "\$PWD" = "/" \]; then',
    r'echo "[^"]*"',
    r"exit 1",
    r"fi",
    r"uv init",
    r"uv add (?P<packages>pytest(==[\w.]+)?( [\w.\-\[\]=<>]+)*)",
    r"uv run pytest (?P<arguments>.+)",
)
_STEP_PATTERNS = tuple(re.compile(step) for step in _STEPS)
_COMMENT = re.compile(r"(^|\s)#.*$")
_VERSION = re.compile(r"[=<>\[].*$")

OFFLINE_RUNNER = """\
#!/bin/bash
# Terminal-Bench's standard run-tests.sh, run offline by rlenvs
# (rlenvs.envs.terminal.boilerplate): the tests with the image's own pytest.
if [ "$PWD" = "/" ]; then
    echo "Error: No working directory set. Please set a WORKDIR in your Dockerfile before running this script."
    exit 1
fi
python3 -m pytest {arguments}
"""


@dataclass(frozen=True)
class OfflineRunner:
    """What replaces a recognised runner: the script, and the modules it needs importable."""

    script: str
    packages: tuple[str, ...]
    """Import names of what the runner's `uv add` adds besides pytest (`numpy`, `requests`)."""
    plugins: tuple[str, ...] = ()
    """pytest plugins it adds (`uvx -w pytest-timeout`): the verdict loads only the plugins
    the tests name with -p (PYTEST_DISABLE_PLUGIN_AUTOLOAD), so the loader refuses these."""


def offline_runner(text: str) -> OfflineRunner | None:
    """The offline runner for `text` when it is Terminal-Bench's standard run-tests.sh; None
    for any other script (comments and blank lines do not count; every other line must be
    the boilerplate's, in its order)."""
    lines = [code for line in text.splitlines() if (code := _COMMENT.sub("", line).strip())]
    if len(lines) != len(_STEP_PATTERNS):
        return None
    groups: dict[str, str] = {}
    for line, pattern in zip(lines, _STEP_PATTERNS):
        match = pattern.fullmatch(line)
        if match is None:
            return None
        groups.update({key: value for key, value in match.groupdict().items() if value is not None})
    extras = groups["packages"].split()[1:]
    packages = tuple(_VERSION.sub("", name).replace("-", "_").lower() for name in extras)
    return OfflineRunner(OFFLINE_RUNNER.format(arguments=groups["arguments"]), packages)


# --- Harbor's tests/test.sh ------------------------------------------------------------------------

_PROVISIONING = tuple(
    re.compile(pattern)
    for pattern in (
        r"apt-get update( -qq?)?( >\s*/dev/null( 2>&1)?)?( && apt-get install -y( -qq?)? curl( >\s*/dev/null( 2>&1)?)?)?",
        r"apt-get install -y( -qq?)? curl( >\s*/dev/null( 2>&1)?)?",
        r"curl -LsSf https://astral\.sh/uv/([\w.]+/)?install\.sh \| sh( >\s*/dev/null( 2>&1)?)?",
        r'(source|\.) "?\$HOME/\.local/bin/env"?',
        r'export PATH="?\$HOME/\.local/bin:\$PATH"?',
        r"python3? -m pip install( --no-cache-dir)? uv(==[\w.]+)?( >\s*\S+( 2>&1)?)?",
        r"uvx? --version( >\s*\S+( 2>&1)?)?",
        r"uv venv \S+( >\s*/dev/null( 2>&1)?)?",
        r"source \S+/bin/activate",
    )
)
"""The lines of Harbor test scripts that only fetch curl, uv and pytest: each becomes `:`."""
_UV_PIP = re.compile(r"uv pip install (?P<packages>[^>|&;]+?)( >\s*/dev/null( 2>&1)?)?")
_UVX_PYTEST = re.compile(r"uvx(?P<options>( +(-p|--python|-w|--with)[ =]\S+)*) +pytest(?P<rest>( .*)?)")
_CTRF = re.compile(r" --ctrf[ =]\S+")
_TEST_TOOLS = frozenset(("pytest", "pytest_json_ctrf"))
"""What the scripts fetch only to run the tests: pytest, and the plugin behind `--ctrf`."""


def harbor_offline_runner(text: str) -> OfflineRunner | None:
    """Harbor's tests/test.sh run offline, when it fetches its test tools the usual ways:
    `apt-get install curl`, uv's install script or `pip install uv`, then `uvx -w pytest==...
    pytest ARGS` (or a `uv venv` with `uv pip install pytest`). Those fetching lines become
    `:`, the uvx line `python3 -m pytest ARGS` without `--ctrf FILE` (a JSON report the
    reward does not read, written by a plugin the image lacks); everything else, the reward
    written to /logs/verifier included, stays as it is. None when no line runs pytest that
    way; what is left is still checked for the network by the loader."""
    packages: list[str] = []
    rewritten, replaced = [], False
    for line, spanned in _logical_lines(text):
        code = _COMMENT.sub("", line).strip()
        indent = line[: len(line) - len(line.lstrip())]
        if any(pattern.fullmatch(code) for pattern in _PROVISIONING):
            line = f"{indent}:  # rlenvs, offline: {code}"
        elif match := _UV_PIP.fullmatch(code):
            packages += match.group("packages").split()
            line = f"{indent}:  # rlenvs, offline: {code}"
        elif match := _UVX_PYTEST.fullmatch(code):
            options = re.findall(r"(-p|--python|-w|--with)[ =](\S+)", match.group("options"))
            packages += [value for flag, value in options if flag in ("-w", "--with")]
            line = f"{indent}python3 -m pytest{_CTRF.sub('', match.group('rest'))}"
            replaced = True
        elif "ctrf" in code:
            return None  # the JSON report is read: dropping --ctrf would change the reward
        rewritten += [line] + [""] * (spanned - 1)  # the file's line numbers kept, for messages
    if not replaced:
        return None
    names = {_VERSION.sub("", name).replace("-", "_").lower() for name in packages} - _TEST_TOOLS
    plugins = sorted(name for name in names if name.startswith("pytest_"))
    script = "\n".join(rewritten) + "\n"
    return OfflineRunner(script, tuple(sorted(names - set(plugins))), tuple(plugins))


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
