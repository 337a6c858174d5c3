"""Texts the check brings into clean-text tasks that their data never held: first names and
phone numbers (`perturb.FreshTexts` draws them).

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
