from pathlib import Path


def test_the_total_is_written_to_tmp():
    total = sum(int(line) for line in Path("/tmp/inputs/numbers.txt").read_text().split())
    # The test's own reference, in /tmp as many real tests keep theirs.
    expected = Path("/tmp/expected_total.txt")
    expected.write_text(f"{total}\n")
    assert Path("/tmp/result.txt").read_text() == expected.read_text()


def test_the_notes_are_in_the_project_folder():
    assert Path("notes.txt").read_text().strip() == "done"
