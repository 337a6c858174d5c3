"""`rlenvs serve` against clients that mean it harm: no token, a wrong one, slowloris, frames and
bodies too big or too deep, one client taking every session; and SIGTERM during a step. Real
uvicorn servers on loopback, real sockets, OpenEnv's own client; each test takes seconds.

The served env of the drain test is ScriptedArithmeticEnv (a reply "#sleep S\\n..." sleeps S
seconds), registered as SLOW in the `rlenvs serve` process only (`SERVE_SLOW`): registered here,
it would turn up among other tests' "did you mean" ids.
"""

from __future__ import annotations

import json
import logging
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

for _module in ("fastapi", "uvicorn", "websockets", "httpx"):
    pytest.importorskip(_module, reason=f"the env server's tests need {_module}: pip install -e '.[dev]'")

import httpx  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidStatus  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

import rlenvs  # noqa: E402, F401 - registers the ids
from rlenvs.core.failures import EnvLostError  # noqa: E402
from rlenvs.remote import RemoteEnv, RemoteEnvError, wire  # noqa: E402
from rlenvs.remote.server import EnvServer, default_sessions_per_client, serving  # noqa: E402
from rlenvs.vector import EnvPool  # noqa: E402
from tests.remote.test_server import _free_port, _health, _wait_for  # noqa: E402

ARITHMETIC = "rlenvs/Arithmetic-v1"
SLOW = "rlenvs-test/SlowArithmetic-v0"
SERVE_SLOW = (
    "import sys, gymnasium, tests.vector.test_pool, rlenvs.cli; "
    f"gymnasium.register({SLOW!r}, entry_point=tests.vector.test_pool.ScriptedArithmeticEnv); "
    "sys.exit(rlenvs.cli.main(['serve', *sys.argv[1:]]))"
)
"""`rlenvs serve SLOW ARGS...`, in a process that registered SLOW first."""
TOKEN = "test-token-0123456789abcdef"
ANSWER_WITHIN_S = 1.0
"""How promptly a bystander session must answer while another client misbehaves."""


def _ws_url(url: str) -> str:
    return url.replace("http", "ws") + "/ws"


@pytest.fixture(scope="module")
def token_url():
    with serving(EnvServer(ARITHMETIC, token=TOKEN)) as url:
        yield url


# --- the token ----------------------------------------------------------------------------------


def test_every_endpoint_but_health_needs_the_token(token_url):
    right, wrong = {"Authorization": f"Bearer {TOKEN}"}, {"Authorization": f"Bearer {TOKEN}x"}
    with httpx.Client(base_url=token_url, timeout=10) as http:
        assert http.get("/health").status_code == 200  # probes send no headers
        for method, path in (("GET", "/schema"), ("GET", "/metadata"), ("GET", "/state"), ("POST", "/reset")):
            for headers in ({}, wrong, {"Authorization": TOKEN}):
                refused = http.request(method, path, headers=headers)
                assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
                assert refused.json()["detail"]["code"] == wire.UNAUTHORIZED
                assert "Authorization: Bearer TOKEN" in refused.json()["detail"]["message"]
            assert http.request(method, path, headers=right).status_code == 200
    for headers in ({}, wrong):
        with pytest.raises(InvalidStatus, match="401"):
            connect(_ws_url(token_url), additional_headers=headers, open_timeout=5)
    with connect(_ws_url(token_url), additional_headers=right) as ws:
        ws.send('{"type": "reset", "data": {"seed": 1}}')
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


def test_remote_env_and_pool_send_the_token_given_or_from_the_environment(token_url, monkeypatch):
    monkeypatch.delenv(wire.SERVE_TOKEN_ENV, raising=False)
    with pytest.raises(RemoteEnvError, match="needs its token, and no token was given") as raised:
        RemoteEnv(token_url)
    assert raised.value.code == wire.UNAUTHORIZED
    with pytest.raises(RemoteEnvError, match="the token it was given is not the server's"):
        RemoteEnv(token_url, token=TOKEN + "x")
    with pytest.raises(ValueError, match="at least 16 characters"):
        RemoteEnv(token_url, token="short")
    env = RemoteEnv(token_url, token=TOKEN)
    env.reset(seed=0)
    assert env.step("\\boxed{0}")[2] is True
    assert TOKEN not in repr(env)
    env.close()
    monkeypatch.setenv(wire.SERVE_TOKEN_ENV, TOKEN)
    with EnvPool(token_url, 2) as pool:
        assert len(pool.reset(seed=0)) == 2
    monkeypatch.delenv(wire.SERVE_TOKEN_ENV)
    with EnvPool(token_url, 2, make_kwargs={"token": TOKEN}) as pool:
        assert len(pool.reset(seed=0)) == 2


def test_openenv_client_sends_the_token_as_a_header(token_url):
    pytest.importorskip("openenv", reason="OpenEnv's client: pip install openenv==0.10.0 (.ci/run installs it)")
    from openenv.core.generic_client import GenericEnvClient

    headers = {"Authorization": f"Bearer {TOKEN}"}
    with GenericEnvClient(base_url=token_url, headers=headers).sync() as client:
        assert client.reset(seed=5).done is False
        assert client.step({"message": "\\boxed{-12345}"}).done is True
    with pytest.raises(ConnectionError, match="401"), GenericEnvClient(base_url=token_url).sync() as client:
        client.reset(seed=5)


def test_serving_beyond_loopback_needs_a_token(capsys):
    from rlenvs.cli import main

    server = EnvServer(ARITHMETIC)
    refusal = "--host 0.0.0.0 lets other machines reach the server.*set a token first"
    with pytest.raises(ValueError, match=refusal), serving(server, host="0.0.0.0"):
        pass
    assert main(["serve", ARITHMETIC, "--host", "0.0.0.0"]) == 2
    assert "rlenvs serve: error: --host 0.0.0.0 lets other machines" in capsys.readouterr().err
    assert default_sessions_per_client(64, "0.0.0.0") == 32 and default_sessions_per_client(64, "127.0.0.1") == 64
    assert default_sessions_per_client(64, "localhost") == 64 and default_sessions_per_client(1, "10.0.0.5") == 1


# --- connections --------------------------------------------------------------------------------


def _half_sent_heads(port: int, count: int) -> list[socket.socket]:
    """Connections that have sent the start of a request head and will trickle the rest."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        sockets.append(sock)
    return sockets


def _trickle(sockets: list[socket.socket], stop: threading.Event) -> None:
    """One header byte on every connection every 0.2 s, as slowloris sends them."""
    while not stop.wait(0.2):
        for sock in sockets:
            try:
                sock.send(b"X")
            except OSError:  # the server closed it: what the test waits for
                pass


def _closed_by_server(sock: socket.socket) -> bool:
    if not select.select([sock], [], [], 0)[0]:
        return False
    try:
        return sock.recv(4096) == b"" or True  # a 503 or 400 before the close also ends it
    except OSError:  # reset: closed
        return True


def test_slowloris_does_not_lock_out_a_real_client(caplog):
    """200 connections sending their heads a byte at a time, against a server that takes 40:
    the oldest are closed to let new ones in, each is closed when its head is overdue, a real
    client still plays an episode at once, and the log gets a line or two, not one per connection."""
    server = EnvServer(ARITHMETIC, max_sessions=4, max_connections=40, head_timeout_s=1.5)
    caplog.set_level(logging.WARNING)
    with serving(server) as url:
        sockets = _half_sent_heads(int(url.rsplit(":", 1)[1]), 200)
        stop = threading.Event()
        trickler = threading.Thread(target=_trickle, args=(sockets, stop), daemon=True)
        trickler.start()
        try:
            start = time.monotonic()
            env = RemoteEnv(url, connect_timeout_s=5)
            env.reset(seed=0)
            assert env.step("\\boxed{0}")[2] is True
            assert time.monotonic() - start < 3
            env.close()
            _wait_for(lambda: all(_closed_by_server(sock) for sock in sockets), timeout=server.head_timeout_s + 5)
        finally:
            stop.set()
            trickler.join()
            for sock in sockets:
                sock.close()
    flood = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert 1 <= len(flood) <= 5, [record.getMessage() for record in flood]
    assert "connections" in flood[0].getMessage()


def test_a_request_head_past_16_kib_is_refused(token_url):
    """A head still unfinished past 16 KiB (sent fast: the deadline is not what stops it) gets 400."""
    port = int(token_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 20_000)
        assert sock.recv(4096).startswith(b"HTTP/1.1 400")


# --- sizes and shapes ---------------------------------------------------------------------------


def _steady_answers(url: str, stop: threading.Event, slowest: list[float]) -> None:
    """A bystander session stepping all along; the slowest answer it got goes into `slowest`."""
    env = RemoteEnv(url)
    try:
        while not stop.is_set():
            start = time.monotonic()
            env.reset(seed=0)
            slowest[0] = max(slowest[0], time.monotonic() - start)
    finally:
        env.close()


def _reset_peak_rss() -> None:
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")  # Linux: the peak resident set size starts again from now


def _peak_rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def test_hostile_frames_get_clear_errors_while_other_sessions_answer():
    with serving(EnvServer(ARITHMETIC)) as url:
        stop, slowest = threading.Event(), [0.0]
        bystander = threading.Thread(target=_steady_answers, args=(url, stop, slowest), daemon=True)
        bystander.start()
        attack = "[" + "{}," * 4_000_000 + "{}]"
        _reset_peak_rss()
        rss = _peak_rss_mib()
        try:
            with connect(_ws_url(url), max_size=None) as ws:
                # 4 million empty objects under the size cap: json.loads would build ~300 MB of dicts.
                ws.send(attack)
                reply = json.loads(ws.recv(timeout=10))["data"]
                assert reply["code"] == wire.INVALID_JSON and "structural tokens" in reply["message"]
                assert reply["session_ended"] is False
                ws.send("[" * 40 + "]" * 40)
                reply = json.loads(ws.recv(timeout=10))["data"]
                assert "nested deeper than 32 levels" in reply["message"] and reply["session_ended"] is False
                ws.send('{"type": "reset", "data": {"seed": 1}}')
                assert json.loads(ws.recv(timeout=10))["type"] == "observation"  # the session went on
                ws.send('{"type": "step", "data": {"message": "' + "a" * (13 * 2**20) + '"}}')  # past the cap
                with pytest.raises(ConnectionClosed) as closed:
                    ws.recv(timeout=10)
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009  # "message too big"
            assert _peak_rss_mib() - rss < 150  # the frame's copies, not its 4 million objects
        finally:
            stop.set()
            bystander.join()
        assert slowest[0] < ANSWER_WITHIN_S, f"a bystander waited {slowest[0]:.2f} s for an answer"
        env = RemoteEnv(url)
        env.reset(seed=0)
        with pytest.raises(ValueError, match="bytes as JSON, and the server takes at most"):
            env.step("\U0001f600" * (2**20 + 6000))  # longer than the env takes: 12 MiB + 70 KB as JSON
        assert env.step("\\boxed{0}")[2] is True  # the session was not touched
        env.close()


def test_http_bodies_are_capped_and_bounded_in_shape():
    with serving(EnvServer(ARITHMETIC)) as url, httpx.Client(base_url=url, timeout=30) as http:
        limit = wire.max_request_bytes(2**20)
        big = b'{"seed": 1, "options": {"pad": "' + b"a" * limit + b'"}}'
        declared = http.post("/reset", content=big, headers={"content-type": "application/json"})
        assert declared.status_code == 413 and f"at most {limit}" in declared.json()["detail"]["message"]
        chunked = http.post("/reset", content=iter([big[:1000], big[1000:]]))  # no Content-Length
        assert chunked.status_code == 413
        deep = http.post("/reset", content=b"[" * 100 + b"]" * 100)
        assert deep.status_code == 422 and "nested deeper" in deep.json()["detail"]["message"]
        many = http.post("/step", content=b"[" + b"1," * 20_000 + b"1]")
        assert many.status_code == 422 and many.json()["detail"]["code"] == wire.INVALID_JSON
        assert http.post("/reset", json={"seed": 3}).status_code == 200
        assert http.post("/reset").status_code == 200  # no body: a reset with no arguments


# --- sessions per client ------------------------------------------------------------------------


def test_one_client_address_cannot_hold_every_session():
    with serving(EnvServer(ARITHMETIC, max_sessions=4, max_sessions_per_client=2)) as url:
        envs = [RemoteEnv(url) for _ in range(3)]
        for env in envs[:2]:
            env.reset(seed=0)
        with pytest.raises(RemoteEnvError, match="127.0.0.1 holds its maximum of 2 sessions") as raised:
            envs[2].reset(seed=0)
        assert raised.value.code == wire.CLIENT_CAPACITY_REACHED
        refused = httpx.post(url + "/reset", json={}, timeout=10)
        assert refused.status_code == 429 and refused.json()["detail"]["code"] == wire.CLIENT_CAPACITY_REACHED
        # Another address (all of 127/8 is loopback) still gets in.
        with connect(_ws_url(url), source_address=("127.0.0.2", 0)) as other:
            other.send('{"type": "reset", "data": {"seed": 1}}')
            assert json.loads(other.recv(timeout=10))["type"] == "observation"
        envs[0].close()
        _wait_for(lambda: _health(url)["active_sessions"] == 1)
        envs[2].reset(seed=0)
        for env in envs:
            env.close()


# --- SIGTERM ------------------------------------------------------------------------------------


def test_sigterm_lets_a_step_in_flight_finish_and_refuses_new_sessions():
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-c", SERVE_SLOW, SLOW, "--port", str(port), "--drain-timeout", "20"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().startswith("serving")
        env, late = RemoteEnv(url), RemoteEnv(url)
        env.reset(seed=0)
        answers: list = []
        stepping = threading.Thread(target=lambda: answers.append(env.step("#sleep 2\n\\boxed{0}")))
        stepping.start()
        time.sleep(0.5)  # the step is running on the server
        process.send_signal(signal.SIGTERM)
        _wait_for(lambda: httpx.get(url + "/health", timeout=5).status_code == 503)  # draining: out of rotation
        with pytest.raises(EnvLostError, match="the server is stopping"):
            late.reset(seed=0)
        stepping.join(timeout=10)
        assert len(answers) == 1 and answers[0][2] is True  # the answer came through the drain
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()


def test_a_step_past_the_drain_timeout_does_not_hold_the_server_up():
    """The grace period bounds the drain: a step still running when it ends is stopped, its
    client is told why (EnvLostError: a machinery outcome, never a reward) and the server exits
    without a traceback."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-c", SERVE_SLOW, SLOW, "--port", str(port), "--drain-timeout", "1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().startswith("serving")
        env = RemoteEnv(url)
        env.reset(seed=0)
        failures: list = []
        stepping = threading.Thread(target=lambda: _record_failure(failures, env.step, "#sleep 60\n\\boxed{0}"))
        stepping.start()
        time.sleep(0.5)  # the step is running on the server
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
        assert time.monotonic() - signalled < 10  # the drain, a second to say so, 5 s for threads
        stepping.join(timeout=20)
        assert len(failures) == 1 and isinstance(failures[0], EnvLostError), failures
        assert "drain timeout" in str(failures[0]), failures
        assert "Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()


def _record_failure(failures: list, call, *args) -> None:
    try:
        call(*args)
    except Exception as error:  # what the client made of the server's end
        failures.append(error)
