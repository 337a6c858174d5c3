"""An evaluation's result: its trajectories, and the numbers a paper reports from them.

The success rate counts only episodes that ran: an episode whose machinery failed (`failure`
set: the policy's server, a sandbox, a lost env) is neither right nor wrong, so it is counted
apart (`infra_failures`) and the table says how many, never dropping them silently.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rlenvs.evaluation import stats


@dataclass(frozen=True)
class Trajectory:
    """One episode, as a line of the trajectories file."""

    task_id: str
    option: dict[str, Any]
    """How the task was chosen at reset ({"task_index": i} or {"task_id": ...})."""
    sample: int
    seed: int
    messages: list[dict[str, str]]
    rewards: list[float]
    """The reward of each step."""
    infos: list[dict[str, Any]]
    """Each step's info (JSON-safe, without the messages, which `messages` holds)."""
    reward: float
    """The episode's total reward."""
    correct: bool | None
    """The env's verdict on the last step, None where it gives none."""
    success: bool | None
    """Counted as solved: `correct`, else the maximum reward; None for an infrastructure failure."""
    stop_reason: str
    failure: str | None
    """Why the machinery failed ("policy_error: ...", "env_error: ..."), None when it did not."""
    turns: int
    groups: dict[str, Any] = field(default_factory=dict)
    """The task's level, subject, family where it has them."""
    finish_reasons: list[str | None] = field(default_factory=list)
    """Why each reply's generation stopped, where the policy says ("stop"; "length": cut at the
    token cap); None for a policy that does not say (a callable, the oracle)."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time: in the policy, in the env (reset and steps), and the episode's total."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Trajectory:
        return cls(**row)


@dataclass
class EvalResult:
    env_id: str
    policy: str
    samples: int
    seed: int
    trajectories: list[Trajectory]
    seconds: float
    """Wall time of the episodes this run played (not those a resume read back)."""
    resumed: int = 0
    """Episodes read back from the trajectories file, not played again."""

    @property
    def ran(self) -> list[Trajectory]:
        """The episodes that ran (no infrastructure failure)."""
        return [t for t in self.trajectories if t.failure is None]

    @property
    def infra_failures(self) -> int:
        return sum(t.failure is not None for t in self.trajectories)

    @property
    def tasks(self) -> int:
        return len({t.task_id for t in self.trajectories})

    @property
    def success_rate(self) -> float:
        """Solved episodes over the episodes that ran; NaN when none ran."""
        ran = self.ran
        return sum(bool(t.success) for t in ran) / len(ran) if ran else float("nan")

    @property
    def ci(self) -> tuple[float, float]:
        """A 95% interval of the success rate: Wilson over episodes with one sample a task,
        a bootstrap over tasks with several (a task's samples are not independent)."""
        ran = self.ran
        if self.samples == 1:
            return stats.wilson_interval(sum(bool(t.success) for t in ran), len(ran))
        per_task = [sum(map(bool, s)) / len(s) for s in self._successes_by_task().values() if s]
        return stats.task_bootstrap_interval(per_task, seed=self.seed)

    @property
    def mean_reward(self) -> float:
        ran = self.ran
        return sum(t.reward for t in ran) / len(ran) if ran else float("nan")

    def pass_at(self, k: int) -> float:
        """The unbiased pass@k averaged over the tasks with at least k samples that ran."""
        by_task = [s for s in self._successes_by_task().values() if len(s) >= k]
        if not by_task:
            raise ValueError(f"pass@{k} needs at least {k} samples of a task that ran: use samples >= {k}")
        return sum(stats.pass_at_k(len(s), sum(map(bool, s)), k) for s in by_task) / len(by_task)

    def stop_reasons(self) -> Counter[str]:
        return Counter(t.stop_reason for t in self.trajectories)

    def finish_reasons(self) -> Counter[str]:
        """Replies by why their generation stopped, where the policy says (openai:, model:)."""
        return Counter(reason for t in self.trajectories for reason in t.finish_reasons if reason is not None)

    def failures(self) -> Counter[str]:
        """Infrastructure failures by kind (the text before the first colon)."""
        return Counter(t.failure.split(":")[0] for t in self.trajectories if t.failure is not None)

    def breakdown(self, field_name: str) -> dict[Any, tuple[int, float]]:
        """{value: (episodes that ran, success rate)} by a task field (level, subject, family)."""
        groups: dict[Any, list[bool]] = {}
        for t in self.ran:
            if field_name in t.groups:
                groups.setdefault(t.groups[field_name], []).append(bool(t.success))
        return {value: (len(s), sum(s) / len(s)) for value, s in sorted(groups.items(), key=lambda kv: str(kv[0]))}

    def _successes_by_task(self) -> dict[str, list[bool | None]]:
        by_task: dict[str, list[bool | None]] = {}
        for t in self.ran:
            by_task.setdefault(t.task_id, []).append(t.success)
        return by_task

    def summary(self, pass_at: Sequence[int] = ()) -> dict[str, Any]:
        """The JSON summary (`--summary`)."""
        low, high = self.ci
        played = len(self.trajectories) - self.resumed
        return {
            "env_id": self.env_id,
            "policy": self.policy,
            "seed": self.seed,
            "tasks": self.tasks,
            "samples": self.samples,
            "episodes": len(self.trajectories),
            "episodes_ran": len(self.ran),
            "infra_failures": self.infra_failures,
            "infra_failures_by_kind": dict(self.failures()),
            "success_rate": self.success_rate,
            "ci95": [low, high],
            "ci_method": "wilson" if self.samples == 1 else "bootstrap over tasks",
            "pass_at": {str(k): self.pass_at(k) for k in pass_at},
            "mean_reward": self.mean_reward,
            "mean_turns": sum(t.turns for t in self.ran) / len(self.ran) if self.ran else float("nan"),
            "stop_reasons": dict(self.stop_reasons()),
            "finish_reasons": dict(self.finish_reasons()),
            "breakdowns": {
                name: {str(v): {"episodes": n, "success_rate": r} for v, (n, r) in self.breakdown(name).items()}
                for name in ("family", "level", "subject")
                if self.breakdown(name)
            },
            "seconds": self.seconds,
            "episodes_per_second": played / self.seconds if self.seconds > 0 else None,
            "resumed": self.resumed,
        }

    def table(self, pass_at: Sequence[int] = ()) -> str:
        """The Markdown report: the main row, then a breakdown per task field, stop reasons and
        infrastructure failures."""
        low, high = self.ci
        steps = sum(t.turns for t in self.ran)
        env_s = sum(t.seconds.get("env", 0.0) for t in self.ran)
        main = {
            "episodes": str(len(self.trajectories)),
            "mean reward": f"{self.mean_reward:.4f}",
            "success rate": _percent(self.success_rate),
            "95% CI": f"{_percent(low)}-{_percent(high)}",
            **{f"pass@{k}": _percent(self.pass_at(k)) for k in pass_at},
            "tasks": str(self.tasks),
            "mean turns": f"{steps / len(self.ran):.2f}" if self.ran else "-",
            "infra failures": str(self.infra_failures),
            "env time per step": _format_seconds(env_s / max(steps, 1)),
        }
        parts = [_markdown(list(main), [list(main.values())])]
        for name in ("family", "level", "subject"):
            rows = self.breakdown(name)
            if len(rows) > 1:
                parts.append(
                    _markdown(
                        [name, "episodes", "success rate"],
                        [[str(v), str(n), _percent(r)] for v, (n, r) in rows.items()],
                    )
                )
        reasons = self.stop_reasons()
        parts.append(
            "stop reasons: " + ", ".join(f"{reason or '-'} {count}" for reason, count in reasons.most_common())
        )
        finishes = self.finish_reasons()
        if finishes.get("length"):  # a wrong answer that was cut off is a cap to raise, not a model to blame
            parts.append(
                f"replies cut at the token cap (finish reason length): {finishes['length']} of {finishes.total()}"
            )
        if self.infra_failures:
            first = next(t for t in self.trajectories if t.failure is not None)
            kinds = ", ".join(f"{kind} {count}" for kind, count in self.failures().most_common())
            parts.append(
                f"infrastructure failures (not counted as wrong, left out of the success rate): {kinds}; "
                f"first, on {first.task_id}: {first.failure}"
            )
        return "\n\n".join(parts)


def json_safe(value: Any) -> Any:
    """`value` as JSON can hold it: numpy scalars as numbers, tuples and sets as lists, a
    non-finite float as its text, anything else as its repr (an info may hold any object)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        try:
            return json_safe(item())
        except (TypeError, ValueError):
            pass
    return repr(value)


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = lambda cells: "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def _percent(value: float) -> str:
    return "-" if value != value else f"{100 * value:.1f}%"


def _format_seconds(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"
