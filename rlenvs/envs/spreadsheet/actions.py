"""The action language of Spreadsheet-v1: what the agent writes, one action per line.

    SET B2 =SUM(Data!C2:C40)      a formula (anything starting with =)
    SET A1 "Total sales"          text (quotes as in JSON; bare text works too: SET A1 Total;
                                  'Total sales' and a leading apostrophe, '00123, are text too)
    SET C5 42.5 / TRUE / (empty)  a number, a boolean, or nothing to clear the cell
    FILL D2 D3:D40                copy D2 into every cell of D3:D40, relative references moved
    READ A1:F20                   show values (and formulas) of a range
    INSERT ROWS 5 2               insert 2 empty rows before row 5 (of the first sheet;
                                  `INSERT ROWS Data!5 2` for another), formulas adjusted
    DELETE ROWS 7:9               delete rows 7 to 9, formulas adjusted
    SORT A2:D40 BY C DESC         sort the rows of a range by one of its columns (ASC default)
    SUBMIT                        end the episode; the workbook is judged

Cells without a sheet name are on the first sheet; `'Q1 Data'!B2` quotes a name with
spaces. Keywords are case-insensitive. A reply's actions are the lines of its fenced blocks
(```) that hold actions, every such block in order, and the whole reply where none does. A
block holds actions when a line in it starts as an action does (SET, FILL, READ or SORT
and a cell or range, INSERT ROWS or DELETE ROWS, SUBMIT alone) and no line starts with an
action word otherwise: a table of data, an example or a plan in prose
("Fill column E with the product, then submit.") is not actions. A block whose actions
all come again, in order, in a later block (the plan shown, then repeated as the final
block) is left out, so that nothing runs twice. So actions in one block and SUBMIT in a
second are both done, in order. Blank lines and lines starting with # are skipped; lines
are numbered in the order they are read. Every line is parsed before any runs: a reply
with a malformed line changes nothing, and the error names the line and the fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from rlenvs.workbook.cells import column_letters, column_number

MAX_ACTIONS = 200
"""Per reply: a budget that keeps one turn's work bounded."""
MAX_FILL_CELLS = 20_000
MAX_ROW = 10_000
MAX_COLUMN = 100
"""The largest sheet an agent may touch: rows and columns (CV) beyond it are refused."""

_SHEET = r"(?:'(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_.]*)"
_CELL = r"\$?[A-Za-z]{1,3}\$?\d+"
REF = re.compile(rf"(?:(?P<sheet>{_SHEET})!)?(?P<cell>{_CELL})")
RANGE = re.compile(rf"(?:(?P<sheet>{_SHEET})!)?(?P<start>{_CELL})(?::(?P<end>{_CELL}))?")
ROWS = re.compile(rf"(?:(?P<sheet>{_SHEET})!)?(?P<first>\d+)(?::(?P<last>\d+))?")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class ActionError(ValueError):
    """A line that is not an action; the message says what is wrong and how to write it."""


@dataclass(frozen=True)
class Area:
    """A rectangle of cells on one sheet (sheet None: the first sheet), 1-based, inclusive."""

    sheet: str | None
    top: int
    left: int
    bottom: int
    right: int

    @property
    def cells(self) -> int:
        return (self.bottom - self.top + 1) * (self.right - self.left + 1)

    def refs(self) -> list[list[str]]:
        return [
            [cell_name(row, col) for col in range(self.left, self.right + 1)]
            for row in range(self.top, self.bottom + 1)
        ]


@dataclass(frozen=True)
class Action:
    verb: str
    """set, fill, read, insert, delete, sort, submit."""
    line: int
    target: Area | None = None
    source: Area | None = None
    content: object = None
    count: int = 0
    descending: bool = False
    key_column: int = 0


def cell_name(row: int, col: int) -> str:
    return f"{column_letters(col)}{row}"


def _coordinates(cell: str) -> tuple[int, int]:
    match = re.fullmatch(r"\$?([A-Za-z]{1,3})\$?(\d+)", cell)
    assert match is not None
    row = int(match.group(2))
    col = column_number(match.group(1)) if len(match.group(1)) < 3 else MAX_COLUMN + 1  # 3 letters: past CV
    if not (1 <= row <= MAX_ROW and 1 <= col <= MAX_COLUMN):
        raise ActionError(
            f"{cell} is outside the sheet the env allows (rows 1-{MAX_ROW}, columns A-{column_letters(MAX_COLUMN)})"
        )
    return row, col


def _sheet_name(text: str | None) -> str | None:
    if text is None:
        return None
    return text[1:-1].replace("''", "'") if text.startswith("'") else text


def parse_area(text: str, *, single: bool = False) -> Area:
    match = (REF if single else RANGE).fullmatch(text.strip())
    if match is None:
        what = "a cell such as B2 or Data!B2" if single else "a range such as A1:C10, Data!B2:B40 or a cell"
        raise ActionError(f"{text.strip()!r} is not {what}")
    if single:
        row, col = _coordinates(match.group("cell"))
        return Area(_sheet_name(match.group("sheet")), row, col, row, col)
    (r1, c1), (r2, c2) = _coordinates(match.group("start")), _coordinates(match.group("end") or match.group("start"))
    return Area(_sheet_name(match.group("sheet")), min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2))


def parse_content(text: str) -> object:
    """What SET writes: a formula, JSON-quoted text, a number, a boolean, nothing, or bare text.

    An apostrophe first means text, as typing it does in Excel: the value is what follows it
    (`'00123` is the text 00123, not the number 123; `'TRUE` the text TRUE), and the
    apostrophe is not part of it. Text in single quotes, `'Stock Value'`, is the text
    between them, as the same text in double quotes is: the closing quote is a quote, not
    content (a header typed that way is the header asked for). Typographic quotes, as a word
    processor or a model writes them (`“Stock Value”`, `‘Stock Value’`), are quotes too.
    (In a formula they are what Excel makes of them, a name: #NAME?.)"""
    text = text.strip()
    if not text:
        return None
    if len(text) >= 2 and (text[0], text[-1]) in (("\u201c", "\u201d"), ("\u2018", "\u2019")):
        inner = text[1:-1]
        if inner.startswith("="):
            raise ActionError(
                f"{text} would be text starting with =, which a cell cannot hold here: write the formula without quotes"
            )
        return inner or None
    if text.startswith("'"):
        inner = text[1:-1] if len(text) >= 2 and text.endswith("'") else text[1:]
        if inner.startswith("="):
            raise ActionError(
                f"{text} would be text starting with =, which a cell cannot hold here (it is read as a formula): "
                "write the formula without the apostrophe, or put a space before the ="
            )
        return inner or None
    if text.startswith("="):
        return text
    if text.startswith('"'):
        try:
            value = json.loads(text)
        except ValueError:
            raise ActionError(
                f'{text} is not a quoted text: close the quotes, and escape quotes inside as \\"'
            ) from None
        if not isinstance(value, str):
            raise ActionError(f"{text} is not a quoted text")
        return value
    if text.upper() in ("TRUE", "FALSE"):
        return text.upper() == "TRUE"
    if _NUMBER.fullmatch(text):
        number = float(text)
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    return text


VERBS = ("SET", "FILL", "READ", "INSERT", "DELETE", "SORT", "SUBMIT")
_AT = rf"(?:{_SHEET}!)?{_CELL}"
_FORM = re.compile(
    rf"(?:(?:SET|FILL|READ|SORT)\s+{_AT}(?::{_CELL})?(?:\s|$)|(?:INSERT|DELETE)\s+ROWS\b|SUBMIT\W*$)",
    re.IGNORECASE,
)
"""The start of an action as the verb takes it: a cell or range after SET, FILL, READ or
SORT, ROWS after INSERT or DELETE, nothing after SUBMIT (what follows is checked when the
line is parsed, so that a mistyped action is reported, not taken for prose)."""


def _starts_with_verb(line: str) -> bool:
    return line.split(" ", 1)[0].upper() in VERBS


def _holds_actions(block: str) -> bool:
    """Whether a fenced block is actions: a line in an action's form, and no line that starts
    with an action word but not in its form (prose such as "Fill column E with the product,
    then submit.", a plan shown before the actions). A line that is not an action at all
    (`BOGUS`) is an error in an action block, not prose."""
    lines = [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]
    return any(_FORM.match(line) for line in lines) and not any(
        _starts_with_verb(line) and not _FORM.match(line) for line in lines
    )


def _lines(block: str) -> list[str]:
    """A block's action lines as written (stripped): blank lines and comments left out."""
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]


def _within(lines: list[str], later: list[str]) -> bool:
    """Whether `lines` all appear in `later`, in the same order, compared with spaces
    collapsed (only for the comparison: text in quotes keeps its spaces when it runs)."""
    rest = iter(" ".join(line.split()) for line in later)
    return all(" ".join(line.split()) in rest for line in lines)


def action_lines(reply: str) -> list[tuple[int, str]]:
    """The reply's action lines, numbered in the order read (see the module docstring):
    every fenced block that holds actions, in order, but for one whose actions all come
    again, in order, in a later block (a plan or a draft shown before the final block,
    which would run twice); without such a block, the whole reply."""
    blocks = [_lines(block) for block in _FENCE.findall(reply) if _holds_actions(block)]
    kept = [lines for i, lines in enumerate(blocks) if not any(_within(lines, later) for later in blocks[i + 1 :])]
    lines = [line for block in kept for line in block] if kept else [line.strip() for line in reply.splitlines()]
    return list(enumerate((line for line in lines if line and not line.startswith("#")), 1))


def parse_actions(reply: str) -> list[Action]:
    """Every action of a reply, or ActionError naming each malformed line."""
    lines = action_lines(reply)
    if not lines:
        raise ActionError("no actions: write one action per line, e.g. `SET B2 =A2*2`, `READ A1:D10` or `SUBMIT`")
    if len(lines) > MAX_ACTIONS:
        raise ActionError(f"{len(lines)} actions in one reply: at most {MAX_ACTIONS}")
    actions, problems = [], []
    for number, line in lines:
        try:
            actions.append(parse_line(line, number))
        except ActionError as error:
            problems.append(f"line {number} `{line[:80]}`: {error}")
    if problems:
        raise ActionError("\n".join(problems))
    return actions


def parse_line(line: str, number: int) -> Action:
    verb, _, rest = line.partition(" ")
    verb, rest = verb.upper(), rest.strip()
    if verb == "SUBMIT":
        if rest:
            raise ActionError("SUBMIT takes nothing after it")
        return Action("submit", number)
    if verb == "SET":
        where, _, content = rest.partition(" ")
        if not where:
            raise ActionError("write SET <cell> <value or =formula>, e.g. SET D2 =B2*C2")
        return Action("set", number, target=parse_area(where, single=True), content=parse_content(content))
    if verb == "FILL":
        parts = rest.split()
        if len(parts) != 2:
            raise ActionError("write FILL <source cell> <target range>, e.g. FILL D2 D3:D40")
        source, target = parse_area(parts[0], single=True), parse_area(parts[1])
        if target.cells > MAX_FILL_CELLS:
            raise ActionError(f"FILL of {target.cells} cells: at most {MAX_FILL_CELLS}")
        return Action("fill", number, target=target, source=source)
    if verb == "READ":
        if not rest:
            raise ActionError("write READ <range>, e.g. READ A1:D10")
        return Action("read", number, target=parse_area(rest))
    if verb in ("INSERT", "DELETE"):
        return _rows_action(verb, rest, number)
    if verb == "SORT":
        match = re.fullmatch(r"(\S+)\s+BY\s+([A-Za-z]{1,3})(?:\s+(ASC|DESC))?", rest, re.IGNORECASE)
        if match is None:
            raise ActionError("write SORT <range> BY <column letter> [ASC|DESC], e.g. SORT A2:D40 BY C DESC")
        area, key = parse_area(match.group(1)), column_number(match.group(2))
        if not area.left <= key <= area.right:
            raise ActionError(f"column {match.group(2).upper()} is not inside the range {match.group(1)}")
        descending = (match.group(3) or "ASC").upper() == "DESC"
        return Action("sort", number, target=area, key_column=key, descending=descending)
    raise ActionError(f"unknown action {verb!r}: use SET, FILL, READ, INSERT ROWS, DELETE ROWS, SORT or SUBMIT")


def _rows_action(verb: str, rest: str, number: int) -> Action:
    words = rest.split()
    if not words or words[0].upper() != "ROWS" or len(words) not in (2, 3):
        example = "INSERT ROWS 5 2 (2 rows before row 5)" if verb == "INSERT" else "DELETE ROWS 7:9"
        raise ActionError(f"write {example}")
    match = ROWS.fullmatch(words[1])
    if match is None:
        raise ActionError(f"{words[1]!r} is not a row number or rows such as 7:9")
    first, last = int(match.group("first")), int(match.group("last") or match.group("first"))
    if verb == "INSERT":
        if match.group("last") is not None:
            raise ActionError("INSERT ROWS takes a row and a count: INSERT ROWS 5 2")
        count = int(words[2]) if len(words) == 3 and words[2].isdigit() else (1 if len(words) == 2 else -1)
    else:
        if len(words) == 3:
            raise ActionError("DELETE ROWS takes rows such as 7:9")
        count = last - first + 1
    if not (1 <= first <= last <= MAX_ROW) or not 1 <= count <= 1000:
        raise ActionError(f"rows must lie in 1-{MAX_ROW} and a count in 1-1000")
    area = Area(_sheet_name(match.group("sheet")), first, 1, max(first, last), 1)
    return Action("insert" if verb == "INSERT" else "delete", number, target=area, count=count)
