"""Formula text -> tokens, following Excel's A1 syntax.

References are read whole by one regular expression, so `Sheet1!A1:B2`, `'My Sheet'!$A$1`,
`A:C` and `1:3` are single tokens. Excel's rule that a reference followed by `(` is a
function name (LOG10 is a valid cell address) is applied by refusing a reference that is
followed by `(`, a letter, a digit, `_`, `.` or `!`. Letters that look like a reference
but are not one (`A0`, `ZZZ1`: outside the sheet) are names, which evaluate to #NAME?
as in Excel.

A `:` outside a written range (`$B$2:INDEX($B:$B,ROW())`) and Excel 365's `@` (implicit
intersection, `=@C:C*@D:D`) are tokens of their own, for the parser's range operator and
prefix `@`.

Not supported (a FormulaError or #NAME?): R1C1 notation, 3-D references
(`Sheet1:Sheet3!A1`), the intersection operator (a space), structured table references
(`Table1[Col]`).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from rlenvs.workbook.cells import (
    MAX_COL,
    MAX_ROW,
    CellRef,
    column_number,
    make_range,
)
from rlenvs.workbook.values import ERRORS

MAX_FORMULA_CHARS = 8192
"""Excel's limit on the length of a formula."""


class FormulaError(ValueError):
    """A formula that cannot be read: `pos` is the 0-based offset in the text (after the
    leading `=`, which is counted), and the message says what was expected there."""

    def __init__(self, message: str, text: str = "", pos: int | None = None):
        self.message = message
        self.text = text
        self.pos = pos
        where = f" at position {pos}" if pos is not None else ""
        shown = f" in {text!r}" if text and len(text) <= 200 else ""
        super().__init__(f"{message}{where}{shown}")


class Token(NamedTuple):
    kind: str  # NUM STR BOOL ERR REF RANGE FUNC NAME OP ( ) , ; { } : @ END
    text: str
    pos: int
    value: Any = None


_SHEET = r"(?:'(?:[^']|'')+'|[A-Za-z_\u00a1-\uffff][\w.\u00a1-\uffff]*)"
_CELL = r"\$?[A-Za-z]{1,3}\$?[0-9]{1,7}"
_REF_RE = re.compile(
    rf"(?:(?P<sheet>{_SHEET})!)?"
    rf"(?:(?P<c1>{_CELL})(?::(?P<c2>{_CELL}))?"
    r"|(?P<col1>\$?[A-Za-z]{1,3}):(?P<col2>\$?[A-Za-z]{1,3})"
    r"|(?P<row1>\$?[0-9]{1,7}):(?P<row2>\$?[0-9]{1,7}))"
    r"(?![\w.(!])"
)
_CELL_PARTS = re.compile(r"(\$?)([A-Za-z]{1,3})(\$?)([0-9]+)")
_NUM_RE = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_IDENT_RE = re.compile(r"[A-Za-z_\\\u00a1-\uffff][\w.\u00a1-\uffff]*")
_ERR_RE = re.compile(r"#(?:NULL!|DIV/0!|VALUE!|REF!|NAME\?|NUM!|N/A|CIRCULAR!)", re.IGNORECASE)
_OP_CHARS = frozenset("+-*/^&=<>%")
_PUNCT = {"(": "(", ")": ")", ",": ",", ";": ";", "{": "{", "}": "}", ":": ":", "@": "@"}


def _cell(text: str) -> CellRef | None:
    m = _CELL_PARTS.fullmatch(text)
    assert m is not None
    col_abs, letters, row_abs, digits = m.groups()
    try:
        col = column_number(letters)
    except ValueError:
        return None
    row = int(digits)
    if not 1 <= row <= MAX_ROW:
        return None
    return CellRef(row, col, None, bool(row_abs), bool(col_abs))


def _sheet_name(raw: str | None) -> str | None:
    if raw is None:
        return None
    if raw.startswith("'"):
        return raw[1:-1].replace("''", "'")
    return raw


def _reference(m: re.Match[str], text: str) -> Token | None:
    """The REF or RANGE token of a reference match, or None when it is not a valid
    address (then the text is read as a name)."""
    sheet = _sheet_name(m.group("sheet"))
    pos = m.start()
    if m.group("c1"):
        a = _cell(m.group("c1"))
        if m.group("c2") is None:
            return None if a is None else Token("REF", m.group(0), pos, a.with_sheet(sheet))
        b = _cell(m.group("c2"))
        if a is None or b is None:
            raise FormulaError("reference outside the sheet (columns A..XFD, rows 1..1048576)", text, pos)
        return Token("RANGE", m.group(0), pos, make_range(a, b, sheet))
    if m.group("col1"):
        c1, c2 = m.group("col1"), m.group("col2")
        try:
            n1, n2 = column_number(c1.lstrip("$")), column_number(c2.lstrip("$"))
        except ValueError:
            raise FormulaError("column outside the sheet (A..XFD)", text, pos) from None
        a = CellRef(1, n1, None, True, c1.startswith("$"))
        b = CellRef(MAX_ROW, n2, None, True, c2.startswith("$"))
        return Token("RANGE", m.group(0), pos, make_range(a, b, sheet, "cols"))
    r1, r2 = m.group("row1"), m.group("row2")
    n1, n2 = int(r1.lstrip("$")), int(r2.lstrip("$"))
    if not (1 <= n1 <= MAX_ROW and 1 <= n2 <= MAX_ROW):
        raise FormulaError("row outside the sheet (1..1048576)", text, pos)
    a = CellRef(n1, 1, None, r1.startswith("$"), True)
    b = CellRef(n2, MAX_COL, None, r2.startswith("$"), True)
    return Token("RANGE", m.group(0), pos, make_range(a, b, sheet, "rows"))


def tokenize(text: str) -> list[Token]:
    """The tokens of a formula; `text` may start with the `=` (it is skipped). Ends with
    an END token. Raises FormulaError for text that cannot be a formula."""
    if len(text) > MAX_FORMULA_CHARS:
        raise FormulaError(f"formula longer than {MAX_FORMULA_CHARS} characters", text[:50] + "...", None)
    i = 1 if text.startswith("=") else 0
    out: list[Token] = []
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            i += 1
            continue
        if ch in _OP_CHARS:
            two = text[i : i + 2]
            op = two if two in ("<>", "<=", ">=") else ch
            out.append(Token("OP", op, i, op))
            i += len(op)
            continue
        if ch in _PUNCT:
            out.append(Token(_PUNCT[ch], ch, i))
            i += 1
            continue
        if ch == '"':
            j, parts = i + 1, []
            while True:
                k = text.find('"', j)
                if k < 0:
                    raise FormulaError('unterminated text: a closing " is missing', text, i)
                parts.append(text[j:k])
                if text.startswith('"', k + 1):
                    parts.append('"')
                    j = k + 2
                    continue
                break
            out.append(Token("STR", text[i : k + 1], i, "".join(parts)))
            i = k + 1
            continue
        if ch == "#":
            m = _ERR_RE.match(text, i)
            if not m:
                raise FormulaError("unknown error literal (expected e.g. #N/A, #REF!, #DIV/0!)", text, i)
            out.append(Token("ERR", m.group(0), i, ERRORS[m.group(0).upper()]))
            i = m.end()
            continue
        m = _REF_RE.match(text, i)
        if m:
            tok = _reference(m, text)
            if tok is not None:
                out.append(tok)
                i = m.end()
                continue
        if "0" <= ch <= "9" or (ch == "." and "0" <= text[i + 1 : i + 2] <= "9" and text[i + 1 : i + 2] != ""):
            m = _NUM_RE.match(text, i)
            assert m is not None
            x = float(m.group(0))
            if x == float("inf"):
                raise FormulaError("number too large", text, i)
            out.append(Token("NUM", m.group(0), i, x))
            i = m.end()
            continue
        if ch == "'":
            raise FormulaError(
                "a quoted sheet name must be followed by ! and a reference, as in 'My Sheet'!A1", text, i
            )
        m = _IDENT_RE.match(text, i)
        if m:
            word = m.group(0)
            j = m.end()
            if text.startswith("(", j):
                out.append(Token("FUNC", word, i, word.upper()))
                j += 1
            elif text.startswith("!", j):
                raise FormulaError("a sheet name must be followed by a reference, as in Sheet2!A1", text, j + 1)
            elif word.upper() in ("TRUE", "FALSE"):
                out.append(Token("BOOL", word, i, word.upper() == "TRUE"))
            else:
                out.append(Token("NAME", word, i, word))
            i = j
            continue
        raise FormulaError(f"unexpected character {ch!r}", text, i)
    out.append(Token("END", "", n))
    return out
