"""One evaluation: episodes of a policy on an env's tasks, recorded as trajectories.

Each task runs `samples` times (for pass@k); each episode is reset on its task by index
(`options={"task_index": i}`) with its own seed, so a run is the same in every process. The
policy is called on every turn with the conversation so far. An episode whose machinery
failed (the policy's server, a sandbox, a lost remote env) is a failure of the run, not a
wrong answer: it is recorded with `failure` set, counted apart and kept out of the success
rate (`rlenvs.evaluation.result`).

Several episodes play at once (`concurrency`, one env each): every round, the policy gets the
pending turn of each episode in play together, which a server (`openai:`) answers with
concurrent requests and a local model (`model:`) with one batched generation; the envs then
step one after another. Each episode keeps its own seed, so the numbers do not depend on it.

Trajectories are written to a JSONL file as each episode ends (in the order they end), so an
interrupted run keeps what it finished, and `resume=True` skips the episodes already there.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import deque
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gymnasium as gym

from rlenvs.core.checks import check_int
from rlenvs.core.env import MAX_STEPS_WITHOUT_TURN_LIMIT, chat_messages
from rlenvs.core.failures import EnvLostError, EnvTimeoutError, short_error
from rlenvs.core.registration import check_env_id
from rlenvs.evaluation.openai_api import PolicyError
from rlenvs.evaluation.policies import Policy, RecordedPolicy, Reply, Turn, policy_from_spec
from rlenvs.evaluation.result import EvalResult, Trajectory, json_safe
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
    concurrency: int | None = None,
    max_turns: int | None = None,
    progress: bool = False,
) -> EvalResult:
    """Run `policy` on the env's tasks and return the result.

    `env`: an id (made with `env_kwargs`, closed at the end) or an env. `policy`: `"oracle"`,
    `"random"`, `"file:PATH"`, `"openai:URL"`, `"model:PATH"` (or an `OpenAIPolicy`/`ModelPolicy`
    with its options), or a callable `messages -> reply`. `episodes` None runs every task of a
    sized split once; `episodes=N` draws N distinct tasks with `seed`. `samples` runs each task
    that many times (n for pass@k). A `file:` policy's episodes are its file's lines (the first
    `episodes`). `concurrency`: episodes played at once, one env each (an env id is made that
    many times); None takes the policy's `default_concurrency` (8 for a server, 32 for a local
    model), else 1. The result does not depend on it: each episode has its own seed.
    `max_turns`: end an episode after this many replies (stop reason "max_turns", as the
    rollout engine's cap), below the env's own limit; None leaves it to the env.

        result = rlenvs.evaluate("rlenvs/GSM8K-v1", "oracle", env_kwargs={"split": "test"})
        result.success_rate, result.ci, result.trajectories[0].messages
    """
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise ValueError(f"samples (--samples) must be an int >= 1 (attempts per task), got {samples!r}")
    owned = isinstance(env, str)
    if isinstance(env, str):
        check_env_id(env)  # an unknown id in the words every command uses, with the close ids
    elif env_kwargs:
        raise ValueError("env_kwargs is for an env id; an env given as an object was made already")
    if max_turns is not None:
        check_int("max_turns (--max-turns)", max_turns, at_least=1, or_none="the env's own limit")
    the_policy = policy_from_spec(policy)
    width = _concurrency(concurrency, the_policy, owned)
    envs = [gym.make(env, **dict(env_kwargs or {})) if isinstance(env, str) else env]
    env_id = env if isinstance(env, str) else (envs[0].spec.id if envs[0].spec is not None else type(env).__name__)
    try:
        plan = _plan(envs[0], env_id, the_policy, episodes, samples, seed, env_kwargs or {})
        done: list[Trajectory] = []
        if resume and trajectories is not None and Path(trajectories).is_file():
            done = _read_done(Path(trajectories))
            # Written back whole, even with no episode done: a line the interruption cut would
            # spoil the next one appended to it. Atomically: an interruption now loses nothing.
            with atomic_path(trajectories) as staged:
                staged.write_text("".join(json.dumps(t.to_json(), ensure_ascii=False) + "\n" for t in done), "utf-8")
        done_keys = {_key(t.option, t.sample) for t in done}
        todo = [p for p in plan if _key(p[1], p[2]) not in done_keys]
        while isinstance(env, str) and len(envs) < min(width, len(todo)):
            envs.append(gym.make(env, **dict(env_kwargs or {})))
        started = time.perf_counter()
        played: dict[int, Trajectory] = {}
        with open(
            trajectories if trajectories is not None else os.devnull, "a" if resume else "w", encoding="utf-8"
        ) as output:
            bar = _progress_bar(len(todo)) if progress else None

            def record(position: int, trajectory: Trajectory) -> None:
                played[position] = trajectory
                output.write(json.dumps(trajectory.to_json(), ensure_ascii=False) + "\n")
                output.flush()
                if bar is not None:
                    bar.update(1)

            try:
                play_episodes(envs, the_policy, todo, seed, record, max_turns)
            finally:
                if bar is not None:
                    bar.close()
        return EvalResult(
            env_id=env_id,
            policy=the_policy.name,
            samples=samples,
            seed=seed,
            trajectories=done + [played[position] for position, _, _ in todo],
            seconds=time.perf_counter() - started,
            resumed=len(done),
        )
    finally:
        if owned:
            for made in envs:
                made.close()


Answer = tuple[Any, float]
"""What an episode is sent for its turn: the policy's reply (str, Reply or None) and the
seconds the policy took."""


def play_episodes(
    envs: Sequence[gym.Env],
    policy: Policy,
    plan: Sequence[tuple[int, dict[str, Any], int]],
    seed: int,
    record: Callable[[int, Trajectory], None],
    max_turns: int | None = None,
) -> None:
    """Play every (position, option, sample) of `plan`, as many at once as there are `envs`:
    each round asks the policy for the pending turn of every episode in play (one batch), then
    steps each episode's env with its reply. `record(position, trajectory)` gets each episode
    as it ends. With one env this is the plain loop, one episode after another."""
    queue = deque(plan)
    free = list(range(len(envs)))[::-1]
    playing: dict[int, tuple[int, Generator[Turn, Answer, Trajectory], Turn]] = {}  # env slot -> episode

    def advance(slot: int, position: int, episode: Generator[Turn, Answer, Trajectory], send: Any) -> None:
        try:
            if isinstance(send, BaseException):
                turn = episode.throw(send)
            else:
                turn = next(episode) if send is None else episode.send(send)
        except StopIteration as ended:
            record(position, ended.value)
            free.append(slot)
            playing.pop(slot, None)
            return
        playing[slot] = (position, episode, turn)

    while queue or playing:
        while queue and free:
            position, option, sample = queue.popleft()
            slot = free.pop()
            episode = _episode(envs[slot], option, sample, seed + position, position, max_turns)
            advance(slot, position, episode, None)
        if not playing:
            continue
        slots = list(playing)
        started = time.perf_counter()
        answers = _ask(policy, [playing[slot][2] for slot in slots])
        seconds = time.perf_counter() - started
        for slot, answer in zip(slots, answers):
            position, episode, _ = playing[slot]
            advance(slot, position, episode, answer if isinstance(answer, BaseException) else (answer, seconds))


def _ask(policy: Policy, turns: list[Turn]) -> list[Any]:
    """The policy's reply to each turn, or the PolicyError that turn got (an infrastructure
    failure of that episode alone). Any other exception is a bug or bad input and ends the run."""
    batch = getattr(policy, "replies", None)
    if callable(batch):
        try:
            answers = list(batch(turns))
        except PolicyError as error:
            return [error] * len(turns)
        if len(answers) != len(turns):
            raise RuntimeError(f"policy {policy.name} gave {len(answers)} replies for {len(turns)} turns")
        return answers

    def one(turn: Turn) -> Any:
        try:
            return policy.reply(turn)
        except PolicyError as error:
            return error

    if len(turns) > 1 and getattr(policy, "concurrent", False):
        with ThreadPoolExecutor(max_workers=len(turns), thread_name_prefix="rlenvs-eval") as pool:
            return list(pool.map(one, turns))
    return [one(turn) for turn in turns]


def _episode(
    env: gym.Env, option: dict[str, Any], sample: int, seed: int, position: int, max_turns: int | None = None
) -> Generator[Turn, Answer, Trajectory]:
    """One episode, start to end, as a generator: it yields each turn the policy must answer and
    is sent the answer; it returns the trajectory. A machinery failure ends it with `failure` set."""
    started = time.perf_counter()
    policy_s = env_s = 0.0
    messages: list[dict[str, str]] = []
    rewards: list[float] = []
    infos: list[dict[str, Any]] = []
    finish_reasons: list[str | None] = []
    task_id, stop_reason, correct, failure = str(next(iter(option.values()))), "", None, None
    groups: dict[str, Any] = {}
    try:
        t0 = time.perf_counter()
        observation, info = env.reset(seed=seed, options=option)
        env_s += time.perf_counter() - t0
        task_id = str(info.get("task_id", task_id))
        groups = _groups(env)
        messages.extend(chat_messages(info, observation))
        limit = info.get("max_turns") or MAX_STEPS_WITHOUT_TURN_LIMIT
        while True:
            if max_turns is not None and len(rewards) >= max_turns:
                stop_reason = "max_turns"
                break
            if len(rewards) >= limit:
                stop_reason = "step_limit"
                break
            answer, seconds = yield Turn(
                list(messages), env, task_id, sample, turn=len(rewards), seed=seed, episode=position
            )
            policy_s += seconds
            reply = answer if isinstance(answer, Reply) else Reply(answer)
            if reply.text is None:
                stop_reason = reply.finish_reason or "policy_exhausted"
                break
            if not isinstance(reply.text, str):
                raise TypeError(f"a policy's reply must be a str, a Reply or None, got {type(reply.text).__name__}")
            messages.append({"role": "assistant", "content": reply.text})
            finish_reasons.append(reply.finish_reason)
            t0 = time.perf_counter()
            observation, reward, terminated, truncated, info = env.step(reply.text)
            env_s += time.perf_counter() - t0
            rewards.append(float(reward))
            infos.append(json_safe({k: v for k, v in info.items() if k != "messages"}))
            correct = info.get("correct")
            if terminated or truncated:
                stop_reason = str(info.get("stop_reason") or ("terminated" if terminated else "truncated"))
                break
            messages.extend(chat_messages(info, observation))
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
        finish_reasons=finish_reasons,
        seconds={"policy": policy_s, "env": env_s, "total": time.perf_counter() - started},
    )


def _concurrency(asked: int | None, policy: Policy, env_is_id: bool) -> int:
    if asked is None:
        return int(getattr(policy, "default_concurrency", 1)) if env_is_id else 1
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        raise ValueError(f"concurrency (--concurrency) must be an int >= 1 (episodes played at once), got {asked!r}")
    if asked > 1 and not env_is_id:
        raise ValueError(
            f"concurrency={asked} plays that many episodes at once, one env each, so it needs the env's id (made "
            "that many times) rather than one env object: pass the id and env_kwargs"
        )
    return asked


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


def _progress_bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="episode", dynamic_ncols=True)
