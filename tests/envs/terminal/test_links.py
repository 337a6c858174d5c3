"""Workspace links a task's tests must not read (rlenvs.envs.terminal.links), and the host's walk of
the workspace they are found by (rlenvs.envs.terminal.tree): any depth, any width up to its cap,
no symlink followed."""

from __future__ import annotations

import os
import subprocess

import pytest

from rlenvs.envs.terminal.links import forbidden_links, redirecting_entries, workspace_links
from rlenvs.envs.terminal.tree import WorkspaceUnreadable, walk
from rlenvs.sandbox.shells.verdict import SCRATCH_FOLDERS, VERDICT_ROOT

LINKS = {
    # into the reading process's files, directly or through the sandbox's /dev links
    "cwd.txt": "/proc/self/cwd/expected.txt",
    "fd.txt": "/proc/self/fd/4",
    "thread.txt": "/proc/thread-self/fd/12",
    "up.txt": "../app/../proc/7/task/7/cwd",
    "sub/deep.txt": "../dev/fd/5",
    "stdout.log": "/dev/stdout",
    "stdin": "/proc/self/fd/0",
    "kcore": "/dev/core",
    # through /proc/self/root, which is `/` again, and the kernel's ".." at a root
    "root.txt": "/proc/self/root/proc/self/fd/4",
    "root-dev.txt": "/proc/self/root/dev/fd/4",
    "root-up.txt": "/proc/self/root/../proc/self/fd/4",
    "thread-root.txt": "/proc/thread-self/root/proc/thread-self/cwd/expected.txt",
    "top.txt": "/../../proc/self/fd/3",
    "escape.txt": "/proc/self/cwd/../../../tmp/x",  # where it lands depends on the reader's cwd
    # through other workspace links
    "r": "/proc/self/root",
    "via-r.txt": "r/dev/fd/4",
    "dev": "/dev",
    "via-dev.txt": "dev/fd/3",
    "via-via.txt": "via-dev.txt",
    # into the verdict's own folders
    "verdict.txt": f"{VERDICT_ROOT}/home/x",
    "verdict-up.txt": f"/dev/nothing/..{VERDICT_ROOT.removeprefix('/dev')}",
    # fine: devices, the system's files, the workspace, nothing
    "null": "/dev/null",
    "urandom": "/dev/urandom",
    "etc.txt": "/etc/hostname",
    "usr": "/usr/bin/python3",
    "sibling.txt": "cwd-free.txt",
    "app.txt": "/app/sub/x",
    "tmp.txt": "/tmp/scratch",
    "procfs-like.txt": "/processes/x",
    "loop": "loop",
    "dangling": "no/such/file",
}
FORBIDDEN = {
    "cwd.txt", "fd.txt", "thread.txt", "up.txt", "sub/deep.txt", "stdout.log", "stdin", "kcore", "root.txt",
    "root-dev.txt", "root-up.txt", "thread-root.txt", "top.txt", "escape.txt", "r", "via-r.txt", "via-dev.txt",
    "via-via.txt", "verdict.txt", "verdict-up.txt",
}  # fmt: skip


def make_links(root, links) -> None:
    for path, target in links.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).symlink_to(target)


def test_links_into_the_reading_process_or_the_verdict_are_found_at_any_step(tmp_path):
    make_links(tmp_path, LINKS)
    found = dict(forbidden_links(workspace_links(tmp_path), "/app", (VERDICT_ROOT,)))
    assert set(found) == FORBIDDEN
    assert found["via-r.txt"] == "r/dev/fd/4"  # reported with its own target


def test_a_link_to_dev_itself_is_fine_and_so_is_a_workspace_without_links(tmp_path):
    assert forbidden_links({"dev": "/dev", "d/x": "../../dev/null"}, "/app") == []
    assert forbidden_links({}, "/app") == []


def test_the_verdict_folders_are_only_forbidden_when_named():
    assert forbidden_links({"x": f"{VERDICT_ROOT}/home"}, "/app") == []


def test_links_into_the_scratch_folders_where_the_tests_write_their_references_are_found():
    """The env names /tmp and /dev/shm (`SCRATCH_FOLDERS`): the tests' own scratch, and the
    verdict's folders inside it, by any spelling."""
    links = {
        "a.txt": "/tmp/expected_output.txt", "b.txt": "../tmp/expected_output.txt", "c.txt": "/dev/shm/grader/x",
        "dev": "/dev", "d.txt": "dev/shm/x", "e.txt": f"{VERDICT_ROOT}/home", "f.txt": "/tmp",
        "g.txt": "/usr/../tmp/x", "null": "/dev/null", "h.txt": "/app/tmp/x", "i.txt": "/tmpfile",
    }  # fmt: skip
    found = [path for path, _ in forbidden_links(links, "/app", SCRATCH_FOLDERS)]
    assert found == ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt", "g.txt"]


def test_links_the_agent_left_outside_the_workspace_are_followed_and_checked_too():
    """On an image the agent is root: a workspace link through /etc/x into /proc is as bad as
    a direct one, and its links in /tmp are read by tests too. A link into the workspace is
    fine even where the workspace is below /tmp (an image's `WORKDIR /tmp/project`)."""
    elsewhere = {"/etc/x": "/proc/self/fd/0", "/opt/y": "/etc/hostname", "/tmp/z": "../dev/shm/v"}
    links = {"answer.txt": "/etc/x", "fine.txt": "/opt/y"}
    assert forbidden_links(links, "/app", SCRATCH_FOLDERS, elsewhere) == [
        ("answer.txt", "/etc/x"), ("/etc/x", "/proc/self/fd/0"), ("/tmp/z", "../dev/shm/v"),
    ]  # fmt: skip
    inside = {"a.txt": "b.txt", "c.txt": "/tmp/project/d", "e.txt": "../expected.txt", "f.txt": "/tmp"}
    assert forbidden_links(inside, "/tmp/project", SCRATCH_FOLDERS) == [("e.txt", "../expected.txt"), ("f.txt", "/tmp")]


def test_entries_of_tmp_that_would_redirect_a_tests_write_are_links_and_files_with_a_second_name(tmp_path):
    (tmp_path / "plain.txt").write_text("x")
    (tmp_path / "folder").mkdir()
    (tmp_path / "answer.txt").write_text("x")
    os.link(tmp_path / "answer.txt", tmp_path / "expected.txt")
    (tmp_path / "link.txt").symlink_to("plain.txt")
    entries = [(name, os.lstat(tmp_path / name)) for name in sorted(os.listdir(tmp_path))]
    assert redirecting_entries(entries) == ["answer.txt", "expected.txt", "link.txt"]


def test_the_walk_goes_deeper_than_any_path_and_never_follows_a_link(tmp_path):
    """4000 levels of `d`: a path of 8000 characters, past PATH_MAX, and past Python's
    recursion limit; the walk needs neither."""
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(4000):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.symlink("/proc/self/fd/3", "leaf", dir_fd=fd)
        os.symlink("/", "up", dir_fd=fd)  # not followed: / is not walked
    finally:
        os.close(fd)
    deep = "d/" * 4000
    try:
        assert workspace_links(tmp_path) == {f"{deep}leaf": "/proc/self/fd/3", f"{deep}up": "/"}
        paths = [found.path for found in walk(tmp_path, max_entries=10_000)]
        assert len(paths) == 4002 and paths[-1] == f"{deep}up"
    finally:  # pytest's own clean-up of old tmp_paths recurses, and this tree is too deep for it
        subprocess.run(["find", str(tmp_path / "d"), "-depth", "-delete"], check=True)


def test_the_walk_reports_every_entry_once_in_name_order_with_a_cap(tmp_path):
    for name in ("b/x", "b/y/z", "a/w", "c"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert [found.path for found in walk(tmp_path, max_entries=100)] == ["a", "b", "c", "a/w", "b/x", "b/y", "b/y/z"]
    with pytest.raises(WorkspaceUnreadable, match="more than 6 entries"):
        list(walk(tmp_path, max_entries=6))
    with pytest.raises(WorkspaceUnreadable, match="nested deeper than 1 folders at 'b/y/'"):
        list(walk(tmp_path, max_entries=100, max_depth=1))


def test_a_walk_left_half_way_closes_its_folder(tmp_path):
    for name in range(10):
        (tmp_path / str(name)).mkdir()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        walker = walk(tmp_path, max_entries=100)
        next(walker)
        walker.close()
    assert len(os.listdir("/proc/self/fd")) == before
