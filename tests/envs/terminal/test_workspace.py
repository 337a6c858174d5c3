"""The host-side workspace reader and the expectations (rlenvs.envs.terminal.workspace), on real
folders: nothing is followed, nothing hangs, every record round-trips through JSON."""

from __future__ import annotations

import json
import os
import threading
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlenvs.envs.terminal.workspace import (
    EXPECTATIONS,
    AnswerIs,
    DirEntries,
    FileLines,
    FileMode,
    FileText,
    IsDir,
    Missing,
    WorkspaceUnreadable,
    check_all,
    expectation_from_dict,
    judge_workspace,
    numbers_match,
    parse_number,
    read_workspace,
)

SAMPLES = (
    FileText("out/report.txt", "total 42\n"),
    FileLines("sorted.txt", ("a", "b"), ordered=False),
    FileMode("run.sh", 0o755),
    Missing("tmp/cache"),
    DirEntries(".", ("out", "run.sh", "sorted.txt")),
    IsDir("out"),
    AnswerIs("12.5", numeric=True),
)


def test_every_kind_of_expectation_round_trips_through_json():
    assert {type(sample) for sample in SAMPLES} == set(EXPECTATIONS.values())
    for sample in SAMPLES:
        assert expectation_from_dict(json.loads(json.dumps(sample.to_dict()))) == sample


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"path": "x"}, "needs a 'kind'"),
        ({"kind": "file_text", "path": "x"}, "does not fit FileText"),
        ({"kind": "file_text", "path": "/etc/passwd", "text": ""}, "must be relative"),
        ({"kind": "missing", "path": "a/../../b"}, "must be relative"),
    ],
)
def test_a_bad_expectation_record_names_the_fix(record, message):
    with pytest.raises(ValueError, match=message):
        expectation_from_dict(record)


def test_the_reader_reports_symlinks_fifos_and_big_files_without_opening_them(tmp_path):
    (tmp_path / "big.bin").write_bytes(b"x" * 2048)
    (tmp_path / "note.txt").write_text("hi\n")
    (tmp_path / "link").symlink_to("/etc/passwd")
    (tmp_path / "dirlink").symlink_to("/etc")
    os.mkfifo(tmp_path / "pipe")  # opening it for reading would block forever
    workspace = read_workspace(tmp_path, max_file_bytes=1024)
    assert {p: n.kind for p, n in workspace.nodes.items()} == {
        "big.bin": "file",
        "dirlink": "symlink",
        "link": "symlink",
        "note.txt": "file",
        "pipe": "other",
    }
    assert workspace.get("big.bin").data is None and workspace.get("big.bin").size == 2048
    assert workspace.get("note.txt").text() == "hi\n" and workspace.get("link").target == "/etc/passwd"


def test_a_workspace_over_the_caps_is_a_failed_verdict_not_a_hang(tmp_path):
    deep = tmp_path
    for _ in range(70):
        deep = deep / "d"
    deep.mkdir(parents=True)
    verdict = judge_workspace(tmp_path, [IsDir("d")], None)
    assert not verdict.passed and "deeper than" in verdict.unreadable
    for name in "abc":
        (tmp_path / f"{name}.txt").write_text("")
    with pytest.raises(WorkspaceUnreadable, match="more than 3 entries"):
        read_workspace(tmp_path, max_entries=3)


def test_expectations_judge_contents_modes_listings_and_answers(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.txt").write_text("total 42")  # no final newline: still the text
    (tmp_path / "sorted.txt").write_text("  b\n\na \n")
    (tmp_path / "run.sh").write_text("")
    os.chmod(tmp_path / "run.sh", 0o755)
    workspace = read_workspace(tmp_path)
    verdict = check_all(SAMPLES, workspace, " 12.50 ")
    assert verdict.passed and verdict.reward == 1.0, verdict.failures()
    os.chmod(tmp_path / "run.sh", 0o777)
    (tmp_path / "tmp" / "cache").mkdir(parents=True)
    verdict = check_all(SAMPLES, read_workspace(tmp_path), "12")
    assert [check.detail for check in verdict.failures()] == [
        "run.sh has mode 777",
        "tmp/cache still exists",
        ".: missing [], unexpected ['tmp']",
        "the submitted answer is wrong",
    ]


def test_file_expectations_refuse_a_symlink_to_the_right_content(tmp_path):
    (tmp_path / "real.txt").write_text("secret\n")
    (tmp_path / "answer.txt").symlink_to(tmp_path / "real.txt")
    verdict = check_all([FileText("answer.txt", "secret")], read_workspace(tmp_path), None)
    assert not verdict.passed and verdict.failures()[0].detail == "answer.txt is a symlink, not a regular file"


def test_answers_compare_as_text_or_as_numbers():
    answer = AnswerIs("src/app/main.py")
    assert answer.check(None, "'src/app/main.py'").passed and answer.check(None, "`src/app/main.py`").passed
    assert not answer.check(None, "./src/app/main.py").passed
    assert not answer.check(None, None).passed and not answer.check(None, "  ").passed
    assert AnswerIs("1200", numeric=True).check(None, "1,200.0").passed
    assert not AnswerIs("12", numeric=True).check(None, "twelve").passed


@pytest.mark.parametrize(
    "given,want,same",
    [
        ("12347.790000000003", "12347.79", True),  # Python's float sum of the column
        ("30808.059999999994", "30808.06", True),
        ("$12,347.79", "12347.79", True),
        ("12,347.79", "12347.79", True),
        ("$ 12347.79", "12347.79", True),
        ("33469.1", "33469.10", True),
        ("-$5", "-5.00", True),
        ("1.234779e4", "12347.79", True),
        ("11.0", "11", True),
        ("5.551115123125783e-17", "0.00", True),  # 0.1 + 0.2 - 0.3, a total of decimals
        ("1,2347.79", "12347.79", False),  # a comma that groups no thousands
        ("1,1", "11", False),
        ("12347,79", "12347.79", False),
        ("12_347.79", "12347.79", False),  # Python's float() reads it; nobody writes a total so
        ("12347.8", "12347.79", False),  # less precise than the total
        ("12347.794", "12347.79", False),  # rounds to it, but is off by more than float rounding
        ("11.4", "11", False),  # a count is a whole number
        ("7.0000000000001", "7", False),  # ... and an integer: no float rounding went into it
        ("5.551115123125783e-17", "0", False),
        ("1234.0000000000002", "1234", False),  # a total of whole numbers is exact too
        ("1.234e3", "1234", True),
        ("-$-5", "5", False),
        ("inf", "1", False),
        ("nan", "1", False),
        ("1e400", "1", False),
        ("12 apples", "12", False),
    ],
)
def test_numbers_compare_at_the_precision_the_answer_is_stated_to(given, want, same):
    assert numbers_match(given, want) is same
    assert AnswerIs(want, numeric=True).check(None, given).passed is same


@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=60), st.booleans())
def test_a_float_sum_is_the_exact_total_and_one_cent_off_is_not(magnitudes, negative):
    """What a program summing the column with floats prints (Python, awk's %.17g) is the
    exact total; a cent off is not, nor is the total with its commas misplaced. Values of one
    sign, as in every column the families sum (see FLOAT_NOISE: cancelling values carry more
    noise than their total allows for, as hypothesis found with 9998191.04 - 9999769.63)."""
    cents = [-c if negative else c for c in magnitudes]
    exact = sum(Decimal(c).scaleb(-2) for c in cents)
    floats = sum(float(Decimal(c).scaleb(-2)) for c in cents)
    want = f"{exact:.2f}"
    assert numbers_match(repr(floats), want) and numbers_match(f"{floats:.17g}", want)
    assert numbers_match(f"${exact:,.2f}".replace("$-", "-$"), want)
    assert not numbers_match(f"{exact + Decimal('0.01'):.2f}", want)
    if abs(exact) >= 10000:
        digits = f"{abs(exact):.2f}"
        assert not numbers_match(f"{digits[:1]},{digits[1:]}", f"{abs(exact):.2f}")


def test_answers_in_curly_quotes_with_a_final_period_and_in_other_scripts_digits():
    total = AnswerIs("12347.79", numeric=True)
    for reply in ("\u201c12347.79\u201d", "\u201812347.79\u2019", "\u00ab12347.79\u00bb", "12347.79.", "$12,347.79."):
        assert total.check(None, reply).passed, reply
    for reply in (
        "12347.79..",
        "\u201c12347.79",
        "\uff11\uff12\uff13\uff14\uff17.\uff17\uff19",
        "\u0661\u0662\u0663\u0664\u0667.\u0667\u0669",
        "\u0661\u0662\u0663\u0664\u0667\u066b\u0667\u0669",
        "\U0001d7e3",
    ):
        assert not total.check(None, reply).passed, reply
    assert (
        AnswerIs("11", numeric=True).check(None, "11.").passed
        and AnswerIs("0", numeric=True).check(None, "0.0.").passed
    )
    assert AnswerIs("Desk Lamp").check(None, "\u201cDesk Lamp\u201d").passed
    # a sentence's final period is no part of a text answer either; two periods end no sentence
    assert AnswerIs("Desk Lamp").check(None, "Desk Lamp.").passed
    assert AnswerIs("contacts_2019.csv").check(None, "contacts_2019.csv.").passed
    assert AnswerIs("notes.").check(None, "notes.").passed and AnswerIs("notes.").check(None, "“notes.”").passed
    assert not AnswerIs("Desk Lamp").check(None, "Desk Lamp..").passed
    assert not AnswerIs("contacts_2019.csv").check(None, "contacts_2019.csv.bak").passed
    assert parse_number("\uff11\uff12") is None and parse_number("\u0661\u0662") is None


def test_a_number_is_read_exactly_or_not_at_all():
    assert parse_number("1,234,567.125") == Decimal("1234567.125")
    assert parse_number("\u22123") == Decimal(-3) and parse_number("+.5") == Decimal("0.5")
    assert [parse_number(text) for text in ("", ".", "$", "1,23", "1.2.3", "0x10", "1" * 101)] == [None] * 7


def test_a_byte_order_mark_at_the_start_of_a_file_is_not_content(tmp_path):
    (tmp_path / "answer.txt").write_bytes(b"\xef\xbb\xbf42\n")
    (tmp_path / "lines.txt").write_bytes(b"\xef\xbb\xbfa\nb\n")
    (tmp_path / "inside.txt").write_bytes(b"a\n\xef\xbb\xbfb\n")
    expectations = [
        FileText("answer.txt", "42"),
        FileLines("lines.txt", ("a", "b")),
        FileLines("inside.txt", ("a", "b")),
    ]
    verdict = check_all(expectations, read_workspace(tmp_path), None)
    assert [check.passed for check in verdict.checks] == [True, True, False]
    assert AnswerIs("42", numeric=True).check(None, "\ufeff42").passed


def test_a_verdict_with_no_expectations_never_passes(tmp_path):
    assert not check_all([], read_workspace(tmp_path), None).passed


@given(st.text(max_size=200))
def test_any_submitted_answer_gets_a_verdict(text):
    for expectation in (AnswerIs("42", numeric=True), AnswerIs("a b")):
        assert isinstance(expectation.check(None, text).passed, bool)


def test_the_reader_is_safe_to_run_from_threads(tmp_path):
    for i in range(50):
        (tmp_path / f"f{i}").write_text(str(i))
    results = []
    threads = [threading.Thread(target=lambda: results.append(len(read_workspace(tmp_path).nodes))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [50] * 4
