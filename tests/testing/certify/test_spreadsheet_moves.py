"""`rlenvs certify` on Spreadsheet-v1: the generic replies and the spreadsheet moves (values
typed or dressed as formulas, lookups resolved by hand, a data cell overwritten, RAND added,
and the gold with a harmless extra) on every family at both levels."""

from __future__ import annotations

import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.testing.certify import certify


@pytest.mark.parametrize("level", [1, 2])
def test_spreadsheet_certifies_clean(level: int) -> None:
    report = certify("rlenvs/Spreadsheet-v1", env_kwargs={"level": level}, tasks=24, seed=5)
    assert report.tasks == 24
    assert report.wrong == [], "\n" + str(report)
    kinds = {check.probe.kind for check in report.checks}
    assert {"typed values", "dressed constants", "hand-resolved lookup", "overwritten input", "volatile"} <= kinds
