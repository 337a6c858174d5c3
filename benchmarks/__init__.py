"""Benchmarks: rlenvs measured side by side with its peers, in one process, in one run.

Run them all with `python -m benchmarks` (see README.md). Each `bench_*.py` module exposes
`run() -> dict` with keys `title` (str), `rows` (list of flat dicts, one table row each) and
`notes` (list of str); `__main__` finds the modules, runs them and records the results.

The helpers here are what more than one benchmark needs: where the data is, a timer, and a
child process for a vLLM engine.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR_VARIABLE = "RLENVS_DATA_DIR"
DEFAULT_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
"""Where the data sets live beside the repository (the tests read the same folder)."""


def data_file(*parts: str) -> Path:
    """A data file under `$RLENVS_DATA_DIR` (set by `--data`), else under ../shared/data.

    Raises FileNotFoundError naming the path looked at and how to point elsewhere, because a
    benchmark that silently skips its data would record an empty table as a result.
    """
    root = Path(os.environ.get(DATA_DIR_VARIABLE) or DEFAULT_DATA_DIR)
    path = root.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(
            f"benchmark data not found: {path}. Pass `--data DIR` (a folder holding "
            f"{'/'.join(parts)}) or set ${DATA_DIR_VARIABLE}."
        )
    return path


def version(package: str) -> str | None:
    """The installed version of a distribution, or None if it is not installed."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def time_per_call(
    score: Callable[..., Any], calls: Sequence[tuple[Any, ...]], passes: int = 3
) -> tuple[list[Any], float]:
    """Run `score(*args)` for every args in `calls`, `passes` times over.

    Returns the results of the first pass and the microseconds per call of the fastest
    pass. Best-of-N, with the garbage collector off while timing (as `timeit` does), because
    on a shared 2-core machine the noise only ever adds time.
    """
    best = float("inf")
    first: list[Any] | None = None
    for _ in range(passes):
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter()
            results = [score(*args) for args in calls]
            elapsed = time.perf_counter() - start
        finally:
            if gc_was_enabled:
                gc.enable()
        best = min(best, elapsed)
        first = results if first is None else first
    return first or [], best / max(len(calls), 1) * 1e6


def run_vllm_child(module: str, *args: str, timeout_s: float) -> dict[str, Any]:
    """Run `python -m module OUT FOLDER *args` for an in-process vLLM engine and return the
    JSON it writes to OUT (FOLDER: a temporary folder for its models). The engine core runs
    in the child's own process (`VLLM_ENABLE_V1_MULTIPROCESSING=0`: starts faster, and sees
    the child's globals) on one OpenMP thread: as fast here, and a 2-thread engine on 2
    shared cores slows down ~4x whenever anything else runs (its threads wait on each other
    at every op). A child that fails raises with the end of its log."""
    with tempfile.TemporaryDirectory(prefix="bench-vllm-") as folder:
        folder_path = Path(folder)
        out, log = folder_path / "measurements.json", folder_path / "child.log"
        env = dict(os.environ)
        env.update(
            VLLM_ENABLE_V1_MULTIPROCESSING="0",
            OMP_NUM_THREADS="1",
            VLLM_LOGGING_LEVEL="WARNING",
            TRL_EXPERIMENTAL_SILENCE="1",
            TOKENIZERS_PARALLELISM="false",
        )
        with log.open("wb") as sink:
            child = subprocess.run(
                [sys.executable, "-m", module, str(out), str(folder_path), *args],
                cwd=REPO_ROOT,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                timeout=timeout_s,
                check=False,
            )
        if child.returncode != 0 or not out.exists():
            tail = log.read_text(errors="replace")[-4000:]
            raise RuntimeError(f"{module}'s child process exited with {child.returncode}:\n{tail}")
        return json.loads(out.read_text())
