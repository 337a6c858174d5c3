"""SpreadsheetBench's cell comparison (rlenvs.rewards.spreadsheet)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlenvs.rewards.spreadsheet import cells_match, compare_cells, normalise, rounded_to


@pytest.mark.parametrize(
    ("got", "want"),
    [
        (3.14159, 3.14),
        (2, 2.0),
        (None, ""),
        ("", None),
        (-0.001, 0),
        (33.075, 33.07499999999999),
        (0.1 + 0.2, 0.3),
        ("North", "North"),
        (True, True),
        (dt.datetime(2024, 5, 1), dt.date(2024, 5, 1)),
        (1e20, 1e20 + 1),
        (dt.date(2024, 5, 1), 45413),
        (dt.datetime(2024, 5, 1, 12), 45413.5),
    ],
)
def test_equal_after_normalising(got, want):
    assert cells_match(got, want)


@pytest.mark.parametrize(
    ("got", "want"),
    [
        (3.15, 3.14),
        ("5", 5),
        (5, "5"),
        (True, 1),
        (1, True),
        (None, 0),
        ("north", "North"),
        (" North", "North"),
        (dt.date(2024, 5, 2), dt.date(2024, 5, 1)),
        ("#DIV/0!", 0),
    ],
)
def test_different_kinds_or_values_do_not_match(got, want):
    assert not cells_match(got, want)


def test_halves_round_away_from_zero_as_a_spreadsheet_does():
    assert normalise(2.345) == 2.35 and normalise(-2.345) == -2.35 and normalise(0.125) == 0.13


def test_compare_cells_counts_and_reports_the_first_mismatches():
    comparison = compare_cells({"A1": 1, "A2": "x"}, {"A1": 1.0, "A2": "y", "A3": None})
    assert (comparison.matched, comparison.total, comparison.all_match) == (2, 3, False)
    assert comparison.mismatches == (("A2", "x", "y"),)
    assert not compare_cells({}, {}).all_match  # nothing to judge is not a pass


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)))
def test_any_value_matches_itself_or_is_nan(value):
    assert cells_match(value, value) or value != value


def test_a_cell_asked_rounded_must_carry_no_more_decimals():
    """At two decimals 123.4568 and 123.46 look alike; where the task asks to round they
    are not the same answer. Float noise (36.900000000000006) is no decimal."""
    assert rounded_to(123.46, 2) and rounded_to(12.3 * 3, 1) and rounded_to(5, 2) and rounded_to(36.900000000000006, 2)
    assert (
        not rounded_to(123.4568, 2)
        and not rounded_to(12.35, 1)
        and not rounded_to("12.3", 1)
        and not rounded_to(True, 2)
    )
    assert compare_cells({"A1": 123.4568}, {"A1": 123.46}).all_match
    assert not compare_cells({"A1": 123.4568}, {"A1": 123.46}, decimals={"A1": 2}).all_match
    assert compare_cells({"A1": 123.46}, {"A1": 123.46}, decimals={"A1": 2}).all_match
