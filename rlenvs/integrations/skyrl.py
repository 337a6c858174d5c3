"""rlenvs envs as SkyRL envs: `skyrl_gym`'s `BaseTextEnv` over an rlenvs env, in-process or served.

SkyRL's generator makes one env per trajectory with `skyrl_gym.make(row["env_class"],
env_config=cfg.environment.skyrl_gym[env_class], extras=row)`, calls `init(prompt)` for the
chat to generate from, then `step(reply)` until `done`, appending each step's
`observations` (chat messages) to the conversation and training on the last `reward`.
`rlenvs export ID` writes rows in SkyRL's layout whose `env_class` is the rlenvs id and
whose `extra_info` names the task (env id, `gym.make` kwargs, task index), so:

    import rlenvs.integrations.skyrl
    rlenvs.integrations.skyrl.register()          # in SkyRL's entry point, before training starts

makes every rlenvs id (installed packages' `rlenvs.envs` ids too) a SkyRL env class. `SkyRLEnv` makes the row's env (or, when the
env's config names a server, `env_config={"url": "http://cpu-node:8000"}`, a `RemoteEnv`
session on it), resets it on the row's task, and checks that the task poses the prompt the
row carries: a data file that changed since the export fails loudly instead of training on
prompts whose rewards belong to other tasks. The env, not the row's ground truth, judges
each reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import gymnasium as gym

# skyrl_gym ships no type information (no py.typed marker, no stubs): its classes are Any here.
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput  # type: ignore[import-untyped]

ENTRY_POINT = "rlenvs.integrations.skyrl:SkyRLEnv"


class SkyRLEnv(BaseTextEnv):
    """One exported task (a row of `rlenvs export`) as a SkyRL text env."""

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        env_config = dict(env_config or {})
        task = (extras or {}).get("extra_info")
        if not isinstance(task, Mapping) or not {"env_id", "env_kwargs", "task_index"} <= set(task):
            raise ValueError(
                "SkyRLEnv needs the row's extra_info (env_id, env_kwargs, task_index), as `rlenvs export` writes "
                f"it; got extras={extras!r}: train on the Parquet files of `rlenvs export ID --output-dir DIR`"
            )
        self.env_id = str(task["env_id"])
        self.task_index = int(task["task_index"])
        unknown = sorted(set(env_config) - {"url", "seed"})
        if unknown:
            raise ValueError(f"SkyRLEnv's env_config takes url (a served env) and seed; unknown: {unknown}")
        self.seed = env_config.get("seed")
        self.env = self._make(env_config.get("url"), json.loads(task["env_kwargs"] or "{}"))
        self.max_turns = 1

    def _make(self, url: str | None, env_kwargs: dict[str, Any]) -> gym.Env:
        if url is None:
            from rlenvs.integrations.parquet import make_env

            return make_env(self.env_id, env_kwargs)
        from rlenvs.remote import RemoteEnv

        remote = RemoteEnv(url)
        if remote.env_id != self.env_id:
            remote.close()
            raise ValueError(
                f"the server at {url} serves {remote.env_id!r}, but this row's task is {self.env_id!r}: "
                "point env_config.url at a server of the row's env"
            )
        return remote

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        _, info = self.env.reset(seed=self.seed, options={"task_index": self.task_index})
        if list(prompt) != info["messages"]:
            raise ValueError(
                f"{self.env_id} task {self.task_index} poses {info['messages']!r}, but the row's prompt is "
                f"{list(prompt)!r}: the data or env changed since the export; export again"
            )
        self.max_turns = int(info.get("max_turns", 1))
        return info["messages"], {"task_id": info.get("task_id")}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        _, reward, terminated, truncated, info = self.env.step(action)
        self.turns += 1
        done = bool(terminated or truncated)
        return BaseTextEnvStepOutput(
            observations=[] if done else list(info["messages"]),
            reward=float(reward),
            done=done,
            metadata=info,
            postprocessed_action=None,
        )

    def close(self) -> None:
        self.env.close()


def register(env_ids: Iterable[str] | None = None) -> list[str]:
    """Register `env_ids` (default: every id `import rlenvs` registers, installed packages' too)
    as SkyRL env classes; returns them.
    Ids skyrl_gym already knows are left as they are, so calling this twice is harmless."""
    from skyrl_gym.envs.registration import register as skyrl_register  # type: ignore[import-untyped]
    from skyrl_gym.envs.registration import registry

    if env_ids is None:
        from rlenvs.envs.plugins import all_entries

        env_ids = [entry.id for entry in all_entries()]
    env_ids = list(env_ids)
    for env_id in env_ids:
        if env_id not in registry:
            skyrl_register(id=env_id, entry_point=ENTRY_POINT)
    return env_ids
