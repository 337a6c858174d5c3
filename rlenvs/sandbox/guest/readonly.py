"""One command's view of a folder as read-only (guest side, stdlib only): a verdict's own files.

A verdict's tests run as the sandbox's one uid, which is also the uid of every program of the
agent's they run (a program they test, a pickle they load, a filter git runs for them). So
their own files, and the verdict's (its sitecustomize, pytest.ini, git's empty hooks folder,
the fresh HOME), would be that code's to rewrite for the tests that run after it: a module
dropped into the tests' folder and deleted again, a `.pyc` beside a helper, a sitecustomize
that ends every later python3 with status 0. No check after the run sees all of that; what
cannot be written needs none. So the command's child, before it drops the capabilities a
session's zygote keeps (CAP_SYS_ADMIN in the sandbox's user namespace, `scratch`), makes
itself a mount namespace of its own (`make_read_only`) in which the folder is a read-only
bind mount of itself, but for the folders in it that the tests are meant to write (their
logs, their TMPDIR), bound again writable. Writes there reach the same files the zygote and
the host see; the mounts die with the command's last process, so nothing is left to undo
and the next command sees the folder as it was. Without capabilities, nothing the tests run
can unmount, remount or rename them (a mount point cannot be moved), nor link a file out of
them (links do not cross mounts).
"""

from __future__ import annotations

import os

from scratch import CLONE_NEWNS, LIBC, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC, _check, _mount

MS_REMOUNT, MS_BIND = 32, 4096
FAILED_EXIT = 87
"""The exit status of a command whose folder could not be made read-only (it did not run)."""
_KEPT = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC))
"""The flags of the mount a folder is on that a read-only bind of it keeps (a remount in a user
namespace may not drop them)."""


def make_read_only(folder: str, writable: list[str]) -> None:
    """Make `folder` read-only for this process and everything it starts, but for `writable`
    (folders inside it). Needs CAP_SYS_ADMIN in this process's user namespace; raises OSError
    when it cannot be done."""
    _check(LIBC.unshare(CLONE_NEWNS), "unshare a mount namespace")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing made here reaches the zygote's mounts
    flags = sum(flag for bit, flag in _KEPT if os.statvfs(folder).f_flag & bit)
    _mount(folder, folder, None, MS_BIND)
    _mount(None, folder, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
    for inside in writable:
        _mount(inside, inside, None, MS_BIND)  # a bind of a read-only mount is read-only: remount it
        _mount(None, inside, None, MS_REMOUNT | MS_BIND | flags)
