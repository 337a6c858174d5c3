"""A run's metrics: every logged GRPO step to `metrics.json` (rewritten whole, atomically), the
held-out accuracy where the run measures it, and the reward curve to `reward.png`."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rlenvs.files import atomic_path
from rlenvs_train.heldout import (
    HeldoutAccuracy,
    entry_text,
)

METRICS_FILE = "metrics.json"
CURVE_FILE = "reward.png"


class RunMetrics:
    """Keeps every logged GRPO step, prints one line per step, rewrites `metrics.json` and
    `reward.png` (atomically) as it goes, measures the held-out accuracy (`measure`, at the
    start, every `every` steps and at the end), and stops training cleanly on request."""

    def __init__(
        self, output_dir: Path, log: Callable[[str], None], measure: HeldoutAccuracy | None = None, every: int = 1
    ) -> None:
        self.output_dir = output_dir
        self.log = log
        self.measure, self.every = measure, every
        self.history: list[dict[str, Any]] = []
        self.validation: list[dict[str, Any]] = []
        self.heldout: list[dict[str, Any]] = []
        self.stop_requested = False

    def load(self) -> None:
        """On resume: the steps logged before the interruption (the checkpoint's own log
        history may stop short of them, so they are kept up to the resumed step)."""
        path = self.output_dir / METRICS_FILE
        if path.exists():
            saved = json.loads(path.read_text(encoding="utf-8"))
            self.history, self.validation = saved["steps"], saved.get("validation", [])
            self.heldout = saved.get("heldout", [])

    def rewards(self) -> list[float]:
        return [entry["reward"] for entry in self.history if "reward" in entry]

    def record(self, step: int, logs: Mapping[str, Any]) -> None:
        entry = {"step": step, **{k: v for k, v in logs.items() if isinstance(v, (int, float))}}
        if "reward" in logs:
            self.history = [e for e in self.history if e["step"] < step] + [entry]
            self.log(
                f"step {step}: reward {logs['reward']:.3f}"
                + (f" loss {logs['loss']:.4f}" if "loss" in logs else "")
                + (f" ({logs['step_time']:.1f} s)" if "step_time" in logs else "")
            )
        elif "eval_reward" in logs:
            self.validation = [e for e in self.validation if e["step"] < step] + [entry]
            self.log(f"step {step}: validation reward {logs['eval_reward']:.3f}")
        else:
            return
        self.save()

    def measure_heldout(self, model: Any, step: int) -> None:
        """The held-out accuracy of `model` at `step`, once per step."""
        if self.measure is None or any(e["step"] == step for e in self.heldout):
            return
        entry = self.measure.measure(model, step)
        self.heldout = [e for e in self.heldout if e["step"] < step] + [entry]
        self.log(f"step {step}: held-out greedy accuracy {entry_text(entry)}")
        self.save()

    def save(self) -> None:
        saved = {"steps": self.history, "validation": self.validation, "heldout": self.heldout}
        with atomic_path(self.output_dir / METRICS_FILE) as temporary:
            temporary.write_text(json.dumps(saved, indent=1), encoding="utf-8")
        if self.rewards():
            plot_rewards(self.history, self.output_dir / CURVE_FILE, self.validation, self.heldout)

    def callback(self) -> Any:
        from transformers import TrainerCallback

        metrics = self

        class MetricsCallback(TrainerCallback):
            def on_train_begin(self, args, state, control, model=None, **kwargs):
                if state.is_world_process_zero and not metrics.heldout:  # a resumed run has its start's
                    metrics.measure_heldout(model, 0)

            def on_log(self, args, state, control, logs=None, **kwargs):
                if state.is_world_process_zero and logs:
                    metrics.record(state.global_step, logs)

            def on_step_end(self, args, state, control, model=None, **kwargs):
                if metrics.stop_requested:
                    control.should_save = True
                    control.should_training_stop = True
                elif state.is_world_process_zero and state.global_step % metrics.every == 0:
                    metrics.measure_heldout(model, state.global_step)

        return MetricsCallback()


def plot_rewards(
    history: list[dict[str, Any]],
    path: Path,
    validation: Sequence[Mapping[str, Any]] = (),
    heldout: Sequence[Mapping[str, Any]] = (),
) -> None:
    """`reward_figure` as a PNG at `path`, written atomically."""
    from matplotlib import pyplot as plt

    figure = reward_figure(history, validation, heldout)
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png")
    plt.close(figure)


def reward_figure(
    history: list[dict[str, Any]],
    validation: Sequence[Mapping[str, Any]] = (),
    heldout: Sequence[Mapping[str, Any]] = (),
) -> Any:
    """The mean training reward per step and its running mean over a fifth of the run, the
    validation tasks' mean reward and the held-out greedy accuracy where they were measured,
    on one figure (both are shares of 1: one y axis). The training reward is measured at
    every step, so it is a line; validation and held-out accuracy only every save_steps, so
    they are points: a line between them would draw values at steps where nothing was measured."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    steps = [e["step"] for e in history if "reward" in e]
    rewards = [e["reward"] for e in history if "reward" in e]
    window = max(1, len(rewards) // 5)
    smooth = [statistics.fmean(rewards[max(0, i - window + 1) : i + 1]) for i in range(len(rewards))]
    figure, axes = plt.subplots(figsize=(6, 3.5), dpi=100)
    axes.plot(steps, rewards, color="0.75", linewidth=1, label="training reward (mean of the step, sampled)")
    axes.plot(steps, smooth, color="C0", linewidth=2, label=f"training reward, running mean over {window} steps")
    if validation:
        axes.plot(
            [e["step"] for e in validation],
            [e["eval_reward"] for e in validation],
            marker="o",
            linestyle="none",
            color="C1",
            label="validation reward (where measured)",
        )
    if heldout:
        axes.plot(
            [e["step"] for e in heldout],
            [float("nan") if e["accuracy"] is None else e["accuracy"] for e in heldout],
            marker="s",
            linestyle="none",
            color="C2",
            label=f"held-out greedy accuracy ({heldout[0]['tasks']} problems, where measured)",
        )
    axes.set_xlabel("GRPO step")
    axes.set_ylabel("reward / accuracy")
    axes.set_ylim(-0.02, 1.02)
    axes.legend(loc="best", fontsize=7)
    figure.tight_layout()
    return figure
