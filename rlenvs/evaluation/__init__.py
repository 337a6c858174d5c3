"""Benchmark-grade evaluation of a policy on an env: `rlenvs eval` and `rlenvs.evaluate`.

Every task of a split once by default (or N distinct tasks), `samples` attempts a task for
pass@k, a success rate with its confidence interval, breakdowns by level, subject and family,
infrastructure failures counted apart from wrong answers, and trajectories as JSONL that a
`file:` policy re-scores. Policies: the oracle, a random baseline, recorded replies, a model
behind an OpenAI-compatible server, a local model (`model:PATH`, the train extra), or any
callable `messages -> reply`; several episodes at once (`concurrency`).
"""

from rlenvs.evaluation.openai_api import PolicyError
from rlenvs.evaluation.policies import OpenAIPolicy, Policy, Reply, Turn
from rlenvs.evaluation.result import EvalResult, Trajectory
from rlenvs.evaluation.run import evaluate

__all__ = ["EvalResult", "OpenAIPolicy", "Policy", "PolicyError", "Reply", "Trajectory", "Turn", "evaluate"]
