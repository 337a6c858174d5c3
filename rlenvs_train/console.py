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


MISSING_KEYS = "There were missing keys in the checkpoint model loaded: "
"""How transformers' Trainer warns of weights a checkpoint lacks when it resumes."""


def hide_tied_missing_keys(model: Any) -> None:
    """Drop the Trainer's missing-keys warning on resume when every key it names is a weight
    tied to one the checkpoint holds (the tiny model's lm_head.weight is its embedding
    matrix, which safetensors saves once): those weights did load. Checked on the model's
    own parameters, so a key that is really missing is still reported."""
    import ast
    import logging

    tied: set[str] = set()
    for key, source in (getattr(model, "all_tied_weights_keys", None) or {}).items():
        try:
            if model.get_parameter(key).data_ptr() == model.get_parameter(source).data_ptr():
                tied.add(key)
        except AttributeError:  # a key this model does not have as a parameter: not tied here
            continue

    class TiedOnly(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            message = record.getMessage()
            if not message.startswith(MISSING_KEYS):
                return True
            try:
                keys = ast.literal_eval(message[len(MISSING_KEYS) :].rstrip("."))
            except (ValueError, SyntaxError):
                return True
            return not (keys and set(keys) <= tied)

    logging.getLogger("transformers.trainer").addFilter(TiedOnly())


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
