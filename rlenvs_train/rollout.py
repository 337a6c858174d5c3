"""The rollout engine: many multi-turn episodes, generated and stepped as they go.

    engine = RolloutEngine(HFBackend(path), tokenizer, max_tokens_per_turn=256, max_episode_tokens=1024)
    with EnvPool("rlenvs/GSM8K-v1", 8, make_kwargs={"max_turns": 3}) as pool:
        episodes = engine.run(pool, [{"task_index": 7}] * 8)        # one GRPO group

Two schedules, the same episodes, and a default that picks between them:
- "rounds": each round generates the next turn of every episode still going in one backend
  call, then steps their envs together through the `EnvPool`. Every round waits for its
  slowest generation and then for its slowest env step: env time adds to generation time.
- "continuous" (backends that stream, `base.StreamingBackend`: vLLM in-process and the vLLM
  server): each episode goes on its own. A finished turn goes to its env at once, off the
  engine's thread, while the other episodes keep generating; the env's answer is appended
  and the next turn submitted as soon as it is back. On a thread pool each step runs on its
  own; a process or Ray pool, which takes one call at a time, steps the turns that wait
  together as one batch (`_EnvStepper`). Env steps measured quicker than an engine step
  are stepped by the engine's thread itself, the turns an engine step finished as one batch,
  so that they rejoin the next engine step.
- "auto" (the default): rounds until a run shows that continuous would pay, then continuous
  (backends that stream; others always run rounds). See `RunStats.prefers_continuous`.

Either way each env message is appended to its episode as the chat template's token delta
(`rlenvs_train.chat`), never re-tokenising the history: what the backend sampled is exactly
what the trainer will score. A seeded request's seed depends only on the run, the turn and
the episode (see `run`), never on timing, so a continuous run samples the same tokens
whatever order its env steps return in, up to vLLM's own batch dependence (a request's
logits can differ in the last bits with the batch it shares a step with). "auto" switches on
a measured time, so which of its runs go continuous can differ between two seeded runs (the
same tokens, up to that batch dependence); "rounds" takes timing out entirely.

Conventions (what TRL 1.16's `GRPOTrainer` expects from a `rollout_func`):
- `env_mask` is 1 on model tokens (in the loss) and 0 on env tokens (seen, not trained on);
  TRL multiplies it into the completion mask.
- `logprobs` are the sampled tokens' processed logprobs, 0.0 on env tokens (masked anyway).
- `reward` is the sum of the per-turn rewards: the episode's return. rlenvs envs reward only
  the step that resolves the task (or the last one), so it equals the last turn's reward
  there; an env that rewards intermediate steps gets its total, not just its last word.
- An episode whose env call failed (its stop_reason is one of `rlenvs.vector.ENV_FAILURES`) keeps
  reward 0 here, but that 0 says nothing about the model's replies: the machinery
  failed, not the model. Training leaves such episodes out of the loss and evaluation counts
  them apart (`rlenvs_train.grpo`, `rlenvs_train.evaluate`).
"""

from __future__ import annotations

import logging
import math
import queue
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from rlenvs.core.checks import check_int
from rlenvs.vector.results import ResetResult, StepResult
from rlenvs_train.backends.base import Backend, FinishReason, Generation, SamplingParams, StreamingBackend
from rlenvs_train.chat import ChatTemplate

LOG = logging.getLogger("rlenvs_train.rollout")

MAX_EPISODE_TOKENS = "max_episode_tokens"
"""stop_reason of an episode whose completion ran into `max_episode_tokens`."""
MAX_TURNS = "max_turns"
"""stop_reason of an episode stopped by the engine's `max_turns` (an env's own turn limit
reports the same reason)."""
SCHEDULES = ("auto", "rounds", "continuous")
"""`RolloutEngine(schedule=...)`; "auto" is the default (see `RunStats.prefers_continuous`)."""
AUTO_ENV_SHARE = 0.1
"""schedule="auto" goes continuous once a round-schedule run waited on env steps for at least
this share of its wall (`RunStats.env_share`). On vLLM's CPU build (`bench_schedules`, 32
episodes, 2026-12-05) that share was under 1% with a free env, 6-17% with 25 ms steps and
21-59% with 100-200 ms steps; with replies of one length continuous was 0.89x-1.05x the round
schedule with a free env on an engine with room for every episode, and 1.09x-1.34x with 100 ms
steps on an engine at capacity."""
AUTO_STRAGGLE = 1.1
"""schedule="auto" goes continuous once a round-schedule run's `RunStats.straggle` reached
this. Replies of one length make it 1.0; replies of varied length made it 1.27 (3 turns each)
and 1.77 (1 or 5 turns) in `bench_schedules`, where continuous was 0.89x-1.30x the round
schedule (median 1.11x)."""


@dataclass
class Episode:
    """One finished episode. `completion_ids` interleaves model and env tokens; `env_mask`
    and `logprobs` run alongside it. `transcript` is the chat as the env saw it: the prompt
    messages, each reply as decoded from its sampled tokens (less the stop token), each env
    message, so that it renders back to `prompt_ids + completion_ids`."""

    index: int
    """The episode's position in the batch, which is also its env's index in the pool."""
    task_id: str | None
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    turn_rewards: list[float] = field(default_factory=list)
    """One per env step. A turn cut by `max_episode_tokens` never reached the env and has none."""
    stop_reason: str | None = None
    """The env's own (e.g. "answered", "max_turns"), or "env_error" / "env_timeout" /
    "env_lost" from the pool, or "max_episode_tokens"."""
    turns: int = 0
    """Model turns generated (a turn cut by the token budget counts)."""
    transcript: list[dict[str, str]] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    """Why each model turn's generation stopped ("stop", or "length" when cut), in order."""
    step_infos: list[dict[str, Any]] = field(default_factory=list)
    """Each env step's info, in order (evaluation writes them to its trajectories)."""
    info: dict[str, Any] = field(default_factory=dict)
    """The env's last info (the step that ended the episode, e.g. `correct`), or reset's."""
    reward: float = 0.0
    """The episode's return: the sum of `turn_rewards` (see the module docstring)."""
    error: str | None = None
    """Why the env failed, for env_error / env_timeout / env_lost."""


@dataclass(frozen=True)
class RunStats:
    """How one `RolloutEngine.run` went (`RolloutEngine.last_run`): what schedule="auto"
    decides from, and what a trainer's logs can show."""

    schedule: str
    """The schedule the run used: "rounds" or "continuous"."""
    wall_s: float
    env_wait_s: float
    """Time the engine's thread spent on or waiting for env steps with no turn being generated
    by it: every `pool.step` call of the round schedule; the continuous schedule's env steps
    made on the engine's thread and its waits with nothing in flight."""
    round_tokens: int
    """The sum over turn numbers t of the longest turn t of any episode: the decoding steps
    the round schedule's calls take, each waiting for its longest reply."""
    chain_tokens: int
    """The most model tokens of any one episode: the decoding steps an episode that is never
    kept waiting for another's reply takes (the continuous schedule's, given room for all)."""

    @property
    def env_share(self) -> float:
        return self.env_wait_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def straggle(self) -> float:
        """round_tokens / chain_tokens: how much the round schedule's waits for the longest
        reply of each turn lengthen the run, in decoding steps (1.0 with replies of one length)."""
        return self.round_tokens / self.chain_tokens if self.chain_tokens else 1.0

    def prefers_continuous(self) -> bool:
        """Whether, by this run, the continuous schedule is expected to be faster: the run
        waited on its envs for `AUTO_ENV_SHARE` of its wall (the continuous schedule generates
        other episodes' turns meanwhile), or its rounds waited on their longest replies
        (`AUTO_STRAGGLE`: an episode with short replies goes on meanwhile). Neither holds for a
        free env and replies of one length, the one workload where the round schedule was
        faster (benchmarks/RESULTS.md, "Rollout schedules")."""
        return self.env_share >= AUTO_ENV_SHARE or self.straggle >= AUTO_STRAGGLE


def _turn_lengths(episode: Episode) -> list[int]:
    """The model tokens of each of the episode's turns (its runs of env_mask 1)."""
    lengths: list[int] = []
    previous = 0
    for mask in episode.env_mask:
        if mask and not previous:
            lengths.append(0)
        if mask:
            lengths[-1] += 1
        previous = mask
    return lengths


def _run_stats(schedule: str, wall_s: float, env_wait_s: float, episodes: list[Episode]) -> RunStats:
    turns = [_turn_lengths(e) for e in episodes]
    longest = max(map(len, turns), default=0)
    return RunStats(
        schedule=schedule,
        wall_s=wall_s,
        env_wait_s=env_wait_s,
        round_tokens=sum(max((t[k] for t in turns if len(t) > k), default=0) for k in range(longest)),
        chain_tokens=max(map(sum, turns), default=0),
    )


@dataclass
class _Turn:
    """The last model turn of an episode, kept until its env step is taken."""

    token_ids: tuple[int, ...]
    finish_reason: FinishReason
    reply: str


class EpisodePool(Protocol):
    """What the engine needs of a pool of envs: `rlenvs.vector.EnvPool` (threads, processes,
    Ray, remote sessions), or anything of its shape. A pool may also say `concurrent_calls`
    (calls on different envs from several threads run at once), which the continuous schedule
    uses where it is there."""

    num_envs: int

    def reset(
        self,
        indices: Iterable[int] | None = None,
        *,
        seeds: Sequence[int | None] | None = None,
        options: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[ResetResult]: ...

    def step(self, actions: Sequence[tuple[int, str]]) -> list[StepResult]: ...


class RolloutEngine:
    """Runs batches of multi-turn episodes with one backend and one chat template.

    `tokenizer`: a HF tokenizer with a chat template (or a `ChatTemplate`).
    `max_tokens_per_turn`: the cap on one model turn; a reply cut there still goes to the env.
    `max_episode_tokens`: the cap on an episode's completion (model and env tokens, not the
    prompt: TRL's `max_completion_length`); None for no cap. A turn that fills it without
    ending is cut to fit and ends the episode with stop_reason "max_episode_tokens" without
    reaching the env (the trainer, not the model, ended it); so does an env message whose
    tokens would leave no room for another turn (the message is then left out).
    `max_turns`: stop an episode after this many model turns even if its env would go on;
    None leaves it to the env's own limit.
    `seed`: each backend call gets `seed + k` for the k-th call, so calls differ and a run is
    reproducible; None samples at random. `stop_token_ids`: default EOS and end-of-turn.
    `schedule`: "auto", "rounds" or "continuous" (which needs a backend that streams); see the
    module docstring. `last_run` holds the last run's `RunStats`.
    """

    def __init__(
        self,
        backend: Backend,
        tokenizer: Any,
        *,
        max_tokens_per_turn: int,
        max_episode_tokens: int | None = None,
        max_turns: int | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        seed: int | None = None,
        stop_token_ids: Sequence[int] | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        schedule: str = "auto",
    ) -> None:
        if not callable(getattr(backend, "generate", None)):
            raise TypeError(
                f"backend must have generate(prompts, params) (see rlenvs_train.backends.base), got {backend!r}"
            )
        check_int("max_episode_tokens", max_episode_tokens, at_least=1, or_none="no limit")
        check_int("max_turns", max_turns, at_least=1, or_none="no limit")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise TypeError(f"seed must be an int or None, got {seed!r}")
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {list(SCHEDULES)}, got {schedule!r}")
        if schedule == "continuous" and not isinstance(backend, StreamingBackend):
            raise ValueError(
                f"schedule='continuous' needs a backend that streams (submit/collect/in_flight/abort, "
                f"rlenvs_train.backends.base.StreamingBackend), and {type(backend).__name__} does not: "
                "use the vllm or vllm-server backend, or schedule='rounds'"
            )
        self.schedule = schedule
        self.backend = backend
        self.chat = (
            tokenizer
            if isinstance(tokenizer, ChatTemplate)
            else ChatTemplate(tokenizer, **(chat_template_kwargs or {}))
        )
        stops = self.chat.stop_token_ids() if stop_token_ids is None else tuple(stop_token_ids)
        # Validates the sampling settings now rather than at the first turn.
        self.sampling = SamplingParams(
            max_tokens=max_tokens_per_turn, temperature=temperature, top_p=top_p, top_k=top_k, stop_token_ids=stops
        )
        self.max_tokens_per_turn = max_tokens_per_turn
        self.max_episode_tokens = max_episode_tokens
        self.max_turns = max_turns
        self.seed = seed
        self.last_run: RunStats | None = None
        self._calls = 0
        self._go_continuous = False
        """schedule="auto": a round-schedule run has shown that continuous pays."""

    def run(
        self,
        pool: EpisodePool,
        tasks: Sequence[Mapping[str, Any] | None],
        *,
        seeds: Sequence[int | None] | None = None,
    ) -> list[Episode]:
        """Play one episode per task, episode `k` in env `k` of `pool` (an `EnvPool` with at
        least `len(tasks)` envs), until every one has ended; return them in task order.

        `tasks`: each env's reset options, e.g. `{"task_index": 3}`; repeat one N times for a
        GRPO group. `seeds`: reset seeds, one per task. A reset that fails raises (there is no
        prompt to generate from); a step that fails ends only its own episode.

        With the engine's `seed`, turn t (from 0) of every episode is sampled with
        `SamplingParams.seed = seed + c + t` at the episode's position, c counting the turns of
        the engine's earlier runs: in both schedules, the backend call of round t."""
        tasks = list(tasks)
        if not tasks:
            return []
        if getattr(pool, "num_envs", 0) < len(tasks):
            raise ValueError(
                f"{len(tasks)} tasks need a pool of at least {len(tasks)} envs, got "
                f"{getattr(pool, 'num_envs', pool)!r}: make EnvPool(env_id, {len(tasks)}, ...)"
            )
        resets = pool.reset(range(len(tasks)), seeds=seeds, options=tasks)
        episodes = []
        for reset in resets:
            messages = [dict(m) for m in reset.info.get("messages") or [{"role": "user", "content": reset.observation}]]
            episodes.append(
                Episode(
                    index=reset.index,
                    task_id=reset.info.get("task_id"),
                    prompt_ids=self.chat.prompt_ids(messages),
                    transcript=messages,
                    info=dict(reset.info),
                )
            )
        schedule = "continuous" if self.schedule == "continuous" or self._go_continuous else "rounds"
        started = time.perf_counter()
        if schedule == "continuous":
            env_wait_s = self._run_continuous(pool, episodes)
        else:
            env_wait_s = self._run_rounds(pool, episodes)
        self.last_run = stats = _run_stats(schedule, time.perf_counter() - started, env_wait_s, episodes)
        if self.schedule == "auto" and schedule == "rounds" and isinstance(self.backend, StreamingBackend):
            self._go_continuous = stats.prefers_continuous()
            if self._go_continuous:
                LOG.info(
                    "rollouts: schedule 'auto' goes continuous from the next run: the last one waited on env steps "
                    "for %.0f%% of its %.2f s, straggle %.2f",
                    100 * stats.env_share,
                    stats.wall_s,
                    stats.straggle,
                )
        return episodes

    def _run_rounds(self, pool: EpisodePool, episodes: list[Episode]) -> float:
        """Play `episodes` round by round; return the time spent in `pool.step`."""
        env_wait_s = 0.0
        while active := [e for e in episodes if e.stop_reason is None]:
            turns = self._generate(active)
            stepping = [(e, turns[e.index]) for e in active if e.stop_reason is None]
            started = time.perf_counter()
            results = pool.step([(e.index, turn.reply) for e, turn in stepping])
            env_wait_s += time.perf_counter() - started
            for (episode, turn), result in zip(stepping, results):
                self._take_step(episode, turn, result)
        return env_wait_s

    # --- the continuous schedule ----------------------------------------------------------------

    def _run_continuous(self, pool: EpisodePool, episodes: list[Episode]) -> float:
        """Play `episodes` one by one; return the time the engine's thread spent stepping envs
        itself or waiting for them with nothing in flight."""
        backend = self.backend
        assert isinstance(backend, StreamingBackend)  # checked in __init__
        base_seed = None if self.seed is None else self.seed + self._calls
        by_index = {e.index: e for e in episodes}
        stepper = _EnvStepper(pool)
        # The run's quickest collect: one engine step in-process (a mean would carry a cold first
        # step's seconds). The server's collect returns at once when answers are waiting, so there
        # this tends to 0 and every env step is handed off.
        engine_step_s = math.inf
        env_wait_s = 0.0
        try:
            for episode in episodes:
                self._submit(episode, base_seed)
            while any(e.stop_reason is None for e in episodes):
                if backend.in_flight():
                    started = time.perf_counter()
                    finished = backend.collect()
                    engine_step_s = min(engine_step_s, time.perf_counter() - started)
                    ready = []
                    for key, generation in finished:
                        episode = by_index[key]
                        turn = self._append_turn(episode, generation)
                        if episode.stop_reason is None:
                            ready.append((episode, turn))
                    if ready and stepper.quicker_than(engine_step_s):
                        started = time.perf_counter()
                        stepped = stepper.step_here(ready)
                        env_wait_s += time.perf_counter() - started
                        for episode, turn, result in stepped:
                            self._take_step(episode, turn, result)
                            if episode.stop_reason is None:
                                self._submit(episode, base_seed)
                    else:
                        for episode, turn in ready:
                            stepper.put(episode, turn)
                elif not stepper.pending:
                    raise RuntimeError("rollout engine: episodes still going with no turn generating and no env step")
                idle = not backend.in_flight()
                started = time.perf_counter()
                taken = stepper.take(block=idle)
                if idle:
                    env_wait_s += time.perf_counter() - started
                for episode, turn, result in taken:
                    self._take_step(episode, turn, result)
                    if episode.stop_reason is None:
                        self._submit(episode, base_seed)
        except BaseException:
            backend.abort()  # nothing of this run may reach the next one
            raise
        finally:
            stepper.close()
        self._calls += max(e.turns for e in episodes)
        return env_wait_s

    def _submit(self, episode: Episode, base_seed: int | None) -> None:
        params = SamplingParams(
            max_tokens=min(self.max_tokens_per_turn, self._room(episode)),
            temperature=self.sampling.temperature,
            top_p=self.sampling.top_p,
            top_k=self.sampling.top_k,
            stop_token_ids=self.sampling.stop_token_ids,
            seed=None if base_seed is None else base_seed + episode.turns,
        )
        assert isinstance(self.backend, StreamingBackend)  # checked in __init__
        self.backend.submit(episode.index, episode.prompt_ids + episode.completion_ids, params)

    # --- one round ------------------------------------------------------------------------------

    def _room(self, episode: Episode) -> int:
        if self.max_episode_tokens is None:
            return self.max_tokens_per_turn
        return self.max_episode_tokens - len(episode.completion_ids)

    def _generate(self, active: list[Episode]) -> dict[int, _Turn]:
        """Generate every active episode's next turn in one call and append it; an episode
        whose turn hits the token budget ends here."""
        max_tokens = min(self.max_tokens_per_turn, max(self._room(e) for e in active))
        seed = None if self.seed is None else self.seed + self._calls
        self._calls += 1
        params = SamplingParams(
            max_tokens=max_tokens,
            temperature=self.sampling.temperature,
            top_p=self.sampling.top_p,
            top_k=self.sampling.top_k,
            stop_token_ids=self.sampling.stop_token_ids,
            seed=seed,
        )
        generations = self.backend.generate([e.prompt_ids + e.completion_ids for e in active], params)
        if len(generations) != len(active):
            raise RuntimeError(f"the backend returned {len(generations)} generations for {len(active)} prompts")
        turns = {}
        for episode, generation in zip(active, generations):
            turns[episode.index] = self._append_turn(episode, generation)
        return turns

    def _append_turn(self, episode: Episode, generation: Generation) -> _Turn:
        token_ids, logprobs, finish = generation.token_ids, generation.logprobs, generation.finish_reason
        room = self._room(episode)
        # One call serves episodes with different budgets, so cut each turn to its own room:
        # the kept prefix's logprobs are unchanged (sampling is left to right).
        out_of_room = len(token_ids) > room or (len(token_ids) == room and finish != "stop")
        if out_of_room and self.max_episode_tokens is not None:
            token_ids, logprobs, finish = token_ids[:room], logprobs[:room], "length"
            episode.stop_reason = MAX_EPISODE_TOKENS
        turn = _Turn(tuple(token_ids), finish, self.chat.reply_text(token_ids, finish))
        episode.completion_ids.extend(token_ids)
        episode.env_mask.extend([1] * len(token_ids))
        episode.logprobs.extend(float(x) for x in logprobs)
        episode.transcript.append({"role": "assistant", "content": turn.reply})
        episode.finish_reasons.append(finish)
        episode.turns += 1
        return turn

    def _take_step(self, episode: Episode, turn: _Turn, result: Any) -> None:
        episode.turn_rewards.append(float(result.reward))
        episode.reward = float(sum(episode.turn_rewards))
        episode.info = dict(result.info)
        episode.step_infos.append(episode.info)
        if result.done:
            episode.stop_reason = result.stop_reason or ("truncated" if result.truncated else "terminated")
            episode.error = result.error
            return
        if self.max_turns is not None and episode.turns >= self.max_turns:
            episode.stop_reason = MAX_TURNS
            return
        messages = result.info.get("messages")
        if messages is None:  # a plain gymnasium text env: its observation is the next user message
            messages = [{"role": "user", "content": result.observation}] if result.observation else []
        delta = self.chat.delta_ids(messages, turn.token_ids, turn.finish_reason)
        if self.max_episode_tokens is not None and len(episode.completion_ids) + len(delta) >= self.max_episode_tokens:
            episode.stop_reason = MAX_EPISODE_TOKENS  # no room for the message and a reply to it
            return
        episode.completion_ids.extend(delta)
        episode.env_mask.extend([0] * len(delta))
        episode.logprobs.extend([0.0] * len(delta))
        episode.transcript.extend(dict(m) for m in messages)


RUNNING_MEAN_WEIGHT = 0.3
"""The weight of the newest call in the running mean of env-step times."""


def _running_mean(mean: float | None, value: float) -> float:
    """An exponential running mean (recent calls weigh most), started at the first value."""
    return value if mean is None else mean + RUNNING_MEAN_WEIGHT * (value - mean)


class _EnvStepper:
    """The continuous schedule's env side: steps each turn put to it off the engine's thread
    and hands the results back to that thread (which alone touches episodes). On a pool whose
    calls on different envs run at once (`EnvPool.concurrent_calls`: threads, served envs)
    every turn is stepped as soon as it is put, on a thread of its own; on a pool that runs
    one call at a time (processes, Ray) one thread steps, as one `EnvPool.step` batch,
    whatever turns are waiting when it is free. A step that raises (not an env failure, which
    the pool turns into a result, but e.g. a closed pool) is raised in the engine's thread.

    Where env steps take less time than the quickest engine step so far (`quicker_than`: a
    running mean of the env's step calls against it), the engine steps the turns one engine
    step finished itself, as one batch (`step_here`): handed off, they would come back a
    moment after the next engine step had started without them, so that step and the ones
    after it would run with a smaller batch. Measured on vLLM's CPU build (`bench_schedules`)
    this was the continuous schedule's loss to the round one with a free env. The first turns
    are always handed off, so a slow env never blocks the engine before its latency is known."""

    def __init__(self, pool: EpisodePool) -> None:
        self.pool = pool
        self.pending = 0
        """Turns put and not yet taken back."""
        self.step_s: float | None = None
        """Running mean of the wall time of one `pool.step` call (None before the first)."""
        self._done: queue.SimpleQueue[list[tuple[Episode, _Turn, Any]] | BaseException] = queue.SimpleQueue()
        self._todo: queue.SimpleQueue[tuple[Episode, _Turn] | None] = queue.SimpleQueue()
        self._each: ThreadPoolExecutor | None = None
        self._batcher: threading.Thread | None = None
        if getattr(pool, "concurrent_calls", False):
            self._each = ThreadPoolExecutor(max_workers=pool.num_envs, thread_name_prefix="rlenvs-rollout-env-step")
        else:
            self._batcher = threading.Thread(target=self._serve, name="rlenvs-rollout-env-steps", daemon=True)
            self._batcher.start()

    def put(self, episode: Episode, turn: _Turn) -> None:
        self.pending += 1
        if self._each is not None:
            self._each.submit(self._step, [(episode, turn)])
        else:
            self._todo.put((episode, turn))

    def quicker_than(self, engine_step_s: float) -> bool:
        """Whether env steps are known to take no longer than an engine step, and stepping
        here cannot overlap a running call on a pool that takes one call at a time."""
        if self.step_s is None or self.step_s > engine_step_s:
            return False
        return self._each is not None or not self.pending

    def step_here(self, batch: list[tuple[Episode, _Turn]]) -> list[tuple[Episode, _Turn, Any]]:
        """Step `batch` on the calling thread, as one `pool.step` call, timed into `step_s`.
        (Stepping threads may race on `step_s`: a lost update only drops one sample.)"""
        started = time.perf_counter()
        results = self.pool.step([(episode.index, turn.reply) for episode, turn in batch])
        self.step_s = _running_mean(self.step_s, time.perf_counter() - started)
        return [(episode, turn, result) for (episode, turn), result in zip(batch, results)]

    def take(self, *, block: bool) -> list[tuple[Episode, _Turn, Any]]:
        """The steps finished so far; with `block`, wait for at least one (if any is pending)."""
        taken: list[tuple[Episode, _Turn, Any]] = []
        while self.pending:
            try:
                answer = self._done.get(block=block and not taken)
            except queue.Empty:
                break
            if isinstance(answer, BaseException):
                raise answer
            self.pending -= len(answer)
            taken += answer
        return taken

    def close(self) -> None:
        """Stop after the steps running, if any."""
        if self._each is not None:
            self._each.shutdown(wait=True, cancel_futures=True)
        else:
            assert self._batcher is not None
            self._todo.put(None)
            self._batcher.join()

    def _step(self, batch: list[tuple[Episode, _Turn]]) -> bool:
        """Step `batch` on a stepping thread and post the results (or the error: False)."""
        try:
            stepped = self.step_here(batch)
        except BaseException as exc:  # the engine's thread decides
            self._done.put(exc)
            return False
        self._done.put(stepped)
        return True

    def _serve(self) -> None:
        while (first := self._todo.get()) is not None:
            batch = [first]
            while True:
                try:
                    item = self._todo.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._todo.put(None)  # stop after this batch
                    break
                batch.append(item)
            if not self._step(batch):
                return
