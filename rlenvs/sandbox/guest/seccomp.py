"""Seccomp filters on sandboxed processes (guest side, stdlib only): one small BPF assembler,
two policies.

Namespaces, capabilities and no-new-privileges decide what a sandboxed process may touch;
they leave the kernel's own attack surface open. A process without any capability can still
call io_uring, bpf, perf_event_open, userfaultfd or the key-management calls, which hold
much of the kernel's recent local privilege escalations, and reach the host's kernel state
through mount-API calls, file handles or the clock. `UNTRUSTED` denies those (Docker's
default profile's list, where it applies to a process without capabilities), and every
call of another ABI (i386 and x32 on x86_64, whose tables bypass the numbers below).

Where each policy goes:
- `UNTRUSTED` on every child of a zygote (`confine`, from `roles.enter_child`): the code, a
  shell command and everything it starts, and the trusted test runner. It is installed in the
  child after the zygote's own set-up for it (namespaces, a read-only verdict folder, the
  dropped capabilities), so the zygote keeps mount and unshare for renewing the sandbox,
  and none of the untrusted code ever runs without it; a filter cannot be removed, and every
  process forked or exec'd below inherits it.
- `NO_USER_NAMESPACES` on a container engine's zygote itself (`forbid_user_namespaces`): a
  container shares the host's user namespace, whose limit it cannot lower, and Docker's
  profile lets a process holding CAP_SYS_ADMIN (the zygote, for read-only verdict folders)
  make user namespaces; under bubblewrap `--disable-userns` does this instead.

Denied calls fail with EPERM, as Docker's do. clone3 fails with ENOSYS: its flags are behind
a pointer a filter cannot read, and the C library then falls back to clone, whose flags it
can (CLONE_NEWUSER: EPERM). personality is allowed only with the values Docker allows (the
query, Linux, UNAME26 and their 32-bit forms): the rest disable ASLR or make data executable
for what the process execs. ptrace stays allowed (debuggers and strace in terminal tasks):
what a process may ptrace is decided by its uid and dumpability, and the zygote and the test
runner are not dumpable.
"""

from __future__ import annotations

import ctypes
import errno
import os
from dataclasses import dataclass

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
CLONE_NEWUSER = 0x10000000
RET_ALLOW, RET_ERRNO = 0x7FFF0000, 0x00050000
LD_ABS_W, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
ARCH_OFFSET, NR_OFFSET, ARG0_OFFSET = 4, 0, 16
"""struct seccomp_data: nr, arch, instruction pointer, args[6] (the low word of args[0] at 16:
little-endian machines only, as both below are). The kernel reads clone's flags and
personality's argument as 32-bit values, so the low word is all there is to check."""
MAX_JUMP = 255
"""A conditional jump skips at most 255 instructions (its offsets are 8-bit)."""

MACHINES = {
    # uname -m: (AUDIT_ARCH_*, the first number of another ABI of the same arch, or None)
    "x86_64": (0xC000003E, 0x40000000),
    "aarch64": (0xC00000B7, None),
}
_COMMON = {  # the numbers every architecture that came after 4.20 shares
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435,
    "mount_setattr": 442, "quotactl_fd": 443,
}  # fmt: skip
SYSCALLS = {
    # From the kernel's tables (x86_64: asm/unistd_64.h; aarch64: asm-generic/unistd.h);
    # tests/sandbox/test_confinement.py checks them against the headers where they are installed.
    "x86_64": {
        **_COMMON, "acct": 163, "add_key": 248, "adjtimex": 159, "bpf": 321, "clock_adjtime": 305,
        "clock_settime": 227, "clone": 56, "create_module": 174, "delete_module": 176, "fanotify_init": 300,
        "finit_module": 313, "get_kernel_syms": 177, "init_module": 175, "ioperm": 173, "iopl": 172,
        "kexec_file_load": 320, "kexec_load": 246, "keyctl": 250, "lookup_dcookie": 212, "mount": 165,
        "name_to_handle_at": 303, "nfsservctl": 180, "open_by_handle_at": 304, "perf_event_open": 298,
        "personality": 135, "pivot_root": 155, "query_module": 178, "quotactl": 179, "reboot": 169,
        "request_key": 249, "setns": 308, "settimeofday": 164, "swapoff": 168, "swapon": 167, "_sysctl": 156,
        "syslog": 103, "umount2": 166, "unshare": 272, "uselib": 134, "userfaultfd": 323, "vhangup": 153,
    },
    "aarch64": {
        **_COMMON, "acct": 89, "add_key": 217, "adjtimex": 171, "bpf": 280, "clock_adjtime": 266,
        "clock_settime": 112, "clone": 220, "delete_module": 106, "fanotify_init": 262, "finit_module": 273,
        "init_module": 105, "kexec_file_load": 294, "kexec_load": 104, "keyctl": 219, "lookup_dcookie": 18,
        "mount": 40, "name_to_handle_at": 264, "nfsservctl": 42, "open_by_handle_at": 265,
        "perf_event_open": 241, "personality": 92, "pivot_root": 41, "quotactl": 60, "reboot": 142,
        "request_key": 218, "setns": 268, "settimeofday": 170, "swapoff": 225, "swapon": 224, "syslog": 116,
        "umount2": 39, "unshare": 97, "userfaultfd": 282, "vhangup": 58,
    },
}  # fmt: skip

DENIED = (
    # kernel surfaces behind most recent local escalations, usable without any capability
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open", "userfaultfd",
    # the kernel's keyrings: shared by every process of a uid on the host
    "keyctl", "add_key", "request_key",
    # mounts, namespaces and file handles (the zygote sets these up before the filter)
    "mount", "umount2", "pivot_root", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree",
    "mount_setattr", "unshare", "setns", "open_by_handle_at", "name_to_handle_at", "fanotify_init",
    # the host's clock, modules, power, swap, accounting, quotas, logs and ports
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "init_module", "finit_module",
    "delete_module", "create_module", "get_kernel_syms", "query_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "lookup_dcookie", "iopl",
    "ioperm", "uselib", "nfsservctl", "_sysctl", "vhangup",
)  # fmt: skip
"""What `UNTRUSTED` denies (with EPERM), where the machine has the call."""
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
"""personality(2) values allowed: PER_LINUX, UNAME26, PER_LINUX32, both, and the query."""


@dataclass(frozen=True)
class Policy:
    """What a filter denies. `denied`: calls that fail with EPERM whatever their arguments;
    `no_user_namespaces`: clone and unshare with CLONE_NEWUSER fail with EPERM, clone3 with
    ENOSYS; `personalities`: the only arguments personality(2) takes (None: any)."""

    denied: tuple[str, ...] = ()
    no_user_namespaces: bool = True
    personalities: tuple[int, ...] | None = None


UNTRUSTED = Policy(denied=DENIED, personalities=PERSONALITIES)
NO_USER_NAMESPACES = Policy()


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_Instruction))]


Row = tuple[int, object, object, int]
"""(opcode, jump if true, jump if false, constant): a jump is 0 (the next instruction) or the
name of a label further on."""


def assemble(policy: Policy, machine: str) -> list[tuple[int, int, int, int]]:
    """The filter's instructions for `machine` (of MACHINES), jumps resolved to offsets."""
    arch, other_abi = MACHINES[machine]
    numbers = SYSCALLS[machine]
    code: list[Row] = [(LD_ABS_W, 0, 0, ARCH_OFFSET), (JEQ_K, 0, "eperm", arch), (LD_ABS_W, 0, 0, NR_OFFSET)]
    if other_abi is not None:
        code.append((JGE_K, "eperm", 0, other_abi))
    code += [(JEQ_K, "eperm", 0, numbers[name]) for name in policy.denied if name in numbers]
    flag_checked = [name for name in ("clone", "unshare") if name not in policy.denied]
    if policy.no_user_namespaces:
        code.append((JEQ_K, "enosys", 0, numbers["clone3"]))
        code += [(JEQ_K, "newuser", 0, numbers[name]) for name in flag_checked]
    if policy.personalities is not None:
        code.append((JEQ_K, "personality", 0, numbers["personality"]))
    code.append((RET_K, 0, 0, RET_ALLOW))
    labels: dict[str, int] = {}
    if policy.no_user_namespaces and flag_checked:
        labels["newuser"] = len(code)
        code += [(LD_ABS_W, 0, 0, ARG0_OFFSET), (JSET_K, "eperm", "allow", CLONE_NEWUSER)]
    if policy.personalities is not None:
        labels["personality"] = len(code)
        code.append((LD_ABS_W, 0, 0, ARG0_OFFSET))
        *allowed, last = policy.personalities
        code += [(JEQ_K, "allow", 0, value) for value in allowed]
        code.append((JEQ_K, "allow", "eperm", last))
    for name, value in (("allow", RET_ALLOW), ("eperm", RET_ERRNO | errno.EPERM), ("enosys", RET_ERRNO | errno.ENOSYS)):
        labels[name] = len(code)
        code.append((RET_K, 0, 0, value))
    return [(op, _offset(jt, at, labels), _offset(jf, at, labels), k) for at, (op, jt, jf, k) in enumerate(code)]


def _offset(target: object, at: int, labels: dict[str, int]) -> int:
    """A jump's offset: the instructions it skips (classic BPF jumps forward only)."""
    if target == 0:
        return 0
    skipped = labels[str(target)] - at - 1
    if not 0 <= skipped <= MAX_JUMP:
        raise ValueError(f"a seccomp jump to {target} from instruction {at} skips {skipped} instructions")
    return skipped


class Filter:
    """A filter built once (in the zygote, before it forks) and installed many times: a child
    that built its ctypes objects itself would pay for the copy-on-write faults."""

    def __init__(self, policy: Policy) -> None:
        machine = os.uname().machine
        if machine not in MACHINES:
            raise OSError(errno.ENOSYS, f"no seccomp filter for {machine}: the sandbox knows x86_64 and aarch64")
        code = assemble(policy, machine)
        self._instructions = (_Instruction * len(code))(*(_Instruction(*row) for row in code))
        self._program = _Program(len(code), self._instructions)
        self._pointer = ctypes.byref(self._program)
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl

    def install(self) -> None:
        """Put the filter on this process, for good (and so on everything it starts); raises
        OSError where it cannot be (a kernel without seccomp filters)."""
        for args in ((PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self._pointer, 0, 0)):
            if self._prctl(*args) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"prctl{args[:2]}: {os.strerror(error)}")


_children: Filter | None = None
"""The filter every child of this zygote installs (`confine`); None: unsafe mode, none."""


def prepare_children_filter() -> None:
    """Build `UNTRUSTED` for this zygote's children and check, in a child of its own, that the
    kernel takes it: a sandbox that cannot filter refuses to start (OSError), rather than run
    code unfiltered or fail each execution."""
    global _children
    built = Filter(UNTRUSTED)
    probe = os.fork()
    if probe == 0:
        try:
            built.install()
        finally:
            os._exit(0 if _seccomp_mode() == b"2" else 1)
    _, status = os.waitpid(probe, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise OSError(errno.ENOSYS, "this kernel refuses the sandbox's seccomp filter (needs CONFIG_SECCOMP_FILTER)")
    _children = built


def _seccomp_mode() -> bytes:
    """This process's seccomp mode as /proc/self/status shows it (b"2": filtered)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Seccomp:"):
                    return line.split()[1]
    except OSError:
        pass
    return b""


def confine() -> None:
    """In a child of the zygote, once its set-up is done and before anything else runs:
    install the children's filter (none in unsafe mode)."""
    if _children is not None:
        _children.install()


def forbid_user_namespaces() -> None:
    """Put `NO_USER_NAMESPACES` on this process (a container engine's zygote) and so on
    everything it starts; raises OSError where it cannot be."""
    Filter(NO_USER_NAMESPACES).install()
