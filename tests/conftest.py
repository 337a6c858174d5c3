"""Test set-up: the real data sets in ../shared/data, and no network.

Tests read data from the shared folder beside the repository (CI has it there too); set
RLENVS_TEST_DATA to point elsewhere. The hub is switched off so that a test of "no data"
fails fast instead of waiting on the network.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(os.environ.get("RLENVS_TEST_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
GSM8K_TEST = SHARED_DATA / "gsm8k" / "test.jsonl"
MATH_SAMPLE = Path(__file__).resolve().parent / "data" / "math_sample.jsonl"
"""Competition problems written for these tests in the MATH row format (no MATH data set is
in ../shared/data, and tests cannot reach the hub)."""

MAKE_KWARGS = {"rlenvs/MATH-v0": {"data_files": str(MATH_SAMPLE)}}
"""What an env needs to be made in the tests, beyond its defaults."""

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("RLENVS_DATA_DIR", str(SHARED_DATA))


def pytest_configure(config: pytest.Config) -> None:
    if not GSM8K_TEST.is_file():
        raise pytest.UsageError(
            f"test data not found at {SHARED_DATA}: the tests read the real data sets from "
            "../shared/data beside the repository; set RLENVS_TEST_DATA to their folder"
        )
