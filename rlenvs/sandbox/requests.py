"""What a sandboxed execution is given: its limits, and for a test run the test program."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

MIB = 1 << 20
MAXIMA = {
    "timeout_s": 86_400.0,
    "memory_mb": 1 << 20,
    "cpu_s": 86_400,
    "processes": 1 << 16,
    "file_size_mb": 1 << 20,
    "open_files": 1 << 20,
    "output_bytes": 1 << 30,
    "disk_mb": 1 << 20,
    "disk_inodes": 1 << 32,
    "sandbox_memory_mb": 1 << 20,
}
"""Upper bounds (a day, a TiB, ...): past them a limit is a mistake, and the kernel or the
host's timers would refuse it at every call instead of once, here."""
BYTES_PER_INODE = 2048
MIN_INODES = 1024
"""`Limits.disk_inodes`'s default: one inode per 2 KiB of `disk_mb`, at least 1024. A tmpfs
inode (with its dentry) costs the host about 1 KiB of kernel memory that no rlimit counts,
so files are capped as bytes are: with this default the entries of a tmpfs cost the kernel
at most about half its byte size, where the kernel's own default (half the host's RAM in
pages) let a million empty files take 1 GB. Not fewer: a file with content takes a 4 KiB
page anyway, and a workspace of 25,000 small entries (a dataset, a checkout) must still fit
the default 64 MiB (32,768 entries)."""
SANDBOX_OVERHEAD_MB = 64
"""The sandbox's own processes (bubblewrap, the zygote, a test runner's Python) beside what an
execution uses: `Limits.sandbox_memory_mb`'s default adds it."""
INODE_KERNEL_BYTES = 1024
"""What a tmpfs inode with its dentry costs the kernel, charged to the sandbox's cgroup."""
MIN_SANDBOX_MEMORY_MB = 128
"""Under this a sandbox's memory cgroup would kill its own zygote and test runner."""
OPTIONAL = ("cpu_s", "disk_inodes", "sandbox_memory_mb")
"""The limits whose None means a default derived from the others."""


@dataclass(frozen=True)
class Limits:
    """Per-execution limits. The defaults suit one unit-test run of a small function.

    `cpu_s=None` means the CPU-time rlimit is a backstop one second past the wall-clock
    timeout (rounded up), so a CPU spin ends at the timeout and is reported as one: with the
    two equal they raced, and a spin that had a core to itself could die of SIGXCPU a moment
    before a loaded host's deadline, read as the solution's own error. `processes` is the number of processes and threads the
    sandbox's uid may have (the zygote included, and in a pool worker the sandbox's pid 1
    that waits for it); `disk_mb` the size of each writable tmpfs
    (/workspace and /tmp), so filling the disk fills only that; `disk_inodes` the number of
    files, folders and links each of them holds (None: `tmpfs_inodes`'s default), past which
    creating one fails with ENOSPC ("No space left on device"). `sandbox_memory_mb` caps the
    memory of the whole sandbox, its processes, files and the kernel memory they cost together,
    where the host gives the sandbox a memory cgroup (`rlenvs.sandbox.cgroups`; a container
    engine's `--memory`); None: `memory_mb` for one process, plus the three tmpfs full and their
    inodes, plus `SANDBOX_OVERHEAD_MB`. The rlimits alone let `processes` processes take
    `memory_mb` each. `memory_mb` is each process's address space (RLIMIT_AS) and
    `file_size_mb` the largest file it may write, except in a shell session whose sandbox a
    memory cgroup caps: there, as in a container, only the cgroup counts for memory (a JVM
    reserves over a gigabyte of address space it never uses) and a file may fill the disk.
    """

    timeout_s: float = 10.0
    memory_mb: int = 1024
    cpu_s: int | None = None
    processes: int = 64
    file_size_mb: int = 16
    open_files: int = 256
    output_bytes: int = 64 * 1024
    disk_mb: int = 64
    disk_inodes: int | None = None
    sandbox_memory_mb: int | None = None

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is None and item.name in OPTIONAL:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"Limits.{item.name} must be a positive number, got {value!r}")
            if item.name != "timeout_s" and not isinstance(value, int):
                raise ValueError(f"Limits.{item.name} must be an int, got {value!r}")
            if not value <= MAXIMA[item.name]:
                raise ValueError(f"Limits.{item.name}={value!r} is over its maximum {MAXIMA[item.name]}")
        if self.processes < 8:
            raise ValueError(f"Limits.processes={self.processes} is too low: the sandbox itself needs a few; use >= 8")
        if self.sandbox_memory_mb is not None and self.sandbox_memory_mb < MIN_SANDBOX_MEMORY_MB:
            raise ValueError(
                f"Limits.sandbox_memory_mb={self.sandbox_memory_mb} is too low: the sandbox's own processes need "
                f"about {SANDBOX_OVERHEAD_MB} MiB of it; use >= {MIN_SANDBOX_MEMORY_MB}, or None for the default"
            )

    @property
    def tmpfs_inodes(self) -> int:
        """The inode cap of each writable tmpfs: `disk_inodes`, else one per `BYTES_PER_INODE`
        of `disk_mb`, at least `MIN_INODES`."""
        if self.disk_inodes is not None:
            return self.disk_inodes
        return max(MIN_INODES, (self.disk_mb * MIB) // BYTES_PER_INODE)

    @property
    def sandbox_memory_bytes(self) -> int:
        """The memory cap of the whole sandbox (see the class docstring), in bytes."""
        if self.sandbox_memory_mb is not None:
            return self.sandbox_memory_mb * MIB
        tmpfs = 3  # the workspace, /tmp and /dev/shm
        files = tmpfs * (self.disk_mb * MIB + self.tmpfs_inodes * INODE_KERNEL_BYTES)
        return (self.memory_mb + SANDBOX_OVERHEAD_MB) * MIB + files

    def for_guest(self, extra_processes: int = 0, *, per_process: bool = True) -> dict:
        """The request fields the zygote applies, in bytes and whole seconds. `per_process`
        False, for a sandbox capped as a whole, as a container is (a memory cgroup, its tmpfs
        sizes; see ShellSession): no RLIMIT_AS (memory_bytes None), and a file may be as large
        as the disk (`disk_mb`). A JVM reserves over a gigabyte of address space it never
        touches and failed to start under `memory_mb`; g++ writing the object of a test
        framework's main went over `file_size_mb` (SIGXFSZ)."""
        return {
            "timeout_s": float(self.timeout_s),
            "memory_bytes": self.memory_mb * MIB if per_process else None,
            "cpu_s": self.cpu_s if self.cpu_s is not None else math.ceil(self.timeout_s) + 1,
            "processes": self.processes + extra_processes,
            "file_size_bytes": (self.file_size_mb if per_process else max(self.file_size_mb, self.disk_mb)) * MIB,
            "open_files": self.open_files,
            "output_bytes": self.output_bytes,
        }


@dataclass(frozen=True)
class TestProgram:
    """Tests to run against a solution, kept out of the solution's process.

    `setup` runs first in the test runner (imports, helpers, fixtures); then each name of
    `remote` is bound to a proxy that calls the solution's function of the mapped name
    (`{"candidate": "add"}`); then each snippet of `tests` runs in that namespace, in order,
    and passes when it raises nothing. All of it is trusted code from the dataset: it never
    runs the solution's code, only calls it through the proxies.
    """

    tests: tuple[str, ...]
    remote: Mapping[str, str]
    setup: str = ""
    names: tuple[str, ...] = field(default=())
    """Short labels for the tests in reports (defaults to the snippets themselves)."""

    __test__ = False  # not a pytest test class, whatever module imports it

    def __post_init__(self) -> None:
        for name in ("tests", "names"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(item, str) for item in value):
                raise TypeError(f"TestProgram.{name} must be a sequence of str (one per test), got {value!r}")
        if not isinstance(self.setup, str):
            raise TypeError(f"TestProgram.setup must be a str, got {type(self.setup).__name__}")
        if not isinstance(self.remote, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.remote.items()
        ):
            raise TypeError(f"TestProgram.remote must map str to str (test name -> solution name), got {self.remote!r}")
        if not self.tests:
            raise ValueError("a TestProgram needs at least one test")
        if not self.remote:
            raise ValueError("a TestProgram needs at least one remote name (the solution's function)")
        if self.names and len(self.names) != len(self.tests):
            raise ValueError(f"TestProgram.names has {len(self.names)} labels for {len(self.tests)} tests")
        object.__setattr__(self, "tests", tuple(self.tests))
        object.__setattr__(self, "remote", dict(self.remote))
        object.__setattr__(self, "names", tuple(self.names) or self.tests)

    def for_guest(self) -> dict:
        return {"setup": self.setup, "tests": list(self.tests), "remote": dict(self.remote)}
