"""Task images without Docker (rlenvs.images): what a build, an episode and a command cost, and
how much of the EvoEval corpus runs on its image.

- Build: the Harbor-shaped test task (tests/data/images/harbor-task: the t-bench Ubuntu base
  mapped to Debian trixie, apt and pip RUN lines, COPYs) in a cache of its own made for the
  run: the base root from mmdebstrap, then the task's own layers, then a warm rebuild from
  the cache.
- Episode start: `ShellSession(image=...).reset()`, a new copy-on-write view (p50 over
  `STARTS`).
- Command latency: `run("true")` in a warm session on the image and, interleaved in the same
  rounds, in a warm session on the host's /usr (the sandbox Terminal-v0 ran before images):
  p50 and p99 over `CALLS` each, and the ratio of their p50s.
- Test run: the submit step of a solved episode of that task (p50 over `VERDICTS`).
- Memory per live episode: `EPISODES` sessions live at once, each after the reference
  solution ran; the proportional set size (Pss, shared pages split between sharers) of all
  processes of one sandbox, plus what its tmpfs upper layer holds.
- EvoEval (../shared/data, or --data): the 95 Terminal-Bench 1 folders
  loaded with backend "bwrap"; how many load, how many reference solutions score 1, how many
  immediate submits 0, and the wall time per task of the two episodes with the test run.

docker exec is not measured beside it: the docker backend is not built yet.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks import version

HERE = Path(__file__).resolve().parent
TASK = HERE.parent / "tests" / "data" / "images" / "harbor-task"
CALLS = 300
ROUNDS = 3
STARTS = 20
EPISODES = 4
VERDICTS = 10
SOLVE = "sort -n /app/numbers.txt > /app/sorted.txt && greet > /app/greeting.txt"
PACKAGES = ("dockerfile-parse",)


def _percentile(values: list[float], percent: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percent / 100 * (len(ordered) - 1)))]


def _pss_kb(pid: int) -> int:
    """Pss of `pid` and every process below it, in KiB."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        pending += [int(child) for child in children]
    return total


def _upper_kb(pid: int) -> int:
    from rlenvs.sandbox.rootfs import EPISODE_STAGE

    stats = os.statvfs(f"/proc/{pid}/root{EPISODE_STAGE}")
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize // 1024


def _builds(store_dir: Path) -> tuple[list[dict[str, Any]], Any]:
    from rlenvs.images.build import build_image
    from rlenvs.images.layers import LayerStore

    store = LayerStore(store_dir)
    lines: list[str] = []
    started = time.perf_counter()
    image = build_image(TASK / "environment" / "Dockerfile", store=store, progress=lines.append)
    cold = time.perf_counter() - started
    base = float(lines[1].rsplit("(", 1)[1].split(" ")[0])  # "step 1/..: built (N s)"
    started = time.perf_counter()
    build_image(TASK / "environment" / "Dockerfile", store=store, progress=lambda line: None)
    warm = time.perf_counter() - started
    rows = [
        {"measure": "base root (mmdebstrap, Debian trixie with the t-bench tools)", "seconds": round(base, 2)},
        {"measure": "the task's own layers (apt, pip, COPY, useradd: 12 steps)", "seconds": round(cold - base, 2)},
        {"measure": "warm rebuild, every layer from the cache", "seconds": round(warm, 4)},
        {"measure": "warm rebuild vs the task's own layers cold", "ratio": round(warm / (cold - base), 4)},
    ]
    return rows, image


def _latency(image: Any) -> tuple[list[dict[str, Any]], float]:
    from rlenvs.sandbox.session import ShellSession

    root = image.root()
    starts = []
    with ShellSession(image=root, workdir=image.workdir) as on_image, ShellSession(workdir="/app") as on_host:
        on_host.reset()
        for _ in range(STARTS):
            started = time.perf_counter()
            on_image.reset()
            starts.append(time.perf_counter() - started)
        times: dict[str, list[float]] = {"image": [], "host": []}
        for _ in range(ROUNDS):
            for name, session in (("image", on_image), ("host", on_host)):
                for _ in range(CALLS // ROUNDS):
                    started = time.perf_counter()
                    if not session.run("true").ok:
                        raise RuntimeError(f"`true` failed in the {name} session")
                    times[name].append(time.perf_counter() - started)
    rows = []
    for name, label in (
        ("image", "warm session on the image (bwrap over overlayfs)"),
        ("host", "warm session on the host's /usr"),
    ):
        p50, p99 = _percentile(times[name], 50) * 1000, _percentile(times[name], 99) * 1000
        rows.append({"measure": f"`true` in a {label}", "p50 ms": round(p50, 2), "p99 ms": round(p99, 2)})
    rows[0]["p50 vs host"] = round(rows[0]["p50 ms"] / rows[1]["p50 ms"], 2)
    rows.append(
        {
            "measure": "episode start (reset: a new copy-on-write view)",
            "p50 ms": round(statistics.median(starts) * 1000, 1),
        }
    )
    return rows, statistics.median(starts)


def _memory(image: Any) -> list[dict[str, Any]]:
    from rlenvs.sandbox.session import ShellSession

    sessions = [ShellSession(image=image.root(), workdir=image.workdir) for _ in range(EPISODES)]
    try:
        pss, upper = [], []
        for session in sessions:
            session.reset()
            session.run(f"export GREETING=hello PATH=/opt/tools:$PATH; {SOLVE}")
            worker = session._worker
            assert worker is not None
            pss.append(_pss_kb(worker.pid))
            upper.append(_upper_kb(worker.pid))
        return [
            {
                "measure": f"memory per live episode ({EPISODES} live, after the reference solution)",
                "Pss MiB": round(statistics.mean(pss) / 1024, 1),
                "tmpfs upper MiB": round(statistics.mean(upper) / 1024, 2),
            }
        ]
    finally:
        for session in sessions:
            session.close()


def _verdict() -> list[dict[str, Any]]:
    """The submit step of a solved episode of the Harbor-shaped task: the toolchain check,
    the tests copied in, pytest on the image's python3, the reward file read."""
    from rlenvs.envs.terminal.env import TerminalEnv

    env = TerminalEnv(task_dir=str(TASK), backend="bwrap", max_turns=4, timeout_s=30)
    times = []
    try:
        for _ in range(VERDICTS + 1):
            env.reset(options={"task_index": 0})
            env.step(f"```bash\n{SOLVE}\n```")
            started = time.perf_counter()
            reward = env.step("submit")[1]
            times.append(time.perf_counter() - started)
            if reward != 1.0:
                raise RuntimeError("the solved Harbor-shaped task did not score 1")
    finally:
        env.close()
    return [
        {
            "measure": f"test run (submit of a solved episode, p50 of {VERDICTS})",
            "p50 ms": round(statistics.median(times[1:]) * 1000, 1),
        }
    ]


def _evoeval() -> list[dict[str, Any]]:
    from benchmarks import data_file
    from rlenvs.envs.terminal.env import TerminalEnv

    folder = data_file("terminal-bench", "evoeval", "0", "task.yaml").parent.parent  # raises, naming --data
    started = time.perf_counter()
    env = TerminalEnv(task_dir=str(folder), backend="bwrap", max_turns=4, timeout_s=60)
    load = time.perf_counter() - started
    tasks = env.tasks.tasks
    oracle = submit = 0
    started = time.perf_counter()
    try:
        for index in range(len(tasks)):
            env.reset(options={"task_index": index})
            while True:
                _, reward, terminated, truncated, _ = env.step(env.oracle_action())
                if terminated or truncated:
                    break
            oracle += reward == 1.0
            env.reset(options={"task_index": index})
            submit += env.step("submit")[1] == 0.0
    finally:
        env.close()
    per_task = (time.perf_counter() - started) / len(tasks)
    return [
        {
            "measure": "EvoEval folders that load (backend bwrap)",
            "result": f"{len(tasks)} / 95",
            "seconds": round(load, 2),
        },
        {"measure": "reference solutions that score 1", "result": f"{oracle} / {len(tasks)}"},
        {"measure": "immediate submits that score 0", "result": f"{submit} / {len(tasks)}"},
        {
            "measure": "wall time per task (oracle episode, then submit, each with its test run)",
            "seconds": round(per_task, 2),
        },
    ]


def run() -> dict[str, Any]:
    store_dir = Path(f"/var/tmp/rlenvs-bench-images-{os.getpid()}")
    previous = os.environ.get("RLENVS_IMAGE_CACHE")
    os.environ["RLENVS_IMAGE_CACHE"] = str(store_dir)  # the EvoEval images too: built in this run
    try:
        builds, image = _builds(store_dir)
        latency, _ = _latency(image)
        memory = _memory(image)
        verdict = _verdict()
        coverage = _evoeval()
    finally:
        if previous is None:
            os.environ.pop("RLENVS_IMAGE_CACHE", None)
        else:
            os.environ["RLENVS_IMAGE_CACHE"] = previous
        from rlenvs.images.layers import LayerStore

        LayerStore(store_dir).discard(store_dir)
        shutil.rmtree(store_dir, ignore_errors=True)
    image_row = latency[0]
    notes = [
        (
            f"A command on the image: p50 {image_row['p50 ms']} ms, p99 {image_row['p99 ms']} ms "
            f"({image_row['p50 vs host']}x the host-/usr session's p50 in the same rounds; target: p50 under 20 ms)."
        ),
        f"rlenvs {version('rlenvs')}; bubblewrap over overlayfs in a user namespace; the machine's 2 cores shared.",
        "Terminal-Bench 1 and EvoEval are Apache-2.0 (../shared/data/terminal-bench).",
    ]
    return {
        "title": "Task images: build, episode and command costs; EvoEval on its image",
        "rows": builds + latency + memory + verdict + coverage,
        "notes": notes,
    }
