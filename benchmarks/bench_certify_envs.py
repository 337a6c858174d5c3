"""Certify the other envs end to end: every probe `rlenvs certify` writes, played through the
real env, per env, with the wrong verdicts it finds (the target is 0).

- Terminal-v2 on all 95 Terminal-Bench 1 folders of EvoEval (bubblewrap, the host's toolchain):
  the generic replies and the terminal plants (the names the test run's python3 looks up and
  lacks, traced in the episode's own sandbox and planted as packages exiting 0; passing test
  files and skip-everything configs; a background process; links);
- the same plants on the Harbor folder of tests/data on each backend that builds an image
  (bubblewrap over the image's root, Docker, Podman: each image's own python3 traced);
- Terminal-v2's procedural families (levels 1 and 2) and Spreadsheet-v1's (levels 1 and 2),
  every generator;
- GSM8K-Python-v2 (its tool turns run in the sandbox) on test-split tasks.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks import REPO_ROOT, data_file

PACKAGES: tuple[str, ...] = ()
HARBOR_TASK = REPO_ROOT / "tests" / "data" / "images" / "harbor-task"


def _row(env: str, data: str, report, seconds: float) -> dict:
    kinds = Counter(check.probe.kind for check in report.checks)
    return {
        "env": env,
        "data": data,
        "tasks": report.tasks,
        "probes": len(report.checks),
        "wrong verdicts": len(report.wrong),
        "probe kinds": ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())),
        "seconds": seconds,
    }


def run() -> dict:
    from rlenvs.images.layers import temporary_store
    from rlenvs.testing.certify import certify
    from rlenvs.testing.certify.terminal_plants import terminal_probes

    rows, notes = [], []
    evoeval = data_file("terminal-bench", "evoeval", "0", "run-tests.sh").parent.parent
    runs = [
        ("rlenvs/Terminal-v2", "EvoEval's 95 Terminal-Bench 1 folders, bubblewrap", {"task_dir": str(evoeval)},
         {"every_task": True}),
        ("rlenvs/Terminal-v2", "procedural, level 1", {"level": 1}, {"tasks": 24}),
        ("rlenvs/Terminal-v2", "procedural, level 2", {"level": 2}, {"tasks": 24}),
        ("rlenvs/Spreadsheet-v1", "procedural, level 1", {"level": 1}, {"tasks": 48}),
        ("rlenvs/Spreadsheet-v1", "procedural, level 2", {"level": 2}, {"tasks": 48}),
        ("rlenvs/GSM8K-Python-v2", "GSM8K test", {"split": "test", "data_files": str(data_file("gsm8k", "test.jsonl"))},
         {"tasks": 12}),
    ]  # fmt: skip
    for env_id, data, kwargs, how in runs:
        started = time.perf_counter()
        report = certify(env_id, env_kwargs=kwargs, seed=3, **how)
        rows.append(_row(env_id, data, report, time.perf_counter() - started))
        notes += [f"WRONG {env_id} {data}: {check.reproduction()}" for check in report.wrong[:5]]
    with temporary_store(Path(tempfile.mkdtemp(prefix="rlenvs-bench-images-", dir="/var/tmp"))):
        for backend in ("bwrap", "docker", "podman"):
            if backend != "bwrap" and shutil.which(backend) is None:
                rows.append(
                    {"env": "rlenvs/Terminal-v2", "data": f"Harbor folder, {backend}", "tasks": "not installed"}
                )
                continue
            kwargs = {"task_dir": str(HARBOR_TASK), "backend": backend, "max_turns": 4, "timeout_s": 30}
            started = time.perf_counter()
            report = certify("rlenvs/Terminal-v2", env_kwargs=kwargs, task_indices=[0], generators=(terminal_probes,))
            rows.append(
                _row(
                    "rlenvs/Terminal-v2",
                    f"Harbor folder, image on {backend}: plants",
                    report,
                    time.perf_counter() - started,
                )
            )
    notes.append(
        "Data: Terminal-Bench 1 folders of EvoEval (Apache-2.0); GSM8K test split (copyright (c) 2021 OpenAI, MIT). "
        "The Harbor folder is this repository's test folder (apt and pip RUN lines), built by rlenvs.images; the "
        "image rows include the image builds. seconds: the whole certify run of the row."
    )
    return {
        "title": "Certify Terminal, Spreadsheet and GSM8K-Python: every generated probe, wrong verdicts",
        "rows": rows,
        "notes": notes,
    }
