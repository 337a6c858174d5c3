"""The oracle of Spreadsheet-v1: the reference replies, from whatever the workbook holds now.

A spreadsheet's state is what its cells hold (constants and formula texts): the verdict
reads nothing else (it recalculates copies itself and seeds their RAND). So the states the
reference replies pass through are computed, not remembered: `gold_states` replays them on
the task's starting workbook, the same way the env carries out a reply (`run_reply`). The
oracle then asks where the workbook stands:

- it holds what the first k reference replies leave (k no more than the turns taken: a
  READ, or any reply that changed nothing, leaves it there): the next reference reply, then
  SUBMIT;
- anything else (a cell set, cleared or moved by a reply that is not the reference's): the
  reference's final workbook is reached from here by writing each cell that differs
  (`rewrite`): SET of its constant or formula, or clearing it, every write checked to
  parse back as the very content it writes; a date or error constant, which no SET can
  type, is copied with FILL from a cell that holds it (before that cell is written; through
  a scratch cell where rows were sorted or moved in a cycle). Replies of at most
  `MAX_ACTIONS` lines, the last ending in SUBMIT.
- The env plays those replies on a copy and judges it before giving the first: a cell that
  cannot be written back (a date the agent typed over, and no cell holds any more) is left
  as it is when the verdict does not need it (the task's input data, which the verdict
  writes over; a cell no answer reads), and the oracle refuses, with the reason, when it
  does, or when more replies are needed than turns are left.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rlenvs.envs.spreadsheet.actions import (
    MAX_ACTIONS,
    MAX_COLUMN,
    MAX_ROW,
    Action,
    ActionError,
    Area,
    cell_name,
    parse_actions,
)
from rlenvs.envs.spreadsheet.operations import run_reply
from rlenvs.envs.spreadsheet.tasks import SpreadsheetTask
from rlenvs.workbook.cells import quote_sheet
from rlenvs.workbook.workbook import Workbook

Cell = tuple[int, int, int]
"""(sheet index, row, column): actions cannot add, remove or rename sheets."""
Contents = dict[Cell, tuple[type, object]]
"""Every non-empty cell's content with its type (TRUE is not 1, and 1 is not 1.0 to a SET)."""


class OracleError(RuntimeError):
    """The oracle cannot give a reply that earns the maximum from here; the message says why."""


def contents(workbook: Workbook) -> Contents:
    """What the workbook's cells hold, as the verdict reads it."""
    found: Contents = {}
    for index, name in enumerate(workbook.sheet_names):
        for ref, content in workbook.cells(name):
            found[(index, ref.row, ref.col)] = (type(content), content)
    return found


def gold_states(task: SpreadsheetTask, seed: int) -> list[Contents]:
    """The workbook's contents at the start and after each reference reply, carried out as
    the env carries out replies, on a workbook seeded as the episode's (a SORT by a RAND
    column would otherwise order rows another way)."""
    workbook = Workbook.from_rows(task.sheets)
    workbook.seed(seed)
    states = [contents(workbook)]
    for reply in task.solution:
        run_reply(workbook, reply)
        states.append(contents(workbook))
    return states


def rewrite(task: SpreadsheetTask, workbook: Workbook, target: Contents) -> tuple[list[str], list[str]]:
    """Replies that turn `workbook` into `target` and submit (one write per cell that
    differs, at most MAX_ACTIONS lines a reply), and the cells they cannot write back: a
    date or error value that no SET can type and no cell holds any more (whether the
    verdict needs them is the caller's to find out)."""
    now = contents(workbook)
    names = workbook.sheet_names
    differ = sorted(cell for cell in set(now) | set(target) if now.get(cell) != target.get(cell))
    held = set(now.values())
    sets, copies, lost = [], {}, []
    for cell in differ:
        want = target.get(cell)
        line = _write(names, cell, None if want is None else want[1])
        if line is not None:
            sets.append(line)
        elif want is not None and want in held and not (want[0] is str and str(want[1]).startswith("=")):
            copies[cell] = want  # (a formula is not copied: FILL would move its references)
        else:
            shown = "empty" if want is None else repr(want[1])
            lost.append(f"{quote_sheet(names[cell[0]])}!{cell_name(cell[1], cell[2])} ({shown})")
    fills, scratch = _copies(task, names, now, target, copies)
    lines = fills + sets + [f"SET {_address(names, cell)}" for cell in scratch]
    step = MAX_ACTIONS - 1
    chunks = [lines[start : start + step] for start in range(0, len(lines), step)] or [[]]
    replies = ["\n".join(chunk) for chunk in chunks]
    replies[-1] = (replies[-1] + "\nSUBMIT").lstrip("\n")
    return replies, lost


def _copies(
    task: SpreadsheetTask,
    names: Sequence[str],
    now: Contents,
    target: Contents,
    copies: dict[Cell, tuple[type, object]],
) -> tuple[list[str], list[Cell]]:
    """FILL lines that copy each of `copies`' contents (dates, error values: what SET cannot
    type) from a cell that holds it now, each done before that cell is written; and the
    scratch cells used on the way, to clear. A cell whose content others need and that needs
    another's itself (rows the agent sorted or moved: a cycle) first lends its content to a
    scratch cell below everything."""
    pending = {}
    for cell, want in copies.items():
        holders = sorted(c for c, content in now.items() if content == want and c != cell)
        pending[cell] = min(holders, key=lambda c: (c in copies, target.get(c) != want, c))
    bottom = max((row for sheet, row, _ in (*now, *target) if sheet == 0), default=0)
    lines: list[str] = []
    scratch: list[Cell] = []
    while pending:
        needed = set(pending.values())
        ready = sorted(cell for cell in pending if cell not in needed)
        if not ready:  # every cell left is in a cycle: lend one's content to a scratch cell
            lender = min(pending)
            spare = (0, bottom + 1 + len(scratch), 1)
            lines.append(_fill(names, lender, spare) or "")
            scratch.append(spare)
            pending = {cell: spare if source == lender else source for cell, source in pending.items()}
            continue
        for cell in ready:
            lines.append(_fill(names, pending.pop(cell), cell) or "")
    if "" in lines:
        raise OracleError(f"task {task.task_id}: a cell the oracle would FILL lies outside what actions can reach")
    return lines, scratch


def _address(names: Sequence[str], cell: Cell) -> str:
    sheet, row, col = cell
    return cell_name(row, col) if sheet == 0 else f"{quote_sheet(names[sheet])}!{cell_name(row, col)}"


def _write(names: Sequence[str], cell: Cell, content: object) -> str | None:
    """The SET line that puts exactly `content` (None: nothing) into `cell`, or None when
    the action language cannot say it (a date, an error value, an integer past 2**53)."""
    _, row, col = cell
    if not (1 <= row <= MAX_ROW and 1 <= col <= MAX_COLUMN):
        return None
    if content is None:
        text = ""
    elif isinstance(content, bool):
        text = "TRUE" if content else "FALSE"
    elif isinstance(content, (int, float)):
        text = str(content) if isinstance(content, int) else repr(content)
    elif isinstance(content, str):
        # Formulas as they are; text as JSON, all of it ASCII and no backtick, so that no line
        # break or ``` inside it can split the reply's lines or open a fenced block.
        text = content if content.startswith("=") else json.dumps(content).replace("`", "\\u0060")
    else:
        return None
    line = f"SET {_address(names, cell)} {text}".rstrip()
    action = _parsed(line)
    if action is None or _cell_of(names, action.target) != cell:
        return None
    return line if (type(action.content), action.content) == (type(content), content) else None


def _fill(names: Sequence[str], source: Cell, cell: Cell) -> str | None:
    """The FILL line that copies `source`'s constant into `cell`, or None."""
    line = f"FILL {_address(names, source)} {_address(names, cell)}"
    action = _parsed(line)
    ok = action is not None and _cell_of(names, action.source) == source and _cell_of(names, action.target) == cell
    return line if ok else None


def _parsed(line: str) -> Action | None:
    """`line` as the env reads it, when it is one action alone. A line holding ``` is
    refused: with the reply's other lines it could open a fenced block, which changes which
    lines are read."""
    if "```" in line:
        return None
    try:
        actions = parse_actions(line)
    except ActionError:
        return None
    return actions[0] if len(actions) == 1 else None


def _cell_of(names: Sequence[str], area: Area | None) -> Cell | None:
    if area is None or (area.top, area.left) != (area.bottom, area.right):
        return None
    return (_sheet_index(names, area.sheet), area.top, area.left)


def _sheet_index(names: Sequence[str], sheet: str | None) -> int:
    if sheet is None:
        return 0
    return next((i for i, name in enumerate(names) if name.lower() == sheet.lower()), -1)


__all__ = ["OracleError", "contents", "gold_states", "rewrite"]
