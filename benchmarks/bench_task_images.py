"""Task images (rlenvs.images) on every backend that builds, bubblewrap, a Docker daemon and
Podman: what a build, an episode and a command cost, and how much of the EvoEval corpus runs
on its image.

- Build: the Harbor-shaped test task (tests/data/images/harbor-task: the t-bench Ubuntu base
  mapped to Debian trixie, apt and pip RUN lines, COPYs) in a cache of its own made for the
  run: the base root from mmdebstrap, then the task's own layers, then a warm rebuild from
  the cache. With each engine: the stand-in's import and the engine's build of the task's
  steps, from no stand-in and an empty build cache, then a warm rebuild.
- Episode start: `ShellSession(image=...).reset()`, a new copy-on-write view or a new
  container (p50 over `STARTS`).
- Command latency: `run("true")` in a warm session on the image, under bubblewrap and in a
  container of each engine (the zygote's protocol through `docker run -i`: no new process
  per command, as a `docker exec` each would cost), and in a warm session on the host's /usr
  (the sandbox Terminal-v2 ran before images), interleaved in the same rounds: p50 and p99
  over `CALLS` each, and the ratio of their p50s to the host's.
- Test run: the submit step of a solved episode of that task (p50 over `VERDICTS`).
- Memory per live episode: `EPISODES` sessions live at once, each after the reference
  solution ran; the proportional set size (Pss, shared pages split between sharers) of all
  processes of one sandbox (in a container: the container's and its `run` client's, not
  Podman's conmon), plus what its tmpfs upper layer holds (bubblewrap only).
- EvoEval (../shared/data, or --data): the 95 Terminal-Bench 1 folders loaded with each
  backend; how many load, how many reference solutions score 1, how many immediate submits
  0, and the wall time per task of the two episodes with the test run.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
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
PACKAGES = ("dockerfile-parse", "docker")
ENGINES = ("docker", "podman")


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
    from rlenvs.sandbox.shells.rootfs import EPISODE_STAGE

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


def _engine_builds(store_dir: Path, name: str) -> tuple[list[dict[str, Any]], Any]:
    """The same task built by a container engine, from no stand-in and an empty build cache
    (the base root is the store's, made above: every backend stands in with the same root)."""
    from rlenvs.images.engine_build import build_with_engine
    from rlenvs.images.layers import LayerStore
    from rlenvs.sandbox.shells.containers import engine

    base, cli = "ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624", engine(name).cli
    subprocess.run([cli, "rmi", "-f", base], capture_output=True, check=False)
    prune = ["builder", "prune"] if name == "docker" else ["image", "prune"]
    subprocess.run([cli, *prune, "--all", "--force"], capture_output=True, check=False)
    store, marks = LayerStore(store_dir), {}
    started = time.perf_counter()

    def mark(line: str) -> None:
        if not line.startswith("base image "):  # the build's first step: the stand-in is in
            marks.setdefault("imported", time.perf_counter())

    image = build_with_engine(TASK / "environment" / "Dockerfile", engine_name=name, store=store, progress=mark)
    cold = time.perf_counter() - started
    imported = marks["imported"] - started
    started = time.perf_counter()
    build_with_engine(TASK / "environment" / "Dockerfile", engine_name=name, store=store, progress=lambda line: None)
    warm = time.perf_counter() - started
    builder = "BuildKit" if name == "docker" else "buildah"
    rows = [
        {
            "measure": f"{name}: the stand-in's import (tarball of the root, {name} import)",
            "seconds": round(imported, 2),
        },
        {"measure": f"{name}: {name} build of the task's steps ({builder})", "seconds": round(cold - imported, 2)},
        {"measure": f"{name}: warm rebuild, the engine's build cache", "seconds": round(warm, 4)},
    ]
    return rows, image


def _latency(images: dict[str, Any]) -> list[dict[str, Any]]:
    """`true` in a warm session on each backend's image and on the host's /usr, interleaved."""
    from rlenvs.sandbox.shells.session import ShellSession

    sessions = {name: ShellSession(image=image.root(), workdir=image.workdir) for name, image in images.items()}
    sessions["host"] = ShellSession(workdir="/app")
    starts: dict[str, list[float]] = {name: [] for name in images}
    times: dict[str, list[float]] = {name: [] for name in sessions}
    try:
        sessions["host"].reset()
        for _ in range(STARTS):
            for name in starts:
                started = time.perf_counter()
                sessions[name].reset()
                starts[name].append(time.perf_counter() - started)
        for _ in range(ROUNDS):
            for name, session in sessions.items():
                for _ in range(CALLS // ROUNDS):
                    started = time.perf_counter()
                    if not session.run("true").ok:
                        raise RuntimeError(f"`true` failed in the {name} session")
                    times[name].append(time.perf_counter() - started)
    finally:
        for session in sessions.values():
            session.close()
    rows = []
    host_p50 = _percentile(times["host"], 50) * 1000
    for name in sessions:
        label = {"bwrap": "on the image (bwrap over overlayfs)", "host": "on the host's /usr"}.get(
            name, f"on the image in a {name} container"
        )
        p50, p99 = _percentile(times[name], 50) * 1000, _percentile(times[name], 99) * 1000
        row = {"measure": f"`true` in a warm session {label}", "p50 ms": round(p50, 2), "p99 ms": round(p99, 2)}
        if name != "host":
            row["p50 vs host"] = round(p50 / host_p50, 2)
        rows.append(row)
    for name in starts:
        what = "a new copy-on-write view" if name == "bwrap" else "a new container"
        rows.append(
            {
                "measure": f"episode start on {name} (reset: {what})",
                "p50 ms": round(statistics.median(starts[name]) * 1000, 1),
            }
        )
    return rows


def _memory(image: Any, backend: str) -> list[dict[str, Any]]:
    from rlenvs.sandbox.shells.session import ShellSession

    sessions = [ShellSession(image=image.root(), workdir=image.workdir) for _ in range(EPISODES)]
    try:
        pss, upper = [], []
        for session in sessions:
            session.reset()
            session.run(f"export GREETING=hello PATH=/opt/tools:$PATH; {SOLVE}")
            worker = session._worker
            assert worker is not None
            pss.append(_pss_kb(worker.pid))  # bwrap's sandbox; an engine's `run` client
            if backend != "bwrap":
                pss[-1] += _pss_kb(image.root()._inspect(worker)["State"]["Pid"])  # the container's processes
            else:
                upper.append(_upper_kb(worker.pid))
        row = {
            "measure": f"{backend}: memory per live episode ({EPISODES} live, after the reference solution)",
            "Pss MiB": round(statistics.mean(pss) / 1024, 1),
        }
        if upper:
            row["tmpfs upper MiB"] = round(statistics.mean(upper) / 1024, 2)
        return [row]
    finally:
        for session in sessions:
            session.close()


def _verdict(backend: str) -> list[dict[str, Any]]:
    """The submit step of a solved episode of the Harbor-shaped task: the toolchain check,
    the tests copied in, pytest on the image's python3, the reward file read."""
    from rlenvs.envs.terminal.env import TerminalEnv

    env = TerminalEnv(task_dir=str(TASK), backend=backend, max_turns=4, timeout_s=30)
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
            "measure": f"{backend}: test run (submit of a solved episode, p50 of {VERDICTS})",
            "p50 ms": round(statistics.median(times[1:]) * 1000, 1),
        }
    ]


def _evoeval(backend: str) -> list[dict[str, Any]]:
    from benchmarks import data_file
    from rlenvs.envs.terminal.env import TerminalEnv

    folder = data_file("terminal-bench", "evoeval", "0", "task.yaml").parent.parent  # raises, naming --data
    started = time.perf_counter()
    env = TerminalEnv(task_dir=str(folder), backend=backend, max_turns=4, timeout_s=60)
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
            "measure": f"EvoEval folders that load (backend {backend}, building each image)",
            "result": f"{len(tasks)} / 95",
            "seconds": round(load, 2),
        },
        {"measure": f"{backend}: reference solutions that score 1", "result": f"{oracle} / {len(tasks)}"},
        {"measure": f"{backend}: immediate submits that score 0", "result": f"{submit} / {len(tasks)}"},
        {
            "measure": f"{backend}: wall time per task (oracle episode, then submit, each with its test run)",
            "seconds": round(per_task, 2),
        },
    ]


def run() -> dict[str, Any]:
    store_dir = Path(f"/var/tmp/rlenvs-bench-images-{os.getpid()}")
    previous = os.environ.get("RLENVS_IMAGE_CACHE")
    os.environ["RLENVS_IMAGE_CACHE"] = str(store_dir)  # the EvoEval images too: built in this run
    try:
        builds, image = _builds(store_dir)
        images = {"bwrap": image}
        for name in ENGINES:
            rows, images[name] = _engine_builds(store_dir, name)
            builds += rows
        latency = _latency(images)
        memory = [row for name, built in images.items() for row in _memory(built, name)]
        verdict = [row for name in images for row in _verdict(name)]
        coverage = [row for name in images for row in _evoeval(name)]
    finally:
        if previous is None:
            os.environ.pop("RLENVS_IMAGE_CACHE", None)
        else:
            os.environ["RLENVS_IMAGE_CACHE"] = previous
        from rlenvs.images.layers import LayerStore

        LayerStore(store_dir).discard(store_dir)
        shutil.rmtree(store_dir, ignore_errors=True)
    shown = ", ".join(
        f"{row['measure'].split(' session ')[1]}: p50 {row['p50 ms']} ms, p99 {row['p99 ms']} ms "
        f"({row['p50 vs host']}x the host session's p50)"
        for row in latency[: len(images)]
    )
    notes = [
        f"A command on the image, in the same rounds: {shown}; target: bubblewrap p50 under 20 ms.",
        (
            f"rlenvs {version('rlenvs')}; bubblewrap over overlayfs in a user namespace; Docker {_docker_version()} "
            "(overlay2, BuildKit); Podman with runc (overlay); the machine's 2 cores shared."
        ),
        "Terminal-Bench 1 and EvoEval are Apache-2.0 (../shared/data/terminal-bench).",
    ]
    return {
        "title": "Task images on bubblewrap, Docker and Podman: build, episode and command costs; EvoEval on its image",
        "rows": builds + latency + memory + verdict + coverage,
        "notes": notes,
    }


def _docker_version() -> str:
    from rlenvs.sandbox.shells.containers import DockerEngine, engine

    docker = engine("docker")
    assert isinstance(docker, DockerEngine)
    return str(docker.client.version().get("Version", "?"))
