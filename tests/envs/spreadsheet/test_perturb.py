"""The formula check's changes of a task's data (rlenvs.envs.spreadsheet.perturb): each step
moves what it promises, keeps the kinds of values and what the families rely on (unique
lookup keys, a row per group, distinct scores where a rank promises them), and writes only
its own area. What they are for, through the env: tests/envs/spreadsheet/test_perturb_shortcuts.py."""

from __future__ import annotations

import datetime as dt
import math
import pickle
import re

import numpy as np
import pytest

from rlenvs.core import names
from rlenvs.core.names import WIDE_FIRST_NAMES as FIRST_NAMES
from rlenvs.envs.spreadsheet.actions import parse_area
from rlenvs.envs.spreadsheet.families import FAMILIES
from rlenvs.envs.spreadsheet.families.clean_text import reshaped_phone
from rlenvs.envs.spreadsheet.families.fresh import FRESH_FIRST_NAMES
from rlenvs.envs.spreadsheet.perturb import (
    Blanks,
    Copy,
    CycleColumns,
    CycleRows,
    DateEdges,
    Distinct,
    FreshTexts,
    LeapPhase,
    OnThreshold,
    Remap,
    Runs,
    SameDay,
    SwapColumns,
    Ties,
    _cycle,
    perturb,
    written_areas,
)
from rlenvs.envs.spreadsheet.perturb.blanks import rounding_side
from rlenvs.envs.spreadsheet.tasks import family_task
from rlenvs.envs.spreadsheet.verdict import changed_data

SEEDS = range(30)
FORMULA_TASKS = [
    (name, level)
    for name, family in FAMILIES.items()
    for level in family.levels
    if family_task(family, level, 0).formula_cells
]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def column(sheets, sheet: str, col: int, first: int = 2) -> list:
    return [row[col - 1] if col - 1 < len(row) else None for row in sheets[sheet][first - 1 :]]


def test_the_cycle_goes_through_every_element_once():
    for n in range(2, 25):
        for seed in range(20):
            order, seen, i = _cycle(n, rng(seed)), set(), 0
            while i not in seen:
                seen.add(i)
                i = order[i]
            assert seen == set(range(n)) and sorted(order) == list(range(n)), (n, order)


def test_cycle_rows_moves_every_row_as_a_whole_and_within_keeps_each_stratum():
    sheets = {"S": [["id", "group", "x"]] + [[f"r{i}", "ab"[i % 2], i] for i in range(10)]}
    changed = perturb(sheets, (), rng(), (CycleRows("S!A2:C11"),))
    rows = changed["S"][1:]
    assert sorted(map(tuple, rows)) == sorted(map(tuple, sheets["S"][1:]))
    assert all(new != old for new, old in zip(rows, sheets["S"][1:], strict=True))
    changed = perturb(sheets, (), rng(), (CycleRows("S!C2:C11", within="B"),))
    assert column(changed, "S", 2) == column(sheets, "S", 2) and column(changed, "S", 1) == column(sheets, "S", 1)
    for new, old in zip(changed["S"][1:], sheets["S"][1:], strict=True):
        assert new[2] != old[2] and new[2] % 2 == old[2] % 2  # moved, to a row of its own group


def test_cycle_columns_moves_the_header_with_its_column():
    sheets = {"R": [["Zone", "S", "M", "L"], ["Oslo", 1.0, 2.0, 3.0], ["Lyon", 4.0, 5.0, 6.0]]}
    changed = perturb(sheets, (), rng(), (CycleColumns("R!B1:D3"),))
    by_header = {changed["R"][0][c]: (changed["R"][1][c], changed["R"][2][c]) for c in range(1, 4)}
    assert by_header == {"S": (1.0, 4.0), "M": (2.0, 5.0), "L": (3.0, 6.0)} and changed["R"][0] != sheets["R"][0]


@pytest.mark.parametrize("op", [">=", ">", "<", "<="])
def test_on_threshold_puts_a_value_on_the_threshold_and_flips_a_row_each_way(op):
    holds = {">=": lambda v: v >= 60, ">": lambda v: v > 60, "<": lambda v: v < 60, "<=": lambda v: v <= 60}[op]
    values = [12, 95, 33, 71, 80, 45, 88, 20, 66, 51]
    sheets = {"G": [["Student", "Score"]] + [[f"s{i}", v] for i, v in enumerate(values)]}
    for seed in range(10):
        after = column(perturb(sheets, (), rng(seed), (OnThreshold("G!B2:B11", tests=(("B", op, 60),)),)), "G", 2)
        assert 60 in after and all(isinstance(v, int) for v in after)
        flips = [(holds(a), holds(b)) for a, b in zip(values, after, strict=True) if holds(a) != holds(b)]
        assert (True, False) in flips and (False, True) in flips, (values, after)


def test_on_threshold_keeps_the_other_conditions_from_hiding_the_one_tested():
    """OR(B<50, C<40): on the row whose exam is put on 50, the coursework passes, so that
    B<=50 instead of B<50 shows; AND(B>=C, D>=4): on the row put on its quota, the rating
    is at least 4."""
    sheets = {
        "G": [["Student", "Exam", "Coursework"]] + [[f"s{i}", 20 + 7 * i % 60, 10 + 5 * i % 30] for i in range(12)]
    }
    step = OnThreshold("G!B2:C13", tests=(("B", "<", 50), ("C", "<", 40)), combine="or")
    for seed in range(20):
        rows = perturb(sheets, (), rng(seed), (step,))["G"][1:]
        assert any(b == 50 and c >= 40 for _, b, c in rows) and any(c == 40 and b >= 50 for _, b, c in rows)
    sheets = {
        "B": [["Rep", "Sales", "Quota", "Rating"]]
        + [[f"r{i}", 900.0 + 50 * i, 1000, 3.0 + i % 3 * 0.5] for i in range(10)]
    }
    step = OnThreshold("B!B2:D11", tests=(("B", ">=", "C"), ("D", ">=", 4)))
    for seed in range(20):
        rows = perturb(sheets, (), rng(seed), (step,))["B"][1:]
        assert any(s == q and r >= 4 for _, s, q, r in rows) and any(r == 4 and s >= q for _, s, q, r in rows)


def test_every_row_of_a_label_task_changes_its_label_in_one_copy_and_some_keep_theirs_in_each():
    """Scaling alone never carries a value far from its threshold across it, so every row's
    label must change in one of the episode's copies (a typed label fails); and where every
    row's label changed in every copy, `IF(B2=57,"Fail","Pass")` per row (the starting
    value's label, else the other one) passed: each copy keeps some rows' labels with their
    values moved (`OnThreshold`'s plan, the same for both copies of an episode)."""
    for level in (1, 2):
        for index in range(16):
            t = family_task(FAMILIES["conditional-label"], level, index)
            for seed in range(4):
                copies = [changed_data(t, seed, round_)[0] for round_ in (0, 1)]
                truths = [t.truth(copy) for copy in copies]
                never = [cell for cell in t.formula_cells if all(truth[cell] == t.expected[cell] for truth in truths)]
                assert not never, (t.task_id, seed, never)
                sheet = next(iter(t.sheets))
                for copy, truth in zip(copies, truths, strict=True):
                    moved = [
                        new != old for new, old in zip(column(copy, sheet, 2), column(t.sheets, sheet, 2), strict=True)
                    ]
                    kept = [
                        cell
                        for cell, value_moved in zip(t.formula_cells, moved, strict=True)
                        if value_moved and truth[cell] == t.expected[cell]
                    ]
                    assert kept, (t.task_id, seed)


def test_a_copy_made_alone_still_keeps_and_changes_labels():
    """Without an episode (`perturb` called on its own) the plan is drawn from the copy's
    generator: about half the rows change their label."""
    t = family_task(FAMILIES["conditional-label"], 1, 0)
    for seed in range(10):
        truth = t.truth(perturb(t.sheets, t.inputs, rng(seed), t.changes))
        changed = sum(truth[cell] != t.expected[cell] for cell in t.formula_cells)
        assert 0 < changed < len(t.formula_cells), (seed, changed)


def test_runs_move_a_boundary_and_number_each_run_again():
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    sheets = {
        "S": [["Store", "Month", "Sales"]] + [[store, months[m], 1.0] for store in ("Oslo", "Lyon") for m in range(11)]
    }
    for seed in range(10):
        rows = perturb(sheets, (), rng(seed), (Runs("S!A2:B23", labels=months),))["S"][1:]
        stores = [row[0] for row in rows]
        assert stores != column(sheets, "S", 1) and stores == sorted(stores, key=("Oslo", "Lyon").index)
        first_lyon = stores.index("Lyon")
        assert [row[1] for row in rows] == [*months[:first_lyon], *months[: len(rows) - first_lyon]]


def test_swap_columns_moves_some_debits_to_credits_and_back():
    sheets = {"A": [["Debit", "Credit"]] + [[10.0 + i, None] if i % 3 else [None, 5.0 + i] for i in range(12)]}
    rows = perturb(sheets, (), rng(), (SwapColumns("A!A2:B13"),))["A"][1:]
    moved = [(old, new) for old, new in zip(sheets["A"][1:], rows, strict=True) if old != new]
    assert any(old[0] is not None for old, _ in moved) and any(old[1] is not None for old, _ in moved)
    assert all(new == old[::-1] for old, new in moved)


def test_ties_where_asked_and_distinct_where_promised():
    sheets = {"E": [["Student", "Score"]] + [[f"s{i}", v] for i, v in enumerate((12, 30, 18, 25, 14, 22, 19, 27))]}
    for seed in range(10):
        tied = column(perturb(sheets, ("E!B2:B9",), rng(seed), (Ties("E!B2:B9"),)), "E", 2)
        assert len(set(tied)) < len(tied)
        distinct = column(perturb(sheets, ("E!B2:B9",), rng(seed), (Ties("E!B2:B9"), Distinct("E!B2:B9"))), "E", 2)
        assert len(set(distinct)) == len(distinct) and all(isinstance(v, int) for v in distinct)


def test_same_day_puts_dates_on_an_anniversary_and_beside_it():
    report = dt.date(2025, 6, 14)
    hired = [dt.date(2010 + i, 1 + i % 12, 1 + 2 * i % 28) for i in range(12)]
    sheets = {
        "S": [["Name", "Hired", "Report"], ["a", hired[0], report]] + [[f"n{i}", d] for i, d in enumerate(hired[1:])]
    }
    after = column(perturb(sheets, (), rng(), (SameDay("S!B2:B13", unit="Y", cell="S!C2"),)), "S", 2)
    days = {(d - dt.date(d.year, 6, 14)).days for d in after if d not in hired}
    assert days == {-1, 0, 1}
    start = [dt.date(2022, 1 + i % 12, 1 + i) for i in range(10)]
    sheets = {"T": [["Start", "End"]] + [[s, s + dt.timedelta(days=200 + 17 * i)] for i, s in enumerate(start)]}
    rows = perturb(sheets, (), rng(), (SameDay("T!B2:B11", unit="M", against="A"),))["T"][1:]
    assert any(end.day == begin.day for begin, end in rows) and all((end - begin).days >= 31 for begin, end in rows)


def test_a_report_date_moves_into_both_phases_of_the_leap_cycle_across_the_copies():
    """Reported on 2025-01-23, every span holds as many 29 Februaries as its years need and
    days/365.25 counts whole years exactly; a year on, (days+0.25)/365.25 does: the even
    copies move the date to where its past year holds a 29 February, the odd ones to where
    it holds none, always later and never onto a 29 February."""
    cases = ((dt.date(2025, 1, 23), dt.date(2025, 1, 23), dt.date(2025, 3, 1)),
             (dt.date(2024, 10, 25), dt.date(2024, 10, 25), dt.date(2025, 3, 1)),
             (dt.date(2025, 6, 2), dt.date(2028, 3, 1), dt.date(2025, 6, 2)),
             (dt.date(2024, 1, 9), dt.date(2024, 3, 1), dt.date(2024, 1, 9)),
             (dt.date(2024, 2, 29), dt.date(2024, 3, 1), dt.date(2025, 3, 1)))  # fmt: skip
    for start, even, odd in cases:
        sheets = {"S": [["Report"], [start]]}
        for number, want in ((0, even), (1, odd), (2, even)):
            assert perturb(sheets, (), rng(), (LeapPhase("S!A2"),), Copy(number, (7,)))["S"][1][0] == want, (
                start,
                number,
            )


def _tenure_copies(t, seed):
    return [changed_data(t, seed, round_)[0] for round_ in (0, 1)]


def test_tenure_anniversaries_fall_where_an_average_year_miscounts():
    for index in range(40):
        t = family_task(FAMILIES["date-diff"], 2, index)
        if '$F$2,"Y"' not in t.solution[0]:
            continue
        for seed in range(3):
            wrong = False
            for copy in _tenure_copies(t, seed):
                report, truth = copy["Staff"][1][5], t.truth(copy)
                years = [(report - row[2]).days / 365.25 for row in copy["Staff"][1:]]
                wrong |= any(int(y) != truth[f"Staff!D{r}"] for r, y in enumerate(years, 2))
            assert wrong, (t.task_id, seed)


@pytest.mark.parametrize("length", [365.25, 365.2425, 365, 366, 365.5])
def test_no_average_year_with_any_offset_counts_both_copies_right(length):
    """`INT((report-hire+a)/L)` is right on every hire for a report date in one phase of the
    leap cycle when `a` suits it ((days+0.25)/365.25 passed 184 of 200 episodes): across an
    episode's two copies, with the hires on and a day after one anniversary, every `a`
    fails one of them."""
    offsets = [k / 40 for k in range(-60, 81)]
    for index in range(0, 40, 3):
        t = family_task(FAMILIES["date-diff"], 2, index)
        if '$F$2,"Y"' not in t.solution[0]:
            continue
        for seed in range(3):
            copies = [(copy["Staff"], t.truth(copy)) for copy in _tenure_copies(t, seed)]
            for offset in offsets:
                right = all(
                    math.floor(((rows[1][5] - row[2]).days + offset) / length) == truth[f"Staff!D{r}"]
                    for rows, truth in copies
                    for r, row in enumerate(rows[1:], 2)
                )
                assert not right, (t.task_id, seed, length, offset)


def test_date_edges_put_dates_on_month_ends_and_a_year_away():
    dates = [dt.date(2024, 1 + i % 6, 10 + i) for i in range(16)]
    after = column(perturb({"S": [["Date"]] + [[d] for d in dates]}, (), rng(), (DateEdges("S!A2:A17"),)), "S", 1)
    changed = [(old, new) for old, new in zip(dates, after, strict=True) if old != new]
    assert any(new.day == 1 for _, new in changed) and any((new + dt.timedelta(days=1)).day == 1 for _, new in changed)
    assert any(new.year != old.year and new.month == old.month for old, new in changed)
    # the 1st after every month shorter than 31 days (a month taken as 31 days counts it), every 31st
    assert {dt.date(2024, m, 1) for m in (3, 5, 7)} <= set(after) and {dt.date(2024, m, 31) for m in (1, 3, 5)} <= set(
        after
    )


def test_blanks_go_where_the_group_changed_and_every_group_keeps_a_value():
    sheets = {
        "L": [["Sample", "Batch", "Yield"]]
        + [[f"s{i}", "B1" if i < 5 else "B2", 10.0 + i if i % 4 else None] for i in range(10)]
    }
    for seed in range(10):
        changed = perturb(sheets, (), rng(seed), (CycleRows("L!A2:C11"), Blanks("L!C2:C11", "B")))
        rows, before = changed["L"][1:], sheets["L"][1:]
        added = sum(row[2] is None for row in rows) - sum(row[2] is None for row in before)
        assert 1 <= added <= 2 and {row[1] for row in rows if row[2] is not None} == {"B1", "B2"}
        cycled = perturb(sheets, (), rng(seed), (CycleRows("L!A2:C11"),))["L"][1:]
        blanked = [
            i for i, (row, was) in enumerate(zip(rows, cycled, strict=True)) if row[2] is None and was[2] is not None
        ]
        assert len(blanked) == added and all(rows[i][1] != before[i][1] for i in blanked)


def test_blanks_leave_an_average_that_needs_rounding_where_the_task_asks_to_round():
    """Whole numbers averaged over 2 or 4 rows (6.5, 6.25) carry no third decimal, so a
    fill formula that leaves ROUND out would pass: more rows are blanked until some blank's
    average has one."""
    values = [4, 9, None, 6, 2, 7, 3, 8, None, 5, 10, 1]
    sheets = {"L": [["Sample", "Score"]] + [[f"s{i}", v] for i, v in enumerate(values)]}
    for seed in range(20):
        column_after = [row[1] for row in perturb(sheets, (), rng(seed), (Blanks("L!B2:B13", rounded=2),))["L"][1:]]
        known = [v for v in column_after if v is not None]
        assert len(known) < 10 and round(sum(known) / len(known), 2) != sum(known) / len(known), (seed, column_after)


def test_rounding_sides_read_the_value_as_a_spreadsheet_rounds_it():
    assert [rounding_side(v, 2) for v in (2.5, 2.125, 2.126, 2.124, 36.900000000000006, 1.005, 7 / 3, 8 / 3)] == [
        "exact",
        "tie",
        "up",
        "down",
        "exact",
        "tie",
        "down",
        "up",
    ]


def test_filled_averages_round_up_in_one_copy_and_down_in_the_other_beside_a_real_zero():
    """An average that only ever rounded down let ROUNDDOWN (or TRUNC) stand for ROUND, and
    data without a 0 let `IF(D2=0,...)` stand for a blank: the even copy has a blank whose
    average rounds up, the odd one one that rounds down, and each a known 0."""
    for index in range(16):
        t = family_task(FAMILIES["fill-missing"], 2, index)
        sheet = next(iter(t.sheets))
        for seed in range(4):
            for round_, side in ((0, "up"), (1, "down")):
                changed = changed_data(t, seed, round_)[0]
                values = column(changed, sheet, 4)
                assert 0 in values, (t.task_id, seed, round_, values)
                blanks = [f"{sheet}!E{r}" for r, v in enumerate(values, 2) if v is None]
                raw = {
                    cell: _average_of(changed, sheet, int(cell.split("!E")[1]), "AVERAGEIF" in t.solution[0])
                    for cell in blanks
                }
                assert any(rounding_side(value, 2) == side for value in raw.values()), (t.task_id, seed, round_, raw)


def _average_of(changed, sheet: str, row: int, by_group: bool) -> float:
    rows = changed[sheet][1:]
    group = rows[row - 2][1]
    known = [r[3] for r in rows if r[3] is not None and (not by_group or r[1] == group)]
    return math.fsum(known) / len(known)


def test_remap_runs_a_module_level_function_and_the_task_still_pickles():
    t = family_task(FAMILIES["clean-text"], 1, 0)
    assert any(isinstance(change, Remap) for change in t.changes)
    assert pickle.loads(pickle.dumps(t)) == t == family_task(FAMILIES["clean-text"], 1, 0)
    changed = perturb(t.sheets, t.inputs, rng(), t.changes)
    sheet = next(iter(t.sheets))
    assert all(text.startswith(" ") and text.endswith(" ") for text in column(changed, sheet, 2))


def test_scaling_changes_every_number_and_date_and_moves_every_text():
    """A single tax rate (0.05 scaled to 0.052, rounded back to 0.05), a quantity of 1
    (rounded to 0 or 1) and a date moved by 0 days came back unchanged, and a shuffle left
    some texts in their rows: each could then be typed into a formula."""
    sheets = {
        "S": [["Item", "Qty", "Rate", "Due"]] + [[f"t{i}", 1 + i % 2, 0.05, dt.date(2024, 1, 1 + i)] for i in range(12)]
    }
    for seed in range(40):
        changed = perturb(sheets, ("S!A2:D13",), rng(seed))["S"]
        for old, new in zip(sheets["S"][1:], changed[1:], strict=True):
            assert all(a != b for a, b in zip(old, new, strict=True)), (seed, old, new)
            assert isinstance(new[1], int) and new[1] > 0 and isinstance(new[2], float) and isinstance(new[3], dt.date)
    assert perturb({"S": [["x"], [0], [0.0]]}, ("S!A2:A3",), rng())["S"][1:] == [[0], [0.0]]  # zero stays zero


def test_fresh_texts_are_texts_the_task_never_showed():
    """Not the same texts shuffled or re-cased: none equal to a starting text ignoring case
    and spaces, none twice, so a case-blind lookup of typed answers finds nothing."""
    for index in range(12):
        for level in (1, 2):
            t = family_task(FAMILIES["clean-text"], level, index)
            fresh = [change for change in t.changes if isinstance(change, FreshTexts)]
            if not fresh:
                continue
            area = parse_area(fresh[0].area)
            sheet = area.sheet
            before = {" ".join(str(v).split()).casefold() for v in column(t.sheets, sheet, area.left)}
            after = [
                " ".join(v.split()).casefold()
                for v in column(perturb(t.sheets, t.inputs, rng(index), t.changes), sheet, area.left)
            ]
            assert not before & set(after) and len(set(after)) == len(after), t.task_id


def test_first_names_and_phones_are_new_in_every_copy():
    """First names kept from the task's pool and phones that kept their digits let a typed
    table keyed on them pass (a first name's email part or initial, digits keyed by the last
    four): every first name is one no pool holds, every phone's digits are new, and each
    phone's last four digits too."""
    assert not {name.casefold() for name in FRESH_FIRST_NAMES} & {
        name.casefold() for name in (*FIRST_NAMES, *names.FIRST_NAMES)
    }
    for index in range(24):
        t = family_task(FAMILIES["clean-text"], 2, index)
        sheet = next(iter(t.sheets))
        changed = perturb(t.sheets, t.inputs, rng(index), t.changes)
        if "SUBSTITUTE" in t.solution[0]:
            digits = [re.sub(r"\D", "", phone) for phone in column(t.sheets, sheet, 2)]
            after = [re.sub(r"\D", "", phone) for phone in column(changed, sheet, 2)]
            assert len(set(after)) == len(after) and not set(after) & set(digits), t.task_id
            assert sum(new[-4:] in {old[-4:] for old in digits} for new in after) <= 2, t.task_id
            assert all(len(new) == len(digits[0]) for new in after), t.task_id
        else:
            col = 2 if "PROPER(TRIM(C2))" in t.solution[0] else 1
            firsts = {" ".join(name.split()).casefold() for name in column(t.sheets, sheet, col)}
            assert not firsts & {" ".join(name.split()).casefold() for name in column(changed, sheet, col)}, t.task_id


def test_a_reshaped_phone_holds_every_character_its_row_lacked():
    for seed in range(50):
        generator = rng(seed)
        for before in ("555-123-4567", "555 123 4567", "(555) 123-4567", "01234 567890"):
            digits = "".join(ch for ch in before if ch.isdigit())
            new = reshaped_phone(generator, "(999) 888-7777" if len(digits) == 10 else "01999 888777", before=before)
            assert {ch for ch in "() -" if ch not in before} <= set(new) and new.strip() == new
    shapes = {reshaped_phone(rng(seed), "(555) 123-4567", before="(555) 123-4567") for seed in range(60)}
    assert len(shapes) >= 6  # every shape the data allows, not one canonical shape


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(("name", "level"), FORMULA_TASKS)
def test_a_changed_copy_differs_only_in_the_areas_the_env_writes(name, level):
    for index in SEEDS:
        t = family_task(FAMILIES[name], level, index)
        before = {sheet: [list(row) for row in rows] for sheet, rows in t.sheets.items()}
        changed = perturb(t.sheets, t.inputs, rng(index), t.changes)
        assert {sheet: [list(row) for row in rows] for sheet, rows in t.sheets.items()} == before  # not modified
        areas = written_areas(t.inputs, t.changes)
        for sheet, rows in changed.items():
            for r, row in enumerate(rows, 1):
                for c, value in enumerate(row, 1):
                    old = (
                        before[sheet][r - 1][c - 1]
                        if r <= len(before[sheet]) and c <= len(before[sheet][r - 1])
                        else None
                    )
                    inside = any(
                        (a.sheet or next(iter(t.sheets))) == sheet and a.top <= r <= a.bottom and a.left <= c <= a.right
                        for a in areas
                    )
                    assert inside or value == old, (t.task_id, sheet, r, c)
                    kinds = [type(v) if not isinstance(v, (int, float)) else float for v in (value, old)]
                    assert kinds[0] is kinds[1] or value is None or old is None, (t.task_id, sheet, r, c, old, value)


def test_what_the_families_rely_on_survives_every_change():
    """Unique lookup keys, each group with a counted row (averages defined), distinct scores
    where a rank promises them, dates still in order where a day count needs it."""
    for index in SEEDS:
        for round_ in range(2):
            generator = np.random.default_rng([index, round_])
            t = family_task(FAMILIES["lookup"], 1, index)
            prices = perturb(t.sheets, t.inputs, generator, t.changes)["Prices"]
            assert len({row[0] for row in prices[1:]}) == len(prices) - 1
            t = family_task(FAMILIES["group-totals"], 2, index)
            expected = t.truth(perturb(t.sheets, t.inputs, generator, t.changes))
            assert all(isinstance(v, (int, float, str)) for v in expected.values()), t.task_id
            for level in (1, 2):
                t = family_task(FAMILIES["rank"], level, index)
                if level == 2 and "COUNTIFS" not in t.solution[0]:
                    continue
                scores = column(perturb(t.sheets, t.inputs, generator, t.changes), next(iter(t.sheets)), 3)
                assert len(set(scores)) == len(scores), t.task_id
            t = family_task(FAMILIES["date-diff"], 1, index)
            sheet = next(iter(t.sheets))
            start, end = (2, 4) if sheet == "Invoices" else (2, 3)
            rows = perturb(t.sheets, t.inputs, generator, t.changes)[sheet][1:]
            assert all(row[end] > row[start] for row in rows), t.task_id
            t = family_task(FAMILIES["date-diff"], 2, index)
            if "DATEDIF(C2,D2" in t.solution[0]:
                rows = perturb(t.sheets, t.inputs, generator, t.changes)["Subscriptions"][1:]
                assert all(end >= start for _, _, start, end, *_ in rows), t.task_id


def test_the_changes_name_areas_that_parse():
    for name, level in FORMULA_TASKS:
        for index in range(5):
            t = family_task(FAMILIES[name], level, index)
            for change in t.changes:
                assert parse_area(change.area).sheet in t.sheets, (t.task_id, change)
