"""The `rlenvs` command: list and describe envs, report the data they need and where it is,
evaluate a scripted policy, play by hand, check a reward function, certify an env's verdicts
against generated attacks, check how much of a corpus of task folders runs, export tasks to
Parquet, write oracle SFT data, and write the package of an env of one's own (`rlenvs new`)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import inspect
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

import gymnasium as gym

import rlenvs
from rlenvs.core.registration import NAMESPACE, check_env_id
from rlenvs.envs.catalog_docs import plain
from rlenvs.envs.plugins import all_entries, find_entry
from rlenvs.remote.wire import (
    CONNECTION_HEADROOM,
    DEFAULT_DRAIN_TIMEOUT_S,
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_STEP_TIMEOUT_S,
    SERVE_TOKEN_ENV,
)
from rlenvs.scaffold import KINDS, new_package

END_OF_REPLY = "."
QUIT = "/quit"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if getattr(args, "env_id", None) is not None:
            # Every command that takes an id rejects an unknown one the same way, before any work.
            check_env_id(args.env_id)
        return args.command(args)
    except KeyboardInterrupt:  # Ctrl-C: what was asked, so one line and the shell's 130, no traceback
        print(f"rlenvs {args.command_name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `rlenvs check-env ID | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except (ValueError, KeyError, TypeError, FileNotFoundError, ImportError) as error:  # ImportError: an extra
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"rlenvs {args.command_name}: error: {message}", file=sys.stderr)
        return 2


def list_envs(args: argparse.Namespace) -> int:
    """id, family and summary of every id, rlenvs' first; when other packages' envs are installed
    (the `rlenvs.envs` entry points), a package column says which distribution gives each id."""
    entries = all_entries()
    rows = [[entry.id, entry.family or "-"] for entry in entries]
    if any(entry.package != NAMESPACE for entry in entries):
        for row, entry in zip(rows, entries):
            row.append(entry.package)
    # Each column as wide as its widest cell ("spreadsheet" overran a fixed 6).
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row, entry in zip(rows, entries):
        print("  ".join(f"{cell:<{width}}" for cell, width in zip(row, widths)) + f"  {entry.summary}")
    return 0


def data_command(args: argparse.Namespace) -> int:
    """Exit 0 when every listed env has its data (found, or from a reachable hub), else 1."""
    from rlenvs.data.status import data_report

    for env_id in args.env_ids:
        check_env_id(env_id)
    entries = [find_entry(env_id) for env_id in args.env_ids] if args.env_ids else list(all_entries())
    report, available = data_report(entries)
    print(report)
    return 0 if available else 1


def info(args: argparse.Namespace) -> int:
    entry = find_entry(args.env_id)
    module_name, class_name = entry.entry_point.split(":")
    env_class = getattr(importlib.import_module(module_name), class_name)
    parameters = inspect.signature(env_class.__init__).parameters.values()
    keywords = [f"{p.name}={p.default!r}" for p in parameters if p.name != "self"]
    described = [
        (label, text)
        for label, text in (
            ("observes", entry.observes),
            ("acts", entry.acts),
            ("reward", entry.reward),
            ("turns", entry.turns),
        )
        if text  # another package's entry may leave them out
    ]
    origin = (
        entry.family if entry.package == NAMESPACE else " ".join(filter(None, [entry.family, "from", entry.package]))
    )
    lines = [
        f"{entry.id}  ({origin})",
        f"  {entry.summary}",
        *(f"  {label + ':':<12} {plain(text)}" for label, text in described),
        f"  entry point: {entry.entry_point}",
        "  make kwargs: " + ", ".join(keywords),
        f"  make:        gym.make({entry.id!r}) after `import rlenvs`, or gym.make('rlenvs:{entry.id}')",
    ]
    print("\n".join(lines))
    return 0


def eval_command(args: argparse.Namespace) -> int:
    """Evaluate a policy (`rlenvs.evaluation.evaluate`): the Markdown table on stdout, and
    the trajectories and summary files where asked."""
    from rlenvs.evaluation import evaluate

    pass_at = _pass_at(args.pass_at, args.samples)
    if args.resume and not args.trajectories:
        raise ValueError("--resume continues a --trajectories file: name it with --trajectories FILE.jsonl")
    env_id, env_kwargs, max_turns, policy = _eval_setup(args)
    result = evaluate(
        env_id,
        policy,
        episodes=args.episodes,
        samples=args.samples,
        seed=args.seed,
        env_kwargs=env_kwargs,
        trajectories=args.trajectories,
        resume=args.resume,
        concurrency=args.concurrency,
        max_turns=max_turns,
        progress=not args.no_progress,
    )
    print(f"{env_id} · policy {result.policy} · seed {args.seed}")
    print(result.table(pass_at))
    if args.summary:
        Path(args.summary).write_text(json.dumps(result.summary(pass_at), indent=2) + "\n", encoding="utf-8")
        print(f"summary written to {args.summary}")
    if args.trajectories:
        print(f"trajectories written to {args.trajectories}")
    return 0


OPENAI_FLAGS = {
    "model": "--model",
    "api": "--api",
    "tokenizer": "--tokenizer",
    "request_timeout": "--request-timeout",
    "retries": "--retries",
}
MODEL_FLAGS = {"backend": "--backend", "max_episode_tokens": "--max-episode-tokens"}
"""`rlenvs eval`'s flags that only one kind of policy reads: given with another, an error."""


def _eval_setup(args: argparse.Namespace) -> tuple[str, dict[str, Any], int | None, Any]:
    """The env id, its kwargs, the turn cap and the policy of an `rlenvs eval`: the flags, over
    a run's config (`--config RUN/config.yaml`: its env, env kwargs and caps, and its final
    model as the policy unless --policy names another)."""
    from rlenvs.evaluation.policies import policy_from_spec

    env_kwargs = env_kwargs_from_args(args.env_arg)
    env_id, max_turns, policy = args.env_id, args.max_turns, args.policy
    max_tokens, max_episode_tokens = args.max_tokens, args.max_episode_tokens
    if args.config:
        try:
            from rlenvs_train.run_settings import final_model, run_eval_settings
        except ImportError as error:
            raise ValueError(
                f"--config reads a training run's config, which needs the train extra ({error.name} is missing): "
                'pip install -e ".[train]"'
            ) from None
        run = run_eval_settings(
            args.config,
            env=env_id,
            env_args=env_kwargs,
            max_turns=max_turns,
            max_tokens_per_turn=max_tokens,
            max_episode_tokens=max_episode_tokens,
        )
        env_id, env_kwargs, max_turns = run.env, run.env_kwargs, run.max_turns
        max_tokens, max_episode_tokens = run.max_tokens_per_turn, run.max_episode_tokens
        policy = policy or f"model:{final_model(args.config)}"
        print(f"rlenvs eval: {run.described()} (flags over {args.config}); policy {policy}")
    if env_id is None:
        raise ValueError(
            "give the env id (rlenvs eval ID ...), or --config RUN/config.yaml to evaluate as a run trained"
        )
    if policy is None:
        raise ValueError(
            "give --policy (oracle, random, file:PATH, openai:URL, model:PATH), or --config RUN/config.yaml"
        )
    kind = policy.split(":", 1)[0] if policy.startswith(("openai:", "model:")) else None
    for flags, owner in ((OPENAI_FLAGS, "openai"), (MODEL_FLAGS, "model")):
        stray = [flag for name, flag in flags.items() if getattr(args, name) is not None and kind != owner]
        if stray:
            raise ValueError(f"{', '.join(stray)} is for the {owner}: policy; drop it for --policy {policy}")
    if kind is None:
        stray = [
            flag
            for name, flag in (("temperature", "--temperature"), ("max_tokens", "--max-tokens"))
            if getattr(args, name) is not None
        ]
        if stray:
            raise ValueError(
                f"{', '.join(stray)} is for a model's policy (openai: or model:); drop it for --policy {policy}"
            )
        return env_id, env_kwargs, max_turns, policy
    # Only what was given (or the run's config says): the policy's own defaults stand otherwise.
    options = {"temperature": args.temperature, "max_tokens": max_tokens}
    if kind == "openai":
        options.update(
            model=args.model,
            api=args.api,
            tokenizer=args.tokenizer,
            timeout_s=args.request_timeout,
            retries=args.retries,
        )
    else:
        options.update(backend=args.backend, max_episode_tokens=max_episode_tokens, seed=args.seed)
    options = {key: value for key, value in options.items() if value is not None}
    return env_id, env_kwargs, max_turns, policy_from_spec(policy, **options)


def _pass_at(text: str | None, samples: int) -> list[int]:
    """`--pass-at 1,4` -> [1, 4], each k at most `--samples`."""
    if text is None:
        return []
    try:
        ks = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--pass-at takes k values separated by commas, e.g. 1,4; got {text!r}") from None
    bad = [k for k in ks if not 1 <= k <= samples]
    if bad:
        raise ValueError(
            f"--pass-at {text}: each k must be in 1..--samples ({samples}); use --samples {max(ks)} or more"
        )
    return ks


def check_env_command(args: argparse.Namespace) -> int:
    """Run the env contract (`rlenvs.testing.envs.check_text_env`): exit 0 if it passed, 1 if a
    check failed, 2 if nothing could be checked (unknown id, an env that cannot be made)."""
    from rlenvs.testing.envs import DEFAULT_SEEDS, check_text_env  # imported here: hypothesis is optional

    report = check_text_env(
        args.env_id,
        make_kwargs=env_kwargs_from_args(args.env_arg),
        seeds=DEFAULT_SEEDS if args.seeds is None else range(args.seeds),
        vector=not args.no_vector,
        skip=args.skip,
    )
    print(report)
    if not report["make"].passed:
        return 2
    return 0 if report.passed else 1


def certify_command(args: argparse.Namespace) -> int:
    """Play generated attacks and equivalent correct forms through an env
    (`rlenvs.testing.certify`): exit 0 if every verdict went the right way, 1 if any went
    wrong, 2 if nothing could be certified."""
    from rlenvs.testing.certify import certify

    for name, value in (("--tasks", args.tasks), ("--per-type", args.per_type)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    progress = None if args.json else (lambda line: print(line, file=sys.stderr))
    report = certify(
        args.env_id,
        env_kwargs=env_kwargs_from_args(args.env_arg),
        tasks=args.tasks if args.tasks is not None else 10,
        seed=args.seed,
        per_type=args.per_type,
        every_task=args.every_task,
        task_indices=args.task_index or None,
        skip=args.skip,
        progress=progress,
    )
    print(json.dumps(report.as_json(), indent=2) if args.json else report)
    if report.tasks == 0:
        return 2
    return 0 if report.passed else 1


def tasks_check_command(args: argparse.Namespace) -> int:
    """Load every task folder under DIR on its own, play its reference solution and an empty
    submit (`rlenvs.envs.terminal.coverage`): exit 0 if every loaded folder's reference scored 1
    and its empty submit 0, 1 if not, 2 on bad input. Refused folders are counted by reason,
    not failed: the table says how much of the corpus runs."""
    from rlenvs.envs.terminal.coverage import check_corpus, passed, table

    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        records, totals = check_corpus(
            args.dir,
            backend=args.backend,
            env_kwargs=env_kwargs_from_args(args.env_arg),
            limit=args.limit,
            seed=args.seed,
            report=args.json,
            progress=progress,
        )
    except KeyboardInterrupt:
        kept = (
            f"; the folders checked so far are in {args.json}: rerun with the same --json to go on" if args.json else ""
        )
        print(f"rlenvs tasks check: interrupted{kept}", file=sys.stderr)
        return 130
    sample = f" · --limit {args.limit} --seed {args.seed}" if args.limit is not None else ""
    print(table(records, totals, f"{Path(args.dir).expanduser()} · backend {args.backend}{sample}"))
    if args.json:
        print(f"report written to {args.json}")
    return 0 if passed(records) else 1


def export_command(args: argparse.Namespace) -> int:
    """Write train.parquet and validation.parquet (`rlenvs.integrations.parquet.export_env`)."""
    import pyarrow.parquet as pq

    from rlenvs.integrations.parquet import export_env

    paths = export_env(
        args.env_id,
        args.output_dir,
        env_kwargs=env_kwargs_from_args(args.env_arg),
        train_split=args.train_split,
        val_split=args.val_split,
        num_train=args.num_train,
        num_val=args.num_val,
        seed=args.seed,
    )
    for split, path in paths.items():
        print(f"{split}: {path} ({pq.read_metadata(path).num_rows} rows)")
    return 0


def sft_data_command(args: argparse.Namespace) -> int:
    """Write oracle conversations as chat JSONL (`rlenvs.integrations.sft.oracle_conversations`)."""
    from rlenvs.integrations.sft import oracle_conversations, write_jsonl

    records = oracle_conversations(
        args.env_id, args.episodes, seed=args.seed, env_kwargs=env_kwargs_from_args(args.env_arg)
    )
    write_jsonl(records, args.output)
    skipped = args.episodes - len(records)
    print(
        f"wrote {len(records)} conversations to {args.output}; skipped {skipped} of {args.episodes} episodes "
        "(the oracle did not reach the maximum reward)"
    )
    return 0


REWARD_TRUTHS = {
    "integers": "integer_truths",
    "decimals": "decimal_truths",
    "fractions": "fraction_truths",
    "numbers": "numeric_truths",
}
"""`check-reward --truths` choices -> the `rlenvs.testing.strategies` function drawing them."""


def check_reward_command(args: argparse.Namespace) -> int:
    """Run the reward-function properties (`rlenvs.testing.check_reward`); exit 0 iff all passed."""
    try:  # imported here: hypothesis is needed only for this command
        from rlenvs.testing import properties, strategies
    except ImportError as error:
        raise ValueError(error) from error
    function = _load_function(args.target)
    renderings = strategies.DEFAULT_RENDERINGS
    if args.unicode_digits:
        renderings += strategies.CONFUSABLE_RENDERINGS
    report = properties.check_reward(
        function,
        shape=args.shape,
        truth_column=args.truth_column,
        bounds=tuple(args.bounds),
        truths=getattr(strategies, REWARD_TRUTHS[args.truths])(),
        renderings=renderings,
        examples=args.examples,
        time_budget=args.time_budget,
        seed=args.seed,
        properties=args.property or properties.PROPERTY_NAMES,
    )
    print(report)
    return 0 if report.passed else 1


def _load_function(target: str) -> Any:
    """The function `MODULE:FUNCTION` or `path/to/file.py:FUNCTION` names (FUNCTION may be
    dotted, `module:Class.method`). The working folder is importable, as for `python -m`."""
    module_name, _, attribute = target.rpartition(":")
    if not module_name or not attribute:
        raise ValueError(
            f"{target!r} is not MODULE:FUNCTION; name a module and a function in it, e.g. "
            "rlenvs.rewards.math:math_answer_score or my_rewards.py:score"
        )
    try:
        module = _import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import {module_name!r} ({error}): is it installed, or on PYTHONPATH?") from error
    except (FileNotFoundError, ValueError):
        raise
    except Exception as error:  # any error in the user's module is bad input here
        raise ValueError(f"importing {module_name!r} raised {type(error).__name__}: {error}") from error
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            functions = sorted(name for name, item in vars(module).items() if callable(item) and name[0] != "_")
            raise ValueError(
                f"{module_name!r} has no attribute {attribute!r}; its functions: {', '.join(functions) or 'none'}"
            )
        value = getattr(value, part)
    if not callable(value):
        raise TypeError(f"{target!r} is a {type(value).__name__}, not a function")
    return value


def _import_module(name: str) -> Any:
    if not name.endswith(".py"):
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(name)
    path = Path(name)
    if not path.is_file():
        raise FileNotFoundError(f"no file {name!r}: pass an existing path/to/file.py:FUNCTION or MODULE:FUNCTION")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None  # a .py file always gets a source loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(module)
    return module


def play(args: argparse.Namespace) -> int:
    """A person types the replies; a reply ends with a line holding only "." (or EOF)."""
    env = gym.make(args.env_id, **env_kwargs_from_args(args.env_arg))
    _line_editing()
    print(f"Playing {args.env_id}. End each reply with a line holding only '{END_OF_REPLY}'; {QUIT} quits.\n")
    seed = args.seed
    while True:
        _, reset_info = env.reset(seed=seed)
        seed = None  # later episodes continue the seeded random stream
        _print_messages(reset_info["messages"])
        total, done = 0.0, False
        while not done:
            reply = _read_reply()
            if reply is None:
                return 0
            _, reward, terminated, truncated, step_info = env.step(reply)
            total += float(reward)
            done = terminated or truncated
            _print_messages(step_info["messages"])
            print(f"(reward {reward:g})")
        print(f"Episode over: {step_info['stop_reason']}, total reward {total:g}, correct: {step_info['correct']}\n")


def _read_reply() -> str | None:
    """One reply, line by line through `input()`: at a terminal that is readline's line editing
    (arrow keys move in the line, up and down recall earlier lines) rather than raw escape codes."""
    print("> your reply:", flush=True)
    lines: list[str] = []
    while True:
        try:
            line = input()
        except EOFError:
            return "\n".join(lines) if lines else None
        if line == QUIT:
            return None
        if line == END_OF_REPLY:
            return "\n".join(lines)
        lines.append(line)


def _line_editing() -> None:
    """Turn on readline for `input()` where Python has it (not on Windows) and a person types:
    imported only at a terminal, since some readline builds write escape codes to stdout on import."""
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (importing it is what makes input() edit lines)


def serve_command(args: argparse.Namespace) -> int:
    try:
        from rlenvs.remote.auth import require_token_off_loopback, resolve_token
        from rlenvs.remote.server import EnvServer, default_sessions_per_client, serve
    except ImportError as error:
        raise ValueError(f"rlenvs serve needs FastAPI and uvicorn ({error}): pip install 'rlenvs[serve]'") from error
    token = resolve_token(args.token, what="--token")
    require_token_off_loopback(args.host, token)  # before the env is made: the mistake is the command's
    per_client = args.max_sessions_per_client
    if per_client is None:
        per_client = default_sessions_per_client(args.max_sessions, args.host)
    server = EnvServer(
        args.env_id,
        env_kwargs_from_args(args.env_arg),
        max_sessions=args.max_sessions,
        max_sessions_per_client=per_client,
        max_connections=args.max_connections,
        step_timeout_s=args.step_timeout or None,
        idle_timeout_s=args.idle_timeout or None,
        allow_oracle=args.oracle,
        token=token,
    )

    def listening() -> None:
        print(
            f"serving {args.env_id} at http://{args.host}:{args.port} (WebSocket sessions at "
            f"ws://{args.host}:{args.port}/ws; at most {server.max_sessions}, {server.max_sessions_per_client} per "
            f"client address; {'token required' if token else 'no token: loopback only'}); "
            "Ctrl-C stops, SIGTERM drains",
            flush=True,
        )

    serve(server, args.host, args.port, drain_timeout_s=args.drain_timeout, on_listening=listening)
    return 0


def new_command(args: argparse.Namespace) -> int:
    """Write a package of one env of the user's own (`rlenvs.scaffold`) and say what to run next."""
    made = new_package(args.name, args.kind, args.dir)
    where = os.path.relpath(made.root)
    print(f"wrote {where}/, the package {made.names.distribution} with the env {made.names.env_id} ({made.kind}):")
    print("\n".join(f"  {file.as_posix()}" for file in made.files))
    steps = [
        (f"cd {where}", ""),
        ('pip install -e ".[test]"', ""),
        ("rlenvs list", f"{made.names.env_id} is listed"),
        ("pytest", "its tests, as generated"),
        (f"rlenvs certify {made.names.env_id}", "exit 0: no wrong verdict"),
        (f"rlenvs serve {made.names.env_id}", 'after pip install -e ".[serve]"'),
        ("rlenvs-train --config train.yaml", 'after pip install -e ".[train]"'),
    ]
    width = max(len(command) for command, _ in steps)
    print("next:")
    print("\n".join(f"  {command:<{width}}  # {why}" if why else f"  {command}" for command, why in steps))
    return 0


def _print_messages(messages: list[dict[str, str]]) -> None:
    for message in messages:
        print(f"[{message['role']}]\n{message['content']}\n")


def _port(text: str) -> int:
    """A TCP port for argparse (which names the option in its error)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number: use 1-65535") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a TCP port: use 1-65535")
    return port


PYTHON_LITERALS: dict[str, Any] = {"None": None, "True": True, "False": False}


def env_kwargs_from_args(pairs: Sequence[str]) -> dict[str, Any]:
    """The env keyword arguments of `--env-arg KEY=VALUE` options (rlenvs' commands and
    `rlenvs-train`'s share them): VALUE is read as JSON when it parses (3, null, true, ["a"]);
    Python's spellings None, True and False mean what they do in Python (`system_prompt=None`
    made the system message the string "None"); anything else is a string, and a JSON string
    ('"None"') is the way to pass one of those words as text."""
    kwargs: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--env-arg {pair!r} must look like KEY=VALUE, e.g. --env-arg split=test")
        if value in PYTHON_LITERALS:
            kwargs[key] = PYTHON_LITERALS[value]
            continue
        try:
            kwargs[key] = json.loads(value)
        except json.JSONDecodeError:
            kwargs[key] = value
    return kwargs


class _ArgumentOptions(TypedDict):
    """`add_argument` keywords that several subcommands' options share."""

    action: str
    default: list[str]
    metavar: str
    help: str


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlenvs", description=rlenvs.__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"rlenvs {rlenvs.__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    def command(name: str, handler, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(command=handler, command_name=name)
        return sub

    command("list", list_envs, "every registered env id with a one-line description")
    sub = command(
        "data",
        data_command,
        "the data files each env reads, where the loaders look (data_files=, RLENVS_DATA_DIR, the "
        "Hugging Face hub) and whether this machine has them; exit 1 if a listed env lacks its data",
    )
    sub.add_argument("env_ids", nargs="*", metavar="ID", help="envs to report on (default: every rlenvs env)")
    sub = command("info", info, "what an env poses, rewards and accepts")
    sub.add_argument("env_id", metavar="ID")

    env_arg: _ArgumentOptions = {
        "action": "append",
        "default": [],
        "metavar": "KEY=VALUE",
        "help": "a gym.make keyword argument, e.g. split=test or max_turns=3 (repeatable); VALUE is JSON when it "
        "parses (null, true, 3) and None/True/False are Python's, else a string",
    }
    sub = command("eval", eval_command, "evaluate a policy on an env's tasks and print a result table")
    sub.add_argument("env_id", metavar="ID", nargs="?", help="a registered env id (default with --config: the run's)")
    sub.add_argument(
        "--policy",
        metavar="oracle|random|file:PATH|openai:URL|model:PATH",
        help="'oracle' (the env's gold replies), 'random' (samples of the action space: the reward of noise), "
        '\'file:PATH\' (a completions file, lines {"task_id": ..., "completion": ...}, or an earlier run\'s '
        "trajectories), 'openai:URL' (a model behind an OpenAI-compatible server, e.g. "
        "openai:http://127.0.0.1:8000/v1 for vllm serve; API key from $OPENAI_API_KEY) or 'model:PATH' (a local "
        "model folder or hub id run here; the train extra). Default with --config: model:RUN/final-model",
    )
    sub.add_argument(
        "--config",
        metavar="RUN/config.yaml",
        help="a training run's config: its env, env kwargs (system prompt included), turn and token caps, and its "
        "final model as the policy; flags override them",
    )
    sub.add_argument(
        "--episodes",
        type=int,
        metavar="N",
        help="N distinct tasks drawn with --seed (default: every task of the split once, in order; required for a "
        "procedural env; with file: the first N lines)",
    )
    sub.add_argument("--samples", type=int, default=1, metavar="N", help="attempts per task, n for pass@k (default 1)")
    sub.add_argument("--pass-at", metavar="K[,K...]", help="report the unbiased pass@k for each k (k <= --samples)")
    sub.add_argument(
        "--seed", type=int, default=0, help="seed of the task draw; episode i is reset with seed+i (default 0)"
    )
    sub.add_argument("--env-arg", **env_arg)
    sub.add_argument(
        "--trajectories",
        "--output",
        dest="trajectories",
        metavar="FILE.jsonl",
        help="write one JSON line per episode as it ends (messages, rewards, infos, finish reasons, timing)",
    )
    sub.add_argument("--resume", action="store_true", help="keep the episodes already in --trajectories, run the rest")
    sub.add_argument("--summary", metavar="FILE.json", help="write the summary (rates, CI, pass@k, breakdowns) as JSON")
    sub.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="episodes played at once, one env each (default: 8 for openai:, 32 for model:, else 1); the numbers "
        "do not depend on it",
    )
    sub.add_argument(
        "--max-turns", type=int, metavar="N", help="end an episode after N replies (default: the env's own limit)"
    )
    sub.add_argument("--temperature", type=float, help="openai:, model: sampling temperature (default 0: greedy)")
    sub.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="openai:, model: cap on one reply in tokens (default: the server's; model: the run's, else 256)",
    )
    sub.add_argument("--model", help="openai: the served model's name (default: the one model the server lists)")
    sub.add_argument(
        "--api",
        choices=("chat", "completions"),
        help="openai: chat (default: the server applies the chat template) or completions (the chat rendered here "
        "with the model's tokenizer, for a server without a template; needs transformers)",
    )
    sub.add_argument(
        "--tokenizer", metavar="PATH", help="openai: --api completions' tokenizer (default: the served model's name)"
    )
    sub.add_argument("--request-timeout", type=float, metavar="S", help="openai: seconds per request (default 300)")
    sub.add_argument("--retries", type=int, help="openai: retries of a failed request (default 3)")
    sub.add_argument("--backend", choices=("hf", "vllm"), help="model: hf (transformers, default) or vllm")
    sub.add_argument(
        "--max-episode-tokens",
        type=int,
        metavar="N",
        help="model: cap on an episode's tokens after its prompt (default: the run's, else 1024)",
    )
    sub.add_argument("--no-progress", action="store_true", help="no progress bar")

    sub = command(
        "check-env",
        check_env_command,
        "check an env against the env contract; exit 0 if it passed, 1 if a check failed, 2 if it could not be checked",
    )
    sub.add_argument("env_id", metavar="ID", help="a registered id, or 'module:EnvId' for another package's env")
    sub.add_argument("--env-arg", **env_arg)
    sub.add_argument(
        "--seeds",
        type=int,
        metavar="N",
        help="use seeds 0..N-1 in the seeded checks (default: 0..19 and five large seeds)",
    )
    sub.add_argument(
        "--skip", action="append", default=[], metavar="CHECK", help="leave out a check by name (repeatable)"
    )
    sub.add_argument(
        "--no-vector", action="store_true", help="leave out the vector-env check (it starts worker processes)"
    )

    sub = command(
        "check-reward",
        check_reward_command,
        "check a reward function's properties (range, totality, determinism, invariance, sensitivity, "
        "anti-hedging, time budget); exit 0 if all passed, 1 if not, 2 on bad input",
    )
    sub.add_argument(
        "target",
        metavar="MODULE:FUNCTION",
        help="the reward function, e.g. rlenvs.rewards.math:math_answer_score or my_rewards.py:score",
    )
    sub.add_argument("--examples", type=int, default=50, metavar="N", help="cases tried per property (default 50)")
    sub.add_argument(
        "--shape",
        choices=["plain", "trl"],
        default="plain",
        help="plain: f(completion, ground_truth) -> float (default); "
        "trl: TRL's f(completions, **columns) -> list[float]",
    )
    sub.add_argument(
        "--truth-column",
        default="answer",
        metavar="NAME",
        help="with --shape trl, the keyword that carries the ground truths (default answer)",
    )
    sub.add_argument(
        "--bounds",
        type=float,
        nargs=2,
        default=[0.0, 1.0],
        metavar=("LOW", "HIGH"),
        help="the range every reward must lie in (default 0 1)",
    )
    sub.add_argument(
        "--truths",
        choices=sorted(REWARD_TRUTHS),
        default="integers",
        help="the ground truths to draw (default integers)",
    )
    sub.add_argument(
        "--unicode-digits",
        action="store_true",
        help="also require fullwidth digits and the unicode minus to be read as numbers",
    )
    sub.add_argument(
        "--time-budget", type=float, default=2.0, metavar="SECONDS", help="the seconds one call may take (default 2)"
    )
    sub.add_argument("--seed", type=int, default=None, help="seed hypothesis for a reproducible run")
    sub.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this property (repeatable): range, totality, determinism, invariance, "
        "sensitivity, anti_hedging, time_budget",
    )

    sub = command(
        "certify",
        certify_command,
        "play generated attacks (near misses, restatements, hedges, misplaced answers, programs that do "
        "nothing, garbage) and "
        "equivalent correct forms, written from each task's own data, through an env; exit 0 if every "
        "verdict went the right way, 1 if any went wrong (each printed with its reproduction), 2 on bad input",
    )
    sub.add_argument("env_id", metavar="ID", help="a registered id (a user's own env once registered)")
    sub.add_argument("--tasks", type=int, metavar="N", help="tasks to draw, by seeds SEED..SEED+N-1 (default 10)")
    sub.add_argument(
        "--per-type",
        type=int,
        metavar="K",
        help="instead of --tasks: K tasks of every answer type the env's data holds (envs with a sized task list)",
    )
    sub.add_argument(
        "--every-task", action="store_true", help="instead of --tasks: every task of the env's data (a whole split)"
    )
    sub.add_argument(
        "--task-index",
        type=int,
        action="append",
        metavar="I",
        help="instead of --tasks: the task at index I of the env's data (repeatable; reproduces a finding)",
    )
    sub.add_argument(
        "--seed", type=int, default=0, help="the first seed, or the order tasks are scanned in (default 0)"
    )
    sub.add_argument("--env-arg", **env_arg)
    sub.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="KIND",
        help="leave out a kind of probe (repeatable), e.g. restatement for an env that asks for no form",
    )
    sub.add_argument("--json", action="store_true", help="print the report as JSON (findings with reproductions)")

    tasks = command("tasks", None, "task folders (Terminal-Bench 1, Harbor): check how much of a corpus runs")
    tasks_commands = tasks.add_subparsers(required=True, metavar="SUBCOMMAND")
    check_help = (
        "load every task folder under DIR on its own, play its reference solution and an immediate submit through "
        "Terminal-v2's verdict, and print folders / loaded / reference 1 / empty submit 0 / refused by reason; "
        "exit 0 if every loaded folder's reference scored 1 and its empty submit 0, 1 if any did not (or a folder "
        "could not be loaded for a fault of the machinery), 2 on bad input (refused folders are counted, not failed)"
    )
    sub = tasks_commands.add_parser("check", help=check_help, description=check_help)
    sub.set_defaults(command=tasks_check_command, command_name="tasks check")
    sub.add_argument("dir", metavar="DIR", help="a folder of task folders, or one task folder")
    sub.add_argument(
        "--backend",
        default="host",
        metavar="B",
        help="how each folder's machine is made, as Terminal-v2's backend=: host (the default: the host's /usr, no "
        "image), bwrap (each Dockerfile built into an image), auto (only those with RUN lines built), docker, podman",
    )  # no `choices=`: the list lives in rlenvs.envs.terminal.folders, which every command would then import
    sub.add_argument(
        "--json",
        metavar="FILE",
        help="write a JSON Lines report as the run goes (a run line, one line per folder, the totals): an "
        "interrupted run keeps what it checked, and a rerun with the same FILE and options skips those folders",
    )
    sub.add_argument("--limit", type=int, metavar="N", help="check a sample of N folders (default: all of them)")
    sub.add_argument("--seed", type=int, default=0, help="the seed the --limit sample is drawn with (default 0)")
    sub.add_argument(
        "--env-arg",
        **(
            env_arg
            | {
                "help": "a TerminalEnv keyword argument, e.g. timeout_s=600 or memory_mb=4096 (repeatable; the "
                "check's defaults: timeout_s=180, max_turns=50)",
            }
        ),
    )
    sub.add_argument("--quiet", action="store_true", help="no progress line per folder on stderr")

    sub = command(
        "export",
        export_command,
        "write an env's tasks as DIR/train.parquet and DIR/validation.parquet for SkyRL and verl",
    )
    sub.add_argument("env_id", metavar="ID")
    sub.add_argument("--output-dir", required=True, metavar="DIR", help="folder to write the two files into")
    sub.add_argument("--env-arg", **env_arg)
    sub.add_argument(
        "--train-split", metavar="NAME", help="the split kwarg of the train tasks (data-backed envs, e.g. train)"
    )
    sub.add_argument(
        "--val-split",
        metavar="NAME",
        help="the split kwarg of the validation tasks (e.g. test); without it, validation tasks are "
        "drawn from the train tasks' source, apart from them",
    )
    sub.add_argument(
        "--num-train",
        type=int,
        metavar="N",
        help="number of train tasks (required for procedural envs; default: every task of the split)",
    )
    sub.add_argument(
        "--num-val",
        type=int,
        metavar="N",
        help="number of validation tasks (default: every task of --val-split, else 0: an empty file)",
    )
    sub.add_argument(
        "--seed",
        type=int,
        default=None,
        help="draw distinct tasks at random with this seed (default: tasks 0..N-1 in order)",
    )

    sub = command(
        "sft-data",
        sft_data_command,
        "write the oracle's whole conversations as chat JSONL for SFT (only episodes at the maximum reward)",
    )
    sub.add_argument("env_id", metavar="ID")
    sub.add_argument(
        "--episodes",
        type=int,
        required=True,
        metavar="N",
        help="number of oracle episodes to play: N distinct tasks of a data split (at most as many as it has, "
        "drawn as `rlenvs eval` draws them), or N seeded draws of a procedural env",
    )
    sub.add_argument("--output", required=True, metavar="FILE.jsonl", help="one conversation per line")
    sub.add_argument(
        "--seed",
        type=int,
        default=0,
        help="episode i is reset with seed+i; on a data split the seed also draws which N tasks (default 0)",
    )
    sub.add_argument("--env-arg", **env_arg)

    sub = command(
        "serve",
        serve_command,
        "serve an env over OpenEnv's protocol (WebSocket sessions at /ws; /reset, /step, /state, /schema, "
        "/health over HTTP) for OpenEnv's client, RemoteEnv and EnvPool",
    )
    sub.add_argument("env_id", metavar="ID")
    sub.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; 0.0.0.0 for all, which needs a token: a served env runs the "
        "code it is sent)",
    )
    sub.add_argument("--port", type=_port, default=8000, help="port to listen on (default 8000)")
    sub.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help=f"sessions (envs) held at once; one more gets CAPACITY_REACHED (default {DEFAULT_MAX_SESSIONS})",
    )
    sub.add_argument(
        "--max-sessions-per-client",
        type=int,
        metavar="N",
        help="sessions one client address may hold; one more gets CLIENT_CAPACITY_REACHED (default: half of "
        "--max-sessions off loopback, all of them on loopback, where every client has the same address)",
    )
    sub.add_argument(
        "--token",
        metavar="TOKEN",
        help=f"the bearer token every client must send (Authorization: Bearer TOKEN) on every endpoint but /health; "
        f"default: the environment variable {SERVE_TOKEN_ENV}, which, unlike this flag, stays out of `ps`. Required "
        "with a --host other than loopback",
    )
    sub.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help=f"open connections at once; at the limit a new one closes the oldest that has not sent a whole request "
        f"(default: --max-sessions + {CONNECTION_HEADROOM})",
    )
    sub.add_argument(
        "--drain-timeout",
        type=float,
        default=DEFAULT_DRAIN_TIMEOUT_S,
        metavar="SECONDS",
        help="on SIGTERM, refuse new sessions and requests and wait this long for those being answered, then stop "
        f"(default {DEFAULT_DRAIN_TIMEOUT_S:g})",
    )
    sub.add_argument(
        "--step-timeout",
        type=float,
        default=DEFAULT_STEP_TIMEOUT_S,
        metavar="SECONDS",
        help=f"the longest one reset or step may run before its session is ended (default {DEFAULT_STEP_TIMEOUT_S:g}; "
        "0 for no limit)",
    )
    sub.add_argument(
        "--idle-timeout",
        type=float,
        default=DEFAULT_IDLE_TIMEOUT_S,
        metavar="SECONDS",
        help=f"close a session that sends no message for this long (default {DEFAULT_IDLE_TIMEOUT_S:g}; 0 for no limit)",
    )
    sub.add_argument(
        "--oracle",
        action="store_true",
        help="answer 'oracle' messages with the env's gold reply (for self-checks; anyone who can reach "
        "the server gets the answers)",
    )
    sub.add_argument("--env-arg", **env_arg)

    sub = command(
        "new",
        new_command,
        "write a package of an env of your own (pyproject.toml with the rlenvs.envs entry point, the env, "
        "README.md, train.yaml, tests that pass as generated), ready to pip install",
    )
    sub.add_argument(
        "name", metavar="NAME", help="the package's name, e.g. letter-count: env id letter-count/LetterCount-v0"
    )
    sub.add_argument(
        "--kind",
        choices=list(KINDS),
        default="single",
        help="; ".join(f"{name}: {kind.summary}" for name, kind in KINDS.items()) + " (default single)",
    )
    sub.add_argument(
        "--dir",
        metavar="PATH",
        help="the folder to write, new or empty (default: ./NAME, as letter-count for LetterCount)",
    )

    sub = command("play", play, "type the replies yourself")
    sub.add_argument("env_id", metavar="ID")
    sub.add_argument("--seed", type=int, default=None, help="seed of the first episode (default: random)")
    sub.add_argument("--env-arg", **env_arg)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
