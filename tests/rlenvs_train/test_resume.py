"""What `--resume` continues (rlenvs_train.resume), without training: the run's own
config.yaml over the command line's, an override that would change the run refused, and a
finished run refused before anything is written. The run folders here hold what a run
writes first (config.yaml by `dump_config`) and the checkpoint's trainer_state.json fields
the check reads; tests/rlenvs_train/test_train.py resumes a real interrupted run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlenvs_train.cli import quickstart_config_path
from rlenvs_train.config import ConfigError, dump_config, load_config
from rlenvs_train.resume import resolved_by_run_config, run_config
from rlenvs_train.train import RunInputError, train


def a_run(tmp_path: Path, *, at_step: int, max_steps: int = 3) -> tuple[Path, list[str]]:
    run = tmp_path / "run"
    overrides = [f"trainer.output_dir={run}", f"trainer.max_steps={max_steps}", "trainer.sft_warmup.episodes=0"]
    dump_config(load_config(quickstart_config_path(), overrides), run / "config.yaml")
    (run / f"checkpoint-{at_step}").mkdir()
    state = {"global_step": at_step, "max_steps": max_steps}
    (run / f"checkpoint-{at_step}" / "trainer_state.json").write_text(json.dumps(state))
    return run, overrides


def test_the_runs_config_wins_over_the_quickstarts_defaults(tmp_path: Path) -> None:
    run, _ = a_run(tmp_path, at_step=2)
    lines: list[str] = []
    command = load_config(quickstart_config_path(), [f"trainer.output_dir={run}"])
    config = run_config(command, [f"trainer.output_dir={run}"], lines.append)
    assert config == load_config(run / "config.yaml") and config.trainer.max_steps == 3
    assert lines == [
        f"rlenvs-train: --resume continues {run} with its own config.yaml: trainer.max_steps 3 (not 60), "
        "trainer.sft_warmup.episodes 0 (not 2600)"
    ]
    with pytest.raises(ConfigError, match=r"would change it: trainer.max_steps=60 \(the run's: 3\)"):
        run_config(command, [f"trainer.output_dir={run}", "trainer.max_steps=60"], lines.append)


def test_train_resumes_only_the_run_as_configured_and_not_finished(tmp_path: Path) -> None:
    run, overrides = a_run(tmp_path, at_step=3)
    before = sorted(p.name for p in run.iterdir())
    with pytest.raises(RunInputError, match=r"is finished \(at step 3 of 3; .*nothing was written"):
        train(load_config(quickstart_config_path(), overrides), resume=True)
    with pytest.raises(RunInputError, match=r"this config differs: trainer.max_steps 3 \(given 4\)"):
        train(load_config(quickstart_config_path(), [*overrides, "trainer.max_steps=4"]), resume=True)
    assert sorted(p.name for p in run.iterdir()) == before


def test_train_takes_the_config_run_config_gave_as_read_and_checked(tmp_path: Path) -> None:
    """`rlenvs-train --resume` reads the run's config.yaml once: run_config loads and checks it,
    and train, given that very object, still refuses a finished run without reading it again;
    an equal config loaded anew is checked as any other."""
    run, _ = a_run(tmp_path, at_step=3)
    command = load_config(quickstart_config_path(), [f"trainer.output_dir={run}"])
    config = run_config(command, [f"trainer.output_dir={run}"], lambda line: None)
    assert resolved_by_run_config(config) and not resolved_by_run_config(load_config(run / "config.yaml"))
    with pytest.raises(RunInputError, match=r"is finished \(at step 3 of 3"):
        train(config, resume=True)
    # A key inside a free-form mapping of the schema is refused as a change of that mapping.
    resources = "env_workers.ray.resources.sandbox=1"
    command = load_config(quickstart_config_path(), [f"trainer.output_dir={run}", resources])
    with pytest.raises(ConfigError, match=r'would change it: env_workers.ray.resources={"sandbox": 1} \(the run'):
        run_config(command, [f"trainer.output_dir={run}", resources], lambda line: None)
