"""One evaluation: episodes of a policy on an env's tasks, recorded as trajectories.

Each task runs `samples` times (for pass@k); each episode is reset on its task by index
(`options={"task_index": i}`) with its own seed, so a run is the same in every process. The
policy is called on every turn with the conversation so far. An episode whose machinery
failed (the policy's server, a sandbox, a lost remote env) is a failure of the run, not a
wrong answer: it is recorded with `failure` set, counted apart and kept out of the success
rate (`rlenvs.evaluation.result`).

Trajectories are written to a JSONL file as each episode ends, so an interrupted run keeps
what it finished, and `resume=True` skips the episodes already there.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym

from rlenvs.core.failures import EnvLostError, EnvTimeoutError, short_error
from rlenvs.core.registration import check_env_id
from rlenvs.evaluation.openai_api import PolicyError
from rlenvs.evaluation.policies import Policy, RecordedPolicy, Turn, policy_from_spec
from rlenvs.evaluation.result import EvalResult, Trajectory
from rlenvs.evaluation.tasks import choose_task_indices, source_size
from rlenvs.files import atomic_path

GROUP_FIELDS = ("family", "level", "subject")
"""Task fields a result is broken down by, where the tasks carry them (MATH: level, subject;
procedural families: level, family)."""
ENV_FAILURE_STOP_REASONS = frozenset({"env_timeout", "env_lost", "env_error"})
"""Stop reasons that say the env's machinery failed, not the reply (design: verdicts)."""
MACHINERY_ERRORS = (RuntimeError, OSError, EnvLostError, EnvTimeoutError)
"""What a reset or step raises when a sandbox, worker or server failed: any reply is a valid
action, so an env that raises on one has failed, not judged it. ValueError and TypeError are
bugs or bad input and stop the run."""
MAX_STEPS_WITHOUT_TURN_LIMIT = 1000


def evaluate(
    env: str | gym.Env,
    policy: Any,
    *,
    episodes: int | None = None,
    samples: int = 1,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    trajectories: str | Path | None = None,
    resume: bool = False,
    progress: bool = False,
) -> EvalResult:
    """Run `policy` on the env's tasks and return the result.

    `env`: an id (made with `env_kwargs`, closed at the end) or an env. `policy`: `"oracle"`,
    `"random"`, `"file:PATH"`, `"openai:URL"` (or an `OpenAIPolicy` with its options), or a
    callable `messages -> reply`. `episodes` None runs every task of a sized split once;
    `episodes=N` draws N distinct tasks with `seed`. `samples` runs each task that many times
    (n for pass@k). A `file:` policy's episodes are its file's lines (the first `episodes`).

        result = rlenvs.evaluate("rlenvs/GSM8K-v1", "oracle", env_kwargs={"split": "test"})
        result.success_rate, result.ci, result.trajectories[0].messages
    """
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise ValueError(f"samples (--samples) must be an int >= 1 (attempts per task), got {samples!r}")
    owned = isinstance(env, str)
    if isinstance(env, str):
        check_env_id(env)  # an unknown id in the words every command uses, with the close ids
    the_env = gym.make(env, **dict(env_kwargs or {})) if isinstance(env, str) else env
    if not owned and env_kwargs:
        raise ValueError("env_kwargs is for an env id; an env given as an object was made already")
    env_id = env if isinstance(env, str) else (the_env.spec.id if the_env.spec is not None else type(env).__name__)
    try:
        the_policy = policy_from_spec(policy)
        plan = _plan(the_env, env_id, the_policy, episodes, samples, seed, env_kwargs or {})
        done: list[Trajectory] = []
        if resume and trajectories is not None and Path(trajectories).is_file():
            done = _read_done(Path(trajectories))
            # Written back whole, even with no episode done: a line the interruption cut would
            # spoil the next one appended to it. Atomically: an interruption now loses nothing.
            with atomic_path(trajectories) as staged:
                staged.write_text("".join(json.dumps(t.to_json(), ensure_ascii=False) + "\n" for t in done), "utf-8")
        done_keys = {_key(t.option, t.sample) for t in done}
        todo = [p for p in plan if _key(p[1], p[2]) not in done_keys]
        started = time.perf_counter()
        results = list(done)
        mode = "a" if resume else "w"
        with open(trajectories if trajectories is not None else os.devnull, mode, encoding="utf-8") as output:
            for position, option, sample in _with_progress(todo, progress):
                trajectory = play_episode(the_env, the_policy, option, sample, seed + position, position)
                results.append(trajectory)
                output.write(json.dumps(trajectory.to_json(), ensure_ascii=False) + "\n")
                output.flush()
        return EvalResult(
            env_id=env_id,
            policy=the_policy.name,
            samples=samples,
            seed=seed,
            trajectories=results,
            seconds=time.perf_counter() - started,
            resumed=len(done),
        )
    finally:
        if owned:
            the_env.close()


def play_episode(
    env: gym.Env, policy: Policy, option: dict[str, Any], sample: int, seed: int, episode: int
) -> Trajectory:
    """One episode, start to end; a machinery failure ends it with `failure` set."""
    started = time.perf_counter()
    policy_s = env_s = 0.0
    messages: list[dict[str, str]] = []
    rewards: list[float] = []
    infos: list[dict[str, Any]] = []
    task_id, stop_reason, correct, failure = str(next(iter(option.values()))), "", None, None
    groups: dict[str, Any] = {}
    try:
        t0 = time.perf_counter()
        observation, info = env.reset(seed=seed, options=option)
        env_s += time.perf_counter() - t0
        task_id = str(info.get("task_id", task_id))
        groups = _groups(env)
        messages.extend(_env_messages(info, observation))
        limit = info.get("max_turns") or MAX_STEPS_WITHOUT_TURN_LIMIT
        while True:
            if len(rewards) >= limit:
                stop_reason = "step_limit"
                break
            turn = Turn(list(messages), env, task_id, sample, turn=len(rewards), seed=seed, episode=episode)
            t0 = time.perf_counter()
            reply = policy.reply(turn)
            policy_s += time.perf_counter() - t0
            if reply is None:
                stop_reason = "policy_exhausted"
                break
            messages.append({"role": "assistant", "content": reply})
            t0 = time.perf_counter()
            observation, reward, terminated, truncated, info = env.step(reply)
            env_s += time.perf_counter() - t0
            rewards.append(float(reward))
            infos.append(_json_safe({k: v for k, v in info.items() if k != "messages"}))
            correct = info.get("correct")
            if terminated or truncated:
                stop_reason = str(info.get("stop_reason") or ("terminated" if terminated else "truncated"))
                break
            messages.extend(_env_messages(info, observation))
        if stop_reason in ENV_FAILURE_STOP_REASONS:
            failure = f"{stop_reason}: {info.get('error', '')}".rstrip(": ")
    except PolicyError as error:
        stop_reason, failure = "policy_error", short_error(error)
    except MACHINERY_ERRORS as error:
        stop_reason, failure = "env_error", short_error(error)
    total = sum(rewards)
    return Trajectory(
        task_id=task_id,
        option=option,
        sample=sample,
        seed=seed,
        messages=messages,
        rewards=rewards,
        infos=infos,
        reward=total,
        correct=None if correct is None else bool(correct),
        success=None if failure else _success(correct, total, env),
        stop_reason=stop_reason,
        failure=failure,
        turns=len(rewards),
        groups=groups,
        seconds={"policy": policy_s, "env": env_s, "total": time.perf_counter() - started},
    )


def _plan(
    env: gym.Env, env_id: str, policy: Policy, episodes: int | None, samples: int, seed: int, env_kwargs: Mapping
) -> list[tuple[int, dict[str, Any], int]]:
    """(position, reset option, sample) of every episode, in order."""
    if isinstance(policy, RecordedPolicy):
        if samples != 1:
            raise ValueError("samples come from the file with a file: policy (its lines' 'sample'); drop --samples")
        if episodes is not None and episodes < 1:
            raise ValueError(f"--episodes must be at least 1, got {episodes}")
        recorded = policy.recorded if episodes is None else policy.recorded[:episodes]
        return [(i, r.option, r.sample) for i, r in enumerate(recorded)]
    split = env_kwargs.get("split")
    what = env_id if split is None else f"{env_id} split={split}"
    indices = choose_task_indices(source_size(env, env_id), episodes, seed, what)
    options = [{"task_index": index} for index in indices for _ in range(samples)]
    return [(i, option, i % samples) for i, option in enumerate(options)]


def _success(correct: Any, total: float, env: gym.Env) -> bool:
    """The env's own verdict (`info["correct"]`) where it gives one; else the maximum reward."""
    if correct is not None:
        return bool(correct)
    best = getattr(env.unwrapped, "reward_range", (0, math.inf))[1]
    return math.isfinite(best) and total >= best - 1e-9


def _groups(env: gym.Env) -> dict[str, Any]:
    task = getattr(env.unwrapped, "task", None)
    values = {name: getattr(task, name, None) for name in GROUP_FIELDS}
    return {name: value for name, value in values.items() if isinstance(value, (str, int)) and value != ""}


def _env_messages(info: Mapping[str, Any], observation: Any) -> list[dict[str, str]]:
    if "messages" in info:
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in info["messages"]]
    return [{"role": "user", "content": str(observation)}] if observation else []


def _json_safe(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        try:
            return _json_safe(item())
        except (TypeError, ValueError):
            pass
    return repr(value)


def _key(option: Mapping[str, Any], sample: int) -> str:
    return json.dumps([sorted(option.items()), sample])


def _read_done(path: Path) -> list[Trajectory]:
    if not path.is_file():
        return []
    done = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        try:
            done.append(Trajectory.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError):
            if number == len(lines):
                break  # a line cut by the interruption: that episode runs again
            raise ValueError(f"{path}:{number}: not a trajectory line; --resume needs the file a run wrote") from None
    return done


def _with_progress(items: list, enabled: bool) -> Iterable:
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, unit="episode", dynamic_ncols=True)
