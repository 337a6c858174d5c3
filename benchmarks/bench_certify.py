"""Certify over whole splits: every task of MATH-500 and of GSM8K's test split, every probe
`rlenvs certify` writes for it, played through the env; and the same single-reply probes
scored by math-verify, the verifier TRL's `accuracy_reward` and open-r1 use, as a peer.

A probe's right verdict is known without a model (an equivalent form must earn the gold
reply's reward, an attack nothing: `rlenvs.testing.certify`), so both verdicts are exact.
The table gives, per env and answer type, the probes tried, the wrong verdicts (the issue's
target is 0) and the share of equivalent correct forms accepted (target 100%), for rlenvs and
for math-verify 0.9.0 (`verify(parse(gold), parse(reply))`, its defaults, one call a probe,
in the main thread as it needs for its signal-based timeout). Speed: rlenvs' median and p99
seconds per check (a whole `reset` + `step` episode), and math-verify's per call.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable

from benchmarks import data_file, version

PACKAGES = ("math-verify",)
RUNS = (
    ("rlenvs/MATH-v1", "MATH-500", lambda: {"data_files": str(data_file("math", "math500.jsonl"))}),
    ("rlenvs/GSM8K-v1", "GSM8K test", lambda: {"data_files": str(data_file("gsm8k", "test.jsonl"))}),
)


def _math_verify() -> Callable[[str, str], float] | None:
    try:
        from math_verify import parse, verify
    except ImportError:
        return None

    def score(reply: str, gold: str) -> float:
        try:
            return 1.0 if verify(parse(f"${gold}$"), parse(reply)) else 0.0
        except Exception:  # a peer's crash on a reply is its zero
            return 0.0

    return score


def _percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def run() -> dict:
    from rlenvs.testing.certify import EQUIVALENT, certify

    peer = _math_verify()
    peer_name = f"math-verify {version('math-verify')}" if peer else "math-verify (not installed)"
    rows: list[dict] = []
    notes: list[str] = []
    for env_id, name, kwargs in RUNS:
        report = certify(env_id, env_kwargs=kwargs(), every_task=True)
        by_type: dict[str, list] = defaultdict(list)
        for check in report.checks:
            by_type[check.probe.answer_type or "(any reply)"].append(check)
        peer_seconds: list[float] = []
        peer_wrong_kinds: Counter[str] = Counter()
        for answer_type, checks in sorted(by_type.items(), key=lambda item: -len(item[1])):
            equivalents = [c for c in checks if c.probe.expect == EQUIVALENT]
            median, p99 = _percentiles([c.seconds for c in checks])
            row = {
                "env": f"{env_id} ({name})",
                "answer type": answer_type,
                "tasks": len({c.subject.task_id for c in checks}),
                "probes": len(checks),
                "rlenvs wrong": sum(c.wrong for c in checks),
                "rlenvs equivalents accepted %": _share(equivalents),
                "rlenvs median ms": 1000 * median,
                "rlenvs p99 ms": 1000 * p99,
            }
            if peer is not None and answer_type != "(any reply)":
                single = [c for c in checks if len(c.probe.turns) == 1]
                wrong = equivalents_right = equivalents_n = 0
                for check in single:
                    t0 = time.perf_counter()
                    verdict = peer(check.probe.turns[0], check.subject.gold or "")
                    peer_seconds.append(time.perf_counter() - t0)
                    expected = 1.0 if check.probe.expect == EQUIVALENT else 0.0
                    if verdict != expected:
                        wrong += 1
                        peer_wrong_kinds[check.probe.kind] += 1
                    if check.probe.expect == EQUIVALENT:
                        equivalents_n += 1
                        equivalents_right += verdict == 1.0
                row[f"{peer_name} probes"] = len(single)
                row[f"{peer_name} wrong"] = wrong
                row[f"{peer_name} equivalents accepted %"] = (
                    100 * equivalents_right / equivalents_n if equivalents_n else "n/a"
                )
            rows.append(row)
        total = len(report.checks)
        notes.append(
            f"{env_id} on {name}: {report.tasks} tasks, {total} probes, {len(report.wrong)} wrong rlenvs verdicts; "
            f"rlenvs per check (a reset and the episode) median {1000 * _percentiles([c.seconds for c in report.checks])[0]:.2f} ms, "
            f"p99 {1000 * _percentiles([c.seconds for c in report.checks])[1]:.2f} ms"
            + (
                f"; math-verify per call median {1000 * _percentiles(peer_seconds)[0]:.2f} ms, p99 "
                f"{1000 * _percentiles(peer_seconds)[1]:.2f} ms; its wrong verdicts by probe kind: "
                + ", ".join(f"{kind} {n}" for kind, n in peer_wrong_kinds.most_common())
                if peer_seconds
                else ""
            )
        )
    notes += [
        "Data: MATH-500 (the 500-problem test subset of MATH, MIT), GSM8K test split (copyright (c) 2021 OpenAI, "
        "MIT licence).",
        "Probes: generated from each task's gold answer and problem by rlenvs.testing.certify (docs/testing-kit.md): "
        "`(any reply)` rows are the env-agnostic ones (empty, garbage, the prompt echoed, 100 KB, nested); the "
        "peer scores only the single-reply probes of typed rows (multi-turn tool probes need an env).",
        "math-verify gets the gold as `$gold$` and the whole reply; it has no notion of restating or of the "
        "simplest form a question asks for, so its wrong verdicts on `restatement` and `excluded form` probes "
        "measure what a reward built on it pays a lazy policy for, not a bug of its own.",
    ]
    return {
        "title": "Certify over MATH-500 and GSM8K test, rlenvs and math-verify on the same probes",
        "rows": rows,
        "notes": notes,
    }


def _share(equivalents: list) -> float | str:
    if not equivalents:
        return "n/a"
    return 100 * sum(not c.wrong for c in equivalents) / len(equivalents)
