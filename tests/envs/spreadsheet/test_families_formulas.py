"""The formula task families (rlenvs.envs.spreadsheet.families: row_formula, group_totals, lookup,
percent_of_total, running_total and conditional_label): `truth` of the
starting data is the expected answer, every task is well formed and deterministic, changed
inputs change the answers, and through the env the reference solution scores 1 while
submitting at once, or typing the right values in instead of formulas, scores 0."""

from __future__ import annotations

import json
import pickle

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401  (registers the envs)
from rlenvs.envs.spreadsheet.actions import parse_actions, parse_area
from rlenvs.envs.spreadsheet.families import (
    conditional_label,
    group_totals,
    lookup,
    percent_of_total,
    row_formula,
    running_total,
)
from rlenvs.envs.spreadsheet.families.rounding import excel_round, near_tie
from rlenvs.envs.spreadsheet.tasks import SpreadsheetTask, family_task
from rlenvs.rewards.spreadsheet import cells_match

FAMILIES = tuple(
    module.FAMILY for module in (row_formula, group_totals, lookup, percent_of_total, running_total, conditional_label)
)
BY_NAME = {family.name: family for family in FAMILIES}
SEEDS = range(20)
CASES = [(family.name, level) for family in FAMILIES for level in sorted(family.levels)]


def task(name: str, level: int, index: int) -> SpreadsheetTask:
    return family_task(BY_NAME[name], level, index)


def as_lists(t: SpreadsheetTask) -> dict[str, list[list]]:
    return {name: [list(row) for row in rows] for name, rows in t.sheets.items()}


def value_at(t: SpreadsheetTask, cell: str):
    area = parse_area(cell)
    rows = t.sheets[area.sheet]
    if area.top > len(rows) or area.left > len(rows[area.top - 1]):
        return None
    return rows[area.top - 1][area.left - 1]


def test_the_six_families_with_two_levels_each():
    assert [family.name for family in FAMILIES] == [
        "row-formula",
        "group-totals",
        "lookup",
        "percent-of-total",
        "running-total",
        "conditional-label",
    ]
    assert all(sorted(family.levels) == [1, 2] for family in FAMILIES)


@pytest.mark.parametrize(("name", "level"), CASES)
def test_truth_of_the_starting_data_is_the_expected_answer(name, level):
    for index in SEEDS:
        t = task(name, level, index)
        got = t.truth(as_lists(t))
        assert set(got) == set(t.expected), t.task_id
        wrong = [(cell, got[cell], want) for cell, want in t.expected.items() if not cells_match(got[cell], want)]
        assert not wrong, (t.task_id, wrong[:3])
        assert pickle.loads(pickle.dumps(t.truth))(as_lists(t)) == got, t.task_id


@pytest.mark.parametrize(("name", "level"), CASES)
def test_every_task_is_well_formed(name, level):
    for index in SEEDS:
        t = task(name, level, index)
        assert all(" " not in sheet for sheet in t.sheets), t.task_id
        for cell in t.expected:
            sheet, _, ref = cell.partition("!")
            assert sheet in t.sheets and "$" not in ref, (t.task_id, cell)
            assert value_at(t, cell) in (None, ""), (t.task_id, cell, "a target must start empty")
        assert t.formula_cells and set(t.formula_cells) <= set(t.expected), t.task_id
        for cell, want in t.expected.items():
            if cell not in t.formula_cells:  # headers: text to type, named in the instruction
                assert isinstance(want, str) and f'"{want}"' in t.prompt, (t.task_id, cell)
        for text in t.inputs:
            area = parse_area(text)
            numbers = [value_at(t, f"{area.sheet}!{ref}") for line in area.refs() for ref in line]
            assert any(isinstance(v, (int, float)) for v in numbers), (t.task_id, text)
            assert not any(isinstance(v, str) for v in numbers), (t.task_id, text, "inputs hold numbers only")
        instruction = t.prompt.split("\n\n")[0]
        assert instruction.endswith("Reply SUBMIT when done."), t.task_id
        assert "Use formulas, not typed values" in instruction, t.task_id
        assert t.solution and all(reply.startswith("```\n") and reply.endswith("\n```") for reply in t.solution)
        for reply in t.solution:
            parse_actions(reply)


@pytest.mark.parametrize(("name", "level"), CASES)
def test_generation_is_deterministic_and_varies_with_the_seed(name, level):
    tasks = [task(name, level, index) for index in SEEDS]
    assert tasks == [task(name, level, index) for index in SEEDS]
    assert len({(t.prompt, json.dumps(t.sheets, default=str)) for t in tasks}) == len(tasks)
    sizes = {len(next(iter(t.sheets.values()))) for t in tasks}
    assert len(sizes) > 3 and min(sizes) >= 9 and max(sizes) <= 42


@pytest.mark.parametrize(("name", "level"), CASES)
def test_changed_inputs_change_the_answers(name, level):
    """What the env checks formulas with: every number target changes in one of the env's
    two changed copies of the data, and some label flips."""
    import numpy as np

    from rlenvs.envs.spreadsheet.perturb import perturb

    for index in SEEDS:
        t = task(name, level, index)
        changed = [t.truth(perturb(t.sheets, t.inputs, np.random.default_rng([index, r]), t.changes)) for r in range(2)]
        for cell in t.formula_cells:
            assert all(isinstance(c[cell], (int, float, str)) for c in changed), (t.task_id, cell)
        moved = [cell for cell in t.formula_cells if any(not cells_match(c[cell], t.expected[cell]) for c in changed)]
        if name == "conditional-label":
            assert moved, t.task_id
        else:
            assert moved == list(t.formula_cells), (t.task_id, set(t.formula_cells) - set(moved))


def test_round_is_half_away_from_zero_on_the_digits_shown():
    assert excel_round(2.675, 2) == 2.68  # 2.67499999... in binary
    assert excel_round(36.75 * 0.9, 2) == 33.08 == excel_round(0.9 * 36.75, 2)
    assert excel_round(-2.5, 0) == -3 and excel_round(2.4999, 0) == 2
    assert excel_round(12.25, 1) == 12.3 and excel_round(1234.5678, 1) == 1234.6
    assert near_tie(12.345) and near_tie(0.125) and not near_tie(12.34) and not near_tie(12.3449)


# --- through the env -----------------------------------------------------------------------


def make_env(name: str, level: int):
    return gym.make("rlenvs/Spreadsheet-v1", families=name, level=level).unwrapped


def play(env, index: int, replies) -> tuple[float, dict]:
    """Reset to task `index` and send `replies` (None: the oracle's) until the episode ends."""
    env.reset(options={"task_index": index})
    replies = None if replies is None else list(replies)
    for turn in range(env.max_turns):
        reply = env.oracle_action() if replies is None else replies[turn] if turn < len(replies) else "SUBMIT"
        _, reward, terminated, truncated, info = env.step(reply)
        if terminated or truncated:
            return reward, info
    raise AssertionError("the episode did not end")


def typed_in(t: SpreadsheetTask) -> list[str]:
    """Every target set to its expected value as a constant: right values, no formulas."""
    lines = [
        f"SET {cell} {json.dumps(value) if isinstance(value, str) else repr(value)}"
        for cell, value in t.expected.items()
    ]
    return ["```\n" + "\n".join(lines[i : i + 150]) + "\n```" for i in range(0, len(lines), 150)]


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(("name", "level"), CASES)
def test_the_reference_scores_one_and_doing_nothing_or_typing_values_scores_zero(name, level):
    env = make_env(name, level)
    try:
        for index in SEEDS:
            reward, info = play(env, index, None)
            assert reward == 1.0, (name, level, index, info.get("mismatches"), info.get("reward_breakdown"))
            assert info["stop_reason"] == "submitted" and info["correct"] is True
            reward, info = play(env, index, ["SUBMIT"])
            assert reward == 0.0, (name, level, index, "passes untouched")
            t = env.task
            reward, info = play(env, index, typed_in(t))
            breakdown = info["reward_breakdown"]
            assert breakdown["values_matched"] == breakdown["values_total"], (name, level, index, info["mismatches"])
            assert reward == 0.0, (name, level, index, "typed-in values pass")
    finally:
        env.close()
