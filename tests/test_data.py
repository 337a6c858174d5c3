"""Data a newcomer can get: `rlenvs data`, the loaders' not-found errors, an unreachable hub.

The data are the real sets in ../shared/data, copied into tmp folders where a test needs a
folder with some files missing. The hub is never reached: an unreachable one is a closed
local port, or a local port whose listen queue is full so that a connection gets no answer,
set as HF_ENDPOINT (what huggingface_hub and the loaders' probe both read).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

from rlenvs.data import DataNotFoundError
from rlenvs.envs.plugins import all_entries
from tests.conftest import SHARED_DATA

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def rlenvs_data(*ids: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlenvs.cli", "data", *ids],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def rows(stdout: str) -> dict[str, list[tuple[str, str]]]:
    """The table's rows, by env id: [(file, status), ...]."""
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("ENV "))
    file_at, status_at = lines[header].index("FILE"), lines[header].index("STATUS")
    table: dict[str, list[tuple[str, str]]] = {}
    env_id = ""
    for line in lines[header + 1 :]:
        if not line.strip():
            break
        env_id = line[:file_at].strip() or env_id
        table.setdefault(env_id, []).append((line[file_at:status_at].strip(), line[status_at:].strip()))
    return table


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: connecting is refused


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts no more connections: the listen queue (backlog 0) holds one, so
    the next connection attempt gets no answer, as from a firewalled hub."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    held = socket.create_connection(("127.0.0.1", port))
    yield port
    held.close()
    server.close()


@pytest.fixture
def online_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The hub switched back on (conftest turns it off), no proxy, an empty data folder."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", *PROXY_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # an empty hub cache
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("RLENVS_DATA_DIR", str(folder))
    return folder


# --- rlenvs data -------------------------------------------------------------------------------


def test_rlenvs_data_lists_every_env_and_where_its_files_are() -> None:
    result = rlenvs_data(env={"RLENVS_DATA_DIR": str(SHARED_DATA)})
    table = rows(result.stdout)
    # rlenvs' own, then installed packages' (the example packages, in CI)
    assert list(table) == [entry.id for entry in all_entries()], result.stdout + result.stderr
    assert table["rlenvs/HumanEval-v2"] == [
        ("humaneval/HumanEval.jsonl.gz", f"found: {SHARED_DATA / 'humaneval' / 'HumanEval.jsonl.gz'}")
    ]
    assert table["rlenvs/GSM8K-v1"] == [
        ("gsm8k/train.jsonl", f"found: {SHARED_DATA / 'gsm8k' / 'train.jsonl'}"),
        ("gsm8k/test.jsonl", f"found: {SHARED_DATA / 'gsm8k' / 'test.jsonl'}"),
    ]
    assert table["rlenvs/GSM8K-Tool-v1"] == [("gsm8k/train.jsonl, gsm8k/test.jsonl", "as for rlenvs/GSM8K-v1")]
    assert table["rlenvs/MBPP-v2"] == [("mbpp/mbpp.jsonl", f"found: {SHARED_DATA / 'mbpp' / 'mbpp.jsonl'}")]
    assert table["rlenvs/Arithmetic-v1"] == [("-", "nothing: procedural")]
    assert f"RLENVS_DATA_DIR={SHARED_DATA}" in result.stdout
    assert "HF_HUB_OFFLINE=1 is set" in result.stdout  # conftest's: the hub is named and not asked
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("ENV "))
    assert all(
        line[header.index("STATUS") - 2 : header.index("STATUS")] == "  "
        for line in lines
        if line.startswith("rlenvs/")
    )


def test_rlenvs_data_exits_0_when_the_listed_envs_have_their_data() -> None:
    result = rlenvs_data(
        "rlenvs/GSM8K-v1", "rlenvs/HumanEval-v2", "rlenvs/Arithmetic-v1", env={"RLENVS_DATA_DIR": str(SHARED_DATA)}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert list(rows(result.stdout)) == ["rlenvs/GSM8K-v1", "rlenvs/HumanEval-v2", "rlenvs/Arithmetic-v1"]
    assert "Where to get them" not in result.stdout


def test_rlenvs_data_names_what_is_missing_and_how_to_get_it(online_settings: Path, closed_port: int) -> None:
    (online_settings / "gsm8k").mkdir()
    shutil.copy(SHARED_DATA / "gsm8k" / "test.jsonl", online_settings / "gsm8k" / "test.jsonl")
    started = time.monotonic()
    result = rlenvs_data("rlenvs/GSM8K-v1", "rlenvs/MATH-v1", env={"HF_ENDPOINT": f"http://127.0.0.1:{closed_port}"})
    assert time.monotonic() - started < 30  # one probe for the report, refused at once
    assert result.returncode == 1, result.stdout + result.stderr
    table = rows(result.stdout)
    # The README's fast suite installs the dev extra alone, without `datasets` (the train extra's).
    has_datasets = importlib.util.find_spec("datasets") is not None
    hub_copy = "is unreachable" if has_datasets else "needs `pip install datasets`"
    assert table["rlenvs/GSM8K-v1"] == [
        ("gsm8k/train.jsonl", f"missing; the hub copy openai/gsm8k (main) {hub_copy}"),
        ("gsm8k/test.jsonl", f"found: {online_settings / 'gsm8k' / 'test.jsonl'}"),
    ]
    assert table["rlenvs/MATH-v1"][0] == (
        "math/train.jsonl",
        "missing (no copy on the hub: a local file is the only way)",
    )
    assert f"the Hugging Face hub (http://127.0.0.1:{closed_port}) through `datasets`: unreachable" in result.stdout
    assert ("the `datasets` package is not installed (pip install datasets)" in result.stdout) != has_datasets
    assert "set RLENVS_DATA_DIR=" in result.stdout and "HF_HUB_OFFLINE=1" in result.stdout
    assert "gsm8k: https://github.com/openai/grade-school-math" in result.stdout


def test_rlenvs_data_names_a_data_dir_that_does_not_exist(tmp_path: Path) -> None:
    result = rlenvs_data("rlenvs/GSM8K-v1", env={"RLENVS_DATA_DIR": str(tmp_path / "nope")})
    assert result.returncode == 1
    assert f"RLENVS_DATA_DIR is set to '{tmp_path / 'nope'}', which does not exist" in result.stdout


# --- the loaders' errors -----------------------------------------------------------------------


def test_a_data_dir_that_does_not_exist_is_named_as_such(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RLENVS_DATA_DIR", str(tmp_path / "nope"))
    with pytest.raises(
        DataNotFoundError, match=r"RLENVS_DATA_DIR is set to '.*nope', which does not exist: point it at"
    ):
        gym.make("rlenvs/GSM8K-v1")
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("RLENVS_DATA_DIR", str(tmp_path / "a-file"))
    with pytest.raises(DataNotFoundError, match=r"which is not a folder"):
        gym.make("rlenvs/GSM8K-v1")
    monkeypatch.setenv("RLENVS_DATA_DIR", str(tmp_path / "nope"))
    assert gym.make("rlenvs/GSM8K-v1", data_files=str(SHARED_DATA / "gsm8k" / "test.jsonl")).reset(seed=0)[0]


@pytest.mark.sandbox
@pytest.mark.parametrize(
    "env_id,path",
    [("rlenvs/HumanEval-v2", "humaneval/HumanEval.jsonl.gz"), ("rlenvs/MBPP-v2", "mbpp/mbpp.jsonl")],
)
def test_the_not_found_error_names_the_file_the_loader_reads(
    env_id: str, path: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The message once said humaneval/test.jsonl, which the loader never reads; the file it
    names now is the one that, put there, loads."""
    monkeypatch.setenv("RLENVS_DATA_DIR", str(tmp_path))
    with pytest.raises(DataNotFoundError) as raised:
        gym.make(env_id)
    message = str(raised.value)
    assert f"RLENVS_DATA_DIR={tmp_path} has no {path}" in message and f"a folder holding {path}" in message
    assert "test.jsonl" not in message and "train.jsonl" not in message
    (tmp_path / path).parent.mkdir()
    shutil.copy(SHARED_DATA / path, tmp_path / path)
    assert gym.make(env_id).reset(seed=0)[0]


MAKE_GSM8K = """
import gymnasium as gym, rlenvs
from rlenvs.data import DataNotFoundError
try:
    gym.make("rlenvs/GSM8K-v1")
except DataNotFoundError as error:
    print(error)
"""


@pytest.mark.slow  # waits out a silent port
@pytest.mark.parametrize("port_kind", ["closed_port", "silent_port"])
def test_an_unreachable_hub_fails_in_seconds_and_says_how_to_go_offline(
    port_kind: str, online_settings: Path, request: pytest.FixtureRequest
) -> None:
    """Before: datasets retried for about 24 s, then said it could not reach the hub. The
    loaders now probe the endpoint first (3 s at most, a hanging DNS lookup included). In a
    fresh interpreter: `datasets` reads the offline variables once, when it is imported."""
    port = request.getfixturevalue(port_kind)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", MAKE_GSM8K],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{port}"},
    )
    assert time.monotonic() - started < 10, result.stdout + result.stderr
    message = result.stdout
    assert f"the Hugging Face hub (http://127.0.0.1:{port}) is unreachable from here" in message, result.stderr
    assert f"RLENVS_DATA_DIR={online_settings} has no gsm8k/train.jsonl" in message
    assert "set RLENVS_DATA_DIR to a folder holding gsm8k/train.jsonl" in message and "HF_HUB_OFFLINE=1" in message
    detail = "Connection refused" if port_kind == "closed_port" else "no answer from 127.0.0.1"
    assert detail in message
