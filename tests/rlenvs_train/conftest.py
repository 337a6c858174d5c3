"""The training adapter's tests need the train extra (torch, transformers, TRL, ...), which the
README's fast suite does not install (`pip install -e ".[dev]"`): without it, each module here
is skipped at collection with one reason naming the install line, rather than failing on its
first `import torch`. Under RLENVS_REQUIRE_ALL (.ci/run) the skip fails, as every skip does
(tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rlenvs_train.extras import TRAIN_INSTALL, missing_train_packages

MISSING = missing_train_packages()


class _NeedsTheTrainExtra(pytest.Module):
    def _getobj(self) -> Any:
        raise pytest.skip.Exception(
            f"needs the train extra ({', '.join(MISSING)} not installed): {TRAIN_INSTALL}", allow_module_level=True
        )


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    if MISSING:
        return _NeedsTheTrainExtra.from_parent(parent, path=module_path)
    return None
