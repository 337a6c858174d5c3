"""The spreadsheet action language (rlenvs.envs.spreadsheet.actions): what parses, what does
not, and that any text gets either actions or an ActionError naming the line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlenvs.envs.spreadsheet.actions import (
    MAX_ACTIONS,
    ActionError,
    Area,
    parse_actions,
    parse_area,
    parse_content,
)
from rlenvs.workbook.cells import column_letters, column_number


def test_every_verb_parses():
    reply = """I will add the column.
```
SET E1 Revenue
set e2 =C2*D2
FILL E2 E3:E21
READ 'Q1 Data'!A1:B3
INSERT ROWS 5 2
DELETE ROWS Data!7:9
SORT A2:E21 BY e desc
# a comment
SUBMIT
```"""
    actions = parse_actions(reply)
    assert [a.verb for a in actions] == ["set", "set", "fill", "read", "insert", "delete", "sort", "submit"]
    assert actions[0].content == "Revenue" and actions[1].content == "=C2*D2"
    assert actions[2].source == Area(None, 2, 5, 2, 5) and actions[2].target == Area(None, 3, 5, 21, 5)
    assert actions[3].target == Area("Q1 Data", 1, 1, 3, 2)
    assert (actions[4].target.top, actions[4].count) == (5, 2)
    assert (actions[5].target, actions[5].count) == (Area("Data", 7, 1, 9, 1), 3)
    assert (actions[6].key_column, actions[6].descending) == (5, True)


def test_every_fenced_block_with_actions_is_read_in_order():
    """Actions in one block and SUBMIT in a second were an empty episode (only the last block
    was read); a block of data the reply shows (no line starts with an action word) is not
    actions."""
    reply = (
        'The data:\n```\n| A | B |\n| x | 1 |\n```\nActions:\n```\nSET E1 "Stock Value"\nSET E2 =C2*D2\n'
        "FILL E2 E3:E21\n```\nThen submit:\n```\nSUBMIT\n```"
    )
    actions = parse_actions(reply)
    assert [a.verb for a in actions] == ["set", "set", "fill", "submit"] and [a.line for a in actions] == [1, 2, 3, 4]
    with pytest.raises(ActionError, match="line 3 `BOGUS`"):
        parse_actions("```\nSET A1 1\n```\n```\nSET B1 2\nBOGUS\n```")


def test_a_plan_in_prose_in_a_fenced_block_is_not_actions():
    """A plan whose first word is an action word ("Fill column E with ...") made its block
    an action block, and the whole reply was refused with the right block after it."""
    reply = (
        "Plan:\n```\nFill column E with Units in Stock times Unit Cost, then submit.\n```\n\n"
        '```\nSET E1 "Stock Value"\nSET E2 =C2*D2\nFILL E2 E3:E21\nSUBMIT\n```'
    )
    assert [a.verb for a in parse_actions(reply)] == ["set", "set", "fill", "submit"]
    for plan in (
        "Set the header, then sort by score.",
        "Sort by score, highest first",
        "Delete the duplicate rows.",
        'Read the data first.\nSET E1 "Total"',
    ):
        assert [a.verb for a in parse_actions(f"```\n{plan}\n```\n```\nSUBMIT\n```")] == ["submit"], plan
    with pytest.raises(ActionError, match="line 2 `FILL E2`"):  # a mistyped action is reported, not taken for prose
        parse_actions("```\nSET E2 =C2*D2\nFILL E2\n```")


def test_a_block_repeated_later_runs_once():
    """The plan shown in one block and repeated as the final block ran twice: DELETE ROWS
    deleted rows that were no duplicates. A block whose actions all come again, in order,
    in a later block is left out; different blocks still all run, in order."""
    plan = "```\nDELETE ROWS 22\nDELETE ROWS 12\nDELETE ROWS 6\n```"
    final = "```\nDELETE ROWS 22\nDELETE ROWS  12\n# bottom first\nDELETE ROWS 6\nSUBMIT\n```"
    assert [a.target.top for a in parse_actions(f"I will delete:\n{plan}\nFinal actions:\n{final}")[:3]] == [22, 12, 6]
    assert len(parse_actions(f"{plan}\n{final}")) == 4
    draft, fixed = "```\nSET E2 =C2*D2\n```", '```\nSET E1 "Value"\nSET E2 =C2*D2\nFILL E2 E3:E9\n```\n```\nSUBMIT\n```'
    assert [a.verb for a in parse_actions(draft + fixed)] == ["set", "set", "fill", "submit"]
    steps = '```\nSET E1 "Value"\n```\n```\nSET E2 =C2*D2\nFILL E2 E3:E9\nSUBMIT\n```'
    assert [a.verb for a in parse_actions(steps)] == ["set", "set", "fill", "submit"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("-3.5", -3.5),
        ("1e3", 1000.0),
        ("TRUE", True),
        ("false", False),
        ('"  spaced "', "  spaced "),
        ('"=not a formula"', "=not a formula"),
        ("North West", "North West"),
        ("", None),
        ("=A1 + 2", "=A1 + 2"),
        ("007", 7),
        ("'Stock Value'", "Stock Value"),
        ("'00123", "00123"),
        ("'TRUE", "TRUE"),
        ("'42'", "42"),
        ("'O'Neill'", "O'Neill"),
        ("'", None),
        ("Students'", "Students'"),
        ("\u201cStock Value\u201d", "Stock Value"),
        ("\u2018Stock Value\u2019", "Stock Value"),
        ("\u201cO'Neill\u201d", "O'Neill"),
        ("\u201cunclosed", "\u201cunclosed"),
    ],
)
def test_set_contents(text, value):
    """A leading apostrophe means text, as in Excel (the apostrophe is not part of it), and
    text in single quotes is the text between them."""
    assert parse_content(text) == value


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "no actions"),
        ("MERGE A1:B2", "unknown action 'MERGE'"),
        ("SET", "write SET <cell>"),
        ("SET A1:B2 3", "is not a cell"),
        ("FILL D2", "write FILL"),
        ("READ", "write READ"),
        ("SORT A2:D9 BY F", "column F is not inside"),
        ("SORT A2:D9", "write SORT"),
        ("INSERT ROWS 5:6", "INSERT ROWS takes a row and a count"),
        ("DELETE ROWS 0", "rows must lie in"),
        ('SET A1 "open', "not a quoted text"),
        ("SET A1 1\nSUBMIT now", "SUBMIT takes nothing"),
        ("READ ZZZZ1", "is not a range"),
        ("SET CW1 1", "outside the sheet"),
        ("SET A1 '=SUM(B1:B3)", "text starting with ="),
    ],
)
def test_malformed_lines_are_named_with_the_fix(reply, message):
    with pytest.raises(ActionError, match=message):
        parse_actions(reply)


def test_one_bad_line_is_reported_with_its_number_and_nothing_else_is_returned():
    with pytest.raises(ActionError) as caught:
        parse_actions("SET A1 1\nSET B1 2\nFROB\nSET C1 3")
    assert str(caught.value).startswith("line 3 `FROB`: unknown action")


def test_too_many_actions_are_refused():
    with pytest.raises(ActionError, match=f"at most {MAX_ACTIONS}"):
        parse_actions("\n".join(["READ A1"] * (MAX_ACTIONS + 1)))


def test_columns_and_ranges():
    assert [column_number(c) for c in ("A", "Z", "AA", "cv")] == [1, 26, 27, 100]
    assert [column_letters(n) for n in (1, 26, 27, 100)] == ["A", "Z", "AA", "CV"]
    assert parse_area("C9:A2") == Area(None, 2, 1, 9, 3)  # corners in any order
    assert parse_area("$B$2", single=True) == Area(None, 2, 2, 2, 2)


@given(st.text(max_size=300))
def test_any_text_parses_or_raises_action_error(text):
    try:
        actions = parse_actions(text)
    except ActionError as error:
        assert str(error)
    else:
        assert actions and all(action.verb for action in actions)
