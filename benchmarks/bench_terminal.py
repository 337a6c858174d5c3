"""Terminal env: the latency of one command in a warm session, and reference episodes per second.

Latency (p50, p99 over `LATENCY_CALLS` sequential calls, measured on the host around the
call), interleaved in rounds so that the machine's noise hits every row alike:
- rlenvs `ShellSession.run("true")`: a warm session (bubblewrap sandbox, zygote, a fresh
  bash per command that restores and saves the shell state).
- fresh sandbox per command: `bwrap` with the same arguments as a session's sandbox, running
  `bash -c true` directly (no zygote, no state): what a harness that starts an isolated
  shell per command pays, the way `docker exec` or a new container per step would, minus
  Docker's own cost.
- no isolation: `subprocess.run(["bash", "-c", "true"])` on the host, as OpenEnv's local
  mode runs commands: the floor any isolation is measured against.

Episodes per second: `TerminalEnv` plays the reference solution of `EPISODE_TASKS` tasks (the
first indices of level 1 and of level 2, all families interleaved), reset to submit, on 1 and
on 4 threads, each thread with its own env (so its own sandbox), after one untimed warm-up
episode per env. Every episode must score 1.0.

The project's target: p50 under 20 ms per trivial command in a warm session.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchmarks import version

LATENCY_CALLS = 300
ROUNDS = 3
EPISODE_TASKS = 48
THREAD_COUNTS = (1, 4)
TARGET_P50_MS = 20.0


def _percentile(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percent / 100 * (len(ordered) - 1)))]


def _timed(call: Callable[[], bool], calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        ok = call()
        times.append(time.perf_counter() - start)
        if not ok:
            raise AssertionError("a trivial command failed: the benchmark would measure an error path")
    return times


def _fresh_sandbox_argv() -> list[str]:
    """A session sandbox's bwrap command line with `bash -c true` in place of the zygote."""
    from rlenvs.sandbox.launch import bwrap_launch

    launch = bwrap_launch(None, 64, session=True)
    if launch.lease is not None:
        launch.lease.release()  # run as this process's user: only the command line is wanted
    argv = list(launch.argv)
    argv = argv[: argv.index("-I") - 1]  # drop the guest interpreter and its arguments
    return [*argv, "/bin/bash", "-c", "true"]


def latency_rows() -> list[dict[str, Any]]:
    from rlenvs.sandbox.session import ShellSession

    fresh_argv = _fresh_sandbox_argv()
    with ShellSession() as session:
        session.reset([])
        harnesses = {
            f"rlenvs {version('rlenvs')} ShellSession.run (warm)": lambda: session.run("true").ok,
            "fresh bubblewrap sandbox per command": lambda: subprocess.run(fresh_argv, check=False).returncode == 0,
            "no isolation: subprocess bash -c": lambda: subprocess.run(["bash", "-c", "true"], check=False).returncode == 0,
        }
        times: dict[str, list[float]] = {name: [] for name in harnesses}
        for _ in range(ROUNDS):
            for name, call in harnesses.items():
                times[name] += _timed(call, LATENCY_CALLS // ROUNDS)
    ours = next(iter(times))
    rows = []
    for name, values in times.items():
        p50 = _percentile(values, 50) * 1e3
        rows.append({"measure": "trivial command", "harness": name, "p50 ms": p50,
                     "p99 ms": _percentile(values, 99) * 1e3})  # fmt: skip
    ours_p50 = rows[0]["p50 ms"]
    for row in rows[1:]:
        row["p50 vs rlenvs"] = row["p50 ms"] / ours_p50
    rows[0]["target"] = f"p50 < {TARGET_P50_MS:g} ms: {'met' if ours_p50 < TARGET_P50_MS else 'NOT met'}"
    assert ours in rows[0]["harness"]
    return rows


def play_reference(env, options: dict) -> float:
    env.reset(options=options)
    while True:
        _, reward, terminated, truncated, _ = env.step(env.oracle_action())
        if terminated or truncated:
            return reward


def episodes_per_second(threads: int, tasks: list[tuple[int, int]]) -> float:
    """Reference episodes of `tasks` ((level, index) pairs) on `threads` threads, each with
    its own envs; every episode must score 1.0."""
    from rlenvs.envs.terminal.env import TerminalEnv

    envs = {level: [TerminalEnv(level=level, max_turns=12) for _ in range(threads)] for level in (1, 2)}
    queue, lock, rewards = iter(tasks), threading.Lock(), []

    def warm_up(slot: int) -> None:  # untimed: each env starts its sandbox once
        for level in (1, 2):
            play_reference(envs[level][slot], {"task_index": 0})

    def drive(slot: int) -> None:
        while True:
            with lock:
                task = next(queue, None)
            if task is None:
                return
            level, index = task
            rewards.append(play_reference(envs[level][slot], {"task_index": index}))

    try:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(warm_up, range(threads)))
            start = time.perf_counter()
            list(pool.map(drive, range(threads)))
            seconds = time.perf_counter() - start
    finally:
        for level_envs in envs.values():
            for env in level_envs:
                env.close()
    if rewards != [1.0] * len(tasks):
        raise AssertionError(f"{rewards.count(1.0)} of {len(tasks)} reference episodes scored 1.0")
    return len(tasks) / seconds


def episode_rows() -> list[dict[str, Any]]:
    tasks = [(level, index) for level in (1, 2) for index in range(EPISODE_TASKS // 2)]
    rows = [
        {"measure": f"reference episodes, {threads} concurrent", "harness": "rlenvs Terminal-v0",
         "episodes/s": episodes_per_second(threads, tasks), "passed": f"{len(tasks)}/{len(tasks)}"}
        for threads in THREAD_COUNTS
    ]  # fmt: skip
    rows[1]["vs 1 concurrent"] = rows[1]["episodes/s"] / rows[0]["episodes/s"]
    return rows


def run() -> dict:
    latency, episodes = latency_rows(), episode_rows()
    ours = latency[0]
    notes = [
        (
            f"A trivial command in a warm session: p50 {ours['p50 ms']:.1f} ms, p99 {ours['p99 ms']:.1f} ms "
            f"({ours['target']}); a fresh bubblewrap sandbox per command takes "
            f"{latency[1]['p50 vs rlenvs']:.2f}x as long (and keeps no shell state), an unisolated `bash -c` "
            f"{latency[2]['p50 vs rlenvs']:.2f}x."
        ),
        (
            f"Reference solutions of {EPISODE_TASKS} tasks (levels 1 and 2, all families): "
            f"{episodes[0]['episodes/s']:.1f} episodes/s on 1 thread, {episodes[1]['episodes/s']:.1f} on 4 "
            f"({episodes[1]['vs 1 concurrent']:.2f}x; the machine has 2 cores)."
        ),
        (
            "Each episode: reset (empty the sandbox, write the files, run the task's setup), each reference "
            "command, then submit (the host reads the workspace and checks the expectations)."
        ),
    ]
    return {"title": "Terminal env: command latency and reference episodes", "rows": latency + episodes, "notes": notes}
