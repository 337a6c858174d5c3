"""benchmarks/RESULTS.md is the latest figure of each benchmark as results/*.json hold them:
written by `python -m benchmarks`, never by hand, so it cannot drift from the recorded runs."""

from __future__ import annotations

import json

from benchmarks.__main__ import RESULTS_MD, latest_markdown


def test_results_md_is_written_from_the_recorded_runs() -> None:
    assert RESULTS_MD.read_text(encoding="utf-8") == latest_markdown(), (
        "benchmarks/RESULTS.md differs from results/*.json: run `python -m benchmarks --latest`"
    )


def test_each_benchmark_shows_its_newest_run_that_did_not_fail(tmp_path) -> None:
    def run(stamp: str, **results: dict) -> None:
        record = {"utc": f"2026-01-0{stamp}T00:00:00+00:00", "benchmarks": results}
        record["machine"] = {"cpu_count": 2, "cpus_usable": 2, "cpu": "x", "python": "3.11", "packages": {}}
        (tmp_path / f"2026010{stamp}T000000Z.json").write_text(json.dumps(record))

    table = {"rows": [{"k": 1}], "seconds": 1.0}
    run("1", bench_a={"title": "A old", **table}, bench_b={"title": "B", **table})
    run("2", bench_a={"title": "A new", **table})
    run("3", bench_a={"title": "A failed", "error": "boom"})
    text = latest_markdown(tmp_path)
    assert "## A new" in text and "A old" not in text and "A failed" not in text
    assert "## B" in text and "2026-01-01 00:00 UTC, `bench_b`" in text
