"""The reward curve (`reward.png`): what is measured at every step is a line, what is
measured only every save_steps (held-out accuracy, validation reward) is points, so the
figure draws no value at a step where nothing was measured (issue 42)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs the train extra")


def test_heldout_and_validation_are_points_and_the_training_reward_a_line(tmp_path: Path) -> None:
    from matplotlib import pyplot as plt

    from rlenvs_train.run_metrics import plot_rewards, reward_figure

    history = [{"step": step, "reward": step / 40} for step in range(1, 41)]
    heldout = [{"step": step, "accuracy": step / 40, "tasks": 8} for step in (0, 20, 40)]
    validation = [{"step": step, "eval_reward": 0.5} for step in (20, 40)]
    figure = reward_figure(history, validation, heldout)
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    plt.close(figure)
    measured = [line for label, line in lines.items() if "where measured" in label]
    assert [list(line.get_xdata()) for line in measured] == [[20, 40], [0, 20, 40]]
    assert all(line.get_linestyle() == "None" and line.get_marker() in ("o", "s") for line in measured)
    training = [line for label, line in lines.items() if label.startswith("training reward")]
    assert len(training) == 2 and all(line.get_linestyle() == "-" for line in training)

    plot_rewards(history, tmp_path / "reward.png", validation, heldout)
    assert (tmp_path / "reward.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
