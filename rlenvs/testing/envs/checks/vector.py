"""Checks of the env run as many: deep copies and pickles carry on as the original, and
`gym.make_vec` envs (sync and async) match single envs."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import gymnasium as gym
import numpy as np

from rlenvs.testing.envs.play import STEP_PARTS, _first_difference, _oracle
from rlenvs.testing.envs.registry import _check
from rlenvs.testing.envs.replies import NON_ANSWER
from rlenvs.testing.envs.reports import _Failed
from rlenvs.testing.envs.subjects import _Target

VECTOR_ENVS = 3
VECTOR_SEED = 11


@_check("copy_and_pickle")
def _copy_and_pickle(target: _Target) -> str:
    """A mid-episode env deep-copies and pickles, and the copy carries on exactly as the
    original (vector workers, checkpoints and tree search rely on it). That the oracle's
    reply earns the maximum is oracle_maximality's to say, so this check compares only."""
    env = target.make()
    env.reset(seed=target.settings.seeds[min(5, len(target.settings.seeds) - 1)])
    clones: dict[str, Any] = {
        "copy.deepcopy": target.adopt(copy.deepcopy(env)),
        "pickle": target.adopt(pickle.loads(pickle.dumps(env))),
    }
    action = _oracle(env, 0) if target.has_oracle else NON_ANSWER
    expected = env.step(action)[:4]
    for how, clone in clones.items():
        if hasattr(env, "task") and getattr(clone, "task", None) != env.task:
            raise _Failed(
                f"the {how} clone has a different task", counterexample={"original": env.task, "clone": clone.task}
            )
        outcome = clone.step(action)[:4]
        difference = _first_difference(expected, outcome, names=STEP_PARTS)
        if difference is not None and not target.nondeterministic:
            raise _Failed(
                f"after {how}, the same reply gives a different {difference[0]} than on the original",
                counterexample={"action": action, "original": difference[1], "clone": difference[2]},
            )
    return "copy.deepcopy and pickle clones continue exactly as the original"


@_check("vector_envs")
def _vector_envs(target: _Target) -> str:
    """`gym.make_vec` works in both modes (async without shared memory, which cannot hold
    strings): sub-env i is seeded seed+i, and oracle episodes reach the maximum reward."""
    assert target.env_id is not None
    expected_env = target.make()
    expected = [expected_env.reset(seed=VECTOR_SEED + i)[0] for i in range(VECTOR_ENVS)]
    for mode, vector_kwargs in (("sync", {}), ("async", {"shared_memory": False})):
        envs = gym.make_vec(
            target.env_id,
            num_envs=VECTOR_ENVS,
            vectorization_mode=mode,
            vector_kwargs=vector_kwargs,
            **target.make_kwargs,
        )
        try:
            # What make_vec builds in these two modes; the VectorEnv it is typed to return has no call().
            assert isinstance(envs, (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv))
            observations, _ = envs.reset(seed=VECTOR_SEED)
            if list(observations) != expected:
                raise _Failed(
                    f"{mode} vector env's sub-env i reset with seed {VECTOR_SEED}+i differs from a single env",
                    counterexample={"vector": list(observations), "single": expected},
                )
            returns, done = np.zeros(VECTOR_ENVS), np.zeros(VECTOR_ENVS, dtype=bool)
            for _ in range(target.step_bound(target.sample)):
                actions = tuple(envs.call("oracle_action")) if target.has_oracle else (NON_ANSWER,) * VECTOR_ENVS
                _, rewards, terminated, truncated, _ = envs.step(actions)
                if np.any(terminated & truncated):
                    raise _Failed(f"{mode} vector env: a sub-env set terminated and truncated together")
                returns += np.where(done, 0.0, rewards)
                done |= terminated | truncated
                if done.all():
                    break
            if not done.all():
                bound = target.step_bound(target.sample)
                raise _Failed(f"{mode} vector env: not every episode ended within {bound} steps")
            if target.has_oracle and target.max_reward is not None and not np.all(returns == target.max_reward):
                raise _Failed(
                    f"{mode} vector env: oracle episodes earned {returns.tolist()}, not {target.max_reward} each",
                    counterexample={"returns": returns.tolist()},
                )
            if not np.all(np.isfinite(returns)):
                raise _Failed(f"{mode} vector env: non-finite returns {returns.tolist()}")
        finally:
            envs.close()
    return f"sync and async (shared_memory=False) vector envs of {VECTOR_ENVS} match single envs and finish episodes"
