"""What a spreadsheet task is: a starting workbook, an instruction, the cells to judge with
their expected values, and how to recompute those values when the inputs change.

The expected values come from plain Python over the task's data (`truth`), never from the
formula engine, so an engine bug cannot make a wrong answer look right. Where the task asks
for formulas (`formula_cells`), the env changes the data of the `inputs` (numbers scaled,
dates moved, text shuffled within its column) and runs the task's `changes` (rows moved,
values put on thresholds, ...; see `perturb`), recalculates the agent's workbook and asks
`truth` again: a cell that holds the right value typed in, or a formula that hard-codes
what it should look up, fails.

The prompt is the instruction followed by the starting sheets as grids (`render`). Task `i`
of a family at a level is a pure function of (family, level, i) (`task_rng` of
`rlenvs.core.procedural`, where `Family` lives too; both are importable from here).
`truth` must be picklable (a module-level function or a `functools.partial` of one), so
that an env copied mid-episode keeps its task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rlenvs.core.procedural import Family as Family
from rlenvs.core.procedural import task_rng as task_rng  # the seeding of every family, kept importable here
from rlenvs.core.task import Task
from rlenvs.envs.spreadsheet.perturb import Change
from rlenvs.envs.spreadsheet.render import render_workbook
from rlenvs.workbook.workbook import Workbook

Rows = tuple[tuple[Any, ...], ...]
"""A sheet's content from A1: rows of constants (numbers, text, bools, dates, None) and
formula texts starting with "="."""
Truth = Callable[[Mapping[str, list[list[Any]]]], Mapping[str, Any]]
"""(sheet name -> rows of input values) -> {target cell ref -> expected value}."""


@dataclass(frozen=True)
class SpreadsheetTask(Task):
    sheets: Mapping[str, Rows]
    """The starting workbook, sheet by sheet, in order."""
    expected: Mapping[str, Any]
    """Target cells ("Sheet1!D2") and their values."""
    solution: tuple[str, ...]
    """Reference replies, one per turn, each a block of actions; the oracle then submits."""
    formula_cells: tuple[str, ...] = ()
    """Targets that must hold formulas that follow the data (checked by perturbing `inputs`)."""
    inputs: tuple[str, ...] = ()
    """Ranges ("Data!C2:C40") whose data the perturbation check scales, moves and shuffles."""
    changes: tuple[Change, ...] = ()
    """The check's further steps (`perturb`): what scaling cannot move (keys, rows, values on
    thresholds)."""
    truth: Truth | None = field(default=None, compare=False)
    """Recomputes `expected` from input data: needed when `formula_cells` is not empty."""
    decimals: Mapping[str, int] = field(default_factory=dict)
    """Targets the task asks rounded, and to how many decimals: their values must carry no
    more (`verdict`), which the two-decimal comparison alone cannot tell."""


@dataclass(frozen=True)
class Scenario:
    """One generated task, before it gets its id: what a family's generator returns."""

    instruction: str
    sheets: Mapping[str, Rows]
    expected: Mapping[str, Any]
    solution: tuple[str, ...]
    formula_cells: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    truth: Truth | None = None
    changes: tuple[Change, ...] = ()
    decimals: Mapping[str, int] = field(default_factory=dict)


def family_task(family: Family[Scenario], level: int, index: int) -> SpreadsheetTask:
    """Task `index` of `family` at `level`: its scenario, posed with the sheets as grids."""
    scenario = family.scenario(level, index)
    if scenario.formula_cells and scenario.truth is None:
        raise ValueError(f"{family.name} L{level}: a task that asks for formulas needs `truth` to recompute them")
    return SpreadsheetTask(
        task_id=family.task_id(level, index, prefix="spreadsheet"),
        prompt=f"{scenario.instruction}\n\n{render_workbook(Workbook.from_rows(scenario.sheets))}",
        sheets=dict(scenario.sheets),
        expected=dict(scenario.expected),
        solution=tuple(scenario.solution),
        formula_cells=tuple(scenario.formula_cells),
        inputs=tuple(scenario.inputs),
        changes=tuple(scenario.changes),
        truth=scenario.truth,
        decimals=dict(scenario.decimals),
    )
