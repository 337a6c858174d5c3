"""`rlenvs serve` (or a peer's server) in a child process, for the benchmarks that measure
a served env (bench_deployment, bench_soak)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

from benchmarks import REPO_ROOT


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rlenvs_serve(env_id: str, *extra: str) -> list[str]:
    """`rlenvs serve env_id ...` on the port `server` picks (`{port}`)."""
    return [sys.executable, "-m", "rlenvs.cli", "serve", env_id, "--port", "{port}", *extra]


@contextlib.contextmanager
def server(
    argv: list[str], *, cpu: int | None = None, port: int | None = None, env: Mapping[str, str] | None = None
) -> Iterator[tuple[str, int]]:
    """A server process (`argv` with `{port}` replaced by `port`, else a free one), pinned to
    `cpu` if given, with `env` added to this process's environment; yields (url, pid) once
    /health answers, and stops it (SIGTERM, then SIGKILL) after."""
    port = free_port() if port is None else port
    command = [part.replace("{port}", str(port)) for part in argv]
    if cpu is not None:
        command = ["taskset", "-c", str(cpu), *command]
    environment = dict(os.environ, PYTHONPATH=str(REPO_ROOT), **(env or {}))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while not healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command} did not start: {process.stdout.read() if process.stdout else ''}")
            time.sleep(0.1)
        yield url, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def rss_kib(pid: int) -> int:
    """A process's resident memory now (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")
