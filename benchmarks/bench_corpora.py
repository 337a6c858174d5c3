"""Public task corpora: how much of each loads and scores right, per backend (`rlenvs tasks check`).

A user who brings a Terminal-Bench or Harbor corpus gets this table from `rlenvs tasks check`
on their own folders; here it is measured on the public corpora named in `CORPORA`, a seeded
sample of `SAMPLE` folders each (every folder of a 3,566-task corpus would take a day), on
each backend in `BACKENDS` that runs here. The corpora are not in the repository (their
size, and one states no licence): bring them with the library's `fetch` and export their
task folders under `$RLENVS_CORPORA_DIR` (default: `corpora/` beside the repository) at the
paths below. A corpus that is not there is a row saying so, not a silent gap.

Per corpus and backend: folders checked, loaded, reference solutions scoring 1, immediate
submits scoring 0, refusals by reason (the three most common), median load (build) and
episode seconds. The JSON Lines reports (every folder's refusal or rewards, with build logs)
are kept under `benchmarks/results/corpora/`, out of git for their size, and a rerun resumes
them: the folders already checked are not checked again.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks import REPO_ROOT

CORPORA = (
    (
        "terminal-bench-datasets",
        "tb-datasets-all",
        "rese1f/terminal-bench-datasets @17d2b935 (Apache-2.0): Aider Polyglot, DevEval, EvoEval, LiveCodeBench "
        "Pro, SWE-bench Verified in Terminal-Bench 1 layout, 1,488 folders",
    ),
    (
        "TermiGen (Harbor)",
        "termigen-harbor/environments_harbor",
        "zjysteven/terminal-bench-env @aaad6aef (no licence file): 3,566 Harbor folders",
    ),
    (
        "Harbor single-task repositories",
        "harbor-singles",
        "7 one-task Harbor repositories on GitHub (no licence files), the first that the search index lists with "
        "an environment/Dockerfile and `fetch` could snapshot: ABHISHEK3209/terminal-bench-tasks-finding-triage-task "
        "@95908b2, ATU531/mq-auto-restart @dee7b66, Aashu95/dynamo-harbor-assessment @5c896f4, "
        "AbdulGhaffarcs/sha256 @e52bcfc, Adithya4080/tb2-log-report-fixed @3ee68f4, "
        "Aishwary121/harbor-log-report-fix @5e991ba, Ajam214/terminal-bench2-log-report-fix @21ee1cb",
    ),
)
"""(name, folder under the corpora folder, where it comes from)."""
BACKENDS = ("bwrap", "docker")
SAMPLE = int(os.environ.get("RLENVS_CORPUS_SAMPLE", "40"))
SEED = 0
CORPORA_VARIABLE = "RLENVS_CORPORA_DIR"
REPORTS = Path(__file__).resolve().parent / "results" / "corpora"


def run() -> dict[str, Any]:
    from rlenvs.envs.terminal.coverage import check_corpus
    from rlenvs.envs.terminal.folders import ENGINES, engine_reason

    root = Path(os.environ.get(CORPORA_VARIABLE) or REPO_ROOT.parent / "corpora")
    rows, notes = [], []
    for name, folder, source in CORPORA:
        notes.append(f"{name}: {source}")
        for backend in BACKENDS:
            path = root / folder
            reason = "not fetched" if not path.is_dir() else engine_reason(backend) if backend in ENGINES else None
            if reason is not None:
                rows.append({"corpus": name, "backend": backend, "folders": reason})
                continue
            report = REPORTS / f"{folder.replace('/', '--')}-{backend}-{SAMPLE}-{SEED}.jsonl"
            started = time.perf_counter()
            records, totals = check_corpus(path, backend=backend, limit=SAMPLE, seed=SEED, report=report)
            loaded = [record for record in records if record.loaded]
            reasons = ", ".join(f"{reason} {count}" for reason, count in list(totals.refused_by_reason.items())[:3])
            rows.append(
                {
                    "corpus": name,
                    "backend": backend,
                    "folders": totals.folders,
                    "loaded": totals.loaded,
                    "reference 1": f"{totals.reference_1} of {totals.loaded - totals.no_reference}",
                    "no reference": totals.no_reference,
                    "empty submit 0": totals.empty_0,
                    "errors": totals.errors,
                    "refused (top reasons)": f"{totals.refused}: {reasons}" if totals.refused else "0",
                    "load s (median)": _median([record.build_seconds for record in records]),
                    "episodes s (median)": _median([record.episode_seconds for record in loaded]),
                    "wall s": round(time.perf_counter() - started, 1),
                }
            )
    notes.append(
        f"a seeded sample of {SAMPLE} folders per corpus (seed {SEED}), the same on every backend; "
        "`rlenvs tasks check DIR --backend B --limit N --seed S` gives the same table for any corpus"
    )
    return {
        "title": f"Public task corpora through `rlenvs tasks check` ({SAMPLE} folders each)",
        "rows": rows,
        "notes": notes,
    }


def _median(values: list[float | None]) -> float | str:
    known = [value for value in values if value is not None]
    return round(statistics.median(known), 1) if known else "-"
