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

Task-folder verdicts (p50, p99 over `VERDICT_CALLS` solved episodes of each layout, after one
untimed episode): the `submit` step of a Terminal-Bench 1 and of a Harbor task folder (written
here: the instruction, a Dockerfile with WORKDIR and COPY, tests of plain asserts run by
`run-tests.sh` or `tests/test.sh`), which reads the workspace and runs the task's tests in the
sandbox. Set beside a trivial command's p50 of the same run, as a ratio.

The project's target: p50 under 20 ms per trivial command in a warm session.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks import version

LATENCY_CALLS = 300
ROUNDS = 3
EPISODE_TASKS = 48
THREAD_COUNTS = (1, 4)
TARGET_P50_MS = 20.0
VERDICT_CALLS = 40


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
    from rlenvs.sandbox import Limits
    from rlenvs.sandbox.launch import bwrap_launch

    launch = bwrap_launch(None, Limits(disk_mb=64), session=True)
    if launch.lease is not None:
        launch.lease.release()  # run as this process's user: only the command line is wanted
    argv = list(launch.argv)
    argv = argv[: argv.index("-I") - 1]  # drop the guest interpreter and its arguments
    return [*argv, "/bin/bash", "-c", "true"]


def latency_rows() -> list[dict[str, Any]]:
    from rlenvs.sandbox.shells.session import ShellSession

    fresh_argv = _fresh_sandbox_argv()
    with ShellSession() as session:
        session.reset([])
        harnesses = {
            f"rlenvs {version('rlenvs')} ShellSession.run (warm)": lambda: session.run("true").ok,
            "fresh bubblewrap sandbox per command": lambda: subprocess.run(fresh_argv, check=False).returncode == 0,
            "no isolation: subprocess bash -c": lambda: (
                subprocess.run(["bash", "-c", "true"], check=False).returncode == 0
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in harnesses}
        for _ in range(ROUNDS):
            for name, call in harnesses.items():
                times[name] += _timed(call, LATENCY_CALLS // ROUNDS)
    ours = next(iter(times))
    rows = []
    for name, values in times.items():
        p50 = _percentile(values, 50) * 1e3
        rows.append(
            {"measure": "trivial command", "harness": name, "p50 ms": p50, "p99 ms": _percentile(values, 99) * 1e3}
        )
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
        {
            "measure": f"reference episodes, {threads} concurrent",
            "harness": "rlenvs Terminal-v2",
            "episodes/s": episodes_per_second(threads, tasks),
            "passed": f"{len(tasks)}/{len(tasks)}",
        }
        for threads in THREAD_COUNTS
    ]
    rows[1]["vs 1 concurrent"] = rows[1]["episodes/s"] / rows[0]["episodes/s"]
    return rows


_FOLDER_TEST = """\
from pathlib import Path
hello = Path("/app/hello.txt")
assert hello.is_file(), "/app/hello.txt does not exist"
assert hello.read_text() == Path("/tests/expected.txt").read_text(), "wrong greeting"
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _task_folders(root: Path) -> dict[str, Path]:
    """One small task folder of each layout, solved by writing /app/hello.txt."""
    tb, harbor = root / "terminal-bench", root / "harbor"
    instruction = 'Create /app/hello.txt holding the line "Hello, world!".'
    _write(tb / "task.yaml", f"instruction: {instruction}\nmax_test_timeout_sec: 30\n")
    _write(tb / "Dockerfile", "FROM ubuntu:24.04\nWORKDIR /app\nCOPY greeting.txt /app/\n")
    _write(tb / "greeting.txt", "Hello, world!\n")
    _write(tb / "run-tests.sh", "#!/bin/bash\npython3 $TEST_DIR/test_outputs.py\n")
    _write(tb / "tests" / "test_outputs.py", _FOLDER_TEST)
    _write(tb / "tests" / "expected.txt", "Hello, world!\n")
    _write(harbor / "instruction.md", instruction + "\n")
    _write(harbor / "task.toml", 'version = "1.0"\n[verifier]\ntimeout_sec = 30.0\n')
    _write(harbor / "environment" / "Dockerfile", "FROM ubuntu:24.04\nWORKDIR /app\n")
    _write(
        harbor / "tests" / "test.sh",
        "#!/bin/bash\nif python3 /tests/test_outputs.py; then echo 1 > /logs/verifier/reward.txt\n"
        "else echo 0 > /logs/verifier/reward.txt; fi\n",
    )
    _write(harbor / "tests" / "test_outputs.py", _FOLDER_TEST)
    _write(harbor / "tests" / "expected.txt", "Hello, world!\n")
    return {"Terminal-Bench 1 folder": tb, "Harbor folder": harbor}


def verdict_rows(trivial_p50_ms: float) -> list[dict[str, Any]]:
    """The submit step of solved task-folder episodes, one layout after the other."""
    from rlenvs.envs.terminal.env import TerminalEnv

    rows = []
    with tempfile.TemporaryDirectory() as root:
        for layout, folder in _task_folders(Path(root)).items():
            env = TerminalEnv(task_dir=str(folder), max_turns=5)
            times = []
            try:
                for call in range(VERDICT_CALLS + 1):
                    env.reset(seed=0)
                    env.step("echo 'Hello, world!' > /app/hello.txt")
                    start = time.perf_counter()
                    _, reward, *_, info = env.step("submit")
                    if call:  # the first one is a warm-up
                        times.append(time.perf_counter() - start)
                    if reward != 1.0:
                        raise AssertionError(f"a solved {layout} episode scored {reward}: {info['failed_checks']}")
            finally:
                env.close()
            p50 = _percentile(times, 50) * 1e3
            rows.append(
                {
                    "measure": "task-folder verdict (submit, solved)",
                    "harness": f"rlenvs Terminal-v2, {layout}",
                    "p50 ms": p50,
                    "p99 ms": _percentile(times, 99) * 1e3,
                    "passed": f"{len(times)}/{len(times)}",
                    "p50 vs rlenvs": p50 / trivial_p50_ms,
                }
            )
    return rows


def run() -> dict:
    latency, episodes = latency_rows(), episode_rows()
    verdicts = verdict_rows(latency[0]["p50 ms"])
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
        (
            "Task-folder verdicts (the submit step of a solved episode: read the workspace, run the task's tests "
            f"in the sandbox): p50 {verdicts[0]['p50 ms']:.1f} ms for a Terminal-Bench 1 folder "
            f"({verdicts[0]['p50 vs rlenvs']:.1f}x a trivial command), {verdicts[1]['p50 ms']:.1f} ms for a Harbor "
            f"folder ({verdicts[1]['p50 vs rlenvs']:.1f}x; its reward file is read by a second python3)."
        ),
    ]
    return {
        "title": "Terminal env: command latency, reference episodes and task-folder verdicts",
        "rows": latency + episodes + verdicts,
        "notes": notes,
    }
