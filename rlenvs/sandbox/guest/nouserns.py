"""No user namespaces for the code of a session in a Docker or Podman container (guest side,
stdlib only).

Under bubblewrap the sandbox's namespace allows no user namespace below it
(max_user_namespaces is 0 there). A container shares the host's user namespace, whose limit
the container cannot change, and Docker's default seccomp profile lets a container
whose capabilities include CAP_SYS_ADMIN make user namespaces: the session zygote needs that
capability (read-only verdict folders), so the container has it, and code that dropped it
could still `unshare -U` and reach the kernel's namespaced-root surface that Docker's profile
otherwise keeps it from. `forbid_user_namespaces` installs a seccomp filter on the zygote,
which every process it starts inherits and none can remove: unshare and clone with
CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS (its flags are behind a pointer a filter
cannot read; the C library then falls back to clone, as under Docker's own profile), and a
system call of another ABI (i386, x32) with EPERM.
"""

from __future__ import annotations

import ctypes
import errno
import os

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
CLONE_NEWUSER = 0x10000000
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_ABS_W, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
ARCH_OFFSET, NR_OFFSET, ARG0_OFFSET = 4, 0, 16
"""struct seccomp_data: nr, arch, instruction pointer, args[6] (the low word of args[0] at 16:
little-endian machines only, as both below are)."""
MACHINES = {
    # uname -m: (AUDIT_ARCH_*, unshare, clone, clone3, the first number of another ABI or None)
    "x86_64": (0xC000003E, 272, 56, 435, 0x40000000),
    "aarch64": (0xC00000B7, 97, 220, 435, None),
}


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_Instruction))]


def _program(machine: str) -> list[tuple[int, int, int, int]]:
    arch, unshare, clone, clone3, other_abi = MACHINES[machine]
    allow, deny, no_clone3 = "allow", "deny", "no_clone3"
    code: list[tuple[int, object, object, int]] = [
        (LD_ABS_W, 0, 0, ARCH_OFFSET),
        (JEQ_K, 0, deny, arch),
        (LD_ABS_W, 0, 0, NR_OFFSET),
    ]
    if other_abi is not None:
        code.append((JGE_K, deny, 0, other_abi))
    code += [
        (JEQ_K, no_clone3, 0, clone3),
        (JEQ_K, "flags", 0, unshare),
        (JEQ_K, "flags", allow, clone),
    ]
    labels = {"flags": len(code), allow: len(code) + 2, deny: len(code) + 3, no_clone3: len(code) + 4}
    code += [
        (LD_ABS_W, 0, 0, ARG0_OFFSET),
        (JSET_K, deny, allow, CLONE_NEWUSER),
        (RET_K, 0, 0, RET_ALLOW),
        (RET_K, 0, 0, RET_ERRNO | errno.EPERM),
        (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
    ]

    def offset(target: object, at: int) -> int:  # a jump counts the instructions it skips
        return 0 if target == 0 else labels[str(target)] - at - 1

    return [(op, offset(jt, at), offset(jf, at), k) for at, (op, jt, jf, k) in enumerate(code)]


def forbid_user_namespaces() -> None:
    """Install the filter on this process (and so on everything it starts); raises OSError
    where it cannot be (a machine this module has no system call numbers for)."""
    machine = os.uname().machine
    if machine not in MACHINES:
        raise OSError(errno.ENOSYS, f"no seccomp filter against user namespaces for {machine}")
    code = _program(machine)
    instructions = (_Instruction * len(code))(*(_Instruction(*row) for row in code))
    program = _Program(len(code), instructions)
    libc = ctypes.CDLL(None, use_errno=True)
    for args in ((PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0)):
        if libc.prctl(*args) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"prctl{args[:2]}: {os.strerror(error)}")
