"""The verdict of Spreadsheet-v1: what a workbook earns at SUBMIT, and why.

A task's targets are compared with their expected values (SpreadsheetBench's comparison,
`rlenvs.rewards.spreadsheet`); where it asks for formulas (`formula_cells`), each of those
cells must also hold a formula that uses the data and still gives `truth` of changed copies
of the data (`perturb`). Why each part is done the way it is:

- The data left as it was. A workbook whose input areas (`written_areas`: the task's
  inputs and every area its changed copies write) hold anything but the task's data scores
  0: an answer that is right only because a data cell was typed over (a lookup key fixed
  by hand, a phone column rewritten into the shape a formula wants, a row inserted or
  deleted) has destroyed what the user asked it to read. Every recalculation the verdict
  makes is then on a copy of the agent's workbook (its formulas kept) with the input areas
  written over: the task's own data for the first comparison, a changed copy for each further
  one.
- Formulas that use the data. A formula cell passes only if its formula read a cell of the
  task's data areas when it was computed, itself or through the cells it read
  (`Workbook.reads_data`): a typed value, `=42`, `=ROW(B5)` or a constant that only reads a
  header (`=IF(A1=0,"High","High")`) is not an answer computed from the data.
- Never by chance. A judged value computed from RAND, RANDBETWEEN, NOW or TODAY scores 0,
  and this holds on every recalculation (the first and each changed copy: a formula that
  reads RAND only when the data differ from the starting data, through INDIRECT or IF, is
  caught where it does). Every copy's RAND is seeded from the episode's seed, and so are
  the changed copies themselves: the same episode (task, seed, reply) always gets the same
  verdict, and each episode meets other changed data, so that a shortcut which one set of
  changed copies happens to miss is not paid every time.
- Rounded where asked. Where the task asks for values rounded to k decimals
  (`SpreadsheetTask.decimals`), a value must carry no more than k decimals as well as match:
  an unrounded 123.4568 compares equal to 123.46 at SpreadsheetBench's two decimals, but it
  is not what "rounded to 2 decimals with ROUND" asks for.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rlenvs.envs.spreadsheet.perturb import Copy, perturb, written_areas
from rlenvs.envs.spreadsheet.perturb.base import _get
from rlenvs.envs.spreadsheet.tasks import SpreadsheetTask
from rlenvs.rewards.spreadsheet import cells_match, compare_cells
from rlenvs.workbook.cells import CellRef
from rlenvs.workbook.formulas import (
    FormulaError,
    calls,
    dependencies,
    parse_formula,
)
from rlenvs.workbook.workbook import Workbook

VOLATILE = "RAND, RANDBETWEEN, NOW or TODAY"


def judge(task: SpreadsheetTask, workbook: Workbook, *, seed: int, perturbations: int) -> tuple[float, dict[str, Any]]:
    """The reward (1.0 or 0.0) of `workbook` for `task`, and what decided it (mismatches and
    a breakdown). `seed` is the episode's: it seeds RAND in every copy and the changed data."""
    edited = changed_inputs(task, workbook)
    base = on_data(task, workbook, task.sheets, seed)
    got = {cell: base.value(cell) for cell in task.expected}
    values = compare_cells(got, task.expected, decimals=task.decimals)
    info: dict[str, Any] = {"mismatches": [_mismatch(task, c, g, w) for c, g, w in values.mismatches]}
    volatile = {cell for cell in task.expected if base.depends_on_volatile(cell)}
    typed = [cell for cell in task.formula_cells if not base.reads_data(cell)]  # (reading data implies refers_to_cells)
    follows = bool(task.formula_cells) and values.all_match and not typed and not volatile
    for round_ in range(perturbations if follows else 0):
        assert task.truth is not None, "a task with formula cells has `truth` (SpreadsheetTask.truth)"
        changed, rand_seed = changed_data(task, seed, round_)
        trial = on_data(task, workbook, changed, rand_seed)
        want = {cell: value for cell, value in task.truth(changed).items() if cell in task.formula_cells}
        got = {cell: trial.value(cell) for cell in want}
        volatile.update(cell for cell in want if trial.depends_on_volatile(cell))
        if volatile or not compare_cells(got, want, decimals=task.decimals).all_match:
            follows = False
            break
    info["reward_breakdown"] = {
        "values_matched": values.matched,
        "values_total": values.total,
        "formula_cells_without_formula": len(typed),
        "volatile_cells": len(volatile),
        "formulas_follow_the_data": follows if task.formula_cells else None,
        "input_cells_changed": len(edited),
    }
    if edited:
        info["mismatches"].append(
            f"these cells of the task's data were changed (the answer must leave them as given): {', '.join(edited[:5])}"
        )
    if typed:
        info["mismatches"].append(f"these cells need a formula that reads the task's data: {', '.join(typed[:5])}")
    if volatile:
        info["mismatches"].append(
            f"these cells are computed from {VOLATILE}, which change at every recalculation: "
            f"{', '.join(sorted(volatile)[:5])}"
        )
    passed = values.all_match and not volatile and not edited and (not task.formula_cells or follows)
    return float(passed), info


def _mismatch(task: SpreadsheetTask, cell: str, got: Any, want: Any) -> str:
    """One line of `info["mismatches"]`; a value right but for the rounding asked says so."""
    if cell in task.decimals and cells_match(got, want):
        return f"{cell}: got {got!r}, expected {want!r} (the task asks it rounded to {task.decimals[cell]} decimals)"
    return f"{cell}: got {got!r}, expected {want!r}"


def changed_data(task: SpreadsheetTask, seed: int, round_: int) -> tuple[dict[str, list[list[Any]]], int]:
    """Round `round_`'s changed copy of the task's data (`perturb`) and the seed of RAND in
    the copy it is judged on: both drawn from the task, the episode's seed and the round, so
    that an episode replays exactly and every episode meets other changed data. The copy
    knows its round and the episode (`Copy`), so that what is planned across copies (a
    row's label changed in one and kept in the other) holds."""
    episode = (zlib.crc32(task.task_id.encode()), seed)
    rng = np.random.default_rng([*episode, round_])
    copy = Copy(round_, episode)
    return perturb(task.sheets, task.inputs, rng, task.changes, copy), int(rng.integers(2**63))


def changed_inputs(task: SpreadsheetTask, workbook: Workbook) -> list[str]:
    """The cells of the task's input areas whose content in `workbook` is not the task's data
    (a value typed over, a formula put in its place, a cell emptied or filled)."""
    changed = []
    first = next(iter(task.sheets))
    for area in written_areas(task.inputs, task.changes):
        sheet = area.sheet or first
        rows = [list(row) for row in task.sheets[sheet]]
        for r in range(area.top, area.bottom + 1):
            for c in range(area.left, area.right + 1):
                ref = CellRef(r, c, sheet)
                given, now = _get(rows, r, c), workbook.content(ref)
                if (type(given) is not type(now) and not _same_number(given, now)) or given != now:
                    changed.append(str(ref))
    return changed


def _same_number(a: object, b: object) -> bool:
    """5 and 5.0 (a number typed back as it was, in another type) are the same data."""
    numbers = (int, float)
    return isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool)


def on_data(
    task: SpreadsheetTask, workbook: Workbook, sheets: Mapping[str, Sequence[Sequence[Any]]], seed: int
) -> Workbook:
    """A copy of the agent's workbook whose data areas (`written_areas`) hold `sheets`'
    values, cell by cell (empty where `sheets` has none), its formulas kept, RAND seeded
    with `seed`, and the data areas marked as what the answer must read (`mark_data`)."""
    copy = workbook.copy()
    areas = data_areas(task)
    first = next(iter(sheets))
    for area in written_areas(task.inputs, task.changes):
        sheet = area.sheet or first
        rows = [list(row) for row in sheets[sheet]]
        for r in range(area.top, area.bottom + 1):
            for c in range(area.left, area.right + 1):
                copy.set(CellRef(r, c, sheet), _get(rows, r, c))
    copy.mark_data(areas)
    copy.seed(seed)
    return copy


def data_areas(task: SpreadsheetTask) -> list[str]:
    """The ranges a formula answer must be computed from: the task's inputs and every area
    its changes write."""
    return [*task.inputs, *(change.area for change in task.changes)]


def refers_to_cells(content: object) -> bool:
    """A formula (text starting with =) that reads cells: a reference to their values in its
    syntax tree, or a call of OFFSET or INDIRECT, which read the cells they compute
    (`=INDIRECT("B"&ROW())`). `=42`, `="B2"`, `=LOG10(100)` or `=ROW(B5)-1` (a position,
    not data) is a typed-in value dressed as a formula."""
    if not isinstance(content, str) or not content.startswith("="):
        return False
    try:
        tree = parse_formula(content[1:])
    except FormulaError:
        return False
    return bool(dependencies(tree)) or calls(tree, "dynamic")
