"""The `rlenvs-train` command.

    rlenvs-train                                           # the offline quickstart (examples/quickstart.yaml)
    rlenvs-train --config examples/gsm8k-grpo.yaml trainer.epochs=5
    rlenvs-train --config run.yaml --resume                # continue from the last checkpoint
    rlenvs-train eval --model runs/quickstart/final-model --env rlenvs/Arithmetic-v1 --episodes 100
    rlenvs-train eval --config runs/quickstart/config.yaml --episodes 100   # as the run trained: its model, env, kwargs, caps

Exit status: 0 done (or stopped by a signal after saving), 2 bad input (config, paths,
missing packages: reported before anything loads, the train extra first), 130 interrupted
before training began.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from rlenvs_train.extras import missing_train_packages, train_extra_message

QUICKSTART = "quickstart.yaml"
"""The config `rlenvs-train` runs without --config, shipped inside the package."""


def quickstart_config_path() -> Path:
    """The quickstart config inside the package (examples/quickstart.yaml links to it)."""
    return Path(str(resources.files("rlenvs_train") / "configs" / QUICKSTART))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    missing = missing_train_packages()
    if missing:  # before the first import of one of them fails with a bare module name
        print(f"rlenvs-train: {train_extra_message(missing)}", file=sys.stderr)
        return 2
    if argv[:1] == ["eval"]:
        return _eval(argv[1:])
    return _train(argv)


def _train(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="rlenvs-train",
        description="GRPO on an rlenvs env with TRL, from a YAML config. Without --config: the offline quickstart. "
        "`rlenvs-train eval --help` evaluates a model.",
    )
    parser.add_argument("--config", metavar="FILE.yaml", help="the run's config (default: the quickstart)")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in trainer.output_dir from its last checkpoint, as its own config.yaml says",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also print the trainers' metric dicts, other libraries' progress bars and the known third-party warnings",
    )
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="dotted overrides, e.g. trainer.epochs=5")
    args = parser.parse_args(argv)
    from rlenvs_train.config import ConfigError, load_config
    from rlenvs_train.resume import run_config
    from rlenvs_train.train import RunInputError, console_line, train

    try:
        # Schema and machine (env id, model path, files, packages) in one error: one try to fix.
        config = load_config(args.config or quickstart_config_path(), args.overrides, check_machine=True)
        if args.resume:  # the run's own config.yaml, not the quickstart's defaults or an edited file
            config = run_config(config, args.overrides, console_line)
        train(config, resume=args.resume, verbose=args.verbose)
    except (ConfigError, RunInputError) as error:  # found before any work; anything later keeps its traceback
        print(f"rlenvs-train: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rlenvs-train: interrupted", file=sys.stderr)
        return 130
    return 0


def _eval(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="rlenvs-train eval",
        description="success rate, mean reward and pass@k of a model on an env. With --config RUN/config.yaml: the "
        "run's final model, env, env kwargs (its system prompt included), turn and token caps; flags override them",
    )
    parser.add_argument("--config", metavar="RUN/config.yaml", help="a run's config: evaluate as it trained")
    parser.add_argument("--model", help="a local model folder or a hub id (default with --config: RUN/final-model)")
    parser.add_argument("--env", metavar="ID", help="a registered env id (`rlenvs list`); default: the run's")
    parser.add_argument(
        "--episodes",
        type=int,
        metavar="N",
        help="N distinct tasks drawn with --seed (default: every task of a data split once; required for a "
        "procedural env)",
    )
    parser.add_argument("--k", type=int, default=1, help="samples per task for pass@k (default 1: greedy)")
    parser.add_argument("--max-turns", type=int, default=None, metavar="T", help="cap on model turns per episode")
    parser.add_argument("--backend", default="hf", help="hf | vllm | vllm-server (default hf)")
    parser.add_argument("--server-url", default=None, help="the vllm-server backend's base URL")
    parser.add_argument(
        "--env-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a gym.make keyword argument, e.g. level=2 (repeatable; over the run's env_kwargs with --config)",
    )
    from rlenvs_train.evaluate import DEFAULT_MAX_EPISODE_TOKENS, DEFAULT_MAX_TOKENS_PER_TURN

    for flag, default in (
        ("--max-tokens-per-turn", DEFAULT_MAX_TOKENS_PER_TURN),
        ("--max-episode-tokens", DEFAULT_MAX_EPISODE_TOKENS),
    ):
        parser.add_argument(flag, type=int, default=None, help=f"default: the run's, else {default}")
    parser.add_argument("--temperature", type=float, default=None, help="default: 0 when k is 1, else 1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None, metavar="FILE.jsonl", help="write every episode's trajectory here")
    parser.add_argument("--verbose", action="store_true", help="also show other libraries' progress bars and warnings")
    args = parser.parse_args(argv)
    from rlenvs.cli import env_kwargs_from_args
    from rlenvs_train.console import console_output
    from rlenvs_train.evaluate import evaluate

    try:
        settings = _eval_settings(args, env_kwargs_from_args(args.env_arg))
        with console_output(args.verbose):
            result = evaluate(
                settings.pop("model"),
                settings.pop("env"),
                episodes=args.episodes,
                k=args.k,
                backend=args.backend,
                server_url=args.server_url,
                temperature=args.temperature,
                seed=args.seed,
                output=args.output,
                **settings,
            )
    except (ValueError, FileNotFoundError, ImportError) as error:  # ConfigError is a ValueError
        print(f"rlenvs-train eval: {error}", file=sys.stderr)
        return 2
    print(result.table())
    if args.output:
        print(f"trajectories: {args.output}")
    return 0


def _eval_settings(args: argparse.Namespace, env_args: dict) -> dict:
    """The model, env, env kwargs, turn and token caps of an eval: each flag given, else the
    run's (--config, `rlenvs_train.run_settings`), else `evaluate`'s default."""
    from rlenvs_train.run_settings import final_model, run_eval_settings

    if args.config:
        model = args.model or final_model(args.config)
        run = run_eval_settings(
            args.config,
            env=args.env,
            env_args=env_args,
            max_turns=args.max_turns,
            max_tokens_per_turn=args.max_tokens_per_turn,
            max_episode_tokens=args.max_episode_tokens,
        )
        print(f"rlenvs-train eval: model {model}, {run.described()} (flags over {args.config})")
        return {"model": model, **dataclasses.asdict(run)}
    if args.env is None:
        raise ValueError("give --env ID, or --config RUN/config.yaml to evaluate as that run trained")
    if args.model is None:
        raise ValueError("give --model (a local model folder or a hub id), or --config RUN/config.yaml")
    caps = {"max_tokens_per_turn": args.max_tokens_per_turn, "max_episode_tokens": args.max_episode_tokens}
    given_caps = {key: value for key, value in caps.items() if value is not None}  # else evaluate's defaults
    return {"model": args.model, "env": args.env, "env_kwargs": env_args, "max_turns": args.max_turns, **given_caps}


if __name__ == "__main__":
    sys.exit(main())
