"""Enter an image's root: the first process of a sandbox over a built image (rlenvs.sandbox.shells.rootfs).

Run as its own process, with the standard library only (`python -I -S enter_root.py SPEC`),
it makes a user and a mount namespace, waits while the host writes its uid and gid maps
(only the host may map a range of ids), becomes root there, mounts the image's layers as one
overlay (its upper layer a tmpfs for an episode, or a folder on disk for a build step) and
execs bubblewrap over it. Nothing of the image runs before bubblewrap does.

SPEC is JSON: {"ready_fd", "go_fd": the handshake's pipes; "lowers": layer folders, top
first; "upper", "work": the folders of a build step's new layer (null: a tmpfs of
"tmpfs_mb" MiB and, unless null, "tmpfs_inodes" inodes); "merged": an empty folder to mount the overlay on; "argv": bubblewrap's}.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
LIBC = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, kind: str | None, flags: int, options: str | None) -> None:
    _check(
        LIBC.mount(
            source.encode(),
            target.encode(),
            None if kind is None else kind.encode(),
            ctypes.c_ulong(flags),
            None if options is None else options.encode(),
        ),
        f"mount {kind or source} on {target}",
    )


def main(spec: dict) -> None:
    _check(LIBC.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare a user and a mount namespace")
    os.write(spec["ready_fd"], b"u")
    os.close(spec["ready_fd"])
    if os.read(spec["go_fd"], 1) != b"g":
        sys.exit("the host did not map this namespace's ids")
    os.close(spec["go_fd"])
    os.setresgid(0, 0, 0)
    with open("/proc/self/setgroups") as setgroups:
        if setgroups.read().strip() == "allow":
            os.setgroups([])
    os.setresuid(0, 0, 0)
    # The namespace's root may make no user namespace of its own (bubblewrap's --disable-userns).
    with open("/proc/sys/user/max_user_namespaces", "w") as limit:
        limit.write("0")
    _mount("none", "/", None, MS_REC | MS_PRIVATE, None)
    upper, work = spec["upper"], spec["work"]
    if upper is None:
        stage = os.path.dirname(spec["merged"])
        inodes = "" if spec["tmpfs_inodes"] is None else f",nr_inodes={spec['tmpfs_inodes']}"
        _mount("tmpfs", stage, "tmpfs", 0, f"size={spec['tmpfs_mb']}m{inodes},mode=0755")
        upper, work = os.path.join(stage, "upper"), os.path.join(stage, "work")
        for folder in (upper, work, spec["merged"]):
            os.mkdir(folder, 0o755)
    lowers = ":".join(spec["lowers"])
    _mount("overlay", spec["merged"], "overlay", 0, f"lowerdir={lowers},upperdir={upper},workdir={work},userxattr")
    os.execv(spec["argv"][0], spec["argv"])


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
