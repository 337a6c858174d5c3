"""Workbooks that get a spreadsheet task's values without computing them from its data, written
from the task's own expected values, inputs and gold actions; each must earn the env's lowest
reward, and the gold done with a harmless extra must still earn the gold's.

- *typed values*: every target's expected value typed in (where the task asks for formulas);
- *dressed constants*: each value as a formula that reads nothing (`=42`) or reads a data cell
  and ignores it (`=42+0*B2`), the way a hand-resolved lookup or grouping is written;
- *hand-resolved lookup*: each value behind a condition on a data cell that gives it either
  way (`=IF(B2=B2,42,42)`);
- *overwritten input*: the gold, then a data cell typed over with another value, or cleared;
- *volatile*: the gold's values, each `+0*RAND()` (a value that changes at every
  recalculation is not an answer, even when RAND is multiplied away);
- *equivalent*: the gold, then a note typed far from the data and the targets, and a data cell
  typed back as its own value (no change to the data).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from rlenvs.testing.certify.probes import Probe, Subject, attack

FAR_CELL = "CV9999"
"""A cell no task reads or writes (the last column and nearly the last row an agent may use)."""


def spreadsheet_probes(subject: Subject) -> Iterator[Probe]:
    """Every spreadsheet move for a spreadsheet task (none for any other task)."""
    task = subject.task
    if task is None or not all(hasattr(task, name) for name in ("expected", "formula_cells", "inputs", "sheets")):
        return
    targets = dict(task.expected)
    first_sheet = next(iter(task.sheets))
    data_cell = _first_data_cell(task, first_sheet)
    gold = _gold_actions(subject)
    if task.formula_cells and targets:
        typed = [f"SET {cell} {_literal(value)}" for cell, value in targets.items()]
        yield _moves("typed values", typed, "every target's expected value typed in")
        yield _moves(
            "dressed constants",
            [f"SET {cell} ={_formula_value(value)}" for cell, value in targets.items()],
            "every expected value as a formula that reads nothing",
        )
        if data_cell is not None:
            yield _moves(
                "dressed constants",
                [
                    f"SET {cell} =IF(ISBLANK({data_cell}),{_formula_value(v)},{_formula_value(v)})"
                    for cell, v in targets.items()
                ],
                "every expected value behind a data cell it ignores (a lookup resolved by hand)",
            )
            yield _moves(
                "hand-resolved lookup",
                [
                    f"SET {cell} =IF({data_cell}={data_cell},{_formula_value(v)},{_formula_value(v)})"
                    for cell, v in targets.items()
                ],
                "every expected value behind a condition on the data that gives it either way",
            )
    if gold and data_cell is not None:
        given = _value_at(task, data_cell, first_sheet)
        other = "overwritten" if given != "overwritten" else "changed"
        yield _moves(
            "overwritten input", [*gold, f"SET {data_cell} {_literal(other)}"], "the gold, then a data cell typed over"
        )
        yield _moves("overwritten input", [*gold, f"SET {data_cell}"], "the gold, then a data cell cleared")
        if isinstance(given, (str, int, float)) and not str(given).startswith(("=", "'")):  # SET can type it
            yield _moves(
                "notation",
                [*gold, f'SET {FAR_CELL} "checked"', f"SET {data_cell} {_literal(given)}"],
                "the gold, a note far from the data, and a data cell typed back as its own value",
                expect="equivalent",
            )
    if task.formula_cells and targets:
        yield _moves(
            "volatile",
            [f"SET {cell} ={_formula_value(value)}+0*RAND()" for cell, value in targets.items()],
            "every expected value plus 0*RAND()",
        )


def _gold_actions(subject: Subject) -> list[str]:
    """The gold's action lines before its SUBMIT (from its fenced blocks)."""
    lines: list[str] = []
    for turn in subject.oracle:
        for line in turn.replace("```", "\n").splitlines():
            stripped = line.strip()
            if stripped and stripped.upper() != "SUBMIT":
                lines.append(stripped)
    return lines


def _first_data_cell(task: object, first_sheet: str) -> str | None:
    """The top-left cell of the task's first input area, with its sheet."""
    inputs = getattr(task, "inputs", ())
    if not inputs:
        return None
    area = inputs[0]
    sheet, _, cells = area.rpartition("!")
    start = cells.split(":")[0]
    return f"{sheet or first_sheet}!{start}" if sheet else start


def _value_at(task: object, cell: str, first_sheet: str) -> object:
    from rlenvs.workbook.cells import parse_ref

    ref = parse_ref(cell)
    rows = task.sheets[ref.sheet or first_sheet]  # type: ignore[attr-defined]
    if ref.row - 1 < len(rows) and ref.col - 1 < len(rows[ref.row - 1]):
        return rows[ref.row - 1][ref.col - 1]
    return None


def _literal(value: object) -> str:
    """A value as SET writes it: numbers and booleans bare, text in JSON quotes."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps("" if value is None else str(value))


def _formula_value(value: object) -> str:
    """A value inside a formula: numbers bare, text quoted with doubled quotes."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + str("" if value is None else value).replace('"', '""') + '"'


def _moves(kind: str, lines: list[str], why: str, expect: str = "attack") -> Probe:
    reply = "```\n" + "\n".join(lines) + "\nSUBMIT\n```"
    return Probe(kind, expect, (reply,), why) if expect != "attack" else attack(kind, reply, why)
