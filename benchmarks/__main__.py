"""`python -m benchmarks [SUBSTRING] [--data DIR]`: run the benchmarks and record the results.

Every `benchmarks/bench_*.py` whose name contains SUBSTRING (all of them if none is given)
is imported and its `run()` called. All results go, as JSON, to
`benchmarks/results/<UTC timestamp>.json`; a dated section with one table per benchmark is
appended to `benchmarks/HISTORY.md` (the log, with notes added by hand), and
`benchmarks/RESULTS.md` is written anew from every JSON file there: the latest figures of each
benchmark, with their date and machine (`write_latest`; `python -m benchmarks --latest`
rewrites it without running anything).

A benchmark that fails is reported (and the exit status is 1) without losing the others;
if every one fails, nothing is recorded.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import DATA_DIR_VARIABLE, version

HERE = Path(__file__).resolve().parent
RESULTS_DIR = HERE / "results"
RESULTS_MD = HERE / "RESULTS.md"
HISTORY_MD = HERE / "HISTORY.md"
ALWAYS_REPORTED = ("rlenvs",)
"""Packages whose versions every section lists; benchmarks add their peers via `PACKAGES`."""

HEADER = """\
# Benchmark history

Appended by `python -m benchmarks` (see README.md); the newest section is at the bottom and
the raw figures of each run are in `results/<timestamp>.json`. RESULTS.md has the latest
figures of each benchmark.

Read the **ratios**, not the absolute times: every ratio compares scorers measured in the
same process, in the same run, one after the other, because the machines these run on are
shared and noisy and absolute times drift from run to run by more than the differences we
care about. Each section states the machine (CPU count, Python) and the versions of the
peers it was measured against.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="?", default="", help="run only benchmarks whose name contains this")
    parser.add_argument(
        "--data", metavar="DIR", help=f"data folder (like ${DATA_DIR_VARIABLE}), e.g. DIR/gsm8k/test.jsonl"
    )
    parser.add_argument("--latest", action="store_true", help="only write RESULTS.md again from results/*.json")
    args = parser.parse_args(argv)
    if args.latest:
        write_latest()
        print(f"wrote {RESULTS_MD}", file=sys.stderr)
        return 0
    if args.data:
        # Through the environment so that benchmarks and any rlenvs loader they use agree.
        os.environ[DATA_DIR_VARIABLE] = str(Path(args.data).resolve())

    names = [p.stem for p in sorted(HERE.glob("bench_*.py")) if args.only in p.stem]
    if not names:
        parser.error(f"no benchmark matches {args.only!r}")

    started = datetime.now(UTC)
    results: dict[str, dict[str, Any]] = {}
    packages = list(ALWAYS_REPORTED)
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        tic = time.perf_counter()
        try:
            module = importlib.import_module(f"benchmarks.{name}")
            packages += [p for p in getattr(module, "PACKAGES", ()) if p not in packages]
            result = module.run()
        except Exception as error:
            traceback.print_exc()
            result = {"title": name, "error": f"{type(error).__name__}: {error}"}
        result["seconds"] = round(time.perf_counter() - tic, 1)
        results[name] = result
        print(render(result), file=sys.stderr)

    failed = [name for name, r in results.items() if "error" in r]
    if len(failed) == len(results):
        print("every benchmark failed: nothing recorded", file=sys.stderr)
        return 1
    record = {"utc": started.isoformat(timespec="seconds"), "machine": machine(packages), "benchmarks": results}
    print(f"wrote {write_json(record, started)}", file=sys.stderr)
    append_markdown(record, started)
    write_latest()
    print(f"appended to {HISTORY_MD}; wrote {RESULTS_MD}", file=sys.stderr)
    return 1 if failed else 0


def machine(packages: list[str]) -> dict[str, Any]:
    """What the figures depend on besides the code: cores, CPU, Python, package versions."""
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu": cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": {p: version(p) or "not installed" for p in packages},
    }


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def write_json(record: dict[str, Any], started: datetime) -> Path:
    """Write via a .tmp file and rename, so an interrupted run leaves no half-written JSON."""
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{started.strftime('%Y%m%dT%H%M%SZ')}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def append_markdown(record: dict[str, Any], started: datetime) -> None:
    lines = [
        f"## {started.strftime('%Y-%m-%d %H:%M:%S')} UTC",
        "",
        f"Machine: {machine_line(record['machine'])}",
        "",
    ]
    lines += [render(result, level="###") + "\n" for result in record["benchmarks"].values()]
    new_file = not HISTORY_MD.exists()
    with HISTORY_MD.open("a") as out:
        out.write((HEADER if new_file else "") + "\n" + "\n".join(lines))


LATEST_HEADER = """\
# Benchmark results: the latest figures of each benchmark

Written by `python -m benchmarks` from `results/*.json` (do not edit: `python -m benchmarks
--latest` writes it again); each benchmark's newest run that did not fail, with its date and
machine. HISTORY.md is the dated log of every run, with the notes added to it since.

Read the **ratios**, not the absolute times: every ratio compares scorers measured in the
same process, in the same run, one after the other, because the machines these run on are
shared and noisy.
"""


def latest_markdown(results_dir: Path = RESULTS_DIR) -> str:
    """RESULTS.md's text: for each benchmark (by module name), its newest successful result."""
    latest: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for path in sorted(results_dir.glob("*.json")):  # timestamped names: oldest first
        record = json.loads(path.read_text(encoding="utf-8"))
        for name, result in record["benchmarks"].items():
            if "error" not in result:
                latest[name] = (record, result)
    parts = [LATEST_HEADER]
    for name in sorted(latest):
        record, result = latest[name]
        heading, table = render(result, level="##").split("\n", 1)
        when = f"{record['utc'][:16].replace('T', ' ')} UTC, `{name}`; {machine_line(record['machine'])}"
        parts.append(f"{heading}\n\n{when}\n{table}\n")
    return "\n".join(parts)


def write_latest() -> None:
    """RESULTS.md written anew from results/*.json, through a temporary file."""
    tmp = RESULTS_MD.with_suffix(".tmp")
    tmp.write_text(latest_markdown(), encoding="utf-8")
    tmp.replace(RESULTS_MD)


def machine_line(m: dict[str, Any]) -> str:
    versions = ", ".join(f"{p} {v}" for p, v in m["packages"].items())
    return f"{m['cpu_count']} CPUs ({m['cpus_usable']} usable), {m['cpu']}; Python {m['python']}; {versions}."


def render(result: dict[str, Any], level: str = "##") -> str:
    """One benchmark as markdown: a heading, a table of its rows, then its notes."""
    parts = [f"{level} {result['title']} ({result.get('seconds', '?')} s)", ""]
    if "error" in result:
        return "\n".join(parts + [f"**Failed:** {result['error']}"])
    rows = result["rows"]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    parts.append("| " + " | ".join(columns) + " |")
    parts.append("|" + "|".join("---" for _ in columns) + "|")
    parts += ["| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    parts += [""] + [f"- {note}" for note in result.get("notes", [])]
    return "\n".join(parts)


def cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
    return str(value).replace("|", "\\|")


if __name__ == "__main__":
    sys.exit(main())
