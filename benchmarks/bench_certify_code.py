"""Certify the code envs over every task: each program that skips the work (a constant, the
input echoed, a table of the prompt's examples, an object equal to everything, an early exit,
printing) played through HumanEval-v2 and MBPP-v2 (all 974 rows), with the generated tests
(the default) and with the data set's tests only (`generated_tests=False`), in the same run.

Per env and probe kind: the programs tried, and the tasks where one passed (a wrong verdict)
before and after the generated tests. Then what the committed generated tests are: tests per
task, and of the reference's one-change mutants that the data set's tests let through, how
many the generated tests catch (`rlenvs.envs.code.strengthen`).
"""

from __future__ import annotations

import json
from collections import defaultdict

from benchmarks import data_file

PACKAGES: tuple[str, ...] = ()
RUNS = (
    ("rlenvs/HumanEval-v2", "humaneval", lambda: {"data_files": str(data_file("humaneval", "HumanEval.jsonl.gz"))}),
    ("rlenvs/MBPP-v2", "mbpp", lambda: {"split": "all", "data_files": str(data_file("mbpp", "mbpp.jsonl"))}),
)


def run() -> dict:
    from rlenvs.envs.code.generated import GENERATED_DIR
    from rlenvs.testing.certify import certify
    from rlenvs.testing.certify.code_programs import code_probes

    rows, notes = [], []
    for env_id, dataset, kwargs in RUNS:
        passed: dict[bool, dict[str, set[str]]] = {}
        tried: dict[str, int] = defaultdict(int)
        tasks = 0
        for generated in (False, True):
            report = certify(
                env_id,
                env_kwargs={**kwargs(), "generated_tests": generated},
                every_task=True,
                generators=(code_probes,),
            )
            tasks = report.tasks
            passed[generated] = defaultdict(set)
            for check in report.checks:
                if generated:
                    tried[check.probe.kind] += 1
                if check.wrong:
                    passed[generated][check.probe.kind].add(check.subject.task_id)
        for kind in sorted(tried):
            rows.append(
                {
                    "env": env_id,
                    "probe kind": kind,
                    "programs tried": tried[kind],
                    "tasks passed, the data set's tests only": len(passed[False][kind]),
                    "tasks passed, with the generated tests": len(passed[True][kind]),
                }
            )
        before = set().union(*passed[False].values()) if passed[False] else set()
        after = set().union(*passed[True].values()) if passed[True] else set()
        records = [json.loads(line) for line in (GENERATED_DIR / f"{dataset}.jsonl").read_text().splitlines()]
        counts = [len(r["tests"]) for r in records]
        caught = [r["caught"] for r in records if "caught" in r]
        surviving = sum(c["mutants passing the task's tests"] for c in caught)
        killed = sum(c["mutants caught"] for c in caught)
        unwitnessed = sorted(
            r["task_id"] for r in records if r.get("caught", {}).get("do-nothing programs no input tells apart")
        )
        notes.append(
            f"{env_id}: {tasks} tasks, {sum(tried.values())} programs; tasks any of them passed: {len(before)} with the "
            f"data set's tests only, {len(after)} with the generated tests. Generated tests: {sum(counts)} "
            f"({min(counts)}-{max(counts)} a task, {sum(bool(c) for c in counts)} tasks have some); of "
            f"{sum(c['mutants'] for c in caught)} one-change mutants of the references, {surviving} pass the data "
            f"set's tests and the generated tests catch {killed} of them (the rest answer like the reference on "
            "every input tried: many are equivalent programs). Do-nothing programs left out because no input "
            f"like the task's own tells them from the reference: {', '.join(unwitnessed) or 'none'}."
        )
    notes.append(
        "Data: HumanEval (copyright (c) 2021 OpenAI, MIT licence); MBPP (Google, CC BY 4.0). A task passed by a "
        "probe kind is a task where at least one program of that kind scored 1; the reference solutions of "
        "mbpp/596 and mbpp/642 fail their own tests on CPython 3.11 and earn 0 either way."
    )
    return {
        "title": "Certify the code envs: programs that do nothing, before and after the generated tests",
        "rows": rows,
        "notes": notes,
    }
