"""GSM8K reward: does each scorer give the reward it should, and what does a call cost?

Every one of the 1319 GSM8K test solutions is scored in three variants whose right reward
is known without a model, so accuracy is exact and the run needs no GPU:

- `gold`: the gold solution as written, ending `#### N` (right reward 1);
- `boxed`: the same reasoning ending `The final answer is \\boxed{N}.` instead, the format
  most instruction-tuned models answer in (right reward 1);
- `wrong`: the same reasoning ending `#### N+1` (right reward 0): the correct number still
  appears in the reasoning, so a scorer that accepts any matching number is caught.

Scorers, each called the way its own trainer calls it, side by side in one process:

- rlenvs `numeric_answer_score(completion, "N")`;
- skyrl-gym 0.4.0's GSM8K env reward, `skyrl_gym.envs.gsm8k.utils.compute_score(completion,
  ground_truth)` with its defaults, exactly as `GSM8kEnv._get_reward` calls it;
- math-verify 0.9.0 `verify(parse("N"), parse(completion))`.

The project's target: rlenvs right on 100% of all three variants at under 3x skyrl-gym's
time per call (skyrl-gym is the floor: one regex and a string comparison).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from benchmarks import data_file, time_per_call, version

PACKAGES = ("skyrl-gym", "math-verify")
EXPECTED = {"gold": 1, "boxed": 1, "wrong": 0}
FAST_PASSES = 3
"""Best of 3 passes for the microsecond scorers; math-verify's one pass takes ~10 s alone."""
TARGET_RATIO = 3.0
BASELINE = "skyrl-gym"


@dataclass(frozen=True)
class Problem:
    reasoning: str
    """The gold solution without its final `#### N` line."""
    answer: str
    """N as GSM8K writes it, e.g. "18" or "2,125"."""

    def completion(self, variant: str) -> str:
        if variant == "gold":
            return f"{self.reasoning}\n#### {self.answer}"
        if variant == "boxed":
            return f"{self.reasoning}\nThe final answer is \\boxed{{{self.answer}}}."
        if variant == "wrong":
            wrong = Decimal(self.answer.replace(",", "")) + 1
            return f"{self.reasoning}\n#### {f'{wrong:,}' if ',' in self.answer else wrong}"
        raise ValueError(f"unknown variant {variant!r}")


@dataclass(frozen=True)
class Scorer:
    name: str
    score: Callable[[str, str], float]
    truth: Callable[[str], str]
    """The ground truth this scorer's pipeline hands it, made from N outside the timing."""
    passes: int = FAST_PASSES


def load_problems(path: Path) -> list[Problem]:
    problems = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            reasoning, marker, answer = json.loads(line)["answer"].rpartition("\n#### ")
            try:
                Decimal(answer.replace(",", ""))
            except InvalidOperation:
                marker = ""
            if not marker:
                raise ValueError(f"{path}:{number}: the answer does not end in a '#### <number>' line")
            problems.append(Problem(reasoning, answer.strip()))
    return problems


def scorers() -> list[Scorer | str]:
    """The scorers to compare; a peer that is not installed is its name plus a reason."""
    from rlenvs.rewards.math import numeric_answer_score

    found: list[Scorer | str] = [Scorer(f"rlenvs {version('rlenvs')}", numeric_answer_score, str)]
    try:
        from skyrl_gym.envs.gsm8k.utils import compute_score
    except ImportError:
        found.append("skyrl-gym")
    else:
        # SkyRL's GSM8K data preparation stores the ground truth with commas removed, and
        # the env compares strings, so that is the form it gets here.
        found.append(Scorer(f"skyrl-gym {version('skyrl-gym')}", compute_score, lambda n: n.replace(",", "")))
    try:
        from math_verify import parse, verify
    except ImportError:
        found.append("math-verify")
    else:

        def math_verify_score(completion: str, gold: str) -> float:
            # The gold is parsed inside the timed call: trainer reward functions built on
            # math-verify (TRL's accuracy_reward, open-r1) get the gold as text and parse it
            # on every call. Runs in the main thread: math-verify times out via signal.alarm.
            return float(verify(parse(gold), parse(completion)))

        found.append(Scorer(f"math-verify {version('math-verify')}", math_verify_score, str, passes=1))
    return found


def run() -> dict:
    path = data_file("gsm8k", "test.jsonl")
    problems = load_problems(path)
    rows: list[dict] = []
    baseline_us: dict[str, float] = {}
    for scorer in scorers():
        if isinstance(scorer, str):
            rows.append({"scorer": scorer, "variant": "all", "accuracy %": "not installed"})
            continue
        truths = [scorer.truth(p.answer) for p in problems]
        for variant, expected in EXPECTED.items():
            calls = [(p.completion(variant), truth) for p, truth in zip(problems, truths)]
            scores, us = time_per_call(scorer.score, calls, scorer.passes)
            accepted = [s > 0.5 for s in scores]
            if scorer.name.startswith(BASELINE):
                baseline_us[variant] = us
            rows.append(
                {
                    "scorer": scorer.name,
                    "variant": variant,
                    "expected": expected,
                    "accuracy %": 100 * sum(a == bool(expected) for a in accepted) / len(problems),
                    "wrongly accepted": sum(a and not expected for a in accepted),
                    "wrongly rejected": sum(expected and not a for a in accepted),
                    "µs/call": us,
                    "passes": scorer.passes,
                }
            )
    for row in rows:
        base = baseline_us.get(row["variant"])
        if "µs/call" in row:
            row[f"time vs {BASELINE}"] = row["µs/call"] / base if base else "n/a"
    title = f"GSM8K reward, {len(problems)} test problems x 3 variants"
    return {"title": title, "rows": rows, "notes": notes(path, rows, len(problems))}


def notes(path: Path, rows: list[dict], n: int) -> list[str]:
    ours = [r for r in rows if r["scorer"].startswith("rlenvs")]
    ratios = [r[f"time vs {BASELINE}"] for r in ours if isinstance(r.get(f"time vs {BASELINE}"), float)]
    perfect = all(r["accuracy %"] == 100 for r in ours)
    if len(ratios) == len(ours):
        verdict = "met" if perfect and max(ratios) < TARGET_RATIO else "NOT met"
        target = (
            f"Target (rlenvs 100% on all three variants at < {TARGET_RATIO:g}x {BASELINE}'s time per "
            f"call): **{verdict}** (accuracy {'100% everywhere' if perfect else 'below 100%'}, "
            f"slowest ratio {max(ratios):.2f}x)."
        )
    else:
        target = f"Target not checked: {BASELINE} is not installed."
    return [
        f"Data: GSM8K test split ({path.name}, {n} problems), copyright (c) 2021 OpenAI, MIT licence.",
        "Variants: `gold` = gold solution as written; `boxed` = its `#### N` line replaced by "
        "`The final answer is \\boxed{N}.`; `wrong` = ending `#### N+1` (right reward 0).",
        "Accuracy = share scored as expected (1 for gold and boxed, 0 for wrong); µs/call = "
        "fastest of `passes` timed passes over all problems, gc off.",
        "Ground truth: rlenvs and math-verify get N as GSM8K writes it (e.g. `2,125`); skyrl-gym "
        "gets it with commas removed, as SkyRL's GSM8K data preparation stores it.",
        f"{BASELINE}'s `boxed` time is that of finding no `####` line (it scores 0), so rlenvs' "
        "`boxed` ratio compares a full extraction with a failed regex search. "
        + _boxed_against_a_successful_check(rows),
        "math-verify parses the gold inside every timed call, as the trainer reward functions "
        "built on it do (they receive the gold as text).",
        target,
    ]


def _boxed_against_a_successful_check(rows: list[dict]) -> str:
    """rlenvs' boxed time over the baseline's time when it does find and check an answer."""
    times = {(r["scorer"].split()[0], r["variant"]): r.get("µs/call") for r in rows}
    ours, theirs = times.get(("rlenvs", "boxed")), times.get((BASELINE, "gold"))
    if not (isinstance(ours, float) and isinstance(theirs, float)):
        return ""
    return f"Against {BASELINE}'s time for a check that finds its answer (`gold`), rlenvs' `boxed` is {ours / theirs:.2f}x."
