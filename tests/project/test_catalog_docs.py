"""The env tables of README.md and docs/index.md are the catalog's, rendered.

They were once written by hand beside rlenvs/envs/catalog.py and said other things than
`rlenvs info`; now a table that differs from what the catalog renders fails here, with the
command that regenerates it. tests/project/test_readme.py checks the tables' shape (one table, one row
per id, single backslashes); this file checks their content and the renderer's own rules.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from rlenvs.envs.catalog import CATALOG
from rlenvs.envs.catalog_docs import BEGIN, END, PAGES, REGENERATE, env_table, main, plain, stale_pages, with_table

ROOT = Path(__file__).resolve().parents[2]
LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("name", list(PAGES))
def test_committed_table_is_the_one_the_catalog_renders(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    assert with_table(text, PAGES[name], name) == text, (
        f"{name}: the env table differs from rlenvs/envs/catalog.py; run `{REGENERATE}` to regenerate it "
        "(edit the catalog's entries, not the table)"
    )


@pytest.mark.parametrize("name", list(PAGES))
def test_every_link_in_a_rendered_table_resolves_from_its_page(name):
    # The README sits at the root and links into docs/; docs/index.md links beside itself.
    page_folder = (ROOT / name).parent
    targets = LINK_TARGET.findall(env_table(PAGES[name]))
    assert targets, "the table should link each family's page"
    missing = [t for t in targets if not t.startswith(("http://", "https://")) and not (page_folder / t).is_file()]
    assert not missing, f"{name}: table links that lead nowhere from {page_folder}: {missing}"
    families = {entry.family for entry in CATALOG}
    assert {f"{PAGES[name]}envs/{family}.md" for family in families} <= set(targets)


def test_latex_keeps_one_backslash_in_the_rendered_table():
    table = env_table("")
    assert "`\\boxed{N}`" in table and "\\\\" not in table


def test_a_stale_table_is_found_and_rewritten_and_nothing_else_changes(tmp_path, capsys):
    for name in PAGES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    readme = tmp_path / "README.md"
    fresh = readme.read_text(encoding="utf-8")
    readme.write_text(
        fresh.replace("rlenvs/MBPP-v2</code> |", "rlenvs/MBPP-v2</code> | edited by hand |", 1), encoding="utf-8"
    )

    assert stale_pages(tmp_path) == ["README.md"]
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert REGENERATE in capsys.readouterr().err
    assert main(["--root", str(tmp_path)]) == 0
    assert readme.read_text(encoding="utf-8") == fresh
    assert main(["--check", "--root", str(tmp_path)]) == 0


def test_a_page_without_the_markers_says_where_the_table_goes():
    with pytest.raises(ValueError, match=re.escape(REGENERATE)) as caught:
        with_table("# a page\n\n| id | family |\n", "", "docs/index.md")
    assert BEGIN in str(caught.value) and END in str(caught.value)


@pytest.mark.parametrize(
    ("field", "text"),
    [("reward", "1 if right | 0 if wrong"), ("acts", "pipes: `cut -d, -f2 | sort`"), ("turns", "1\n\nor more")],
    ids=["bar", "bar in a code span (GitHub splits the cell there too)", "newline"],
)
def test_a_catalog_text_that_would_break_the_table_is_refused(field, text):
    entry = dataclasses.replace(CATALOG[0], **{field: text})
    with pytest.raises(ValueError, match=f"{entry.id}: catalog field '{field}'"):
        env_table("", [entry])


def test_rlenvs_info_shows_the_catalog_text_without_markdown():
    assert plain("ends with `\\boxed{N}`") == "ends with \\boxed{N}"
    assert plain("a ```` ```python ```` block") == "a ```python block"
    assert plain("(see [the verifier](rewards.md))") == "(see the verifier (docs/rewards.md))"
    assert plain("[gymnasium](https://gymnasium.farama.org)") == "gymnasium (https://gymnasium.farama.org)"
    for entry in CATALOG:
        for field in ("observes", "acts", "reward", "turns"):
            shown = plain(getattr(entry, field))
            assert "`" not in shown.replace("```", ""), f"{entry.id} {field}: {shown}"
            assert "](" not in shown, f"{entry.id} {field}: {shown}"


def test_every_catalog_family_has_its_docs_page_and_nav_line():
    """CONTRIBUTING.md's step 5: an env of a new family brings docs/envs/<family>.md and its line
    in mkdocs.yml's nav (mkdocs --strict would only warn about a page no nav lists)."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for family in sorted({entry.family for entry in CATALOG}):
        page = f"envs/{family}.md"
        assert (ROOT / "docs" / page).is_file(), f"the {family} family has no docs/{page}: write it (CONTRIBUTING.md)"
        assert re.search(rf":\s*{re.escape(page)}\s*$", nav, re.M), f"mkdocs.yml's nav lists no {page}"


def test_ids_do_not_wrap_on_the_docs_site():
    """mkdocs' Material theme breaks code mid-word in a narrow column (`word-break: break-word`,
    `white-space: pre-wrap` on code): the id cell's code carries its own `nowrap`, which outranks
    the theme's class rule, as Python-Markdown (mkdocs' renderer) passes it through."""
    markdown = pytest.importorskip("markdown", reason="mkdocs' Markdown renderer: pip install -e '.[docs]'")
    html = markdown.markdown(env_table(""), extensions=["tables"])
    cells = re.findall(r"<tr>\s*<td>(.*?)</td>", html)
    assert cells == [f'<code style="white-space: nowrap">{entry.id}</code>' for entry in CATALOG]
