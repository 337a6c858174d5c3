"""Spreadsheet env: actions per second, and verifying an episode against a LibreOffice round trip.

Workload: `EPISODE_TASKS` tasks of `rlenvs/Spreadsheet-v1` (levels 1 and 2, all families
interleaved), each played with its reference solution, so each ends with the workbook an
agent that solved it would leave.

- Actions per second: the reference replies' actions (SET, FILL, SORT, DELETE ROWS, ...)
  applied through `env.step`, parsing included, over all tasks (best of `ROUNDS`).
- Verification, rlenvs: `SpreadsheetEnv.verify(task, workbook)` on each solved workbook:
  the target values compared SpreadsheetBench's way and, for formula tasks, the workbook
  recalculated on `perturbations=2` changed copies of its inputs (median ms per episode).
- Verification, LibreOffice round trip: what a SpreadsheetBench-style judge pays to get
  recalculated values: the solved workbook written to .xlsx, `soffice --headless
  --convert-to xlsx` with recalculation on load forced (tests/support/libreoffice.py), the values
  read back with openpyxl. Once per workbook (one soffice start each, as a judge of single
  episodes runs), on `LIBREOFFICE_EPISODES` of the tasks, and once for all of them in one
  soffice call (its start shared), per workbook. Skipped, and said so, without soffice.
  This side checks only the values: it does no perturbation, so it does less work.

The project's target: verification at least 100x faster than the LibreOffice round trip.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import version

PACKAGES = ("openpyxl",)
EPISODE_TASKS = 48
LIBREOFFICE_EPISODES = 6
ROUNDS = 3
TARGET_RATIO = 100.0


def solved_episodes() -> list[tuple[Any, Any, Any]]:
    """(env, task, solved workbook) for each task, played with its reference replies."""
    from rlenvs.envs.spreadsheet.env import SpreadsheetEnv

    envs = {level: SpreadsheetEnv(level=level) for level in (1, 2)}
    episodes = []
    for level in (1, 2):
        env = envs[level]
        for index in range(EPISODE_TASKS // 2):
            env.reset(options={"task_index": index})
            for reply in env.task.solution:
                env.step(reply)
            episodes.append((env, env.task, env.workbook.copy()))
    return episodes


def actions_per_second(episodes: list[tuple[Any, Any, Any]]) -> tuple[float, int]:
    from rlenvs.envs.spreadsheet.actions import parse_actions

    count = sum(len(parse_actions(reply)) for _, task, _ in episodes for reply in task.solution)
    best = float("inf")
    for _ in range(ROUNDS):
        seconds = 0.0
        for env, task, _ in episodes:
            env.reset(options={"task_id": task.task_id})
            start = time.perf_counter()
            for reply in task.solution:
                env.step(reply)
            seconds += time.perf_counter() - start
        best = min(best, seconds)
    return count / best, count


def verification_ms(episodes: list[tuple[Any, Any, Any]]) -> list[float]:
    times = []
    for env, task, workbook in episodes:
        best = float("inf")
        for _ in range(ROUNDS):
            trial = workbook.copy()  # a fresh cache: the verdict's recalculation is measured
            start = time.perf_counter()
            reward, _ = env.verify(task, trial)
            best = min(best, time.perf_counter() - start)
        if reward != 1.0:
            raise AssertionError(f"{task.task_id}: the reference workbook scored {reward}")
        times.append(best * 1e3)
    return times


def libreoffice_ms(episodes: list[tuple[Any, Any, Any]]) -> tuple[list[float], float] | None:
    """Per-workbook round trips (ms each), and the per-workbook ms of one batch call."""
    from rlenvs.workbook.xlsx import write_xlsx
    from tests.support.libreoffice import find_soffice, recalculate_with_libreoffice

    if find_soffice() is None:
        return None
    chosen = episodes[:: max(1, len(episodes) // LIBREOFFICE_EPISODES)][:LIBREOFFICE_EPISODES]
    with tempfile.TemporaryDirectory(prefix="bench-sheet-") as folder:
        paths = []
        for k, (_, _task, workbook) in enumerate(chosen):
            path = Path(folder) / f"episode_{k}.xlsx"
            write_xlsx(workbook, path)
            paths.append(path)
        singles = []
        for path in paths:
            start = time.perf_counter()
            values = recalculate_with_libreoffice([path], Path(folder) / f"out_{path.stem}")
            singles.append((time.perf_counter() - start) * 1e3)
            if not values[path]:
                raise AssertionError(f"LibreOffice returned no values for {path.name}")
        start = time.perf_counter()
        recalculate_with_libreoffice(paths, Path(folder) / "batch")
        batch = (time.perf_counter() - start) * 1e3 / len(paths)
    return singles, batch


def run() -> dict:
    episodes = solved_episodes()
    rate, count = actions_per_second(episodes)
    ours = verification_ms(episodes)
    ours_p50 = statistics.median(ours)
    rows: list[dict[str, Any]] = [
        {"measure": "actions/s (reference replies, parsed and applied)", "harness": f"rlenvs {version('rlenvs')}",
         "value": rate, "n": count},
        {"measure": "verify one episode, ms (median; values + 2 perturbed recalculations)",
         "harness": f"rlenvs {version('rlenvs')} SpreadsheetEnv.verify", "value": ours_p50, "n": len(ours)},
        {"measure": "verify one episode, ms (max)", "harness": "rlenvs SpreadsheetEnv.verify", "value": max(ours),
         "n": len(ours)},
    ]  # fmt: skip
    notes = [f"{len(episodes)} solved episodes (levels 1 and 2, all families); every reference workbook scored 1.0."]
    office = libreoffice_ms(episodes)
    if office is None:
        rows.append({"measure": "LibreOffice round trip", "harness": "soffice", "value": "not installed", "n": 0})
    else:
        singles, batch = office
        single = statistics.median(singles)
        rows += [
            {
                "measure": "LibreOffice round trip per workbook, ms (median, one soffice start each)",
                "harness": "soffice --headless --convert-to xlsx",
                "value": single,
                "n": len(singles),
                "x slower than rlenvs": single / ours_p50,
            },
            {
                "measure": "LibreOffice round trip per workbook, ms (one soffice call for all)",
                "harness": "soffice --headless --convert-to xlsx",
                "value": batch,
                "n": len(singles),
                "x slower than rlenvs": batch / ours_p50,
            },
        ]
        verdict = "met" if single / ours_p50 >= TARGET_RATIO else "NOT met"
        notes.append(
            f"Verification {ours_p50:.2f} ms per episode against {single:.0f} ms per LibreOffice round trip: "
            f"{single / ours_p50:.0f}x (target >= {TARGET_RATIO:.0f}x: {verdict}); with soffice's start shared "
            f"by a batch, {batch:.0f} ms per workbook ({batch / ours_p50:.0f}x)."
        )
    notes.append(f"Actions: {rate:.0f}/s over {count} actions, each parsed, applied and reported.")
    return {
        "title": "Spreadsheet env: actions and verification vs a LibreOffice round trip",
        "rows": rows,
        "notes": notes,
    }
