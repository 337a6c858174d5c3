"""The `rlenvs` command: list and describe envs, evaluate a scripted policy, play by hand."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import json
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

import rlenvs
from rlenvs.envs.catalog import CATALOG, catalog_entry
from rlenvs.evaluation import evaluate, plan_episodes

END_OF_REPLY = "."
QUIT = "/quit"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.command(args)
    except (ValueError, KeyError, TypeError, FileNotFoundError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"rlenvs {args.command_name}: error: {message}", file=sys.stderr)
        return 2


def list_envs(args: argparse.Namespace) -> int:
    width = max(len(entry.id) for entry in CATALOG)
    for entry in CATALOG:
        print(f"{entry.id:<{width}}  {entry.family:<6}  {entry.summary}")
    return 0


def info(args: argparse.Namespace) -> int:
    entry = catalog_entry(args.env_id)
    module_name, class_name = entry.entry_point.split(":")
    env_class = getattr(importlib.import_module(module_name), class_name)
    parameters = inspect.signature(env_class.__init__).parameters.values()
    keywords = [f"{p.name}={p.default!r}" for p in parameters if p.name != "self"]
    lines = [
        f"{entry.id}  ({entry.family})",
        f"  {entry.summary}",
        f"  observes:    {entry.observes}",
        f"  acts:        {entry.acts}",
        f"  reward:      {entry.reward}",
        f"  turns:       {entry.turns}",
        f"  entry point: {entry.entry_point}",
        "  make kwargs: " + ", ".join(keywords),
        f"  make:        gym.make({entry.id!r}) after `import rlenvs`, or gym.make('rlenvs:{entry.id}')",
    ]
    print("\n".join(lines))
    return 0


def eval_command(args: argparse.Namespace) -> int:
    plans = plan_episodes(args.policy, args.episodes, args.seed)
    env = gym.make(args.env_id, **_env_kwargs(args.env_arg))
    with open(args.output, "w", encoding="utf-8") if args.output else contextlib.nullcontext() as output:
        summary = evaluate(env, plans, output=output, progress=not args.no_progress)
    print(f"{args.env_id} · policy {args.policy} · seed {args.seed}")
    print(summary.table())
    if args.output:
        print(f"episodes written to {args.output}")
    return 0


def play(args: argparse.Namespace) -> int:
    """A person types the replies; a reply ends with a line holding only "." (or EOF)."""
    env = gym.make(args.env_id, **_env_kwargs(args.env_arg))
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
            total += reward
            done = terminated or truncated
            _print_messages(step_info["messages"])
            print(f"(reward {reward:g})")
        print(f"Episode over: {step_info['stop_reason']}, total reward {total:g}, correct: {step_info['correct']}\n")


def _read_reply() -> str | None:
    print("> your reply:", flush=True)
    lines = []
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line == QUIT:
            return None
        if line == END_OF_REPLY:
            return "\n".join(lines)
        lines.append(line)
    return "\n".join(lines) if lines else None


def _print_messages(messages: list[dict[str, str]]) -> None:
    for message in messages:
        print(f"[{message['role']}]\n{message['content']}\n")


def _env_kwargs(pairs: Sequence[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs; VALUE is read as JSON when it parses (3, null, ["a"]), else a string."""
    kwargs = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--env-arg {pair!r} must look like KEY=VALUE, e.g. --env-arg split=test")
        try:
            kwargs[key] = json.loads(value)
        except json.JSONDecodeError:
            kwargs[key] = value
    return kwargs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlenvs", description=rlenvs.__doc__.splitlines()[0])
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    def command(name: str, handler, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(command=handler, command_name=name)
        return sub

    command("list", list_envs, "every registered env id with a one-line description")
    sub = command("info", info, "what an env poses, rewards and accepts")
    sub.add_argument("env_id", metavar="ID")

    env_arg = dict(action="append", default=[], metavar="KEY=VALUE",
                   help="a gym.make keyword argument, e.g. split=test or max_turns=3 (repeatable)")
    sub = command("eval", eval_command, "run episodes with a scripted policy and print a result table")
    sub.add_argument("env_id", metavar="ID")
    sub.add_argument("--policy", required=True, metavar="oracle|file:PATH",
                     help="'oracle' (the env's gold replies) or 'file:COMPLETIONS.jsonl' "
                          '(lines {"task_id": ..., "completion": ...})')
    sub.add_argument("--episodes", type=int, metavar="N",
                     help="number of episodes (required for oracle; default for a file: every line)")
    sub.add_argument("--seed", type=int, default=0, help="seed of the first episode; episode i uses seed+i (default 0)")
    sub.add_argument("--env-arg", **env_arg)
    sub.add_argument("--output", metavar="FILE.jsonl", help="write one JSON line per finished episode")
    sub.add_argument("--no-progress", action="store_true", help="no progress bar")

    sub = command("play", play, "type the replies yourself")
    sub.add_argument("env_id", metavar="ID")
    sub.add_argument("--seed", type=int, default=None, help="seed of the first episode (default: random)")
    sub.add_argument("--env-arg", **env_arg)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
