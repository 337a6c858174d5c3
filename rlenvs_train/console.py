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


QUIET_LIBRARIES = ("transformers", "datasets")
"""Libraries whose own progress bars (loading weights, writing shards, filtering and
tokenising data sets: 13 bars in a 3-step run with a warm-up) and warnings (deprecation
notices for their maintainers) a run shows only with `verbose`. The trainers' step bars are
not theirs (tqdm direct) and stay."""
VLLM_IMPORT_NOTICES = ("Triton is installed, but doesn't include CPU backend",)
"""What vLLM logs when it is imported on a CPU machine (TRL imports it whenever it is
installed, also for the hf backend): nothing a run can act on."""


@contextmanager
def console_output(verbose: bool) -> Iterator[None]:
    """The run's console: unless `verbose`, the known warnings filtered out and the other
    libraries' progress bars and warnings off, restored as they were on the way out (a
    notebook that calls `train` keeps its own settings)."""
    import warnings

    with warnings.catch_warnings(), _quiet_libraries(verbose):
        if not verbose:
            for category, message, module in KNOWN_WARNINGS:
                warnings.filterwarnings("ignore", message=message, category=category, module=module)
        yield


@contextmanager
def _quiet_libraries(verbose: bool) -> Iterator[None]:
    import importlib
    import logging

    if verbose:
        yield
        return
    saved = []
    for name in QUIET_LIBRARIES:
        library = importlib.import_module(f"{name}.utils.logging")
        saved.append((library, library.get_verbosity(), library.is_progress_bar_enabled()))
        library.set_verbosity_error()
        library.disable_progress_bar()

    class ImportNotices(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not record.getMessage().startswith(VLLM_IMPORT_NOTICES)

    vllm_logger, notices = logging.getLogger("vllm.triton_utils.importing"), ImportNotices()
    vllm_logger.addFilter(notices)
    try:
        yield
    finally:
        vllm_logger.removeFilter(notices)
        for library, verbosity, bars in saved:
            library.set_verbosity(verbosity)
            (library.enable_progress_bar if bars else library.disable_progress_bar)()


def quiet_progress(trainer: Any, verbose: bool) -> None:
    """Keep the trainer's progress bar but, unless `verbose`, not the metrics dict it prints
    at every logging step (dozens of keys per line, between which the step lines this module
    prints get lost; they are all in metrics.json)."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    if verbose:
        return

    class BarOnly(ProgressCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            return None

    # With transformers' logging at error (`console_output`), TrainingArguments turns its bar
    # off (disable_tqdm) and prints every dict instead (PrinterCallback): the bar is wanted.
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
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
