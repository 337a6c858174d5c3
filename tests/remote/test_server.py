"""`rlenvs serve` and `RemoteEnv`: a real env behind the real server (FastAPI, uvicorn), driven
by OpenEnv's own client, plain WebSocket and HTTP clients, gymnasium's checker, the testing
kit and `EnvPool`. Loopback only.

Misbehaviour (hanging, raising steps) comes from tests.vector.test_pool's ScriptedArithmeticEnv,
served in this process (`serving`); the server killed mid-run is a real `rlenvs serve`
process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

for _module in ("fastapi", "uvicorn", "websockets", "httpx"):
    pytest.importorskip(_module, reason=f"the env server's tests need {_module}: pip install -e '.[dev]'")

import httpx  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

import rlenvs  # noqa: E402, F401 - registers the ids
from rlenvs.core.failures import EnvLostError, EnvTimeoutError  # noqa: E402
from rlenvs.remote import RemoteEnv, RemoteEnvError, wire  # noqa: E402
from rlenvs.remote.server import EnvServer, serving  # noqa: E402
from rlenvs.vector import ENV_LOST, EnvPool  # noqa: E402
from tests.support.ctrl_c import sigint_as_at_a_terminal  # noqa: E402
from tests.vector.test_pool import RELEASE, ScriptedArithmeticEnv  # noqa: E402

ARITHMETIC = "rlenvs/Arithmetic-v1"
TWO_TURNS = {"max_turns": 2}
"""What the module's server makes its envs with: a wrong first answer gets feedback."""


@pytest.fixture(scope="module")
def arithmetic_url():
    with serving(EnvServer(ARITHMETIC, TWO_TURNS, allow_oracle=True)) as url:
        yield url


def test_openenv_generic_client_plays_an_episode(arithmetic_url):
    """OpenEnv's own client (openenv 0.10 from PyPI), unchanged, against the rlenvs server."""
    pytest.importorskip("openenv", reason="OpenEnv's client: pip install openenv==0.10.0 (.ci/run installs it)")
    from openenv.core.generic_client import GenericEnvClient

    local = gym.make(ARITHMETIC, **TWO_TURNS)
    observation, info = local.reset(seed=5)
    gold = local.unwrapped.oracle_action()
    with GenericEnvClient(base_url=arithmetic_url).sync() as client:
        first = client.reset(seed=5)
        assert first.observation["text"] == observation
        assert first.done is False and first.metadata == info
        result = client.step({"message": gold})
        assert result.reward == 1.0 and result.done is True
        assert result.observation["terminated"] is True and result.metadata["stop_reason"] == "answered"
        state = client.state()
        assert state["step_count"] == 1 and state["done"] is True and state["env_id"] == ARITHMETIC
        wrong = client.reset(seed=5)
        assert wrong.observation["text"] == observation
        assert client.step({"message": "\\boxed{-12345}"}).reward == 0.0


def test_remote_env_returns_what_the_env_returns(arithmetic_url):
    """Same seeds, same replies: the served env's observations, rewards, flags and infos are
    the in-process env's, exactly (through JSON and back)."""
    local, remote = gym.make(ARITHMETIC, **TWO_TURNS), RemoteEnv(arithmetic_url)
    try:
        for seed in range(6):
            assert remote.reset(seed=seed) == local.reset(seed=seed)
            assert remote.oracle_action() == local.unwrapped.oracle_action()
            for reply in ("no idea", "\\boxed{1}"):
                got, want = remote.step(reply), local.step(reply)
                assert got == want
                if want[2] or want[3]:
                    break
    finally:
        remote.close()


def test_remote_env_passes_gymnasiums_checker_and_the_testing_kit(arithmetic_url):
    from rlenvs.testing import check_text_env

    env = RemoteEnv(arithmetic_url)
    check_env(env, skip_render_check=True)
    env.close()
    report = check_text_env(lambda: RemoteEnv(arithmetic_url), seeds=range(4), garbage_examples=5)
    assert report.passed, report


def test_plain_websocket_client_gets_each_error_and_the_session_goes_on(arithmetic_url):
    ws_url = arithmetic_url.replace("http", "ws") + "/ws"
    with connect(ws_url) as ws:

        def ask(message: str) -> dict:
            ws.send(message)
            return json.loads(ws.recv(timeout=10))

        cases = {
            "{not json": wire.INVALID_JSON,
            '"a string"': wire.VALIDATION_ERROR,
            '{"type": "fly"}': wire.UNKNOWN_TYPE,
            '{"type": "step", "data": {"message": "x"}}': wire.VALIDATION_ERROR,  # before reset
            '{"type": "reset", "data": {"seed": -1}}': wire.VALIDATION_ERROR,
            '{"type": "reset", "data": {"sed": 1}}': wire.VALIDATION_ERROR,
            '{"type": "reset", "data": [1]}': wire.VALIDATION_ERROR,
            '{"type": "reset", "extra": 1}': wire.VALIDATION_ERROR,
            "[" * 5000 + "]" * 5000: wire.INVALID_JSON,  # deeper than Python's recursion limit
            '{"type": "reset", "data": {"seed": ' + "9" * 5000 + "}}": wire.INVALID_JSON,  # past int's 4300 digits
        }
        for message, code in cases.items():
            reply = ask(message)
            assert reply["type"] == "error" and reply["data"]["code"] == code, (message, reply)
            assert reply["data"]["session_ended"] is False
        ws.send(b'{"type": "state"}')  # a binary frame
        reply = json.loads(ws.recv(timeout=10))
        assert reply["data"]["code"] == wire.VALIDATION_ERROR and "binary frame" in reply["data"]["message"]
        assert ask('{"type": "reset", "data": {"seed": 1}}')["type"] == "observation"
        for action in ({"msg": "x"}, {"message": 3}, {"message": "x", "more": 1}):
            reply = ask(json.dumps({"type": "step", "data": action}))
            assert reply["data"]["code"] == wire.VALIDATION_ERROR
        reply = ask('{"type": "step", "data": {"message": "\\\\boxed{0}"}}')
        assert reply["type"] == "observation" and reply["data"]["done"] is True
        assert ask('{"type": "step", "data": {"message": "again"}}')["data"]["code"] == wire.VALIDATION_ERROR


def test_http_endpoints_are_openenvs(arithmetic_url):
    with httpx.Client(base_url=arithmetic_url, timeout=10) as http:
        assert http.get("/health").json()["status"] == "healthy"
        schema = http.get("/schema").json()
        assert set(schema) == {"action", "observation", "state"}
        assert schema["action"]["required"] == ["message"]
        assert http.get("/metadata").json()["name"] == ARITHMETIC
        assert http.get("/state").json()["step_count"] == 0
        local = gym.make(ARITHMETIC, **TWO_TURNS)
        observation, _ = local.reset(seed=9)
        first = http.post("/reset", json={"seed": 9}).json()
        assert first["observation"]["text"] == observation and first["done"] is False
        # Stateless, as in OpenEnv: a /step resets a fresh env with its seed, then steps it.
        step = http.post("/step", json={"seed": 9, "action": {"message": local.unwrapped.oracle_action()}}).json()
        assert step["reward"] == 1.0 and step["done"] is True
        assert http.post("/step", json={"action": "x"}).status_code == 422
        assert http.post("/reset", json={"bogus": 1}).status_code == 422
        # Options that pose no task are the client's mistake, not the server's error.
        assert http.post("/reset", json={"options": {"task_index": -1}}).status_code == 422
        # Any str is a reply: a lone surrogate comes back escaped, as on /ws.
        body = json.dumps({"seed": 9, "action": {"message": "hi \ud800"}})
        lone = http.post("/step", content=body, headers={"content-type": "application/json"})
        assert lone.status_code == 200 and lone.json()["done"] is False


def test_env_pool_steps_many_sessions_like_a_local_pool(arithmetic_url):
    with EnvPool(arithmetic_url, 8) as remote, EnvPool(ARITHMETIC, 8, make_kwargs=TWO_TURNS) as local:
        assert remote.max_workers == 8
        got, want = remote.reset(seed=100), local.reset(seed=100)
        assert [(r.observation, r.info) for r in got] == [(r.observation, r.info) for r in want]
        replies = dict(enumerate(remote.oracle_actions()))
        replies[3] = "wrong"
        got, want = remote.step(replies), local.step(replies)
        assert [(r.reward, r.terminated, r.info) for r in got] == [(r.reward, r.terminated, r.info) for r in want]


def test_vector_env_over_remote_envs(arithmetic_url):
    vector = gym.vector.SyncVectorEnv([lambda: RemoteEnv(arithmetic_url)] * 3)
    observations, _ = vector.reset(seed=0)
    assert len(observations) == 3 and all(isinstance(o, str) and o for o in observations)
    _, rewards, terminated, _, _ = vector.step(["\\boxed{0}"] * 3)
    assert terminated.all() and rewards.shape == (3,)
    vector.close()


# --- faults -----------------------------------------------------------------------------------


class ClosingArithmeticEnv(ScriptedArithmeticEnv):
    """Counts its closes; a reply "#timeout-error" raises the env's own TimeoutError,
    "#tuple-info" returns an info JSON would change (a tuple), "#no-reward" a reward of None."""

    closed = 0

    def step(self, action):
        if action == "#timeout-error":
            raise TimeoutError("the env's own timeout")
        observation, reward, terminated, truncated, info = super().step(action)
        if action == "#tuple-info":
            info["pair"] = (1, 2)
        if action == "#no-reward":
            reward = None
        return observation, reward, terminated, truncated, info

    def close(self):
        type(self).closed += 1
        super().close()


def _health(url: str) -> dict:
    return httpx.get(url + "/health", timeout=10).json()


def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


@pytest.fixture
def scripted_url():
    server = EnvServer("scripted-arithmetic", make_env=ClosingArithmeticEnv, max_sessions=3, step_timeout_s=1.0)
    RELEASE.clear()
    with serving(server) as url:
        yield url
    RELEASE.set()


def test_a_hung_step_ends_its_session_only(scripted_url):
    stuck, other = RemoteEnv(scripted_url), RemoteEnv(scripted_url)
    stuck.reset(seed=0)
    other.reset(seed=1)
    start = time.monotonic()
    with pytest.raises(EnvTimeoutError, match="step timeout of 1 s"):
        stuck.step("#hang\n\\boxed{1}")
    assert time.monotonic() - start < 5
    assert _health(scripted_url)["abandoned_calls"] == 1
    assert other.step("\\boxed{1}")[2] is True  # the other session went on
    closed = ClosingArithmeticEnv.closed
    RELEASE.set()  # the hung call returns: its thread closes the abandoned env
    _wait_for(lambda: _health(scripted_url)["abandoned_calls"] == 0)
    _wait_for(lambda: ClosingArithmeticEnv.closed > closed)
    stuck.reset(seed=0)  # a new session
    assert stuck.step("\\boxed{1}")[2] is True
    stuck.close()
    other.close()


def test_an_env_that_raises_ends_its_session_with_the_error(scripted_url):
    env = RemoteEnv(scripted_url)
    env.reset(seed=0)
    with pytest.raises(RemoteEnvError, match="scripted failure in step") as raised:
        env.step("#raise\n")
    assert raised.value.code == wire.EXECUTION_ERROR and raised.value.session_ended
    with pytest.raises(gym.error.ResetNeeded):
        env.step("\\boxed{1}")
    env.reset(seed=0)
    assert env.step("\\boxed{1}")[2] is True
    env.close()
    _wait_for(lambda: _health(scripted_url)["active_sessions"] == 0)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("#timeout-error", "raised TimeoutError: the env's own timeout"),  # the env's own, not the server's limit
        ("#tuple-info", "info['pair'] is a tuple"),  # JSON would hand back a list
        ("#no-reward", "float() argument must be"),
    ],
)
def test_what_the_wire_cannot_carry_is_the_envs_error(scripted_url, reply, message):
    env = RemoteEnv(scripted_url)
    env.reset(seed=0)
    with pytest.raises(RemoteEnvError, match=re.escape(message)) as raised:
        env.step(reply)
    assert raised.value.code == wire.EXECUTION_ERROR and raised.value.session_ended
    env.close()
    _wait_for(lambda: _health(scripted_url) == {**_health(scripted_url), "active_sessions": 0, "abandoned_calls": 0})


def test_an_idle_session_is_closed():
    with serving(EnvServer(ARITHMETIC, idle_timeout_s=0.5)) as url:
        env = RemoteEnv(url)
        env.reset(seed=0)
        _wait_for(lambda: _health(url)["active_sessions"] == 0)
        with pytest.raises(RemoteEnvError, match="no message for 0.5 s") as raised:
            env.step("\\boxed{1}")
        assert raised.value.session_ended
        env.reset(seed=0)  # a new session
        env.close()


def test_remote_env_rejects_an_answer_outside_the_protocol(arithmetic_url):
    """A server (here a fake one) that answers garbage: a typed error, and the session dropped."""
    from websockets.sync.server import serve

    answers = iter(["not json", '{"type": "observation", "data": {"observation": {"text": "x"}}}'])

    def garbage(connection):
        for _ in connection:
            connection.send(next(answers))

    with serve(garbage, "127.0.0.1", 0) as fake:
        threading.Thread(target=fake.serve_forever, daemon=True).start()
        env = RemoteEnv(arithmetic_url)
        env.ws_url = f"ws://127.0.0.1:{fake.socket.getsockname()[1]}/ws"
        for _ in range(2):
            with pytest.raises(RemoteEnvError, match="not OpenEnv's protocol") as raised:
                env.reset(seed=0)
            assert raised.value.code == wire.SESSION_ERROR and env._ws is None
        fake.shutdown()


def test_a_client_that_leaves_mid_episode_frees_its_session_and_env(scripted_url):
    closed = ClosingArithmeticEnv.closed
    ws = connect(scripted_url.replace("http", "ws") + "/ws", legacy=True)
    ws.send('{"type": "reset", "data": {"seed": 0}}')
    ws.recv(timeout=10)
    assert _health(scripted_url)["active_sessions"] == 1
    ws.socket.shutdown(socket.SHUT_RDWR)  # gone without a close message or handshake
    ws.socket.close()
    _wait_for(lambda: _health(scripted_url)["active_sessions"] == 0)
    _wait_for(lambda: ClosingArithmeticEnv.closed > closed)


def test_capacity_reached_is_an_error_and_a_freed_slot_is_reusable(scripted_url):
    envs = [RemoteEnv(scripted_url) for _ in range(4)]
    for env in envs[:3]:
        env.reset(seed=0)
    with pytest.raises(RemoteEnvError, match="maximum of 3 sessions") as raised:
        envs[3].reset(seed=0)
    assert raised.value.code == wire.CAPACITY_REACHED
    envs[0].close()
    _wait_for(lambda: _health(scripted_url)["active_sessions"] == 2)
    envs[3].reset(seed=0)
    for env in envs:
        env.close()


def test_a_pool_over_a_hung_and_a_raising_session_completes_its_batch(scripted_url):
    with EnvPool(scripted_url, 3) as pool:
        pool.reset(seed=0)
        results = pool.step({0: "#hang\n", 1: "#raise\n", 2: "\\boxed{1}"})
        assert [r.stop_reason for r in results[:2]] == ["env_timeout", "env_error"]
        assert results[2].error is None
        RELEASE.set()
        assert len(pool.reset(seed=0)) == 3


def _start_server(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "rlenvs.cli", "serve", ARITHMETIC, "--port", str(port), "--max-sessions", "16"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=sigint_as_at_a_terminal,  # its Ctrl-C test sends SIGINT
    )
    line = process.stdout.readline()
    assert line.startswith(f"serving {ARITHMETIC} at http://127.0.0.1:{port}"), line
    _wait_for(lambda: _reachable(port), timeout=30)
    return process


def _reachable(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_server_killed_mid_run_ends_every_episode_as_lost_and_nothing_hangs():
    port = _free_port()
    process = _start_server(port)
    url = f"http://127.0.0.1:{port}"
    try:
        pool = EnvPool(url, 8)
        pool.reset(seed=0)
        pool.step(dict.fromkeys(range(4), "no answer yet"))  # single-turn: those four end here
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        start = time.monotonic()
        results = pool.step(dict.fromkeys(range(4, 8), "\\boxed{1}"))
        assert time.monotonic() - start < 10
        assert {r.stop_reason for r in results} == {ENV_LOST}
        assert all("closed the session" in r.error or "connection" in r.error for r in results)
        with pytest.raises(EnvLostError, match="is `rlenvs serve` running") as raised:
            pool.reset([0])
        assert "reset failed for env(s) 0 (lost)" in str(raised.value.__notes__)
        pool.close()
    finally:
        if process.poll() is None:
            process.kill()


def test_rlenvs_serve_rejects_an_unknown_id_cleanly():
    done = subprocess.run(
        [sys.executable, "-m", "rlenvs.cli", "serve", "rlenvs/Arithmetc-v0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "rlenvs serve: error:" in done.stderr and "Arithmetic-v1" in done.stderr


def test_rlenvs_serve_refuses_a_bad_or_busy_port_and_stops_quietly_on_ctrl_c():
    """A port out of range is argparse's error, not an OverflowError; a busy port is one line
    and nothing says "serving" first; SIGINT (Ctrl-C) ends the server with one line, status 130
    (the shell's for Ctrl-C) and no traceback (it printed asyncio's CancelledError)."""
    command = [sys.executable, "-m", "rlenvs.cli", "serve", ARITHMETIC]
    done = subprocess.run([*command, "--port", "70000"], capture_output=True, text=True, timeout=60)
    assert (
        done.returncode == 2
        and "70000 is not a TCP port: use 1-65535" in done.stderr
        and "Traceback" not in done.stderr
    )
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        done = subprocess.run([*command, "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "serving" not in done.stdout and "Traceback" not in done.stderr
    process = _start_server(_free_port())
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 130 and "Traceback" not in output and "CancelledError" not in output
    assert output.splitlines()[-1] == "rlenvs serve: interrupted", output


def test_a_lost_env_is_named_once_in_the_error():
    """The batch's error was `EnvLostError: EnvLostError: ...`: the outcome kept the type in its text."""
    from rlenvs.vector.calls import failed

    outcome = failed(EnvLostError("the server closed the session"))
    assert outcome.status == "lost" and outcome.value == "the server closed the session"


def test_256_concurrent_sessions_step_their_episodes():
    """The load the issue names: 256 WebSocket sessions held at once, each playing episodes."""
    with serving(EnvServer(ARITHMETIC, max_sessions=256)) as url, EnvPool(url, 256) as pool:
        for round_ in range(2):
            firsts = pool.reset(seed=1000 * round_)
            assert len(firsts) == 256 and _health(url)["active_sessions"] == 256
            results = pool.step({r.index: "\\boxed{7}" for r in firsts})
            assert all(r.error is None and r.done for r in results)
            assert 0 < sum(r.reward for r in results) < 256
