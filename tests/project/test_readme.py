"""The README is the front page a newcomer follows literally, so it is tested like code.

Its python snippets run as written, in a fresh interpreter, from an empty folder, offline and
with no data set configured: a snippet that needs data, a file of the checkout or a network
would fail here before it fails a user. The comment after each `print(...)` in a snippet is
what that line prints, and is checked, so the shown outputs cannot drift from the code. The
environment table is checked against the catalog (the one list every id is registered from),
so an env added or renamed without its row fails, and so does a table broken into two by a
blank line (GitHub then renders one row). The docs site's own links and nav are checked by
`mkdocs build --strict` in `.ci/run`, whose validation settings (mkdocs.yml) turn a broken
link, anchor or a page left out of the nav into a failure.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from rlenvs.envs.catalog import CATALOG

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
TABLE_ROW_ID = re.compile(r"^\| <code style=\"white-space: nowrap\">(rlenvs/[^<]+)</code> \|")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A snippet must finish in seconds (it is a front-page example, and the suite is budgeted);
# the bound is loose so that a loaded 2-core machine does not make it flaky.
SNIPPET_TIMEOUT_S = 60


def readme() -> str:
    return README.read_text(encoding="utf-8")


def python_snippets() -> list[str]:
    return [code for lang, code in FENCE.findall(readme()) if lang == "python"]


def printed_comments(code: str) -> list[str]:
    """The comment on each line that starts with `print(`, in order: what the line prints.

    Read with tokenize, so a `#` inside a string is not taken for a comment."""
    expected = []
    line_starts: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        row = token.start[0]
        if token.type in (tokenize.NAME, tokenize.OP, tokenize.STRING, tokenize.NUMBER):
            line_starts.setdefault(row, token.string)
        elif token.type == tokenize.COMMENT and line_starts.get(row) == "print":
            expected.append(token.string[1:].strip())
    return expected


def offline_environment() -> dict[str, str]:
    """The caller's environment with no data folder and no hub: what a fresh clone has."""
    env = {k: v for k, v in os.environ.items() if k not in ("RLENVS_DATA_DIR", "RLENVS_TEST_DATA")}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def without_fences(text: str) -> str:
    return FENCE.sub("", text)


def table_ids(text: str, where: str) -> list[str]:
    """The ids of the environment table's rows, after checking it is one table.

    Every row naming an id must sit in one unbroken run of `|` lines under the header, and
    every row must have the header's number of cells (code spans removed first, so a `|`
    inside one is not a cell border)."""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("| id |")), None)
    assert header is not None, f"{where}: no environment table (a header row starting '| id |')"
    end = header
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    block = lines[header:end]
    stray = [i + 1 for i, line in enumerate(lines) if TABLE_ROW_ID.match(line) and not header <= i < end]
    assert not stray, f"{where}: env rows outside the table (a blank line splits it) at lines {stray}"
    cells = [CODE_SPAN.sub("", row).strip().strip("|").count("|") + 1 for row in block]
    assert len(set(cells)) == 1, f"{where}: table rows with different numbers of cells: {cells}"
    return [m.group(1) for row in block if (m := TABLE_ROW_ID.match(row))]


def test_readme_has_python_snippets_with_checked_output():
    # Guards the tests below from passing on nothing: a renamed fence would leave no snippet.
    snippets = python_snippets()
    assert len(snippets) >= 2, "README: expected the first-steps snippet and the RL loop"
    assert all(printed_comments(code) for code in snippets), "every README snippet shows what it prints"


@pytest.mark.parametrize("index", range(len(python_snippets())))
def test_readme_snippet_runs_as_written(index, tmp_path):
    code = python_snippets()[index]
    script = tmp_path / f"readme_snippet_{index}.py"
    script.write_text(code, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, script.name],
        cwd=tmp_path,
        env=offline_environment(),
        capture_output=True,
        text=True,
        timeout=SNIPPET_TIMEOUT_S,
    )
    assert run.returncode == 0, f"README snippet {index} failed:\n{code}\n--- stderr ---\n{run.stderr}"
    assert run.stdout.splitlines() == printed_comments(code), (
        f"README snippet {index} prints something other than its comments say:\n{code}\n--- stdout ---\n{run.stdout}"
    )


@pytest.mark.parametrize("page", [README, DOCS / "index.md"], ids=lambda p: p.name)
def test_environment_table_has_one_row_per_catalog_id(page):
    ids = table_ids(page.read_text(encoding="utf-8"), page.name)
    assert sorted(ids) == sorted(entry.id for entry in CATALOG), (
        f"{page.name}: the table's ids {ids} are not the catalog's (rlenvs/envs/catalog.py)"
    )
    assert len(ids) == len(set(ids)), f"{page.name}: an id has two rows"


@pytest.mark.parametrize("page", [README, *sorted(DOCS.rglob("*.md"))], ids=lambda p: str(p.relative_to(ROOT)))
def test_latex_in_code_spans_has_single_backslashes(page):
    # Markdown shows a code span's text as written: `\\boxed{N}` renders with two backslashes.
    # Python code blocks are left out, where "\\boxed" is a correct string literal.
    spans = [m.group(2) for m in CODE_SPAN.finditer(without_fences(page.read_text(encoding="utf-8")))]
    doubled = [span for span in spans if "\\\\" in span]
    assert not doubled, f"{page.relative_to(ROOT)}: code spans with doubled backslashes: {doubled}"


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def test_readme_links_resolve_and_it_states_the_test_command():
    text = readme()
    anchors = {slug(line.lstrip("#")) for line in without_fences(text).splitlines() if line.startswith("#")}
    broken = []
    for target in LINK.findall(without_fences(text)):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        if (path and not (ROOT / path).exists()) or (not path and anchor not in anchors):
            broken.append(target)
    assert not broken, f"README: links to nothing: {broken}"
    assert "bash .ci/run" in text, "README: the test command (bash .ci/run) must stay stated"
    # ~160 lines for using and training, ~25 for the "Your own env" section (issue 41), 2 for the
    # fast suite's commands as a block with the dev extra's install line, ~14 for evaluating a
    # model, the workflow's last step (issue 42).
    assert len(text.splitlines()) <= 201, "README: the front page grew past ~200 lines; move detail to docs/"


FAST_SUITE = re.compile(r'^pytest -n auto -m "([^"]+)"$', re.M)
# Markers that only ever come with `images` (pyproject.toml says "marked images too").
WITH_IMAGES = {"docker", "podman"}


def test_readme_fast_suite_is_the_one_the_project_defines():
    """The README's fast suite runs from a plain clone as written: `-n` is pytest-xdist's, so the
    block installs the dev extra first (it did not say so); the `-m` expression names only
    registered markers, is the one tests/conftest.py and pyproject.toml state, and leaves out
    every marker that conftest skips for a missing component or data set; and pytest takes the
    command (collected here, on this file only, so the check costs seconds)."""
    import tomllib

    from tests.conftest import REQUIREMENTS

    (block,) = [code for lang, code in FENCE.findall(readme()) if lang == "sh" and FAST_SUITE.search(code)]
    lines = block.strip().splitlines()
    assert lines[0] == 'pip install -e ".[dev]"', block
    (expression,) = FAST_SUITE.findall(block)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(dep.startswith("pytest-xdist") for dep in project["project"]["optional-dependencies"]["dev"])
    registered = {line.split(":")[0] for line in project["tool"]["pytest"]["ini_options"]["markers"]}
    named = set(re.findall(r"\w+", expression)) - {"and", "or", "not"}
    assert named <= registered, f"README: the fast suite names unregistered markers {named - registered}"
    assert {f"not {marker}" for marker in set(REQUIREMENTS) - WITH_IMAGES} | {"not images", "not slow"} == {
        f"not {name}" for name in named
    }, expression
    stated_elsewhere = [
        " ".join((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8").split()),
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"),
    ]
    assert all(f'-m "{expression}"' in text for text in stated_elsewhere), "conftest and pyproject state another one"
    command = shlex.split(lines[1])
    assert command[0] == "pytest", lines[1]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            *command,
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/project/test_readme.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "collected" in done.stdout, done.stdout + done.stderr
