"""Soak: `rlenvs serve` under honest and hostile load at once, on loopback (issue 38).

Two servers, each in its own process with a bearer token: Arithmetic-v1 (`ARITHMETIC_SESSIONS`
sessions) and HumanEval-v2 (`HUMANEVAL_SESSIONS` sessions, reply limit `SANDBOX_LIMIT_S`).
Honest clients (`RemoteEnv`, one thread per session) play one-step episodes for `SECONDS`:
the oracle's reply on even episodes (the reward must be 1) and a wrong answer on odd ones
(it must be 0). In the hostile run, at the same time:
- spinners: `SPINNERS` HumanEval sessions whose every reply loops until its limit;
- slowloris: `SLOWLORIS` raw connections sending request headers a byte at a time;
- oversized frames: clients sending WebSocket frames past the server's request cap;
- disconnects: clients that send a spinning step and drop the connection at once;
- a restart: the Arithmetic server gets SIGTERM halfway (it drains its steps in flight) and
  is started again on the same port; its honest clients reconnect.
The baseline run is the same honest load alone, without restart.

Rows per run and env: honest episodes completed and lost (to the restart, or to an error),
wrong rewards (target 0), p50/p99 step latency and its ratio to the baseline, the servers'
peak RSS. Every number comes from this run.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import DATA_DIR_VARIABLE, DEFAULT_DATA_DIR, version
from benchmarks.servers import free_port, rlenvs_serve, rss_kib, server

PACKAGES = ("uvicorn", "websockets", "fastapi")
ARITHMETIC_SESSIONS = 256
HUMANEVAL_SESSIONS = 64
SECONDS = 60.0
SPINNERS = 16
SLOWLORIS = 400
OVERSIZED_CLIENTS = 4
DISCONNECTERS = 4
SANDBOX_LIMIT_S = 5.0
SPIN = "```python\nwhile True:\n    pass\n```"
WRONG = "The answer is \\boxed{-98765}"
TOKEN = secrets.token_urlsafe(24)


@dataclass
class Tally:
    """One env's honest episodes in one run."""

    latencies: list[float] = field(default_factory=list)
    completed: int = 0
    wrong_rewards: int = 0
    lost: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def failed(self, error: BaseException) -> None:
        with self.lock:
            self.lost += 1
            key = f"{type(error).__name__}: {str(error)[:70]}"
            self.errors[key] = self.errors.get(key, 0) + 1


def _honest(url: str, stop: threading.Event, tally: Tally, seed: int) -> None:
    """Play one-step episodes until `stop`: the oracle's reply, then a wrong one, in turn."""
    from rlenvs.remote import RemoteEnv

    env = RemoteEnv(url, token=TOKEN)
    episode = 0
    while not stop.is_set():
        episode += 1
        try:
            env.reset(seed=seed * 100_000 + episode)
            gold = episode % 2 == 0
            reply = env.oracle_action() if gold else WRONG
            started = time.perf_counter()
            _, reward, *_ = env.step(reply)
            took = time.perf_counter() - started
        except Exception as error:  # the restart, or a failure this benchmark counts
            tally.failed(error)
            time.sleep(0.2)
            continue
        with tally.lock:
            tally.latencies.append(took)
            tally.completed += 1
            if reward != (1.0 if gold else 0.0):
                tally.wrong_rewards += 1
    env.close()


def _spinner(url: str, stop: threading.Event) -> None:
    from rlenvs.remote import RemoteEnv

    env = RemoteEnv(url, token=TOKEN)
    while not stop.is_set():
        with contextlib.suppress(Exception):
            env.reset()
            env.step(SPIN)
    env.close()


def _slowloris(port: int, stop: threading.Event) -> None:
    """SLOWLORIS connections, each sending a request's headers a byte every second, opened
    again whenever the server closes one."""
    request = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 4000
    held: dict[socket.socket, int] = {}
    while not stop.is_set():
        while len(held) < SLOWLORIS and not stop.is_set():
            try:
                held[socket.create_connection(("127.0.0.1", port), timeout=2)] = 0
            except OSError:
                break
        for sock, sent in list(held.items()):
            try:
                sock.send(request[sent : sent + 1])
                held[sock] = (sent + 1) % len(request)
            except OSError:
                sock.close()
                del held[sock]
        stop.wait(1.0)
    for sock in held:
        sock.close()


def _oversized(ws_url: str, stop: threading.Event) -> None:
    from websockets.sync.client import connect

    frame = '{"type": "step", "data": {"message": "' + "x" * (8 << 20) + '"}}'
    while not stop.is_set():
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with contextlib.suppress(Exception), connect(ws_url, additional_headers=headers, max_size=None) as ws:
            ws.send('{"type": "reset", "data": {}}')
            ws.recv(timeout=30)
            ws.send(frame)
            ws.recv(timeout=30)
        stop.wait(0.5)


def _disconnecter(ws_url: str, stop: threading.Event) -> None:
    from websockets.sync.client import connect

    step = '{"type": "step", "data": {"message": ' + repr(SPIN).replace("'", '"') + "}}"
    while not stop.is_set():
        with contextlib.suppress(Exception):
            ws = connect(ws_url, additional_headers={"Authorization": f"Bearer {TOKEN}"})
            ws.send('{"type": "reset", "data": {}}')
            ws.recv(timeout=30)
            ws.send(step)
            ws.socket.close()  # dropped mid-step, no closing handshake
        stop.wait(0.5)


@contextlib.contextmanager
def _threads(targets: list[Callable[[], None]], stop: threading.Event) -> Iterator[None]:
    """The clients running until the block ends (`stop` is set then, whatever ends it)."""
    threads = [threading.Thread(target=target, daemon=True) for target in targets]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        deadline = time.monotonic() + 120
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))


class _PeakRss:
    """The largest VmRSS seen of the processes `pids()` names, sampled every 0.25 s."""

    def __init__(self, pids: Callable[[], list[int]]) -> None:
        self.peak_kib = 0
        self._pids = pids
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.25):
            for pid in self._pids():
                with contextlib.suppress(OSError, RuntimeError):
                    self.peak_kib = max(self.peak_kib, rss_kib(pid))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_kib


def _serve_arithmetic(port: int) -> Any:
    argv = rlenvs_serve("rlenvs/Arithmetic-v1", "--oracle", "--max-sessions", str(ARITHMETIC_SESSIONS + 64))
    argv += ["--max-sessions-per-client", str(ARITHMETIC_SESSIONS + 64)]
    return server(argv, port=port, env={"RLENVS_SERVE_TOKEN": TOKEN})


def _serve_humaneval(port: int) -> Any:
    data = Path(os.environ.get(DATA_DIR_VARIABLE) or DEFAULT_DATA_DIR) / "humaneval" / "HumanEval.jsonl.gz"
    sessions = HUMANEVAL_SESSIONS + SPINNERS + OVERSIZED_CLIENTS + DISCONNECTERS + 16
    argv = rlenvs_serve(
        "rlenvs/HumanEval-v2",
        "--oracle",
        "--env-arg",
        f"data_files={data}",
        "--env-arg",
        f"timeout_s={SANDBOX_LIMIT_S}",
        "--max-sessions",
        str(sessions),
        "--max-sessions-per-client",
        str(sessions),
    )
    return server(argv, port=port, env={"RLENVS_SERVE_TOKEN": TOKEN})


def _run(hostile: bool) -> dict[str, Any]:
    math_port, code_port = free_port(), free_port()
    math_url, code_url = f"http://127.0.0.1:{math_port}", f"http://127.0.0.1:{code_port}"
    tallies = {"Arithmetic-v1": Tally(), "HumanEval-v2": Tally()}
    stop = threading.Event()
    pids: list[int] = []
    restarted = threading.Event()
    with contextlib.ExitStack() as stack:
        math_server = stack.enter_context(_serve_arithmetic(math_port))
        _, code_pid = stack.enter_context(_serve_humaneval(code_port))
        pids += [math_server[1], code_pid]
        rss = _PeakRss(lambda: list(pids))
        targets: list[Callable[[], None]] = [
            *(lambda i=i: _honest(math_url, stop, tallies["Arithmetic-v1"], i) for i in range(ARITHMETIC_SESSIONS)),
            *(lambda i=i: _honest(code_url, stop, tallies["HumanEval-v2"], i) for i in range(HUMANEVAL_SESSIONS)),
        ]
        if hostile:
            ws_math, ws_code = f"ws://127.0.0.1:{math_port}/ws", f"ws://127.0.0.1:{code_port}/ws"
            targets += [lambda: _spinner(code_url, stop) for _ in range(SPINNERS)]
            targets += [lambda: _slowloris(math_port, stop), lambda: _slowloris(code_port, stop)]
            targets += [
                lambda url=ws_math if i % 2 else ws_code: _oversized(url, stop) for i in range(OVERSIZED_CLIENTS)
            ]
            targets += [lambda: _disconnecter(ws_code, stop) for _ in range(DISCONNECTERS)]
        started = time.monotonic()
        with _threads(targets, stop):
            if hostile:
                stop.wait(SECONDS / 2)
                os.kill(math_server[1], signal.SIGTERM)  # its context stays in the stack; stopping it again is harmless
                _wait_gone(math_server[1])
                restart = stack.enter_context(_serve_arithmetic(math_port))
                pids[0] = restart[1]
                restarted.set()
                stop.wait(max(0.0, SECONDS - (time.monotonic() - started)))
            else:
                stop.wait(SECONDS)
        peak = rss.stop()
    return {"tallies": tallies, "peak_rss_mib": peak / 1024, "restarted": restarted.is_set()}


def _wait_gone(pid: int) -> None:
    """Reap the server (a child of this process) once it has drained and exited."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the server (pid {pid}) did not stop within 60 s of SIGTERM")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))] if ordered else float("nan")


def run() -> dict[str, Any]:
    baseline, hostile = _run(hostile=False), _run(hostile=True)
    rows = []
    for name in ("Arithmetic-v1", "HumanEval-v2"):
        base = baseline["tallies"][name]
        for label, result in (("baseline", baseline), ("hostile + restart", hostile)):
            tally = result["tallies"][name]
            p50, p99 = statistics.median(tally.latencies), _percentile(tally.latencies, 0.99)
            rows.append(
                {
                    "env": name,
                    "run": label,
                    "honest episodes completed": tally.completed,
                    "lost (restart or error)": tally.lost,
                    "wrong rewards": tally.wrong_rewards,
                    "p50 ms": round(p50 * 1e3, 1),
                    "p99 ms": round(p99 * 1e3, 1),
                    "p50 vs baseline": round(p50 / statistics.median(base.latencies), 2),
                    "p99 vs baseline": round(p99 / _percentile(base.latencies, 0.99), 2),
                    "servers' peak RSS MiB": round(result["peak_rss_mib"]),
                    "why lost": "; ".join(f"{n}x {why}" for why, n in sorted(tally.errors.items())[:3]),
                }
            )
    notes = [
        f"{SECONDS:g} s per run; {ARITHMETIC_SESSIONS} Arithmetic-v1 and {HUMANEVAL_SESSIONS} HumanEval-v2 honest "
        f"sessions (one client thread each); hostile: {SPINNERS} spinning HumanEval sessions (reply limit "
        f"{SANDBOX_LIMIT_S:g} s), {SLOWLORIS} slowloris connections per server, {OVERSIZED_CLIENTS} clients "
        f"sending 8 MiB frames, {DISCONNECTERS} clients dropping mid-step, and the Arithmetic server "
        "restarted (SIGTERM, drained, started again) halfway.",
        f"rlenvs {version('rlenvs')}, uvicorn {version('uvicorn')}, websockets {version('websockets')}; "
        f"{os.cpu_count()} cores shared by the clients and both servers. HumanEval is MIT (../shared/data/humaneval).",
    ]
    return {"title": "Soak: rlenvs serve under honest and hostile load", "rows": rows, "notes": notes}
