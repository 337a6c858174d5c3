"""The clean-text family: clean text columns with text formulas.

| level | asks | example (task id) |
|---|---|---|
| 1 | a messy column trimmed and put in Proper, UPPER or lower case (formulas) | `Subscribers` emails: `=LOWER(TRIM(B2))` (L1/0) |
| 2 | a badge key from first and last name, a work email, or a phone number's digits as text (formulas) | ` pedro` and ` O'NEILL ` -> `P.O'Neill`: `=UPPER(LEFT(TRIM(B2),1))&"."&PROPER(TRIM(C2))` (L2/0) |

Why the verdict holds: each task judges a new column of formulas that `_text_truth`
recomputes from the sheets row by row, for whatever the check puts in `inputs` (texts
shuffled within their column): a cleaned name typed in fails. The changes mess texts again
in every way the cleaning undoes (`remessed`: a TRIM or SUBSTITUTE left out on rows that did
not need it fails), put texts the task never showed in place of its own (`FreshTexts` with
the draws of `fresh`: cleaned answers typed into a table and looked up fail), and put phones
in other shapes the data allows (`reshaped_phone`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rlenvs.core.draw import coin, draw_distinct, draw_from, draw_int
from rlenvs.core.names import WIDE_FIRST_NAMES, WIDE_LAST_NAMES
from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families.fresh import (
    _code,
    fresh_code,
    fresh_email,
    fresh_first_name,
    fresh_last_name,
    fresh_name,
    fresh_phone,
    same_digits,
)
from rlenvs.envs.spreadsheet.families.table_cells import (
    FORMULAS,
    SUBMIT,
    Sheets,
    _cell,
    _is_blank,
    _letter,
    _ref,
    _reply,
    _rows,
    _span,
)
from rlenvs.envs.spreadsheet.families.table_pools import CITIES, DEPARTMENTS, DOMAINS, PRODUCTS, _email, _person
from rlenvs.envs.spreadsheet.perturb import Change, FreshTexts, Remap
from rlenvs.envs.spreadsheet.tasks import Scenario

MESSY_LAST_NAMES = (*WIDE_LAST_NAMES, "O'Neill", "Smith-Jones", "D'Souza", "Lloyd-Evans")
"""Clean-text adds names where PROPER capitalises after the apostrophe or hyphen too."""


def _trim(text: str) -> str:
    """TRIM: no spaces at either end, and single spaces between words (spaces only)."""
    return " ".join(part for part in text.split(" ") if part)


def _proper(text: str) -> str:
    """PROPER: a letter is upper case after a non-letter (or at the start), lower otherwise."""
    out, after_letter = [], False
    for ch in text:
        if ch.isalpha():
            out.append(ch.lower() if after_letter else ch.upper())
            after_letter = True
        else:
            out.append(ch)
            after_letter = False
    return "".join(out)


def _mess(rng: np.random.Generator, text: str) -> str:
    """The text as it arrives from a form: odd case, spaces doubled or at the ends."""
    style = draw_int(rng, 0, 3)
    if style == 0:
        text = text.upper()
    elif style == 1:
        text = text.lower()
    elif style == 2:
        text = "".join(ch.swapcase() if ch.isalpha() and coin(rng) else ch for ch in text)
    words = text.split(" ")
    text = (" " * draw_int(rng, 1, 3)).join(words) if coin(rng) else text
    return " " * draw_int(rng, 0, 2) + text + " " * draw_int(rng, 0, 2)


def _messy(rng: np.random.Generator, texts: Sequence[str], clean: Callable[[str], str]) -> list[str]:
    """Messed-up versions of `texts`, at least two of them needing the cleaning."""
    while True:
        messy = [_mess(rng, text) for text in texts]
        if sum(clean(m) != m for m in messy) >= 2:
            return messy


def _text_truth(
    sheets: Sheets, *, sheet: str, n: int, rule: str, columns: tuple[int, ...], target: int, extra: str = ""
) -> dict[str, Any]:
    """Per row, the rule over the texts of `columns` into column `target`."""
    expected: dict[str, Any] = {}
    for row in range(2, n + 2):
        texts = ["" if _is_blank(v) else str(v) for v in (_cell(sheets, sheet, row, col) for col in columns)]
        expected[_ref(sheet, target, row)] = _clean(rule, texts, extra)
    return expected


def _clean(rule: str, texts: Sequence[str], extra: str) -> str:
    if rule == "proper":
        return _proper(_trim(texts[0]))
    if rule == "upper":
        return _trim(texts[0]).upper()
    if rule == "lower":
        return _trim(texts[0]).lower()
    if rule == "key":
        first, last = _trim(texts[0]), _trim(texts[1])
        return first[:1].upper() + "." + _proper(last)
    if rule == "email":
        return (_trim(texts[0]) + "." + _trim(texts[1])).lower() + "@" + extra
    if rule == "digits":
        return "".join(ch for ch in texts[0] if ch not in "() -")
    raise ValueError(rule)


def remessed(rng: np.random.Generator, value: Any, case: str) -> Any:
    """A text messed again so that every cleaning step is needed on every row (what the
    check's `Remap` does to clean-text inputs): a space at each end, spaces doubled between
    words, and letters in a `case` the cleaning must undo: "lower", "upper" or "swap" (the
    PROPER form with every letter's case swapped). A formula that skips TRIM on rows that
    happened not to need it is then wrong."""
    if not isinstance(value, str):
        return value
    text = "  ".join(_trim(value).split(" "))
    text = text.lower() if case == "lower" else text.upper() if case == "upper" else _proper(text).swapcase()
    return " " + text + " " * draw_int(rng, 1, 2)


PHONE_SHAPES = (
    "({a}) {m}-{e}", "{a}-{m}-{e}", "{a} {m} {e}", "({a}){m}-{e}", "({a}) {m} {e}", "{a} {m}-{e}",
    "({a})-{m}-{e}", "{a} {m}{e}", "({a}) {m}{e}", "{a}-{m}{e}",
)  # fmt: skip
"""How people write a phone number's three groups (area, middle, end): the tasks' own shapes
and the others a form lets through, with "(", ")", " " and "-" in other places."""


def reshaped_phone(rng: np.random.Generator, value: Any, before: Any = None) -> Any:
    """The phone's digits in a shape drawn from `PHONE_SHAPES`, among those holding every
    removable character that the row's starting phone (`before`) lacked: a formula that
    leaves out a SUBSTITUTE on a row that did not need it, reads fixed positions of one
    shape, or types the answer for the shapes it does not read, meets a shape it gets
    wrong (one shape for all rows let all three pass)."""
    if not isinstance(value, str):
        return value
    digits = "".join(ch for ch in value if ch.isdigit())
    lacking = {ch for ch in "() -" if ch not in (before if isinstance(before, str) else "")}
    shapes = [shape for shape in PHONE_SHAPES if lacking <= set(shape)]
    return draw_from(rng, shapes).format(a=digits[:-7], m=digits[-7:-4], e=digits[-4:])


def clean_text(rng: np.random.Generator, level: int) -> Scenario:
    if level == 1:
        return draw_from(rng, (_clean_names, _clean_codes, _clean_emails))(rng)
    return draw_from(rng, (_name_keys, _work_emails, _phone_digits))(rng)


def _text_scenario(
    sheet: str,
    headers: Sequence[str],
    table: Sequence[Sequence[Any]],
    rule: str,
    columns: tuple[int, ...],
    formula: str,
    what: str,
    extra: str = "",
    cases: Sequence[str] = ("swap",),
    fresh: Sequence[Callable[..., str] | None] = (None,),
) -> Scenario:
    """A clean-text task: `columns` are cleaned by `rule` into the last column; `cases`, one
    per column, how the check messes each column again (`remessed`, or "phone" for
    `reshaped_phone`); `fresh`, one per column, the draw of the texts the check puts in
    instead of the task's own (`FreshTexts`), None to keep them."""
    n = len(table)
    target = len(headers) - 1
    t, last = _letter(target), n + 1
    truth = functools.partial(_text_truth, sheet=sheet, n=n, rule=rule, columns=columns, target=target, extra=extra)
    sheets = {sheet: _rows(headers, table)}
    instruction = (
        f"The sheet {sheet} holds {n} rows of data ({_span(None, 0, 2, target - 1, last)}) with its header "
        f'in row 1; {t}1 holds the header "{headers[target]}". In {t}2:{t}{last}, give {what}. '
        f"{FORMULAS} {SUBMIT}"
    )
    changes: list[Change] = []
    for col, case, draw in zip(columns, cases, fresh, strict=True):
        area = _span(sheet, col, 2, col, last)
        if draw is not None:  # two phones are the same number where their digits are
            changes.append(FreshTexts(area, draw, same=same_digits) if draw is fresh_phone else FreshTexts(area, draw))
        if case == "phone":
            changes.append(Remap(area, reshaped_phone, before=True))
        else:
            changes.append(Remap(area, remessed, (("case", case),)))
    return Scenario(
        instruction=instruction,
        sheets=sheets,
        expected=truth({sheet: [list(row) for row in sheets[sheet]]}),
        solution=(_reply(f"SET {t}2 {formula}", f"FILL {t}2 {t}3:{t}{last}"),),
        formula_cells=tuple(_ref(sheet, target, row) for row in range(2, last + 1)),
        inputs=tuple(_span(sheet, col, 2, col, last) for col in columns),
        changes=tuple(changes),
        truth=truth,
    )


def _full_names(rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
    return draw_distinct(lambda: (draw_from(rng, WIDE_FIRST_NAMES), draw_from(rng, MESSY_LAST_NAMES)), n)


def _clean_names(rng: np.random.Generator) -> Scenario:
    """Level 1: a name typed carelessly -> trimmed, each word capitalised (PROPER(TRIM()))."""
    n = draw_int(rng, 8, 40)
    names = _messy(rng, [f"{first} {last}" for first, last in _full_names(rng, n)], lambda m: _proper(_trim(m)))
    table = [[f"C-{1000 + i}", name, draw_from(rng, CITIES)] for i, name in enumerate(names)]
    what = (
        "each contact's Name (column B) cleaned: without spaces at either end or doubled between "
        "words, and each word with a capital first letter and the rest lower case (as PROPER "
        "writes it: O'Neill, Smith-Jones)"
    )
    return _text_scenario(
        "Contacts",
        ["Contact", "Name", "City", "Clean Name"],
        table,
        "proper",
        (1,),
        "=PROPER(TRIM(B2))",
        what,
        fresh=(fresh_name,),
    )


def _clean_codes(rng: np.random.Generator) -> Scenario:
    """Level 1: product codes typed in any case with stray spaces -> TRIM, UPPER."""
    n = draw_int(rng, 8, 40)
    codes = draw_distinct(lambda: _code(rng), n)
    messy = _messy(rng, codes, lambda m: _trim(m).upper())
    table = [
        [product, code, draw_int(rng, 0, 400)]
        for product, code in zip((draw_from(rng, PRODUCTS) for _ in range(n)), messy, strict=True)
    ]
    what = "each Code (column B) cleaned: no spaces at either end or doubled inside, and all letters upper case"
    return _text_scenario(
        "Catalog",
        ["Product", "Code", "Stock", "Clean Code"],
        table,
        "upper",
        (1,),
        "=UPPER(TRIM(B2))",
        what,
        cases=("lower",),
        fresh=(fresh_code,),
    )


def _clean_emails(rng: np.random.Generator) -> Scenario:
    """Level 1: email addresses with capitals and spaces -> TRIM, LOWER."""
    n = draw_int(rng, 8, 40)
    people = _full_names(rng, n)
    emails = [_email(first, last, draw_from(rng, DOMAINS)) for first, last in people]
    messy = _messy(rng, emails, lambda m: _trim(m).lower())
    table = [[f"{first} {last}", email] for (first, last), email in zip(people, messy, strict=True)]
    what = "each Email (column B) cleaned: no spaces at either end and all letters lower case"
    return _text_scenario(
        "Subscribers",
        ["Name", "Email", "Clean Email"],
        table,
        "lower",
        (1,),
        "=LOWER(TRIM(B2))",
        what,
        cases=("upper",),
        fresh=(fresh_email,),
    )


def _name_keys(rng: np.random.Generator) -> Scenario:
    """Level 2: a key from the first letter of the first name, upper case, a dot and the last
    name in PROPER case, both trimmed: "  anna" and "BERG " -> "A.Berg"."""
    n = draw_int(rng, 8, 40)
    people = _full_names(rng, n)
    firsts = _messy(rng, [first for first, _ in people], lambda m: _trim(m)[:1].upper() + _trim(m)[1:].lower())
    lasts = _messy(rng, [last for _, last in people], lambda m: _proper(_trim(m)))
    table = [
        [f"E-{2000 + i}", first, last, draw_from(rng, DEPARTMENTS)]
        for i, (first, last) in enumerate(zip(firsts, lasts, strict=True))
    ]
    what = (
        "a badge key for each employee: the first letter of the First Name (column B, ignoring "
        "spaces around it) in upper case, a full stop, then the Last Name (column C) without spaces "
        "at either end or doubled, each word with a capital first letter and the rest lower case "
        "(as PROPER writes it): for example A.Berg, Z.O'Neill or L.Smith-Jones"
    )
    formula = '=UPPER(LEFT(TRIM(B2),1))&"."&PROPER(TRIM(C2))'
    return _text_scenario(
        "Staff",
        ["Employee", "First Name", "Last Name", "Department", "Badge Key"],
        table,
        "key",
        (1, 2),
        formula,
        what,
        cases=("lower", "swap"),
        fresh=(fresh_first_name, fresh_last_name),
    )


def _work_emails(rng: np.random.Generator) -> Scenario:
    """Level 2: first.last@company in lower case from trimmed name columns."""
    n = draw_int(rng, 8, 40)
    people = draw_distinct(lambda: (draw_from(rng, WIDE_FIRST_NAMES), draw_from(rng, WIDE_LAST_NAMES)), n)
    firsts = _messy(rng, [first for first, _ in people], lambda m: _trim(m).lower())
    lasts = _messy(rng, [last for _, last in people], lambda m: _trim(m).lower())
    domain = f"{draw_from(rng, ('northwind', 'bluebird', 'granite', 'pinecrest', 'summit'))}.{draw_from(rng, ('com', 'co.uk', 'io'))}"
    table = [[first, last, draw_from(rng, DEPARTMENTS)] for first, last in zip(firsts, lasts, strict=True)]
    what = (
        f"each employee's work email: the First Name (column A) and Last Name (column B), each "
        f'without spaces at either end or doubled, joined by a full stop, then "@{domain}", all in '
        f"lower case: for example anna.berg@{domain}"
    )
    formula = f'=LOWER(TRIM(A2)&"."&TRIM(B2)&"@{domain}")'
    return _text_scenario(
        "NewStarters",
        ["First Name", "Last Name", "Department", "Email"],
        table,
        "email",
        (0, 1),
        formula,
        what,
        domain,
        cases=("upper", "upper"),
        fresh=(fresh_first_name, fresh_last_name),
    )


def _phone_digits(rng: np.random.Generator) -> Scenario:
    """Level 2: phone numbers typed with brackets, spaces and dashes -> their digits, as text
    (a leading 0 stays; VALUE would drop it)."""
    n = draw_int(rng, 8, 40)
    uk = coin(rng)
    phones = []
    for _ in range(n):
        if uk:
            area, rest = f"0{draw_int(rng, 1000, 1999)}", f"{draw_int(rng, 100000, 999999)}"
            shapes = (f"{area} {rest}", f"({area}) {rest}", f"{area}-{rest[:3]}-{rest[3:]}")
        else:
            code, mid, end = draw_int(rng, 201, 989), draw_int(rng, 200, 999), draw_int(rng, 0, 9999)
            shapes = (f"({code}) {mid}-{end:04d}", f"{code}-{mid}-{end:04d}", f"{code} {mid} {end:04d}")
        phones.append(draw_from(rng, shapes))
    people = draw_distinct(lambda: _person(rng), n)
    table = [[name, phone] for name, phone in zip(people, phones, strict=True)]
    what = (
        'each Phone (column B) with every "(", ")", space and "-" removed, as text with its digits '
        "in order (a leading 0 stays): for example (555) 123-4567 gives 5551234567"
    )
    formula = '=SUBSTITUTE(SUBSTITUTE(SUBSTITUTE(SUBSTITUTE(B2,"(",""),")","")," ",""),"-","")'
    return _text_scenario(
        "Customers",
        ["Customer", "Phone", "Digits"],
        table,
        "digits",
        (1,),
        formula,
        what,
        cases=("phone",),
        fresh=(fresh_phone,),
    )


FAMILY = Family(
    "clean-text",
    "Clean text columns with text formulas.",
    {
        1: "TRIM with PROPER, UPPER or LOWER into a new column",
        2: "a badge key, a work email or a phone number's digits from messy text",
    },
    clean_text,
)
