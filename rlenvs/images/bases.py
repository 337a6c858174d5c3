"""Base images: what a Dockerfile's FROM becomes when nothing can be pulled.

No registry is reached. A base name maps (first matching pattern wins) to one of:

- `DebianRoot`: a root built from the Debian archive with mmdebstrap (Debian package
  `mmdebstrap`), a suite and a package list chosen to carry the tools of the image it stands
  in for; `note` says what differs;
- `LocalRoot`: the user's own root filesystem, a folder or a tarball (`docker export` of the
  real image, a `mmdebstrap` run elsewhere, an HPC site's image).

The defaults map Terminal-Bench's two base images and the plain Debian, Ubuntu and Python
images corpora start from. `RLENVS_BASE_IMAGES` names a JSON file of more mappings, tried
first: {"pattern": {"root": "/path/root.tar"}} or {"pattern": {"debian": "trixie",
"packages": ["python3", ...]}}; `fnmatch` patterns over the full name with its tag.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import stat
import subprocess
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rlenvs.sandbox.rootfs import IdMap

DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""Docker's PATH for an image that sets none."""
BASES_VARIABLE = "RLENVS_BASE_IMAGES"
TOOLS = (
    "python3", "python3-pip", "python3-venv", "python3-pytest", "tmux", "curl", "ca-certificates", "procps", "passwd",
)  # fmt: skip
"""What the Terminal-Bench images carry that tasks and their tests use: Python 3 with pip and
venv, tmux, curl, useradd (passwd). pytest is added because the tests of Terminal-Bench 1 tasks run offline
from the image (rlenvs.envs.terminal.boilerplate) where the real run-tests.sh would install it."""
MMDEBSTRAP_TIMEOUT_S = 1800


class BaseImageError(ValueError):
    """A FROM line whose base cannot be had here; the message says what would make it work."""


@dataclass(frozen=True)
class DebianRoot:
    suite: str
    packages: tuple[str, ...] = TOOLS
    note: str = ""
    """What differs from the image it stands in for."""
    environment: Mapping[str, str] = field(default_factory=lambda: {"PATH": DEFAULT_PATH, "LANG": "C.UTF-8"})
    mirror: str = DEBIAN_MIRROR
    pip_system_wide: bool = False
    """Let `pip install` write the system's Python as in python.org's images (Debian marks it
    EXTERNALLY-MANAGED, PEP 668, and pip then refuses without --break-system-packages)."""

    def key(self) -> str:
        return json.dumps(["debian", self.suite, sorted(self.packages), self.mirror, self.pip_system_wide])

    def describe(self) -> str:
        return f"Debian {self.suite} built with mmdebstrap ({', '.join(self.packages)})"


@dataclass(frozen=True)
class LocalRoot:
    path: Path
    environment: Mapping[str, str] = field(default_factory=lambda: {"PATH": DEFAULT_PATH})

    def key(self) -> str:
        info = self.path.stat()
        return json.dumps(["local", str(self.path.resolve()), info.st_size, info.st_mtime_ns])

    def describe(self) -> str:
        return f"the local root {self.path}"


BaseRoot = DebianRoot | LocalRoot

_T_BENCH = "ghcr.io/laude-institute/t-bench/"
PYTHON_TOOLS = (*TOOLS, "python-is-python3")
"""A Python image's: `python` is python3 there too."""
DEFAULT_BASES: dict[str, BaseRoot] = {
    f"{_T_BENCH}python-3-13*": DebianRoot(
        "trixie",
        PYTHON_TOOLS,
        note="Debian trixie's Python 3.13 in /usr/bin (the image has python.org's 3.13 in /usr/local/bin) and pytest",
        pip_system_wide=True,
    ),
    f"{_T_BENCH}ubuntu-24-04*": DebianRoot(
        "trixie", note="Debian trixie, not Ubuntu 24.04: Python 3.13 (Ubuntu's is 3.12), Debian's package names"
    ),
    "ubuntu:24.04*": DebianRoot("trixie", note="Debian trixie, not Ubuntu 24.04"),
    "ubuntu:22.04*": DebianRoot("bookworm", note="Debian bookworm, not Ubuntu 22.04"),
    "debian:trixie*": DebianRoot("trixie"),
    "debian:13*": DebianRoot("trixie"),
    "debian:bookworm*": DebianRoot("bookworm"),
    "debian:12*": DebianRoot("bookworm"),
    "python:3.13*": DebianRoot(
        "trixie", PYTHON_TOOLS, note="Debian trixie's Python 3.13 in /usr/bin, not python.org's", pip_system_wide=True
    ),
    "python:3.11*": DebianRoot(
        "bookworm",
        PYTHON_TOOLS,
        note="Debian bookworm's Python 3.11 in /usr/bin, not python.org's",
        pip_system_wide=True,
    ),
}


def base_for(name: str, extra: Mapping[str, BaseRoot] | None = None) -> BaseRoot:
    """The root a FROM name maps to: `extra`, then $RLENVS_BASE_IMAGES, then the defaults."""
    for table in (extra or {}, _user_bases(), DEFAULT_BASES):
        for pattern, root in table.items():
            if fnmatch.fnmatchcase(name, pattern):
                return root
    raise BaseImageError(
        f"the base image {name} is neither mapped to a local root nor can it be pulled (rlenvs reaches no "
        f"registry): map it in the JSON file ${BASES_VARIABLE} names, to your own root "
        f'({{"{name}": {{"root": "/path/to/root.tar"}}}}, e.g. from `docker export`) or to a Debian suite '
        f'({{"{name}": {{"debian": "trixie", "packages": ["python3"]}}}})'
    )


def _user_bases() -> dict[str, BaseRoot]:
    path = os.environ.get(BASES_VARIABLE)
    if not path:
        return {}
    try:
        table = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BaseImageError(f"${BASES_VARIABLE}={path} cannot be read as JSON: {error}") from None
    if not isinstance(table, dict):
        raise BaseImageError(f"${BASES_VARIABLE}={path} must hold a JSON object of pattern: mapping")
    bases: dict[str, BaseRoot] = {}
    for pattern, spec in table.items():
        if isinstance(spec, dict) and isinstance(spec.get("root"), str):
            bases[pattern] = LocalRoot(Path(spec["root"]).expanduser())
        elif isinstance(spec, dict) and isinstance(spec.get("debian"), str):
            packages = spec.get("packages", list(TOOLS))
            if not isinstance(packages, list) or not all(isinstance(name, str) for name in packages):
                raise BaseImageError(f"${BASES_VARIABLE}: {pattern}'s packages must be a list of Debian package names")
            bases[pattern] = DebianRoot(spec["debian"], tuple(packages), note=str(spec.get("note", "")))
        else:
            raise BaseImageError(
                f'${BASES_VARIABLE}: {pattern} must map to {{"root": PATH}} or {{"debian": SUITE, "packages": [...]}}, '
                f"got {spec!r}"
            )
    return bases


# --- making the root ----------------------------------------------------------------------------


def make_root(base: BaseRoot, target: Path, ids: IdMap) -> None:
    """Fill the empty folder `target` with `base`'s files, owned for `ids`."""
    if isinstance(base, DebianRoot):
        _mmdebstrap(base, target)
        if base.pip_system_wide:
            for marker in target.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
                marker.unlink()
        shift_owners(target, ids)
    elif base.path.is_dir():
        copied = subprocess.run(  # owners, modes, links and times kept, as `docker export` has them
            ["cp", "-a", "--", f"{base.path}/.", str(target)], capture_output=True, text=True, check=False
        )
        if copied.returncode != 0:
            raise BaseImageError(f"the local root {base.path} could not be copied: {copied.stderr.strip()[-500:]}")
        shift_owners(target, ids)
    elif base.path.is_file():
        _untar(base.path, target)
        shift_owners(target, ids)
    else:
        raise BaseImageError(f"the local root {base.path} is neither a folder nor a tarball")


def _mmdebstrap(base: DebianRoot, target: Path) -> None:
    program = shutil.which("mmdebstrap")
    if program is None:
        raise BaseImageError(
            f"{base.describe()} needs mmdebstrap: `apt-get install mmdebstrap` (Debian/Ubuntu), or map the base "
            f"image to a root of your own (${BASES_VARIABLE})"
        )
    argv = [program, "--variant=apt", "--quiet", f"--include={','.join(base.packages)}", base.suite, str(target)]
    run = subprocess.run(
        [*argv, base.mirror], capture_output=True, text=True, timeout=MMDEBSTRAP_TIMEOUT_S, check=False
    )
    if run.returncode != 0:
        raise BaseImageError(
            f"mmdebstrap could not build {base.describe()} (exit status {run.returncode}): "
            f"{(run.stderr or run.stdout).strip()[-800:]}; as a user other than root it needs subordinate ids "
            f"(/etc/subuid); or map the base image to a root of your own (${BASES_VARIABLE})"
        )


def _untar(path: Path, target: Path) -> None:
    """A root tarball's files (no device nodes: the sandbox has its own /dev)."""

    def keep(member: tarfile.TarInfo, where: str) -> tarfile.TarInfo | None:
        if member.ischr() or member.isblk() or member.isfifo():
            return None
        return member

    try:
        with tarfile.open(path) as archive:
            archive.extractall(target, numeric_owner=True, filter=keep)
    except (tarfile.TarError, OSError) as error:
        raise BaseImageError(f"the root tarball {path} cannot be unpacked: {error}") from None


def shift_owners(root: Path, ids: IdMap) -> None:
    """Give every file under `root` the host owner its owner in the image has under `ids`
    (as root: +IMAGE_ID_BASE; as another user: that user, who owns everything already)."""
    if ids.count == 1:
        return
    seen: set[int] = set()  # hard links: one inode, shifted once
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            _shift(os.path.join(folder, name), ids, seen)
    _shift(str(root), ids, seen)


def _shift(path: str, ids: IdMap, seen: set[int]) -> None:
    info = os.lstat(path)
    if info.st_ino in seen:
        return
    seen.add(info.st_ino)
    uid, gid = ids.host_ids(info.st_uid, info.st_gid)
    os.lchown(path, uid, gid)
    if not stat.S_ISLNK(info.st_mode):  # chown clears the set-id bits
        os.chmod(path, stat.S_IMODE(info.st_mode))
