"""The peer server for bench_deployment: a gymnasium text env inside OpenEnv's own server.

`python -m benchmarks.openenv_peer ENV_ID PORT MAX_TURNS` serves `gym.make(ENV_ID,
max_turns=MAX_TURNS)` with OpenEnv's `create_app` (openenv 0.10: FastAPI, uvicorn, one
environment per WebSocket session), through the smallest adapter OpenEnv's `Environment`
interface allows: the reply as `TextAction.message`, the env's message as
`TextObservation.text`, the info as metadata. What OpenEnv's server costs per step, beside
what `rlenvs serve` costs, on the same env, client and machine.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym
import uvicorn
from openenv.core.env_server import Action, Environment, Observation, State, create_app

import rlenvs  # noqa: F401 - registers the ids


class TextAction(Action):
    message: str


class TextObservation(Observation):
    text: str = ""
    terminated: bool = False
    truncated: bool = False


def environment_class(env_id: str, max_turns: int) -> type[Environment]:
    class GymTextEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self.env = gym.make(env_id, max_turns=max_turns)
            self.steps = 0

        def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> TextObservation:
            observation, info = self.env.reset(seed=seed)
            self.steps = 0
            return TextObservation(text=observation, metadata=info)

        def step(self, action: TextAction, timeout_s: float | None = None, **kwargs: Any) -> TextObservation:
            observation, reward, terminated, truncated, info = self.env.step(action.message)
            self.steps += 1
            return TextObservation(
                text=observation,
                reward=reward,
                done=terminated or truncated,
                terminated=terminated,
                truncated=truncated,
                metadata=info,
            )

        @property
        def state(self) -> State:
            return State(step_count=self.steps)

        def close(self) -> None:
            self.env.close()

    return GymTextEnvironment


def main() -> None:
    env_id, port, max_turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    app = create_app(
        environment_class(env_id, max_turns), TextAction, TextObservation, env_name="peer", max_concurrent_envs=2048
    )
    print(f"serving {env_id} with OpenEnv at http://127.0.0.1:{port}", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
