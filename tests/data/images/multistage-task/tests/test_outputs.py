from pathlib import Path


def test_sorted() -> None:
    assert Path("/app/sorted.txt").read_text().split() == ["1", "2", "3", "4", "5"]


def test_greeting() -> None:
    assert Path("/app/greeting.txt").read_text() == "hello from greet\n"
