"""Texts the check brings into clean-text tasks that their data never held: first names and
phone numbers, and the full names, last names, emails and product codes (`perturb.FreshTexts`
draws them).

Why: a cleaned answer typed into a helper table and fetched by a lookup on some text of
the row passes as long as that text comes back in every changed copy. Last names, codes and
emails were already new in every copy, but first names came from the task's own pool and
phones kept their digits (only shuffled and reshaped), so a typed table keyed on the first
name (`VLOOKUP(TRIM(A2),...)` for an email's first part, a badge's initial) or on a phone's
last four digits passed every time. Here every first name is one no task uses, and every
phone gets digits of its own, so no text a formula may key on survives.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int, draw_sample
from rlenvs.core.names import WIDE_LAST_NAMES
from rlenvs.envs.spreadsheet.families.table_pools import DOMAINS, _email

FRESH_FIRST_NAMES = (
    "Abel", "Adaeze", "Bianca", "Bjorn", "Cyrus", "Dalia", "Emeka", "Freya", "Gideon", "Hana",
    "Ismael", "Jana", "Kofi", "Leila", "Magnus", "Nadia", "Oren", "Paloma", "Rafael", "Saoirse",
    "Teodor", "Ulla", "Viktor", "Wanjiru", "Xavier", "Yara", "Zainab", "Amara", "Bruno", "Celine",
    "Dmitri", "Esme", "Fatima", "Goran", "Helga", "Idris", "Juno", "Kasper", "Lucia", "Milan",
)  # fmt: skip
"""First names that none of the tasks' pools holds (the tests check it)."""
_NOT_DIGITS, _DIGIT = re.compile(r"[^0-9]"), re.compile(r"[0-9]")


def fresh_first_name(rng: np.random.Generator, value: Any) -> str:
    """A first name no task shows: one of `FRESH_FIRST_NAMES`, or two of them joined by a
    hyphen as double first names are written (Anna-Lena), so that even 40 rows find 40
    different ones."""
    if coin(rng):
        return draw_from(rng, FRESH_FIRST_NAMES)
    first, second = draw_sample(rng, FRESH_FIRST_NAMES, 2)
    return f"{first}-{second}"


def fresh_phone(rng: np.random.Generator, value: Any) -> Any:
    """The phone with digits of its own, in the same places of the same shape: a UK number
    (11 digits from a 0) keeps its 0 and a 01xxx area code, a US number (10 digits) gets an
    area code and exchange from 200 up, as the task draws them. Text without those digits
    comes back as it is."""
    if not isinstance(value, str):
        return value
    digits = same_digits(value)
    if len(digits) == 11 and digits.startswith("0"):
        new = f"0{draw_int(rng, 1000, 1999)}{draw_int(rng, 100000, 999999)}"
    elif len(digits) == 10:
        new = f"{draw_int(rng, 201, 989)}{draw_int(rng, 200, 999)}{draw_int(rng, 0, 9999):04d}"
    else:
        return value
    fill = iter(new)
    return _DIGIT.sub(lambda _: next(fill), value)


def same_digits(text: str) -> str:
    """What makes two phones the same number: their digits (`FreshTexts`' `same`)."""
    return _NOT_DIGITS.sub("", text)


def _new_last_name(rng: np.random.Generator) -> str:
    """A last name few tasks hold: two pool names joined by a hyphen, or O' or D' before
    one (PROPER capitalises after both)."""
    first, second = draw_sample(rng, WIDE_LAST_NAMES, 2)
    return draw_from(rng, (f"{first}-{second}", f"O'{first}", f"D'{first}"))


def fresh_name(rng: np.random.Generator, value: Any) -> str:
    """A full name for the check's `FreshTexts`: a new first name and a new last name."""
    return f"{fresh_first_name(rng, value)} {_new_last_name(rng)}"


def fresh_last_name(rng: np.random.Generator, value: Any) -> str:
    """A last name for the check's `FreshTexts`."""
    return _new_last_name(rng)


def fresh_email(rng: np.random.Generator, value: Any) -> str:
    """An email address for the check's `FreshTexts`, first.last at a mail domain."""
    return _email(fresh_first_name(rng, value), _new_last_name(rng), draw_from(rng, DOMAINS))


CODE_LETTERS = ("ab", "kx", "lm", "qt", "rv", "zp")


CODE_VARIANTS = ("blk", "wht", "red", "gry", "xl", "sm")


def _code(rng: np.random.Generator) -> str:
    return f"{draw_from(rng, CODE_LETTERS)}-{draw_int(rng, 100, 9999)} {draw_from(rng, CODE_VARIANTS)}"


def fresh_code(rng: np.random.Generator, value: Any) -> str:
    """A product code for the check's `FreshTexts`, as the task's codes are made."""
    return _code(rng)
