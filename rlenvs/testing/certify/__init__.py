"""`rlenvs certify`: attacks and equivalent correct forms written from each task's own data,
played through an env, every wrong verdict reported with its reproduction.

A verdict is only as good as the worst reply a policy can find, and a policy under GRPO
searches far more replies than any red team lists. So the replies are generated: from the
task's prompt and gold reply for any env (`generic`), and from the gold answer's structure
for a math env (`math_answers`). `certify(env_id, ...)` returns a `CertifyReport`.
"""

from rlenvs.testing.certify.engine import DEFAULT_GENERATORS, certify
from rlenvs.testing.certify.probes import ATTACK, EQUIVALENT, Generator, Probe, Subject, attack, equivalent
from rlenvs.testing.certify.report import CertifyReport, Check

__all__ = [
    "ATTACK",
    "DEFAULT_GENERATORS",
    "EQUIVALENT",
    "CertifyReport",
    "Check",
    "Generator",
    "Probe",
    "Subject",
    "attack",
    "certify",
    "equivalent",
]
