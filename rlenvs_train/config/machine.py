"""What this machine says of a config: registered env ids, model and data files that are
there, installed packages. Kept apart from the schema (rlenvs_train.config.schema), whose
checks are pure, so a config can be checked on a laptop and run on a cluster."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
from collections.abc import Mapping
from typing import Any

from rlenvs_train.backends.kinds import KINDS
from rlenvs_train.config.schema import LOGGER_PACKAGES, TrainConfig, judgeable
from rlenvs_train.extras import vllm_install_hint
from rlenvs_train.model_path import model_path_problem


def check_environment(config: TrainConfig) -> list[str]:
    """Problems this machine has with `config`: an env id that is not registered, a model or
    data file that is not there, a package the backend or logger needs that is missing. Kept
    apart from the schema checks because the answer depends on where it runs."""
    return environment_problems(config, set())


def environment_problems(config: TrainConfig, bad: set[str]) -> list[str]:
    """`check_environment`, leaving out the keys in `bad` and under them (`judgeable`): their
    schema problem is already reported."""
    problems: list[str] = []
    ok = functools.partial(judgeable, bad)

    problem = _env_id_problem(config.data.env) if ok("data.env") else None
    if problem:
        problems.append(problem)
    elif ok("data.env") and ok("data.env_kwargs"):
        problem = _env_kwargs_problem(config.data.env, config.data.env_kwargs)
        if problem:
            problems.append(problem)
    problem = _model_path_problem(config.trainer.policy.model.path) if ok("trainer.policy.model.path") else None
    if problem:
        problems.append(problem)
    for key in ("train_data", "val_data"):
        if not ok(f"data.{key}"):
            continue
        for file in getattr(config.data, key):
            if not os.path.isfile(os.path.expanduser(file)):
                problems.append(
                    f"data.{key}: file {file!r} does not exist (write it with `rlenvs export`, or fix the path)"
                )
    needs_vllm = ok("inference.backend") and KINDS[config.inference.backend].needs_vllm
    if needs_vllm and importlib.util.find_spec("vllm") is None:
        problems.append(vllm_missing_message())
    if ok("env_workers.kind") and config.env_workers.kind == "ray" and importlib.util.find_spec("ray") is None:
        problems.append("env_workers.kind: 'ray' needs Ray: pip install 'rlenvs[ray]', or set env_workers.kind=local")
    package = LOGGER_PACKAGES.get(config.logger) if ok("logger") else None
    if package and importlib.util.find_spec(package) is None:
        problems.append(
            f"logger: {config.logger!r} needs the {package} package: pip install {package}, or set logger=none"
        )
    return problems


def vllm_missing_message() -> str:
    """What to say when inference.backend is "vllm" and vllm is not installed."""
    return f"inference.backend: 'vllm' needs the vllm package: {vllm_install_hint()}, or set inference.backend=hf"


def _env_id_problem(env_id: str) -> str | None:
    """None when gymnasium knows `env_id` (after importing rlenvs, or the `module:` of a
    "module:id" id, as gym.make would); else the problem, in the words every rlenvs command
    uses for an unknown id (the closest registered ids, the rlenvs ids)."""
    import rlenvs  # noqa: F401 - registers the rlenvs ids
    from rlenvs.core.registration import env_id_problem

    problem = env_id_problem(env_id)
    return None if problem is None else f"data.env: {problem}"


def _env_kwargs_problem(env_id: str, env_kwargs: Mapping[str, Any]) -> str | None:
    """A keyword the env's constructor does not take (data.env_kwargs.levl=2), found with the
    config's other problems rather than when the first env is made, after the model loads."""
    from rlenvs.core.registration import keyword_problem, make_parameters

    parameters = make_parameters(env_id)
    if parameters is None:  # a constructor taking **kwargs: any keyword may be right
        return None
    problem = keyword_problem(env_id, parameters, env_kwargs)
    return None if problem is None else f"data.env_kwargs: {problem}"


def _model_path_problem(path: str) -> str | None:
    """None for "tiny" (the built-in random model) or a path `model_path_problem` accepts."""
    if path == "tiny":
        return None
    problem = model_path_problem(path)
    if problem is None:
        return None
    return f"trainer.policy.model.path: {problem} (a local folder with config.json and weights, a hub id, or tiny)"
