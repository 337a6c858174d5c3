"""rlenvs.testing.task_hashes and the `task_hashes` fixture, on the example procedural env of
CONTRIBUTING.md (tests/support/reverse_words.py): a generator change is caught, named by
family and level, and the fix it asks for (a new -vN) is the only one pinning accepts."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from rlenvs.core.procedural import Family, Level
from rlenvs.testing.task_hashes import (
    TaskHashesError,
    bumped,
    canonical,
    check_pinned,
    read_pinned,
    task_hashes,
)
from tests.support.reverse_words import REVERSE, Puzzle, ReverseWordsEnv, a_phrase, one_word, pose

pytest_plugins = ["pytester"]

ENV_ID = "example/ReverseWords-v0"
INPROCESS = ("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning")
"""An in-process run's options. It loads the rlenvs plugin (pytest11) whose modules the outer
run has imported; when that run is the `pytest` script (not `python -m pytest`, which finds
them on the path and rewrites them), each one draws "Module already imported so cannot be
rewritten", 9 warnings that are no part of what these runs check."""


def capitalised_word(rng: np.random.Generator) -> Puzzle:
    """Level 1 as a later release might write it: the same draw, the word capitalised."""
    puzzle = one_word(rng)
    return Puzzle(puzzle.text.capitalize(), puzzle.answer.capitalize())


CHANGED = Family.of_levels(
    "reverse",
    REVERSE.summary,
    {1: Level("one word, capitalised", capitalised_word), 2: Level("each word of a phrase", a_phrase)},
)
WITH_LEVEL_3 = Family.of_levels(
    "reverse",
    REVERSE.summary,
    {1: Level("one word", one_word), 2: Level("a phrase", a_phrase), 3: Level("a phrase again", a_phrase)},
)


class ChangedWordsEnv(ReverseWordsEnv):
    task_families = {"reverse": CHANGED}

    @classmethod
    def task_of(cls, family: str, level: int, index: int):  # type: ignore[override]  # same shape, other family
        return pose(CHANGED.task_id(level, index), CHANGED.scenario(level, index))


class MoreLevelsEnv(ReverseWordsEnv):
    task_families = {"reverse": WITH_LEVEL_3}

    @classmethod
    def task_of(cls, family: str, level: int, index: int):  # type: ignore[override]
        return pose(WITH_LEVEL_3.task_id(level, index), WITH_LEVEL_3.scenario(level, index))


def test_canonical_form_tells_apart_what_json_would_merge() -> None:
    """1, 1.0, True and "1" are different cell values; two sheet orders are two workbooks."""
    forms = [canonical(item) for item in (1, 1.0, True, "1", b"1", dt.date(2024, 1, 1), "2024-01-01")]
    assert len({json.dumps(form, sort_keys=True) for form in forms}) == len(forms)
    assert canonical({"A": 1, "B": 2}) != canonical({"B": 2, "A": 1})
    assert canonical(0.1 + 0.2) != canonical(0.3)


def test_a_table_has_every_family_and_level_and_an_id_finds_its_class() -> None:
    table = task_hashes(ReverseWordsEnv)
    assert list(table) == ["reverse/L1", "reverse/L2"]
    assert task_hashes(ReverseWordsEnv, tasks=3) != table
    gym.register(ENV_ID, entry_point="tests.support.reverse_words:ReverseWordsEnv")
    try:
        assert task_hashes(ENV_ID) == table
    finally:
        del gym.registry[ENV_ID]
    with pytest.raises(TypeError, match="not a rlenvs.core.procedural.ProceduralEnv"):
        task_hashes(dict)
    assert (bumped("dates/DateShift-v0"), bumped("a/B-v9"), bumped("a/B-v10")) == (
        "dates/DateShift-v1",
        "a/B-v10",
        "a/B-v11",
    )


def test_a_generator_change_is_caught_and_only_a_new_version_may_pin_it(tmp_path: Path) -> None:
    pinned = tmp_path / "task_hashes.json"
    with pytest.raises(TaskHashesError, match=r"does not exist: pin example/ReverseWords-v0's tasks with `pytest "):
        check_pinned(ReverseWordsEnv, pinned, env_id=ENV_ID)
    assert not pinned.exists(), "nothing is pinned without pin=True"
    assert check_pinned(ReverseWordsEnv, pinned, env_id=ENV_ID, pin=True).startswith("pinned ")
    assert check_pinned(ReverseWordsEnv, pinned, env_id=ENV_ID).endswith("as pinned in " + str(pinned))

    message = r"\(reverse/L1 moved\).*bump the id's -vN \(example/ReverseWords-v1\), then re-pin"
    for pin in (False, True):  # a pinned hash is never overwritten, with the option or without
        with pytest.raises(TaskHashesError, match=message):
            check_pinned(ChangedWordsEnv, pinned, env_id=ENV_ID, pin=pin)
    check_pinned(ChangedWordsEnv, pinned, env_id=bumped(ENV_ID), pin=True)
    envs = read_pinned(pinned).envs
    assert envs[ENV_ID] == task_hashes(ReverseWordsEnv), "the old id keeps what it meant"
    assert envs[ENV_ID]["reverse/L2"] == envs[bumped(ENV_ID)]["reverse/L2"] != {}
    assert envs[ENV_ID]["reverse/L1"] != envs[bumped(ENV_ID)]["reverse/L1"]

    with pytest.raises(TaskHashesError, match=r"reverse/L3 not pinned in .*: pin with"):
        check_pinned(MoreLevelsEnv, pinned, env_id=ENV_ID)
    assert "added reverse/L3" in check_pinned(MoreLevelsEnv, pinned, env_id=ENV_ID, pin=True)
    with pytest.raises(TaskHashesError, match=r"\(reverse/L3 is gone\)"):
        check_pinned(ReverseWordsEnv, pinned, env_id=ENV_ID, pin=True)

    pinned.write_text('{"envs": {}}')
    with pytest.raises(ValueError, match="is not a pinned task-hash file"):
        check_pinned(ReverseWordsEnv, pinned, env_id=ENV_ID)


def test_a_class_without_one_registered_id_must_be_given_its_id(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no registered id makes it\): pass env_id="):
        check_pinned(ChangedWordsEnv, tmp_path / "task_hashes.json")


def test_the_fixture_fails_a_missing_file_then_pins_it_on_request(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_pins=textwrap.dedent(f"""
            from tests.support.reverse_words import ReverseWordsEnv

            def test_pinned(task_hashes):
                task_hashes.check(ReverseWordsEnv, "task_hashes.json", env_id="{ENV_ID}")
        """)
    )
    pytester.syspathinsert(Path(__file__).resolve().parents[2])
    missing = pytester.runpytest_inprocess(*INPROCESS)
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(
        ['*task_hashes.json does not exist: pin * with `pytest "test_pins.py::test_pinned" --rlenvs-pin-hashes`*']
    )
    pinning = pytester.runpytest_inprocess(*INPROCESS, "--rlenvs-pin-hashes")
    pinning.assert_outcomes(passed=1, warnings=1)
    assert read_pinned(pytester.path / "task_hashes.json").envs == {ENV_ID: task_hashes(ReverseWordsEnv)}
    pytester.runpytest_inprocess(*INPROCESS).assert_outcomes(passed=1)


def test_loading_the_plugin_does_not_import_the_hashing() -> None:
    code = "import sys, rlenvs.testing.pytest_plugin\nassert 'rlenvs.testing.task_hashes' not in sys.modules"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
