"""SkyRL's env API (skyrl-gym from PyPI) drives rlenvs envs: rows written by `rlenvs export`,
envs made by `skyrl_gym.make(env_class, env_config=..., extras=row)`, and the calls SkyRL's
generator makes (init, then step until done), in-process and on a served env."""

from __future__ import annotations

import gymnasium as gym
import pyarrow.parquet as pq
import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="SkyRL's env API: pip install skyrl-gym (.ci/run installs it)")

import rlenvs  # noqa: E402 - registers the ids
import rlenvs.integrations.skyrl  # noqa: E402
from rlenvs.integrations.parquet import export_env  # noqa: E402

ARITHMETIC = "rlenvs/Arithmetic-v1"


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    paths = export_env(
        ARITHMETIC, tmp_path_factory.mktemp("export"), env_kwargs={"max_turns": 2}, num_train=6, num_val=0
    )
    return pq.read_table(paths["train"]).to_pylist()


def _generator_episode(row: dict, replies: list[str], env_config: dict | None = None) -> tuple[float, int, list]:
    """What SkyRL's generator does with one row: make, init, step until done; returns the
    last reward, the turns taken and the conversation."""
    extras = {key: value for key, value in row.items() if key != "prompt"} | {"max_turns": 2}
    env = skyrl_gym.make(row["env_class"], env_config=env_config or {}, extras=extras)
    chat, _ = env.init(list(row["prompt"]))
    turns, reward, done = 0, 0.0, False
    while not done:
        output = env.step(replies[turns])
        chat += [{"role": "assistant", "content": replies[turns]}] + output["observations"]
        reward, done, turns = output["reward"], output["done"], turns + 1
    env.close()
    return reward, turns, chat


def _gold(row: dict) -> str:
    env = gym.make(ARITHMETIC, max_turns=2)
    env.reset(options={"task_index": row["extra_info"]["task_index"]})
    return env.unwrapped.oracle_action()


def test_register_makes_every_rlenvs_id_a_skyrl_env_class():
    ids = rlenvs.integrations.skyrl.register()
    assert ARITHMETIC in ids and "rlenvs/HumanEval-v2" in ids
    assert rlenvs.integrations.skyrl.register() == ids  # twice is harmless


def test_skyrls_generator_calls_play_exported_tasks(rows):
    rlenvs.integrations.skyrl.register([ARITHMETIC])
    for row in rows:
        assert _generator_episode(row, [_gold(row)])[:2] == (1.0, 1)
        reward, turns, chat = _generator_episode(row, ["no answer here", _gold(row)])
        assert (reward, turns) == (1.0, 2)
        assert chat[3]["role"] == "user" and "boxed" in chat[3]["content"]  # the env's reminder between turns
        assert _generator_episode(row, ["\\boxed{-99999}"])[0] == 0.0


def test_a_served_env_under_skyrl(rows):
    pytest.importorskip("fastapi", reason="the env server: pip install -e '.[dev]'")
    from rlenvs.remote.server import EnvServer, serving

    rlenvs.integrations.skyrl.register([ARITHMETIC])
    with serving(EnvServer(ARITHMETIC, {"max_turns": 2})) as url:
        for row in rows[:3]:
            assert _generator_episode(row, [_gold(row)], {"url": url})[0] == 1.0
    with serving(EnvServer("rlenvs/Algebra-v1")) as url, pytest.raises(ValueError, match="serves 'rlenvs/Algebra-v1'"):
        _generator_episode(rows[0], [""], {"url": url})


def test_a_row_whose_task_changed_fails_loudly(rows):
    rlenvs.integrations.skyrl.register([ARITHMETIC])
    row = dict(rows[0], prompt=[{"role": "user", "content": "What is 1 + 1?"}])
    with pytest.raises(ValueError, match="changed since the export"):
        _generator_episode(row, [""])
    with pytest.raises(ValueError, match="needs the row's extra_info"):
        skyrl_gym.make(ARITHMETIC, env_config={}, extras={"reward_spec": {}})
