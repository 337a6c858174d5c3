"""`rlenvs certify` on the code ids: no program that skips the work (a constant the prompt
shows, the input echoed, a table of what the prompt and the retry feedback showed, an object
equal to everything, an early exit, printing) passes, and without the generated tests the
same generators find the tasks whose own tests let such programs through."""

from __future__ import annotations

import pytest

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.testing.certify import CertifyReport, certify
from rlenvs.testing.certify.code_programs import code_probes

pytestmark = [pytest.mark.sandbox, pytest.mark.full_data]


def _clean(report: CertifyReport) -> None:
    assert report.tasks > 0
    assert report.wrong == [], "\n" + str(report)


def test_humaneval_certifies_clean() -> None:
    _clean(certify("rlenvs/HumanEval-v2", tasks=40, seed=3))


def test_mbpp_certifies_clean_with_retries() -> None:
    """Two turns: the adaptive table answers the second with what the first's feedback showed."""
    _clean(certify("rlenvs/MBPP-v2", env_kwargs={"split": "all", "max_turns": 2}, tasks=60, seed=3))


@pytest.mark.parametrize(
    "env_id,task_index,kind",
    [("rlenvs/HumanEval-v2", 34, "constant"), ("rlenvs/MBPP-v2", 403, "echo")],
    ids=["HumanEval-34-unique", "MBPP-404-minimum"],
)
def test_the_generated_tests_are_what_catches_a_weak_task(env_id: str, task_index: int, kind: str) -> None:
    """HumanEval/34 (`unique`) has one test, the prompt's own example: returning its result
    passes. mbpp/404 (`minimum(a, b)`) is only ever tested with a <= b: returning a passes.
    Both score 0 with the generated tests."""
    kwargs = {"split": "all"} if "MBPP" in env_id else {}
    for generated, wrong in ((False, True), (True, False)):
        kwargs = {**kwargs, "generated_tests": generated}
        report = certify(env_id, env_kwargs=kwargs, task_indices=[task_index], generators=(code_probes,))
        assert any(check.probe.kind == kind for check in report.wrong) is wrong, str(report)
