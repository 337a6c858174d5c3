"""Replays every family's red-team corpus (tests/data/redteam/<family>.jsonl, replayed by
tests/support/redteam/<family>.py): each case's episode must earn the reward a correct
verifier gives it."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tests.support.redteam
from tests.support.redteam import Case, load_cases

FAMILIES = ("math", "code", "terminal", "spreadsheet")
SANDBOX_FAMILIES = ("code", "terminal")
"""Whose replies are run (code, shell commands) in the sandbox."""
CORPORA = {
    module.name: importlib.import_module(f"tests.support.redteam.{module.name}")
    for module in pkgutil.iter_modules(tests.support.redteam.__path__)
}
CASES = {family: load_cases(family) for family in CORPORA}


def _cases() -> list:
    params = []
    for family, cases in sorted(CASES.items()):
        for number, case in enumerate(cases):
            marks = [pytest.mark.sandbox] if family in SANDBOX_FAMILIES else []
            params.append(pytest.param(family, case, id=f"{family}-{number:03d}-{case.kind}", marks=marks))
    return params


@pytest.mark.parametrize("family,case", _cases())
def test_red_team_case(family: str, case: Case) -> None:
    reward = CORPORA[family].replay(case)
    assert reward == pytest.approx(case.reward), f"{family} [{case.kind}] {case.why}: got reward {reward}"


def test_every_family_keeps_a_corpus() -> None:
    assert set(CORPORA) == set(FAMILIES)
    for family in FAMILIES:
        assert CASES[family], f"the {family} red-team corpus is empty"
        assert all(isinstance(case, Case) and case.why for case in CASES[family])
