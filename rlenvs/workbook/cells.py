"""A1 addressing: column letters, cell and range references, sheet-name quoting.

Coordinates are 1-based like Excel's (row 1 is the first row, column 1 is "A"), and the
sheet is as large as Excel's: rows 1..1,048,576 and columns A..XFD (16,384).

A reference keeps its `$` flags: they only matter when a formula is copied (relative parts
move, absolute parts do not), never for evaluation. A reference's `sheet` is None when the
text named no sheet: it then means "the sheet of the formula" (or, in the Workbook API, the
first sheet).

Two readers of reference text exist on purpose:

- `parse_ref` / `parse_range` read what an API user or an agent's action writes. They are
  lenient about sheet names: `Sheet 2!B3` (unquoted, with a space) and `'Sheet 2'!B3` both
  work, split at the last `!`.
- The formula tokenizer (`formulas.tokenizer`) follows Excel's stricter syntax, where a
  sheet name with spaces or punctuation must be quoted: `'My Sheet'!A1`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

MAX_ROW = 1_048_576
MAX_COL = 16_384  # XFD

_CELL_RE = re.compile(r"(\$?)([A-Za-z]{1,3})(\$?)([0-9]{1,7})")
_COL_RE = re.compile(r"(\$?)([A-Za-z]{1,3})")
_ROW_RE = re.compile(r"(\$?)([0-9]{1,7})")
_PLAIN_SHEET_RE = re.compile(r"[A-Za-z_\u00a1-\uffff][\w.\u00a1-\uffff]*")
_LOOKS_LIKE_REF_RE = re.compile(r"(?i)(?:[a-z]{1,3}[0-9]+|r[0-9]*c?[0-9]*|c[0-9]*|true|false)")

REF_FORM = "a form like A1, $B$3, Sheet2!C4 or 'My Sheet'!C5"
RANGE_FORM = "a form like A1:C10, $A$1:B2, A:C, 1:3 or 'My Sheet'!A1:C10"


def column_number(letters: str) -> int:
    """Column letters to a 1-based number: A -> 1, Z -> 26, AA -> 27, XFD -> 16384."""
    if not letters.isascii() or not letters.isalpha() or not 1 <= len(letters) <= 3:
        raise ValueError(f"bad column {letters!r}: expected letters A..XFD")
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    if n > MAX_COL:
        raise ValueError(f"bad column {letters!r}: the last column is XFD")
    return n


def column_letters(number: int) -> str:
    """A 1-based column number to letters: 1 -> A, 27 -> AA, 16384 -> XFD."""
    if not 1 <= number <= MAX_COL:
        raise ValueError(f"bad column number {number!r}: expected 1..{MAX_COL} (A..XFD)")
    out = []
    while number:
        number, rem = divmod(number - 1, 26)
        out.append(chr(65 + rem))
    return "".join(reversed(out))


def quote_sheet(name: str) -> str:
    """A sheet name as Excel writes it before `!`: bare when it is a plain identifier that
    cannot be read as a reference, else in single quotes with `'` doubled."""
    if _PLAIN_SHEET_RE.fullmatch(name) and not _LOOKS_LIKE_REF_RE.fullmatch(name):
        return name
    return "'" + name.replace("'", "''") + "'"


def _split_sheet(text: str, form: str) -> tuple[str | None, str]:
    """Split `Sheet!A1` / `'My Sheet'!A1` / `A1` into (sheet or None, rest)."""
    text = text.strip()
    if text.startswith("'"):
        i, name = 1, []
        while i < len(text):
            if text[i] == "'":
                if text[i + 1 : i + 2] == "'":
                    name.append("'")
                    i += 2
                    continue
                break
            name.append(text[i])
            i += 1
        if i >= len(text) or text[i + 1 : i + 2] != "!" or not name:
            raise ValueError(f"bad reference {text!r}: unterminated quoted sheet name; expected {form}")
        return "".join(name), text[i + 2 :]
    if "!" in text:
        sheet, _, rest = text.rpartition("!")
        sheet = sheet.strip()
        if not sheet:
            raise ValueError(f"bad reference {text!r}: empty sheet name; expected {form}")
        return sheet, rest
    return None, text


@dataclass(frozen=True, slots=True)
class CellRef:
    """One cell: 1-based row and column, the `$` flags, and the sheet (None: unnamed)."""

    row: int
    col: int
    sheet: str | None = None
    row_abs: bool = False
    col_abs: bool = False

    def a1(self) -> str:
        """The reference without its sheet, with its `$` flags: `$B3`."""
        return f"{'$' if self.col_abs else ''}{column_letters(self.col)}{'$' if self.row_abs else ''}{self.row}"

    def __str__(self) -> str:
        return (quote_sheet(self.sheet) + "!" if self.sheet is not None else "") + self.a1()

    def with_sheet(self, sheet: str | None) -> CellRef:
        return CellRef(self.row, self.col, sheet, self.row_abs, self.col_abs)


RangeKind = Literal["cells", "cols", "rows"]


@dataclass(frozen=True, slots=True)
class RangeRef:
    """A rectangle: two corners (normalised so that `start` is top-left), the sheet, and
    its kind: "cells" (A1:C3), "cols" (whole columns A:C: rows 1..MAX_ROW) or "rows"
    (whole rows 1:3: columns A..XFD). The corners' own `sheet` is always None."""

    start: CellRef
    end: CellRef
    sheet: str | None = None
    kind: RangeKind = "cells"

    @property
    def height(self) -> int:
        return self.end.row - self.start.row + 1

    @property
    def width(self) -> int:
        return self.end.col - self.start.col + 1

    def a1(self) -> str:
        s, e = self.start, self.end
        if self.kind == "cols":
            return (
                f"{'$' if s.col_abs else ''}{column_letters(s.col)}:{'$' if e.col_abs else ''}{column_letters(e.col)}"
            )
        if self.kind == "rows":
            return f"{'$' if s.row_abs else ''}{s.row}:{'$' if e.row_abs else ''}{e.row}"
        return f"{s.a1()}:{e.a1()}"

    def __str__(self) -> str:
        return (quote_sheet(self.sheet) + "!" if self.sheet is not None else "") + self.a1()

    def __contains__(self, cell: object) -> bool:
        if not isinstance(cell, CellRef):
            return False
        return self.start.row <= cell.row <= self.end.row and self.start.col <= cell.col <= self.end.col

    def cells(self) -> Iterator[CellRef]:
        """Every cell, row by row (the range's sheet on each). Whole columns and rows are
        huge: iterate those only after clamping them to a used range."""
        for row in range(self.start.row, self.end.row + 1):
            for col in range(self.start.col, self.end.col + 1):
                yield CellRef(row, col, self.sheet)

    def rows(self) -> Iterator[list[CellRef]]:
        """The cells as a list per row."""
        for row in range(self.start.row, self.end.row + 1):
            yield [CellRef(row, col, self.sheet) for col in range(self.start.col, self.end.col + 1)]

    def with_sheet(self, sheet: str | None) -> RangeRef:
        return RangeRef(self.start, self.end, sheet, self.kind)


def make_range(a: CellRef, b: CellRef, sheet: str | None = None, kind: RangeKind = "cells") -> RangeRef:
    """A range from two corners in any order (Excel turns B3:A1 into A1:B3; each `$` flag
    stays with its coordinate)."""
    r1, r1a, r2, r2a = (a.row, a.row_abs, b.row, b.row_abs) if a.row <= b.row else (b.row, b.row_abs, a.row, a.row_abs)
    c1, c1a, c2, c2a = (a.col, a.col_abs, b.col, b.col_abs) if a.col <= b.col else (b.col, b.col_abs, a.col, a.col_abs)
    return RangeRef(CellRef(r1, c1, None, r1a, c1a), CellRef(r2, c2, None, r2a, c2a), sheet, kind)


def _cell(text: str, whole: str, form: str) -> CellRef:
    m = _CELL_RE.fullmatch(text.strip())
    if not m:
        raise ValueError(f"bad cell reference {whole!r}: expected {form}")
    col_abs, letters, row_abs, digits = m.groups()
    try:
        col = column_number(letters)
    except ValueError:
        raise ValueError(f"bad cell reference {whole!r}: columns go from A to XFD; expected {form}") from None
    row = int(digits)
    if not 1 <= row <= MAX_ROW:
        raise ValueError(f"bad cell reference {whole!r}: rows go from 1 to {MAX_ROW}; expected {form}")
    return CellRef(row, col, None, bool(row_abs), bool(col_abs))


def parse_ref(text: str) -> CellRef:
    """Read one cell reference: `B3`, `$B$3`, `Sheet2!B3`, `Sheet 2!$B$3`, `'My Sheet'!C5`.
    Letters may be lower case. Raises ValueError naming the text and the expected form."""
    if not isinstance(text, str):
        raise TypeError(f"bad cell reference {text!r}: expected text in {REF_FORM}")
    sheet, rest = _split_sheet(text, REF_FORM)
    return _cell(rest, text, REF_FORM).with_sheet(sheet)


def parse_range(text: str) -> RangeRef:
    """Read a range: `A1:C10`, `$A$1:B2`, `Sheet2!A1:C3`, whole columns `A:C`, whole rows
    `1:3`; a single cell `B2` gives the one-cell range B2:B2. Raises ValueError naming the
    text and the expected form."""
    if not isinstance(text, str):
        raise TypeError(f"bad range {text!r}: expected text in {RANGE_FORM}")
    sheet, rest = _split_sheet(text, RANGE_FORM)
    left, sep, right = rest.strip().partition(":")
    if not sep:
        c = _cell(left, text, RANGE_FORM)
        return RangeRef(c, c, sheet)
    left, right = left.strip(), right.strip()
    if _CELL_RE.fullmatch(left) or _CELL_RE.fullmatch(right):
        return make_range(_cell(left, text, RANGE_FORM), _cell(right, text, RANGE_FORM), sheet)
    m1, m2 = _COL_RE.fullmatch(left), _COL_RE.fullmatch(right)
    if m1 and m2:
        try:
            c1, c2 = column_number(m1.group(2)), column_number(m2.group(2))
        except ValueError:
            raise ValueError(f"bad range {text!r}: columns go from A to XFD; expected {RANGE_FORM}") from None
        a = CellRef(1, c1, None, True, bool(m1.group(1)))
        b = CellRef(MAX_ROW, c2, None, True, bool(m2.group(1)))
        return make_range(a, b, sheet, "cols")
    m1, m2 = _ROW_RE.fullmatch(left), _ROW_RE.fullmatch(right)
    if m1 and m2:
        r1, r2 = int(m1.group(2)), int(m2.group(2))
        if not (1 <= r1 <= MAX_ROW and 1 <= r2 <= MAX_ROW):
            raise ValueError(f"bad range {text!r}: rows go from 1 to {MAX_ROW}; expected {RANGE_FORM}")
        a = CellRef(r1, 1, None, bool(m1.group(1)), True)
        b = CellRef(r2, MAX_COL, None, bool(m2.group(1)), True)
        return make_range(a, b, sheet, "rows")
    raise ValueError(f"bad range {text!r}: expected {RANGE_FORM}")
