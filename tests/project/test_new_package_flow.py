"""Issue 41's "done when", as a user outside the repository meets it: `rlenvs new` writes a
procedural package, pip installs it into a fresh venv, and then the commands its README gives,
each through the real program in a child process: its own tests, `rlenvs list`, `rlenvs
certify`, `rlenvs serve` played over the wire by `RemoteEnv`, and `rlenvs-train` with the
package's own train.yaml. Each step is held to its outcome, not its exit status alone: the id
listed with the package's name, 0 wrong verdicts, a served episode that pays a right answer,
a trained model and its metrics on disk. (Every kind's own tests and certify:
tests/test_scaffold.py.)"""

from __future__ import annotations

import importlib.util
import json
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from rlenvs.remote import RemoteEnv
from tests.support.overlay_venv import overlay_venv, pip_install_editable, run

NEEDED = ("torch", "transformers", "trl", "fastapi", "uvicorn", "websockets")
pytestmark = [
    pytest.mark.slow,  # a GRPO run of a real (tiny) model, and a server
    pytest.mark.skipif(
        not all(importlib.util.find_spec(name) for name in NEEDED),
        reason="needs the train and serve extras: pip install -e '.[train,serve]'",
    ),
]
NAME, ENV_ID = "letter-count", "letter-count/LetterCount-v0"
PROMPT = re.compile(r"How many times does the letter '(.)' occur in \"([^\"]+)\"\?")
"""What the generated env asks: a right reply is computed from it, as a policy that can count would."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=1) as answer:
            return answer.status == 200
    except OSError:
        return False


def test_generate_install_list_certify_serve_and_train(tmp_path: Path) -> None:
    python = overlay_venv(tmp_path / "venv")
    made = run(python, "-m", "rlenvs.cli", "new", NAME, "--kind", "procedural", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    package = tmp_path / NAME
    pip_install_editable(python, package)

    tests = run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=package)
    assert tests.returncode == 0 and re.search(r"^\d+ passed in", tests.stdout, re.M), tests.stdout[-3000:]

    listed = run(python, "-m", "rlenvs.cli", "list", cwd=package)
    line = next((line for line in listed.stdout.splitlines() if line.startswith(ENV_ID + " ")), "")
    assert f" {NAME} " in line, listed.stdout + listed.stderr

    certified = run(python, "-m", "rlenvs.cli", "certify", ENV_ID, "--json", cwd=package)
    report = json.loads(certified.stdout)
    assert (
        certified.returncode == 0 and report["tasks"] == 10 and report["checks"] > 0 and report["wrong_verdicts"] == 0
    ), report

    served_reward = serve_and_play(python, package)
    assert served_reward == 1.0

    output = tmp_path / "run"
    trained = run(
        python,
        "-m",
        "rlenvs_train.cli",
        "--config",
        "train.yaml",
        "trainer.max_steps=2",
        f"trainer.output_dir={output}",
        cwd=package,
        timeout=600,
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert f"rlenvs-train: {ENV_ID}" in trained.stdout
    metrics = json.loads((output / "metrics.json").read_text())
    assert [entry["step"] for entry in metrics["steps"]] == [1, 2]
    assert all(0.0 <= entry["reward"] <= 1.0 for entry in metrics["steps"])
    assert (output / "final-model" / "config.json").is_file()


def serve_and_play(python: Path, package: Path) -> float:
    """Start `rlenvs serve` on a free port, play one episode through `RemoteEnv` with the
    right count, stop the server with SIGTERM (it drains and exits 0); the episode's reward."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [str(python), "-m", "rlenvs.cli", "serve", ENV_ID, "--port", str(port)],
        cwd=package,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert first.startswith(f"serving {ENV_ID} at {url}"), first
        deadline = time.monotonic() + 30
        while not healthy(url):
            assert time.monotonic() < deadline and server.poll() is None, "the server never answered /health"
            time.sleep(0.1)
        env = RemoteEnv(url)
        try:
            prompt, _ = env.reset(seed=0)
            asked = PROMPT.search(prompt)
            assert asked is not None, prompt
            count = asked.group(2).count(asked.group(1))
            observation, reward, terminated, truncated, info = env.step(f"I count them: \\boxed{{{count}}}")
        finally:
            env.close()
        assert (observation, terminated, truncated, info["correct"]) == ("", True, False, True), info
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        return float(reward)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
