"""The layer cache: each layer of an image a folder of the files it changed, found by a key.

A layer's key hashes its parent's key, the id mapping its files are owned for, and what made
it (the instruction as the build read it: for a RUN its command and variables, for a COPY
the content of every file copied). Two Dockerfiles that share a prefix of instructions share
those layers, so the apt and pip steps every task of a corpus starts with are built once.

Layout, under `store_dir()`: layers/<key>/diff (the files, in overlayfs' format: a deleted
file is a 0/0 character device, a replaced folder is marked opaque) and layers/<key>/layer.json
(what made it). A layer is built in tmp/ and renamed into place whole, so an interrupted
build leaves no half layer, and everything already built stays.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import posixpath
import shutil
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlenvs.sandbox.shells.rootfs import OPAQUE_XATTR, image_entry, merged_entry

STORE_VARIABLE = "RLENVS_IMAGE_CACHE"


class StoreError(RuntimeError):
    """The layer cache cannot be used; the message says why and how to fix it."""


def store_dir() -> Path:
    """$RLENVS_IMAGE_CACHE, else /var/cache/rlenvs/images for root (the image's root, a
    host id of its own, must be able to reach the layers) or ~/.cache/rlenvs/images."""
    if os.environ.get(STORE_VARIABLE):
        return Path(os.environ[STORE_VARIABLE]).expanduser()
    if os.geteuid() == 0:
        return Path("/var/cache/rlenvs/images")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(cache) / "rlenvs" / "images"


def layer_key(parent: str, *parts: object) -> str:
    digest = hashlib.sha256(json.dumps([parent, *parts], sort_keys=True, default=str).encode())
    return digest.hexdigest()[:24]


@dataclass(frozen=True)
class Layer:
    key: str
    diff: Path


class LayerStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root or store_dir()
        try:
            (self.root / "layers").mkdir(parents=True, exist_ok=True)
            (self.root / "tmp").mkdir(exist_ok=True)
        except OSError as error:
            raise StoreError(f"the image cache {self.root} cannot be made ({error}): set ${STORE_VARIABLE}") from None
        if os.geteuid() == 0:
            self._check_reachable()

    def _check_reachable(self) -> None:
        """The sandbox's root is a host id of its own: every folder above the layers must let
        others through (not /root, mode 0700)."""
        for folder in (self.root / "layers", *(self.root / "layers").parents):
            if folder.is_relative_to(self.root):  # the store's own folders: made here, opened here
                os.chmod(folder, os.stat(folder).st_mode | 0o111)
            elif not os.stat(folder).st_mode & stat.S_IXOTH:
                raise StoreError(
                    f"the image cache {self.root} is inside {folder}, which other users cannot enter, and the sandbox "
                    f"runs an image as a user id of its own: set ${STORE_VARIABLE} to a folder such as /var/cache/rlenvs"
                )

    def get(self, key: str) -> Layer | None:
        folder = self.root / "layers" / key
        return Layer(key, folder / "diff") if (folder / "layer.json").is_file() else None

    def new(self, key: str) -> Path:
        """An empty folder to build layer `key` in (its diff/ beside work space for overlayfs)."""
        folder = self.root / "tmp" / f"{key}-{os.getpid()}-{time.monotonic_ns()}"
        folder.mkdir(mode=0o755)
        (folder / "diff").mkdir(mode=0o755)
        return folder

    def commit(self, key: str, folder: Path, made_by: dict) -> Layer:
        """Put the layer built in `folder` in place (whole, by a rename); a layer another build
        put there first wins."""
        for name in ("work", "merged"):
            _remove(folder / name)
        (folder / "layer.json").write_text(json.dumps({"key": key, **made_by}, indent=1) + "\n", encoding="utf-8")
        target = self.root / "layers" / key
        try:
            folder.rename(target)
        except OSError:
            _remove(folder)
            if self.get(key) is None:
                raise
        layer = self.get(key)
        assert layer is not None  # just renamed into place, or another build's
        return layer

    def discard(self, folder: Path) -> None:
        _remove(folder)


@contextlib.contextmanager
def temporary_store(folder: Path) -> Iterator[LayerStore]:
    """A store at `folder` that every build in this process uses (`$RLENVS_IMAGE_CACHE`) until
    the block ends; then the variable is as it was and the folder is gone. For a run that
    must build from nothing and leave nothing (a test session, a benchmark)."""
    previous = os.environ.get(STORE_VARIABLE)
    os.environ[STORE_VARIABLE] = str(folder)
    try:
        yield LayerStore(folder)
    finally:
        if previous is None:
            os.environ.pop(STORE_VARIABLE, None)
        else:
            os.environ[STORE_VARIABLE] = previous
        _remove(folder)


def _remove(path: Path) -> None:
    """Remove a folder overlayfs worked in (its work/ subfolder has mode 000)."""
    if not path.exists():
        return
    for folder, dirs, _ in os.walk(path):
        for name in dirs:
            full = os.path.join(folder, name)
            if not os.path.islink(full):
                os.chmod(full, 0o700)
    shutil.rmtree(path, ignore_errors=True)


# --- reading the stack of layers ------------------------------------------------------------------


def lookup(layers: Sequence[Layer], path: str) -> tuple[Layer, os.stat_result] | None:
    """The entry at absolute `path` in the image the layers (base first) make, and the layer
    it comes from (rlenvs.sandbox.shells.rootfs.image_entry: overlayfs' rules). None: no such entry."""
    by_folder = {str(layer.diff): layer for layer in layers}
    found = image_entry(tuple(reversed(by_folder)), path)
    return None if found is None else (by_folder[found[0]], found[1])


def read_image_file(layers: Sequence[Layer], path: str) -> bytes | None:
    """A regular file's content in the image, or None (absent, or not a regular file)."""
    found = lookup(layers, path)
    if found is None or not stat.S_ISREG(found[1].st_mode):
        return None
    return (found[0].diff / path.lstrip("/")).read_bytes()


PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")
"""Where an image's python3 may be (Debian's; python.org's images')."""


def image_python(lowers: Sequence[str], opaque_xattr: str = OPAQUE_XATTR) -> str | None:
    """The image's python3 (layer folders `lowers`, top first), or None."""
    return next((path for path in PYTHONS if image_entry(lowers, path, opaque_xattr) is not None), None)


def has_python_module(lowers: Sequence[str], name: str, opaque_xattr: str = OPAQUE_XATTR) -> bool:
    """Whether the image's python3 (layer folders `lowers`, top first) can import the
    top-level module `name` from its standard library or its system or /usr/local site
    folders (a package or a .py file)."""
    folders = {"/usr/lib/python3/dist-packages"}
    for lower in lowers:
        for parent in ("usr/lib", "usr/local/lib"):
            for found in Path(lower, parent).glob("python3.*"):
                folders.update(f"/{parent}/{found.name}{tail}" for tail in ("", "/site-packages", "/dist-packages"))
    return any(
        image_entry(lowers, f"{folder}/{name}{suffix}", opaque_xattr) is not None
        for folder in folders
        for suffix in ("", ".py")
    )


@dataclass(frozen=True)
class ImageUser:
    """Who a Dockerfile's final USER is in its image: what the agent's commands run as."""

    uid: int
    gid: int
    groups: tuple[int, ...]
    """Supplementary groups: those /etc/group lists the user in."""
    home: str

    def for_guest(self) -> str:
        return f"{self.uid}:{self.gid}:{','.join(map(str, self.groups))}"


def image_user(lowers: Sequence[str], spec: str, opaque_xattr: str = OPAQUE_XATTR) -> ImageUser | None:
    """USER `spec` (user[:group], names or numbers) as an engine resolves it in the image
    (layer folders `lowers`, top first): by its /etc/passwd and /etc/group; None for root.
    ValueError: a name the image does not have."""
    if spec in ("", "root", "0", "root:root", "0:0"):
        return None
    user, _, group = spec.partition(":")
    passwd, groups = image_table(lowers, "/etc/passwd", opaque_xattr), image_table(lowers, "/etc/group", opaque_xattr)
    by_uid = {row[1]: name for name, row in passwd.items() if len(row) > 1}
    if user.isdigit():
        name, uid = by_uid.get(user, ""), int(user)
        gid = int(passwd[name][2]) if name and len(passwd[name]) > 2 else uid
    elif user in passwd and len(passwd[user]) > 2:
        name, uid, gid = user, int(passwd[user][1]), int(passwd[user][2])
    else:
        raise ValueError(f"USER {spec} names the user {user}, whom the image's /etc/passwd does not have")
    if group.isdigit():
        gid = int(group)
    elif group:
        if group not in groups:
            raise ValueError(f"USER {spec} names the group {group}, which the image's /etc/group does not have")
        gid = int(groups[group][1])
    members = sorted({int(row[1]) for row in groups.values() if len(row) > 2 and name in row[2].split(",")})
    home = passwd[name][4] if name and len(passwd[name]) > 4 and passwd[name][4] else "/"
    return ImageUser(uid, gid, tuple(members), home)


def image_table(lowers: Sequence[str], path: str, opaque_xattr: str = OPAQUE_XATTR) -> dict[str, list[str]]:
    """An /etc/passwd-shaped file of the image (layer folders `lowers`, top first): each row's
    other fields by its first ({} when the image has no such file)."""
    found = image_entry(lowers, path, opaque_xattr)
    if found is None or not stat.S_ISREG(found[1].st_mode):
        return {}
    data = Path(f"{found[0]}{path}").read_bytes()
    rows = [line.split(":") for line in data.decode("utf-8", "replace").splitlines() if line.count(":") >= 2]
    return {row[0]: row[1:] for row in rows}


# --- reading a root as overlayfs shows it (COPY --from) ---------------------------------------------


def resolve_path(layers: Sequence[Layer], path: str, max_links: int = 40) -> str | None:
    """Absolute `path` in the image the layers (base first) make, with every link on the way and
    at its end followed inside that image (an absolute target starts at its root, `..` stops
    there), as a build resolves a `COPY --from` source. None: it leads nowhere."""
    parts = [part for part in path.split("/") if part]
    resolved: list[str] = []
    links = 0
    while parts:
        part = parts.pop(0)
        if part in (".", ".."):
            if part == ".." and resolved:
                resolved.pop()
            continue
        candidate = "/" + "/".join([*resolved, part])
        found = lookup(layers, candidate)
        if found is None:
            return None
        if stat.S_ISLNK(found[1].st_mode):
            links += 1
            if links > max_links:
                return None
            target = os.readlink(found[0].diff / candidate.lstrip("/"))
            resolved = [] if target.startswith("/") else resolved
            parts = [part for part in target.split("/") if part] + parts
            continue
        resolved.append(part)
    return "/" + "/".join(resolved)


def image_glob(layers: Sequence[Layer], pattern: str) -> list[str]:
    """The paths of the image that absolute `pattern` names (`*`, `?` and `[...]` match within
    one name, as Docker's COPY patterns do), sorted; each path there, if only as a link."""
    paths = ["/"]
    for part in (part for part in pattern.split("/") if part):
        following = []
        for base in paths:
            if not any(char in part for char in "*?["):
                following.append(posixpath.join(base, part))
                continue
            folder = resolve_path(layers, base)
            if folder is not None:
                names = sorted(name for name, _, _, _ in _children(layers, folder))
                following += [posixpath.join(base, name) for name in names if fnmatch.fnmatchcase(name, part)]
        paths = following
    found = []
    for path in paths:
        parent = resolve_path(layers, posixpath.dirname(path))
        if parent is not None and (path == "/" or lookup(layers, posixpath.join(parent, posixpath.basename(path)))):
            found.append(path)
    return found


def walk_image(layers: Sequence[Layer], folder: str) -> list[tuple[str, Path]]:
    """Everything below the image's `folder` (a real folder: links resolved), folders before
    what they hold, sorted: each path relative to `folder` and the file of the layer it
    comes from. Deleted entries are left out and an opaque folder hides lower layers' files."""
    found: list[tuple[str, Path]] = []

    def visit(path: str, relative: str, visible: list[str]) -> None:
        for name, lower, info, below in sorted(_children(layers, path, visible)):
            child, rel = posixpath.join(path, name), posixpath.join(relative, name) if relative else name
            found.append((rel, Path(lower + child)))
            if stat.S_ISDIR(info.st_mode):
                visit(child, rel, below)

    visit(folder, "", _folder_layers(layers, folder))
    return found


def _folder_layers(layers: Sequence[Layer], folder: str) -> list[str]:
    """The layer folders (top first) whose files show in the image's `folder`."""
    visible = [str(layer.diff) for layer in reversed(layers)]
    parts = [part for part in folder.split("/") if part]
    for depth in range(1, len(parts) + 1):
        name, parent = parts[depth - 1], "/" + "/".join(parts[: depth - 1])
        entries = [entry for entry in _children(layers, parent, visible) if entry[0] == name]
        if not entries or not stat.S_ISDIR(entries[0][2].st_mode):
            return []
        visible = entries[0][3]
    return visible


def _children(
    layers: Sequence[Layer], folder: str, visible: list[str] | None = None
) -> list[tuple[str, str, os.stat_result, list[str]]]:
    """The entries of the image's `folder` as overlayfs merges them from the layer folders
    `visible` (top first; default: all): (name, the layer folder it shows from, its stat, the
    layer folders whose files show inside it when it is a folder)."""
    if visible is None:
        visible = _folder_layers(layers, folder)
    names: set[str] = set()
    for lower in visible:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            names.update(os.listdir(lower + folder))
    entries = []
    for name in names:
        shown, below = merged_entry(visible, posixpath.join(folder, name).lstrip("/"))
        if shown is not None:
            entries.append((name, shown[0], shown[1], below))
    return entries
