"""What a certify run found: every check played, counted by probe kind and answer type, and each
wrong verdict with what reproduces it (env id, keyword arguments, seed and task, the replies,
the reward it got and the reward a correct env gives)."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rlenvs.testing.certify.probes import EQUIVALENT, Probe, Subject

FINDINGS_SHOWN_PER_KIND = 3
"""Wrong verdicts the text report prints per probe kind (the JSON report has them all)."""


@dataclass(frozen=True)
class Check:
    """One probe played on one task."""

    subject: Subject
    probe: Probe
    reward: float
    expected: float
    seconds: float
    wrong: bool
    error: str | None = None
    """The exception the env raised on the reply (any string is a valid action: a finding)."""
    played: tuple[str, ...] = ()
    """The replies as played (an adaptive probe's, as it wrote them from the feedback)."""

    def reproduction(self) -> dict[str, Any]:
        subject = self.subject
        return {
            "env_id": subject.env_id,
            "seed": subject.seed,
            "reset_options": subject.reset_options,
            "task_id": subject.task_id,
            "kind": self.probe.kind,
            "answer_type": self.probe.answer_type,
            "why": self.probe.why,
            "replies": list(self.played),
            "reward": self.reward,
            "expected": self.expected,
            **({"error": self.error} if self.error else {}),
        }


@dataclass
class CertifyReport:
    env_id: str
    env_kwargs: dict[str, Any]
    seed: int
    tasks: int = 0
    checks: list[Check] = field(default_factory=list)
    answer_types: dict[str, str] = field(default_factory=dict)
    """{task id: its gold's answer type} for every task certified."""

    def add(self, check: Check) -> None:
        self.checks.append(check)

    @property
    def wrong(self) -> list[Check]:
        """Attacks that earned a reward and correct forms that lost one."""
        return [check for check in self.checks if check.wrong]

    @property
    def passed(self) -> bool:
        return self.tasks > 0 and not self.wrong

    def summary_line(self) -> str:
        return f"{len(self.checks)} checks, {len(self.wrong)} wrong"

    def by(self, key: str) -> dict[str, tuple[int, int]]:
        """{kind or answer type: (checks, wrong verdicts)}."""
        tried: Counter[str] = Counter()
        wrong: Counter[str] = Counter()
        for check in self.checks:
            name = getattr(check.probe, key) or "(any)"
            tried[name] += 1
            wrong[name] += check.wrong
        return {name: (tried[name], wrong[name]) for name in sorted(tried)}

    def timing(self) -> dict[str, float]:
        """Seconds per check: median, 99th percentile and the slowest."""
        seconds = sorted(check.seconds for check in self.checks)
        if not seconds:
            return {"median_s": 0.0, "p99_s": 0.0, "max_s": 0.0}
        p99 = seconds[min(len(seconds) - 1, int(0.99 * len(seconds)))]
        return {"median_s": statistics.median(seconds), "p99_s": p99, "max_s": seconds[-1]}

    def as_json(self) -> dict[str, Any]:
        equivalents = [check for check in self.checks if check.probe.expect == EQUIVALENT]
        return {
            "env_id": self.env_id,
            "env_kwargs": self.env_kwargs,
            "seed": self.seed,
            "tasks": self.tasks,
            "checks": len(self.checks),
            "wrong_verdicts": len(self.wrong),
            "equivalents_accepted": sum(not check.wrong for check in equivalents),
            "equivalents": len(equivalents),
            "by_kind": {name: {"checks": n, "wrong": w} for name, (n, w) in self.by("kind").items()},
            "by_answer_type": {name: {"checks": n, "wrong": w} for name, (n, w) in self.by("answer_type").items()},
            "timing": self.timing(),
            "findings": [check.reproduction() for check in self.wrong],
        }

    def __str__(self) -> str:
        lines = [
            f"certify {self.env_id} {self.env_kwargs or ''} · {self.tasks} tasks · {self.summary_line()}".rstrip(),
            "",
            f"{'kind':28} {'checks':>7} {'wrong':>6}",
        ]
        lines += [f"{name:28} {n:7d} {w:6d}" for name, (n, w) in self.by("kind").items()]
        types = self.by("answer_type")
        if set(types) != {"(any)"}:
            lines += ["", f"{'answer type':28} {'checks':>7} {'wrong':>6}"]
            lines += [f"{name:28} {n:7d} {w:6d}" for name, (n, w) in types.items()]
        timing = self.timing()
        lines += [
            "",
            f"time per check: median {timing['median_s'] * 1000:.1f} ms, p99 {timing['p99_s'] * 1000:.1f} ms, "
            f"slowest {timing['max_s']:.2f} s",
        ]
        shown: Counter[str] = Counter()
        for check in self.wrong:
            shown[check.probe.kind] += 1
            if shown[check.probe.kind] > FINDINGS_SHOWN_PER_KIND:
                continue
            case = check.reproduction()
            lines += [
                "",
                f"WRONG [{case['kind']}] {case['why']} · {case['task_id']} ({case['answer_type'] or 'no answer type'})",
                f"  reset(seed={case['seed']}, options={case['reset_options']}); reward {case['reward']:g}, "
                f"a correct env gives {case['expected']:g}" + (f"; raised {case['error']}" if check.error else ""),
                *(f"  reply: {json.dumps(reply[:300])}" for reply in case["replies"]),
            ]
        hidden = sum(count - FINDINGS_SHOWN_PER_KIND for count in shown.values() if count > FINDINGS_SHOWN_PER_KIND)
        if hidden:
            lines += ["", f"... and {hidden} more wrong verdicts of the same kinds (--json lists every one)"]
        return "\n".join(lines)
