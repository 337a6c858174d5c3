"""What a run shows and how it stops: one console line per event and step (the trainers' own
dicts and the known, harmless third-party warnings only with `verbose`), progress bars, and
Ctrl-C or SIGTERM ending the run after the current step with its checkpoint saved."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rlenvs_train.run_metrics import RunMetrics

KNOWN_WARNINGS = (
    (UserWarning, r"TRL currently supports vLLM versions", ""),
    (UserWarning, r"You are using 'rollout_func', which is an experimental feature", ""),
    (FutureWarning, "", r"(transformers|trl|accelerate|torch|datasets)(\.|$)"),
)
"""(category, message regex, module regex) of the third-party warnings a run prints that say
nothing about it: vLLM 0.32 is outside the range TRL 1.16 names but is what rlenvs pins and
tests, `rollout_func` is the TRL API this adapter is built on, and the libraries'
deprecation notices are for their own maintainers. Shown with `verbose`."""


@contextmanager
def console_output(verbose: bool) -> Iterator[None]:
    """The run's console: the known warnings filtered out unless `verbose`."""
    import warnings

    with warnings.catch_warnings():
        if not verbose:
            for category, message, module in KNOWN_WARNINGS:
                warnings.filterwarnings("ignore", message=message, category=category, module=module)
        yield


def quiet_progress(trainer: Any, verbose: bool) -> None:
    """Keep the trainer's progress bar but, unless `verbose`, not the metrics dict it prints
    at every logging step (dozens of keys per line, between which the step lines this module
    prints get lost; they are all in metrics.json)."""
    from transformers.trainer_callback import ProgressCallback

    if verbose:
        return

    class BarOnly(ProgressCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            return None

    trainer.remove_callback(ProgressCallback)
    trainer.add_callback(BarOnly())


@contextmanager
def stop_on_signals(metrics: RunMetrics) -> Iterator[None]:
    """SIGINT and SIGTERM ask the trainer to stop after the current step and save a
    checkpoint; a second signal is not caught (the default handler ends the process)."""
    previous: dict[int, Any] = {}

    def request_stop(signum: int, _frame: Any) -> None:
        metrics.stop_requested = True
        metrics.log(f"{signal.Signals(signum).name}: stopping after this step and saving a checkpoint")
        signal.signal(signum, previous[signum])

    for number in (signal.SIGINT, signal.SIGTERM):
        previous[number] = signal.signal(number, request_stop)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
