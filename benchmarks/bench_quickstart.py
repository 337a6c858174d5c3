"""Quickstart: the offline quickstart's learning curve, its phases' times, and a no-learning baseline.

Two runs of `rlenvs_train.train.train`, each in its own child process (TRL, accelerate and
torch leave process-wide state behind: seeds, the accelerator, threads), one after the
other in one temporary folder:

- quickstart: the packaged quickstart config (`rlenvs_train.cli.quickstart_config_path()`,
  which `examples/quickstart.yaml` links to) exactly as shipped, only `trainer.output_dir`
  overridden to the temporary folder: a tiny random model built locally, the SFT warm-up on
  the env's oracle episodes, then GRPO (`trainer.max_steps` steps) with the `hf` backend.
- baseline: the same config with `trainer.learning_rate` = `BASELINE_LR` (1e-9: about 1e-7
  of total weight movement over the run with Adam, i.e. none), started on a copy of the first
  run's `tiny-model/` and `sft-model/` (train() reuses an existing `sft-model/` and skips the
  warm-up), so the same seed draws the same tasks and the same sampling seeds from the same
  model. Its step means are the noise of the measure alone: the model does not change, only
  which tasks a step draws and what is sampled.
- other kernels: the same config for one GRPO step, from a copy of the tiny model, with
  torch's own CPU kernels held one instruction set lower (`ATEN_CPU_CAPABILITY`: avx2 on an
  AVX-512 machine, default on an AVX2 one), as on a CPU without the wider one. Its step-0
  held-out accuracy is what the same code and seed start from there: the SFT warm-up's float
  rounding follows the kernels, and 4 epochs carry the difference into a different start: why
  step 0 differs between machines (two AMD EPYCs, one with AVX-512, gave 17.5% and 37.5%) while
  it repeats on each.

The reward is each GRPO step's mean env reward (TRL's logged `reward`, from
`rlenvs_train.grpo.env_reward`) over its `train_batch_size` x `num_generations` episodes,
drawn from the `data.num_train_tasks` training tasks and sampled at `trainer.temperature`.
The gain is `rlenvs_train.train.reward_gain`: the mean of the last fifth of the steps minus
the first fifth (the quickstart's own measure). The figure to read is the quickstart's gain
minus the baseline's, measured in the same benchmark run: issue 17's target is that it rises
beyond the noise (`TARGET_GAIN_SE` standard errors of the baseline's steps) while the
held-out accuracy, the headline, rises by `TARGET_HELDOUT_POINTS`. A fixed training gain is
no target: the warm-up has seen the training problems, so the start's training reward
(0.7-0.9) leaves the room it leaves.

Phases are timed in the child by wrapping train()'s own steps (`_base_model`,
`_sft_warmup`, `_grpo`, looked up as module globals when train() runs) and by stamping every
line train() passes to its `log` callback: GRPO set-up is from `_grpo`'s start to its
"GRPO: N tasks" line, the steps from there to the last step's line, and the per-step
`step_time` comes from the run's `metrics.json`. The quickstart's `reward.png` is copied to
`benchmarks/results/quickstart-reward-<UTC timestamp>.png` (the temporary folder is deleted).
Torch keeps its default threads, as a user's run would. About 3 minutes on 2 idle cores (the quickstart
alone about 80 s, the other-kernels run about 40 s); far longer when the cores are shared.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import REPO_ROOT

PACKAGES = ("torch", "transformers", "trl", "accelerate", "datasets")
TARGET_GAIN_SE = 2.0
"""Gain minus the baseline's, in standard errors of the baseline's gain: the training reward rises beyond noise."""
TARGET_HELDOUT_POINTS = 10.0
"""Issue 17's bar: held-out greedy accuracy at least this many points above the SFT start."""
BASELINE_LR = "1e-9"
FIFTHS = 5
REUSED = ("tiny-model", "sft-model")
"""What the baseline run starts from: the quickstart's own models, copied."""
LOWER_KERNELS = {"AVX512": "avx2", "AVX2": "default"}
"""torch's CPU capability -> the ATEN_CPU_CAPABILITY of the other-kernels run (none on other CPUs)."""
CHILD_TIMEOUT_S = 1800
"""Per run: about 4 minutes on 2 idle cores, several times that when the shared cores are busy."""
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def run() -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-quickstart-") as folder:
        folder_path = Path(folder)
        main_dir, base_dir = folder_path / "quickstart", folder_path / "baseline"
        main = _run_child("quickstart", main_dir, [], folder_path)
        base_dir.mkdir()
        for name in REUSED:
            shutil.copytree(main_dir / name, base_dir / name)
        base = _run_child("baseline", base_dir, [f"trainer.learning_rate={BASELINE_LR}"], folder_path)
        main["other_kernels"] = _other_kernels(main, folder_path)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        RESULTS_DIR.mkdir(exist_ok=True)
        png = RESULTS_DIR / f"quickstart-reward-{stamp}.png"
        shutil.copyfile(main_dir / "reward.png", png)
        return result(main, base, png.relative_to(REPO_ROOT), main_dir / "reward.png")


def _other_kernels(main: dict[str, Any], folder: Path) -> dict[str, Any] | None:
    """Step 0 of the same run on torch's next lower CPU kernels (module docstring), or None
    where there is none to hold to (torch's capability is neither AVX512 nor AVX2)."""
    lower = LOWER_KERNELS.get(main["versions"]["torch_cpu_capability"])
    if lower is None:
        return None
    output_dir = folder / "other-kernels"
    output_dir.mkdir()
    shutil.copytree(folder / "quickstart" / REUSED[0], output_dir / REUSED[0])
    run = _run_child("other-kernels", output_dir, ["trainer.max_steps=1"], folder, {"ATEN_CPU_CAPABILITY": lower})
    if run["versions"]["torch_cpu_capability"] != lower.upper():
        raise AssertionError(f"ATEN_CPU_CAPABILITY={lower} left torch on {run['versions']['torch_cpu_capability']}")
    return {"aten_cpu_capability": lower, "heldout": run["heldout"][0], "sft_loss": _sft_loss(run)}


def _sft_loss(run: dict[str, Any]) -> str:
    """The warm-up's first -> last logged loss, from the run's "SFT warm-up: loss a -> b" line."""
    return next(line.split("loss ", 1)[1] for _, line in run["log"] if line.startswith("SFT warm-up: loss "))


def _run_child(
    name: str, output_dir: Path, overrides: list[str], folder: Path, extra_env: dict[str, str] | None = None
) -> dict[str, Any]:
    out, log = folder / f"{name}.json", folder / f"{name}.log"
    env = dict(os.environ, TRL_EXPERIMENTAL_SILENCE="1", TOKENIZERS_PARALLELISM="false", **(extra_env or {}))
    command = [sys.executable, "-m", "benchmarks.bench_quickstart", str(out), str(output_dir), *overrides]
    with log.open("wb") as sink:
        child = subprocess.run(
            command, cwd=REPO_ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, timeout=CHILD_TIMEOUT_S, check=False
        )
    if child.returncode != 0 or not out.exists():
        tail = log.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"the {name} run's child process exited with {child.returncode}:\n{tail}")
    return json.loads(out.read_text())


# --- the report (parent process) --------------------------------------------------------------


def _fifths(steps: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    n = len(steps)
    bounds = [round(i * n / FIFTHS) for i in range(FIFTHS + 1)]
    return [steps[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def _stats(chunk: list[dict[str, Any]]) -> tuple[float, float, float]:
    rewards = [s["reward"] for s in chunk]
    return statistics.fmean(rewards), min(rewards), max(rewards)


def _step_range(chunk: list[dict[str, Any]]) -> str:
    return f"{chunk[0]['step']}-{chunk[-1]['step']}"


def _reward_columns(steps: list[dict[str, Any]], base_steps: list[dict[str, Any]]) -> dict[str, Any]:
    """A row's step range, reward mean/min/max of both runs and seconds per step."""
    mean, low, high = _stats(steps)
    b_mean, b_low, b_high = _stats(base_steps)
    times = [s["step_time"] for s in steps if "step_time" in s]
    return {
        "GRPO steps": _step_range(steps),
        "mean reward": mean,
        "min": low,
        "max": high,
        "baseline mean": b_mean,
        "baseline min": b_low,
        "baseline max": b_high,
        "s/step": statistics.fmean(times) if times else "",
    }


def _heldout_columns(main: list[dict[str, Any]], base: list[dict[str, Any]]) -> dict[str, Any]:
    """Start and end of both runs' held-out greedy accuracy (data.heldout_tasks), in percent."""
    gain, base_gain = (100 * (h[-1]["accuracy"] - h[0]["accuracy"]) for h in (main, base))
    return {
        "GRPO steps": f"{main[0]['step']}-{main[-1]['step']}",
        "held-out start %": 100 * main[0]["accuracy"],
        "held-out end %": 100 * main[-1]["accuracy"],
        "baseline held-out end %": 100 * base[-1]["accuracy"],
        "held-out gain (points)": gain,
        "baseline held-out gain (points)": base_gain,
        f"target held-out gain >= {TARGET_HELDOUT_POINTS:g} points": "met"
        if gain >= TARGET_HELDOUT_POINTS
        else "NOT met",
    }


def _baseline_noise(main: dict[str, Any], base: dict[str, Any]) -> tuple[float, float, int]:
    """The baseline's step-mean spread, the standard error of a gain (difference of two means
    of `fifth` steps) from that unchanging model, and `fifth`."""
    fifth = max(1, len(main["steps"]) // FIFTHS)
    base_rewards = [s["reward"] for s in base["steps"]]
    spread = statistics.stdev(base_rewards) if len(base_rewards) > 1 else float("nan")
    return spread, spread * (2 / fifth) ** 0.5, fifth


def _gain_target(main: dict[str, Any], base: dict[str, Any]) -> str:
    return (
        "met"
        if main["reward_gain"] - base["reward_gain"] >= TARGET_GAIN_SE * _baseline_noise(main, base)[1]
        else "NOT met"
    )


def result(main: dict[str, Any], base: dict[str, Any], png: Path, temp_png: Path) -> dict[str, Any]:
    rows = [
        {"part": f"fifth {i}", **_reward_columns(chunk, base_chunk)}
        for i, (chunk, base_chunk) in enumerate(zip(_fifths(main["steps"]), _fifths(base["steps"])), 1)
    ]
    gain, base_gain = main["reward_gain"], base["reward_gain"]
    p = main["phases"]
    rows.append(
        {
            "part": "summary",
            **_reward_columns(main["steps"], base["steps"]),
            "wall s": main["wall_s"],
            "tiny model s": p["model_s"],
            "SFT s": p["sft_s"],
            "GRPO s": p["grpo_s"],
            "gain": gain,
            "baseline gain": base_gain,
            "gain - baseline": gain - base_gain,
            f"target gain - baseline >= {TARGET_GAIN_SE:g} s.e.": _gain_target(main, base),
        }
    )
    if main["heldout"] and base["heldout"]:
        rows.append({"part": "held-out greedy accuracy", **_heldout_columns(main["heldout"], base["heldout"])})
    return {
        "title": f"Quickstart: offline GRPO learning curve (tiny model, {main['config']['data']['env']}, CPU) vs a no-learning baseline",
        "rows": rows,
        "notes": notes(main, base, png, temp_png),
        "runs": {"quickstart": main, "baseline": base},  # every step's metrics and log line, for the JSON record
    }


def notes(main: dict[str, Any], base: dict[str, Any], png: Path, temp_png: Path) -> list[str]:
    c, v = main["config"], main["versions"]
    t, d = c["trainer"], c["data"]
    w = t["sft_warmup"]
    p, bp = main["phases"], base["phases"]
    episodes = t["train_batch_size"] * t["num_generations"]
    gain, base_gain = main["reward_gain"], base["reward_gain"]
    spread, noise, fifth = _baseline_noise(main, base)
    same_first = main["steps"][0]["reward"] == base["steps"][0]["reward"]
    step_times = [s["step_time"] for s in main["steps"] if "step_time" in s]
    base_times = [s["step_time"] for s in base["steps"] if "step_time" in s]
    return [
        f"Machine: {v['cpu_count']} CPUs ({v['cpus_usable']} usable), torch {v['torch']} with {v['torch_threads']} "
        f"threads (its default), transformers {v['transformers']}, trl {v['trl']}, accelerate {v['accelerate']}; "
        "each run in its own child process, one after the other. Load average (1 min) at the start and end of "
        f"each run: quickstart {main['load'][0]:.1f} -> {main['load'][1]:.1f}, baseline {base['load'][0]:.1f} -> "
        f"{base['load'][1]:.1f} (the cores are shared: times are inflated by whatever else ran).",
        f"Config (the packaged quickstart as shipped, read from the loaded config): {d['env']} {d['env_kwargs']}, "
        f"{d['num_train_tasks']} train tasks; model {t['policy']['model']['path']!r}; SFT warm-up {w['episodes']} "
        f"oracle episodes x {w['epochs']} epochs, lr {w['learning_rate']:g}, batch {w['batch_size']}; GRPO "
        f"{t['max_steps']} steps of {t['train_batch_size']} tasks x {t['num_generations']} generations = {episodes} "
        f"episodes, micro-batch {t['micro_batch_size']}, lr {t['learning_rate']:g}, {t['algorithm']['loss_type']} "
        f"loss, beta {t['algorithm']['beta']:g}, advantage {t['algorithm']['advantage_estimator']}, "
        f"max {t['max_tokens_per_turn']} tokens/turn and {t['max_episode_tokens']}/episode, temperature "
        f"{t['temperature']:g}, seed {t['seed']}; inference backend {c['inference']['backend']}.",
        f"Reward: each GRPO step's mean env reward over its {episodes} episodes on the {d['num_train_tasks']} training "
        f"tasks, sampled at temperature {t['temperature']:g} (TRL's logged `reward`); min and max are those of the "
        "step means within the fifth; s/step is the mean of metrics.json's `step_time` over those steps. Gain = rlenvs_train.train.reward_gain: mean of the last fifth of the steps "
        f"minus the first fifth ({fifth} steps each).",
        f"Gain: quickstart {gain:+.3f}, baseline (trainer.learning_rate={BASELINE_LR}, same seed, same tiny and SFT "
        f"models) {base_gain:+.3f}, difference {gain - base_gain:+.3f}. The baseline's step means have a standard "
        f"deviation of {spread:.3f}, so a gain of two {fifth}-step means from an unchanging model is noise of about "
        f"+/-{noise:.3f} (one standard error). Step 1 (identical weights and seeds in both runs) scored "
        f"{main['steps'][0]['reward']:.3f} vs {base['steps'][0]['reward']:.3f}: "
        f"{'equal, as expected' if same_first else 'NOT equal: the runs are not paired as intended'}. Target (the "
        f"training reward rises: gain - baseline >= {TARGET_GAIN_SE:g} standard errors = "
        f"{TARGET_GAIN_SE * noise:.3f}): **{_gain_target(main, base)}**.",
        f"Times (quickstart run): wall {main['wall_s']:.1f} s inside train() plus {main['import_s']:.1f} s of imports; "
        f"tiny model build {p['model_s']:.1f} s; SFT warm-up {p['sft_s']:.1f} s; GRPO {p['grpo_s']:.1f} s = set-up "
        f"(TRL GRPOTrainer, model load) {p['grpo_setup_s']:.1f} s + {main['steps_done']} steps {p['grpo_steps_s']:.1f} "
        f"s + saving the final model {p['grpo_end_s']:.1f} s. metrics.json step_time: mean {statistics.fmean(step_times):.2f} "
        f"s, min {min(step_times):.2f}, max {max(step_times):.2f} (sum {sum(step_times):.1f} s; the rest of the steps' "
        "wall time is logging, metrics.json/reward.png rewrites and checkpoints every "
        f"{t['save_steps']} steps). Baseline run: GRPO {bp['grpo_s']:.1f} s, step_time mean "
        f"{statistics.fmean(base_times):.2f} s (its SFT warm-up reused: {bp['sft_s']:.1f} s).",
        _heldout_note(main, base),
        f"Curve: {png} (the quickstart's reward.png, copied from {temp_png}, which was deleted with the temporary "
        "folder): the step means and their running mean over a fifth of the run.",
    ]


def _heldout_note(main: dict[str, Any], base: dict[str, Any]) -> str:
    if not (main["heldout"] and base["heldout"]):
        return "Held-out accuracy: not measured (the config sets data.heldout_tasks: 0)."
    series = ", ".join(f"step {e['step']}: {e['correct']}/{e['tasks']}" for e in main["heldout"])
    base_series = ", ".join(f"step {e['step']}: {e['correct']}/{e['tasks']}" for e in base["heldout"])
    start, base_start = main["heldout"][0], base["heldout"][0]
    same = "the same" if start["correct"] == base_start["correct"] else "NOT the same"
    note = (
        f"Held-out greedy accuracy on {start['tasks']} problems set aside by content before training "
        "(rlenvs_train.heldout: no GRPO task and no SFT warm-up episode poses one): quickstart "
        f"{series}; baseline {base_series}. Step 0 is the SFT start's: the baseline's own process, evaluating "
        f"that model again, gets {same} ({start['correct']}/{start['tasks']} and "
        f"{base_start['correct']}/{base_start['tasks']})."
    )
    other = main.get("other_kernels")
    if other is None:
        return note + " Other CPU kernels: not measured (torch's capability has no lower one listed)."
    o, capability = other["heldout"], main["versions"]["torch_cpu_capability"]
    return note + (
        f" The start follows torch's CPU kernels, {capability} here (SFT loss {_sft_loss(main)}): with "
        f"ATEN_CPU_CAPABILITY={other['aten_cpu_capability']} (what a CPU without {capability} runs), the same code "
        f"and seed start at {o['correct']}/{o['tasks']} (SFT loss {other['sft_loss']}). So step 0 differs between "
        "machines and repeats on each."
    )


# --- the child process ------------------------------------------------------------------------


def _child(out_path: Path, output_dir: Path, overrides: list[str]) -> None:
    start = time.perf_counter()
    import accelerate
    import torch
    import transformers
    import trl

    import rlenvs_train.train as train_module
    from rlenvs_train.cli import quickstart_config_path
    from rlenvs_train.config import config_to_dict, load_config
    from rlenvs_train.run_metrics import METRICS_FILE

    import_s = time.perf_counter() - start
    config = load_config(quickstart_config_path(), [f"trainer.output_dir={output_dir}", *overrides])
    events: list[tuple[float, str]] = []
    phases: dict[str, float] = {"model_s": 0.0, "sft_s": 0.0, "grpo_s": 0.0}
    marks: dict[str, float] = {}

    def log(line: str) -> None:
        events.append((time.perf_counter(), line))
        print(f"[{time.perf_counter() - start:8.1f} s] {line}", flush=True)

    def timed(name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            marks[f"{name}_start"] = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                marks[f"{name}_end"] = time.perf_counter()
                phases[f"{name}_s"] = marks[f"{name}_end"] - marks[f"{name}_start"]

        return wrapper

    train_module._base_model = timed("model", train_module._base_model)
    train_module.sft_warmup = timed("sft", train_module.sft_warmup)
    train_module._grpo = timed("grpo", train_module._grpo)

    load_start = os.getloadavg()[0]
    train_start = time.perf_counter()
    run = train_module.train(config, log=log)
    wall = time.perf_counter() - train_start
    load_end = os.getloadavg()[0]

    ready = next(t for t, line in events if line.startswith("GRPO: ") and " tasks x " in line)
    step_lines = [t for t, line in events if line.startswith("step ") and ": reward " in line]
    last_step = step_lines[-1] if step_lines else ready
    phases["grpo_setup_s"] = ready - marks["grpo_start"]
    phases["grpo_steps_s"] = last_step - ready
    phases["grpo_end_s"] = marks["grpo_end"] - last_step
    history = json.loads((output_dir / METRICS_FILE).read_text())["steps"]
    steps = [e for e in history if "reward" in e]
    if [e["reward"] for e in steps] != list(run.rewards):
        raise AssertionError("metrics.json's rewards differ from TrainResult.rewards")
    measurements = {
        "import_s": import_s,
        "wall_s": wall,
        "load": [load_start, load_end],
        "phases": phases,
        "steps_done": run.steps,
        "reward_gain": run.reward_gain,
        "heldout": list(run.heldout),
        "interrupted": run.interrupted,
        "steps": steps,
        "log": [[round(t - train_start, 2), line] for t, line in events],
        "config": config_to_dict(config),
        "overrides": overrides,
        "versions": {
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "transformers": transformers.__version__,
            "trl": trl.__version__,
            "accelerate": accelerate.__version__,
            "cpu_count": os.cpu_count(),
            "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        },
    }
    out_path.write_text(json.dumps(measurements, indent=1))


if __name__ == "__main__":
    _child(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
