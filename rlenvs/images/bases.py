"""Base images: what a Dockerfile's FROM becomes when nothing can be pulled.

No registry is reached. A base name maps (first matching pattern wins) to one of:

- `DebianRoot`: a root built with mmdebstrap (Debian package `mmdebstrap`) from a Debian-family
  archive, the Debian archive or the Ubuntu archive, a suite and a package list chosen to carry
  the tools of the image it stands in for; `note` says what differs;
- `LocalRoot`: the user's own root filesystem, a folder or a tarball (`docker export` of the
  real image, a `mmdebstrap` run elsewhere, an HPC site's image).

A stand-in behaves like the image it stands for where a Dockerfile can tell: a build from it
starts in the image's WORKDIR with the image's ENV (Terminal-Bench's images work in /app, and
one task in four relies on it), its apt sources are the image's (the suite with its updates and
security suites, Ubuntu's four components), and nothing a task's own build would replace is a
Debian package there: in the Python images pip is installed as python.org's images have it, in
/usr/local, where `pip install --upgrade pip` can replace it (Debian's python3-pip cannot be
uninstalled by pip: "no RECORD file ... installed by debian"). What the image lacks is added
only where the sandbox or the tests need it (python3, tmux, curl). Not pytest: the verdict
brings its own (rlenvs.images.verdict_packages), so a task's `pip install pytest==8.4.1` meets
none of Debian's (whose pluggy, iniconfig and packaging pip could not replace either).

Ubuntu images get a real Ubuntu root where the Ubuntu archive can be reached, checked with the
host's `ubuntu-keyring` or, where the host has none (Debian 12), the copy of Ubuntu's keyring
package that rlenvs fetches by its digest (rlenvs.images.keyrings); else a Debian root stands
in, and its `note` says so and why. Reachability is a probe of the archive's Release file, bounded in time and asked
once per process; a root already built is used without asking.

The defaults (`DEFAULT_BASES`, described in docs/envs/terminal.md) map Terminal-Bench's base
images, `ubuntu:`, `debian:`, `python:` 3.8-3.14 and `buildpack-deps:`. `$RLENVS_BASE_IMAGES`
names a JSON file of more mappings, tried first, `fnmatch` patterns over the full name with its
tag (`user_bases` says what each may hold):

    {"quay.io/me/img:*": {"root": "/roots/img.tar", "workdir": "/app"},
     "ubuntu:*": {"ubuntu": "noble", "mirror": "http://mirror.example/ubuntu"},
     "debian:*": {"debian": "trixie", "packages": ["python3", "tmux"]}}
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import platform
import shlex
import shutil
import stat
import subprocess
import tarfile
import threading
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlenvs.images.keyrings import ubuntu_keyring
from rlenvs.sandbox.shells.rootfs import IdMap

DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEBIAN_SECURITY_MIRROR = "http://deb.debian.org/debian-security"
_PORTS = platform.machine() not in ("x86_64", "AMD64", "i386", "i686")
UBUNTU_MIRROR = "http://ports.ubuntu.com/ubuntu-ports" if _PORTS else "http://archive.ubuntu.com/ubuntu"
"""Ubuntu's archive for this machine's architecture (amd64 and i386 on archive.ubuntu.com, the
others on ports.ubuntu.com)."""
UBUNTU_SECURITY_MIRROR = UBUNTU_MIRROR if _PORTS else "http://security.ubuntu.com/ubuntu"
UBUNTU_KEYRING = "/usr/share/keyrings/ubuntu-archive-keyring.gpg"
"""Package `ubuntu-keyring` (Debian 13 and later, Ubuntu): mmdebstrap checks Ubuntu's archive
against it. The Debian archive's keys are apt's own on a Debian host."""
UBUNTU_COMPONENTS = ("main", "restricted", "universe", "multiverse")
"""As the ubuntu images' sources have them: a task's `apt-get install` of a universe package works."""
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""Docker's PATH for an image that sets none (the debian and ubuntu images set only it)."""
PYTHON_PATH = "/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The python images' (`ENV PATH /usr/local/bin:$PATH` over Docker's)."""
BASES_VARIABLE = "RLENVS_BASE_IMAGES"
TOOLS = (
    "python3", "python3-pip", "python3-venv", "tmux", "curl", "ca-certificates", "procps", "passwd",
)  # fmt: skip
"""What the Terminal-Bench images carry that tasks and their tests use: Python 3 with pip and
venv, tmux, curl, useradd (passwd)."""
PYTHON_TOOLS = tuple(name for name in TOOLS if name != "python3-pip") + ("python-is-python3",)
"""A Python image's: `python` is python3 there too, and pip is not Debian's package but installed
from Debian's pip wheel into /usr/local (DebianRoot.pip_system_wide), where pip can upgrade it."""
BUILDPACK_CURL = ("ca-certificates", "curl", "gnupg", "netbase", "wget")
"""docker-library/buildpack-deps' `-curl` images (Debian's also carry sq, Ubuntu's tzdata)."""
BUILDPACK_SCM = (*BUILDPACK_CURL, "git", "mercurial", "openssh-client", "subversion", "procps")
"""Its `-scm` images: the curl ones and version control."""
BUILDPACK = (
    *BUILDPACK_SCM, "autoconf", "automake", "bzip2", "default-libmysqlclient-dev", "dpkg-dev", "file", "g++", "gcc",
    "imagemagick", "libbz2-dev", "libc6-dev", "libcurl4-openssl-dev", "libdb-dev", "libevent-dev", "libffi-dev",
    "libgdbm-dev", "libglib2.0-dev", "libgmp-dev", "libjpeg-dev", "libkrb5-dev", "liblzma-dev", "libmagickcore-dev",
    "libmagickwand-dev", "libmaxminddb-dev", "libncurses5-dev", "libncursesw5-dev", "libpng-dev", "libpq-dev",
    "libreadline-dev", "libsqlite3-dev", "libssl-dev", "libtool", "libwebp-dev", "libxml2-dev", "libxslt-dev",
    "libyaml-dev", "make", "patch", "unzip", "xz-utils", "zlib1g-dev",
)  # fmt: skip
"""Its plain images (the build toolchain and the headers of common libraries), which python.org's
non-slim images are built on: `pip install` of a package with C code compiles there."""
MMDEBSTRAP_TIMEOUT_S = 1800
PROBE_TIMEOUT_S = 3.0
"""How long the probe of an archive waits (name lookup included) before the archive counts as
out of reach."""


class BaseImageError(ValueError):
    """A FROM line whose base cannot be had here; the message says what would make it work."""


@dataclass(frozen=True)
class DebianRoot:
    """A root mmdebstrap builds from a Debian-family archive (Debian's by default; Ubuntu's with
    `ubuntu_root`): `suite` from `mirror`, the apt `sources` the root keeps (default: the suite
    alone, main), the `packages` installed."""

    suite: str
    packages: tuple[str, ...] = TOOLS
    note: str = ""
    """What differs from the image it stands in for."""
    environment: Mapping[str, str] = field(default_factory=lambda: {"PATH": DEFAULT_PATH})
    mirror: str = DEBIAN_MIRROR
    pip_system_wide: bool = False
    """Let `pip install` write the system's Python as in python.org's images: Debian marks it
    EXTERNALLY-MANAGED (PEP 668) and pip then refuses without --break-system-packages, so the
    mark goes; and pip comes from Debian's own wheel (python3-venv's) installed into /usr/local,
    as python.org's images have it, where a build's `pip install --upgrade pip` can replace it.
    /usr/local/bin/python3 and python lead to /usr/bin/python3, for scripts that name them."""
    workdir: str = "/"
    """The image's WORKDIR: where a build from it starts (made in the root)."""
    sources: tuple[str, ...] = ()
    """The apt source lines the root keeps and builds from (`deb URL SUITE COMPONENTS`); none:
    `mirror`'s `suite`, main."""
    keyring: str = ""
    """The archive's keys (a file); none: apt's own, as for the Debian archive on a Debian host."""
    distribution: str = "Debian"
    fallback: DebianRoot | None = None
    """What stands in where this root's archive cannot be reached or its keyring is missing
    (an Ubuntu root's Debian stand-in); none: that is an error."""

    def apt_sources(self) -> tuple[str, ...]:
        return self.sources or (f"deb {self.mirror} {self.suite} main",)

    def key(self) -> str:
        made = ["debian", self.suite, sorted(self.packages), list(self.apt_sources()), self.keyring]
        return json.dumps([*made, self.pip_system_wide, self.workdir])

    def describe(self) -> str:
        return f"{self.distribution} {self.suite} built with mmdebstrap ({', '.join(self.packages)})"


@dataclass(frozen=True)
class LocalRoot:
    path: Path
    environment: Mapping[str, str] = field(default_factory=lambda: {"PATH": DEFAULT_PATH})
    workdir: str = "/"
    """The image's WORKDIR (`docker export` keeps files, not the image's configuration)."""
    note: str = ""

    def key(self) -> str:
        info = self.path.stat()
        return json.dumps(["local", str(self.path.resolve()), info.st_size, info.st_mtime_ns, self.workdir])

    def describe(self) -> str:
        return f"the local root {self.path}"


BaseRoot = DebianRoot | LocalRoot


def debian_root(suite: str, packages: tuple[str, ...] = TOOLS, **config: Any) -> DebianRoot:
    """A root of the Debian archive with the sources the debian images keep: the suite, its
    updates and its security suite (main)."""
    sources = (
        f"deb {DEBIAN_MIRROR} {suite} main",
        f"deb {DEBIAN_MIRROR} {suite}-updates main",
        f"deb {DEBIAN_SECURITY_MIRROR} {suite}-security main",
    )
    return DebianRoot(suite, packages, sources=sources, **config)


def ubuntu_root(suite: str, packages: tuple[str, ...] = TOOLS, **config: Any) -> DebianRoot:
    """A root of the Ubuntu archive with the sources the ubuntu images keep: the suite, its
    updates and its security suite, all four components."""
    components = " ".join(UBUNTU_COMPONENTS)
    sources = (
        f"deb {UBUNTU_MIRROR} {suite} {components}",
        f"deb {UBUNTU_MIRROR} {suite}-updates {components}",
        f"deb {UBUNTU_SECURITY_MIRROR} {suite}-security {components}",
    )
    config.setdefault("keyring", UBUNTU_KEYRING)
    return DebianRoot(suite, packages, mirror=UBUNTU_MIRROR, sources=sources, distribution="Ubuntu", **config)


# --- the defaults ---------------------------------------------------------------------------------

DEBIAN_PYTHON = {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"}
"""Each Debian suite's python3."""
UBUNTU_STAND_IN = {"noble": ("24.04", "3.12", "trixie"), "jammy": ("22.04", "3.10", "bookworm")}
"""Each Ubuntu suite: its version, its python3, and the Debian suite that stands in for it out of
reach of Ubuntu's archive (the one whose Python is nearest, the newer of two as near)."""
PYTHON_SUITE = {
    "3.8": "bullseye", "3.9": "bullseye", "3.10": "bookworm", "3.11": "bookworm", "3.12": "trixie",
    "3.13": "trixie", "3.14": "trixie",
}  # fmt: skip
"""A python image's version to the Debian suite whose python3 is nearest (of two as near, the
newer: code written for 3.10 runs on 3.11 more often than on 3.9)."""
_NOT_APT = {
    "*alpine*": "is Alpine Linux (apk, musl), which no Debian root stands in for",
    "*windowsservercore*": "is a Windows image",
    "*nanoserver*": "is a Windows image",
}
"""Bases whose tags a pattern below would match but whose Dockerfiles cannot build on Debian."""
_T_BENCH = "ghcr.io/laude-institute/t-bench/"


def _ubuntu(suite: str, packages: tuple[str, ...] = TOOLS, workdir: str = "/", what: str = "") -> DebianRoot:
    """Ubuntu `suite` from its archive, with the Debian stand-in for when it is out of reach."""
    version, python, debian = UBUNTU_STAND_IN[suite]
    what = what or f"Ubuntu {version}"
    fallback = debian_root(
        debian,
        packages,
        workdir=workdir,
        note=f"Debian {debian}, not {what}: Python {DEBIAN_PYTHON[debian]} (Ubuntu's is {python}), Debian's "
        "package names and versions",
    )
    return ubuntu_root(suite, packages, workdir=workdir, fallback=fallback)


def _python(version: str, tag_suite: str, slim: bool, workdir: str = "/", what: str = "") -> DebianRoot:
    """A python.org image `python:VERSION[-slim][-TAG_SUITE]`: the Debian suite whose python3 is
    nearest, with the toolchain of buildpack-deps for the non-slim ones (built on it)."""
    suite = PYTHON_SUITE[version]
    packages = PYTHON_TOOLS if slim else (*PYTHON_TOOLS, "python3-dev", *BUILDPACK)
    have = DEBIAN_PYTHON[suite]
    differs = [f"Debian {suite}'s Python {have} (in /usr/bin, linked from /usr/local/bin), not python.org's {version}"]
    if version != have:
        differs[0] = f"Python {have}, not {version}: " + differs[0]
    if tag_suite and tag_suite != suite:
        differs.append(f"Debian {suite}, not {tag_suite}")
    note = f"{what}: " if what else ""
    return debian_root(
        suite,
        packages,
        note=note + "; ".join(differs),
        environment={"PATH": PYTHON_PATH, "LANG": "C.UTF-8"},
        pip_system_wide=True,
        workdir=workdir,
    )


def _buildpack(suite: str, tier: tuple[str, ...]) -> DebianRoot:
    packages = tuple(dict.fromkeys((*tier, *TOOLS)))
    if suite in UBUNTU_STAND_IN:
        return _ubuntu(suite, packages, what=f"buildpack-deps:{suite} (Ubuntu {UBUNTU_STAND_IN[suite][0]})")
    return debian_root(suite, packages)


def _defaults() -> dict[str, BaseRoot]:
    bases: dict[str, BaseRoot] = {
        # Terminal-Bench's: python:3.13-slim-bookworm and ubuntu:24.04, each with tmux and
        # asciinema (not here in the Python one: Debian's would be the image's Python's, and
        # a task's own `pip install asciinema` could not replace it), WORKDIR /app.
        f"{_T_BENCH}python-3-13*": _python("3.13", "bookworm", slim=True, workdir="/app", what="t-bench/python-3-13"),
        f"{_T_BENCH}ubuntu-24-04*": _ubuntu(
            "noble", (*TOOLS, "asciinema"), workdir="/app", what="t-bench/ubuntu-24-04 (Ubuntu 24.04)"
        ),
    }
    for suite, (version, _, _) in UBUNTU_STAND_IN.items():
        for tag in (version, suite):
            bases[f"ubuntu:{tag}"] = bases[f"ubuntu:{tag}-*"] = bases[f"ubuntu:{tag}.*"] = _ubuntu(suite)
    bases["ubuntu"] = bases["ubuntu:latest"] = _ubuntu("noble")
    for suite, number in (("trixie", "13"), ("bookworm", "12"), ("bullseye", "11")):
        for tag in (suite, number):
            bases[f"debian:{tag}"] = bases[f"debian:{tag}-*"] = bases[f"debian:{tag}.*"] = debian_root(suite)
    for tag in ("", ":latest", ":stable", ":stable-*"):
        bases[f"debian{tag}"] = debian_root("trixie")
    for version in PYTHON_SUITE:  # the tags naming a Debian release first, then the others
        for tag_suite in ("buster", *DEBIAN_PYTHON):
            for form in (f"{version}-slim-{tag_suite}", f"{version}.*-slim-{tag_suite}"):
                bases[f"python:{form}*"] = _python(version, tag_suite, slim=True)
            for form in (f"{version}-{tag_suite}", f"{version}.*-{tag_suite}"):
                bases[f"python:{form}*"] = _python(version, tag_suite, slim=False)
        bases[f"python:{version}-slim*"] = bases[f"python:{version}.*-slim*"] = _python(version, "", slim=True)
        bases[f"python:{version}"] = bases[f"python:{version}.*"] = _python(version, "", slim=False)
    for tag in ("3-slim*", "slim*"):
        bases[f"python:{tag}"] = _python("3.13", "", slim=True, what="python's newest 3.x")
    for tag in ("3", "latest", "3-*"):
        bases[f"python:{tag}"] = _python("3.13", "", slim=False, what="python's newest 3.x")
    for suite in (*DEBIAN_PYTHON, *UBUNTU_STAND_IN):
        bases[f"buildpack-deps:{suite}-curl"] = _buildpack(suite, BUILDPACK_CURL)
        bases[f"buildpack-deps:{suite}-scm"] = _buildpack(suite, BUILDPACK_SCM)
        bases[f"buildpack-deps:{suite}"] = _buildpack(suite, BUILDPACK)
    for tag, tier in (("curl", BUILDPACK_CURL), ("scm", BUILDPACK_SCM), ("latest", BUILDPACK), ("", BUILDPACK)):
        bases[f"buildpack-deps:{tag}" if tag else "buildpack-deps"] = _buildpack("trixie", tier)
    return bases


DEFAULT_BASES: dict[str, BaseRoot] = _defaults()


HUB_MIRRORS = (
    "docker.io/", "index.docker.io/", "registry-1.docker.io/", "registry.hub.docker.com/", "public.ecr.aws/docker/",
    "mirror.gcr.io/",
)  # fmt: skip
"""Registries that serve Docker Hub's images under their own names: `public.ecr.aws/docker/library/ubuntu:24.04`
is Docker's `ubuntu:24.04` (Harbor tasks name ECR's copy to dodge Docker Hub's pull limits)."""


def hub_name(name: str) -> str:
    """The Docker Hub name a FROM name stands for, as the defaults are keyed: a mirror's prefix
    (HUB_MIRRORS) and `library/` dropped, and a `@sha256:...` digest, which pins one build of
    the tag that no stand-in is (what stood in says so, under the name as written)."""
    bare = name.partition("@")[0]
    mirror = next((prefix for prefix in HUB_MIRRORS if bare.startswith(prefix)), "")
    bare = bare[len(mirror) :]
    return bare.removeprefix("library/") if mirror or bare.startswith("library/") else bare


def base_for(name: str, extra: Mapping[str, BaseRoot] | None = None) -> BaseRoot:
    """The root a FROM name maps to: `extra`, then $RLENVS_BASE_IMAGES (each by the name as
    written, then as Docker Hub's: `hub_name`), then the defaults (by Docker Hub's name)."""
    hub = hub_name(name)
    for table in (extra or {}, user_bases()):
        for candidate in dict.fromkeys((name, hub)):
            for pattern, root in table.items():
                if fnmatch.fnmatchcase(candidate, pattern):
                    return root
    how = (
        f"map it in the JSON file ${BASES_VARIABLE} names, to your own root "
        f'({{"{name}": {{"root": "/path/to/root.tar"}}}}, e.g. from `docker export`) or to a Debian or Ubuntu suite '
        f'({{"{name}": {{"debian": "trixie", "packages": ["python3"]}}}})'
    )
    for pattern, what in _NOT_APT.items():
        if fnmatch.fnmatchcase(hub, pattern):
            raise BaseImageError(
                f"the base image {name} {what}, and it cannot be pulled (rlenvs reaches no registry): {how}"
            )
    for pattern, root in DEFAULT_BASES.items():
        if fnmatch.fnmatchcase(hub, pattern):
            return root
    raise BaseImageError(
        f"the base image {name} is neither mapped to a local root nor can it be pulled (rlenvs reaches no registry): {how}"
    )


_ROOT_KEYS = {"root", "workdir", "environment", "note"}
_ARCHIVE_KEYS = {"debian", "ubuntu", "mirror", "keyring", "components", "packages", "workdir", "environment", "note",
                 "pip_system_wide"}  # fmt: skip


def user_bases() -> dict[str, BaseRoot]:
    """The mappings of the JSON file $RLENVS_BASE_IMAGES names, in its order. Each pattern maps to
    one of:

    - {"root": PATH} (a folder or a tarball), with "workdir" and "environment" (an object of
      strings) as the image sets them, since `docker export` keeps neither;
    - {"debian": SUITE} or {"ubuntu": SUITE}: that archive's suite, built with mmdebstrap, with
      "mirror" (the archive's URL; then the suite alone is the root's source, without updates
      and security), "keyring" (a file; Ubuntu's: ubuntu-keyring's), "components" (default: main
      for Debian, Ubuntu's four), "packages" (default: TOOLS), "workdir", "environment",
      "pip_system_wide" (true: the system Python's pip as in python.org's images; needs
      python3-venv and not python3-pip among the packages) and "note".

    An Ubuntu archive out of reach is an error here, not a Debian stand-in: you named it."""
    path = os.environ.get(BASES_VARIABLE)
    if not path:
        return {}
    try:
        table = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BaseImageError(f"${BASES_VARIABLE}={path} cannot be read as JSON: {error}") from None
    if not isinstance(table, dict):
        raise BaseImageError(f"${BASES_VARIABLE}={path} must hold a JSON object of pattern: mapping")
    return {
        pattern: _user_base(pattern, spec, f"${BASES_VARIABLE} ({path}): {pattern!r}")
        for pattern, spec in table.items()
    }


def _user_base(pattern: str, spec: object, where: str) -> BaseRoot:
    if not isinstance(spec, dict) or not ({"root", "debian", "ubuntu"} & spec.keys()):
        raise BaseImageError(
            f'{where} must map to {{"root": PATH}} (your own root), {{"debian": SUITE}} or {{"ubuntu": SUITE}}, got {spec!r}'
        )
    kinds = [kind for kind in ("root", "debian", "ubuntu") if kind in spec]
    if len(kinds) > 1:
        raise BaseImageError(f"{where} names {' and '.join(kinds)}: keep one of them")
    allowed = _ROOT_KEYS if kinds == ["root"] else _ARCHIVE_KEYS
    unknown = sorted(spec.keys() - allowed)
    if unknown:
        raise BaseImageError(
            f"{where} has the key {unknown[0]!r}, which a {kinds[0]} mapping does not take: use {sorted(allowed)}"
        )

    def text(key: str, default: str = "") -> str:
        value = spec.get(key, default)
        if not isinstance(value, str) or (key in spec and not value):
            raise BaseImageError(f"{where}: {key} must be a non-empty string, got {value!r}")
        return value

    def strings(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = spec.get(key, list(default))
        if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
            raise BaseImageError(f"{where}: {key} must be a non-empty list of names, got {value!r}")
        return tuple(value)

    environment = spec.get("environment", {"PATH": DEFAULT_PATH})
    if not isinstance(environment, dict) or not all(isinstance(v, str) for v in environment.values()):
        raise BaseImageError(f'{where}: environment must be an object of strings, e.g. {{"PATH": "{DEFAULT_PATH}"}}')
    workdir = text("workdir", "/")
    if not workdir.startswith("/"):
        raise BaseImageError(f"{where}: workdir must be an absolute path, got {workdir!r}")
    if kinds == ["root"]:
        return LocalRoot(Path(text("root")).expanduser(), environment, workdir, text("note"))
    kind, suite = kinds[0], text(kinds[0])
    packages = strings("packages", TOOLS)
    system_wide = spec.get("pip_system_wide", False)
    if not isinstance(system_wide, bool):
        raise BaseImageError(f"{where}: pip_system_wide must be true or false, got {system_wide!r}")
    if system_wide and ("python3-venv" not in packages or "python3-pip" in packages):
        raise BaseImageError(
            f"{where}: pip_system_wide installs pip from python3-venv's wheel, so packages must list python3-venv and "
            "not python3-pip (which pip could not upgrade)"
        )
    config: dict[str, Any] = {
        "note": text("note"), "environment": environment, "workdir": workdir, "pip_system_wide": system_wide,
    }  # fmt: skip
    ubuntu = kind == "ubuntu"
    components = " ".join(strings("components", UBUNTU_COMPONENTS if ubuntu else ("main",)))
    keyring = text("keyring", UBUNTU_KEYRING if ubuntu else "")
    if "mirror" in spec:
        mirror = text("mirror").rstrip("/")
        sources = (f"deb {mirror} {suite} {components}",)
        return DebianRoot(
            suite, packages, mirror=mirror, sources=sources, keyring=keyring,
            distribution="Ubuntu" if ubuntu else "Debian", **config,
        )  # fmt: skip
    root = (ubuntu_root if ubuntu else debian_root)(suite, packages, keyring=keyring, **config)
    lines = tuple(" ".join([*line.split()[:3], components]) for line in root.sources)
    return dataclasses.replace(root, sources=lines)


# --- which root stands in -------------------------------------------------------------------------

_probed: dict[str, str] = {}
_probe_lock = threading.Lock()


def stand_in(base: BaseRoot, built: Callable[[BaseRoot], bool]) -> BaseRoot:
    """The root that stands in for `base` now: `base` itself where it is built already (`built`)
    or its archive answers; its fallback, with a note that says why, where not; an error naming
    the fix where it has none."""
    if not isinstance(base, DebianRoot):
        return base
    base, _ = with_a_keyring(base, fetch=False)
    if built(base):
        return base
    reason = probe(base.mirror, base.suite)
    if not reason:  # the archive answers: its keys are worth fetching
        base, reason = with_a_keyring(base, fetch=True)
    reason = reason or archive_reason(base)
    if not reason:
        return base
    if base.fallback is None:
        raise BaseImageError(
            f"{base.describe()} cannot be built: {reason}; map the base image to another archive or to a root of "
            f"your own (${BASES_VARIABLE})"
        )
    fallback = base.fallback
    return dataclasses.replace(fallback, note=f"{fallback.note} ({base.distribution} {base.suite}: {reason})")


def with_a_keyring(base: DebianRoot, *, fetch: bool) -> tuple[DebianRoot, str]:
    """`base` with Ubuntu's keyring where it names the one package ubuntu-keyring installs and
    the host lacks it: the copy rlenvs keeps (rlenvs.images.keyrings, fetched by its digest
    with `fetch`); and why not, where it could not be had."""
    if base.keyring != UBUNTU_KEYRING or os.path.isfile(UBUNTU_KEYRING):
        return base, ""
    path, reason = ubuntu_keyring(fetch=fetch)
    if path is None:
        return base, f"its archive's keyring {UBUNTU_KEYRING} is missing (apt-get install ubuntu-keyring) and {reason}"
    return dataclasses.replace(base, keyring=str(path)), ""


def archive_reason(base: DebianRoot) -> str:
    """Why mmdebstrap could not build `base` from its archive here ('' where it could)."""
    if base.keyring and not os.path.isfile(base.keyring):
        package = " (apt-get install ubuntu-keyring)" if base.keyring == UBUNTU_KEYRING else ""
        return f"its archive's keyring {base.keyring} is missing{package}"
    return probe(base.mirror, base.suite)


def probe(mirror: str, suite: str, timeout_s: float = PROBE_TIMEOUT_S) -> str:
    """Whether `mirror` serves `suite`: '' where its Release file answers within `timeout_s`
    (name lookup included: the request runs in a thread that is waited for no longer), else
    why not. Asked once per process for each Release file; mirrors not on http(s) or file are
    taken as they are (mmdebstrap's own schemes)."""
    if not mirror.startswith(("http://", "https://", "file:")):
        return ""
    url = f"{mirror.rstrip('/')}/dists/{suite}/Release"
    with _probe_lock:
        if url in _probed:
            return _probed[url]
    answer: list[str] = []

    def ask() -> None:
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response:
                status = getattr(response, "status", None) or 200  # file: URLs have none
                answer.append("" if status == 200 else f"{url} answered {status}")
        except (OSError, ValueError) as error:  # URLError and HTTPError are OSErrors
            answer.append(f"{url} could not be had: {error}")

    asking = threading.Thread(target=ask, name="rlenvs-archive-probe", daemon=True)
    asking.start()
    asking.join(timeout_s)
    reason = answer[0] if answer else f"{url} did not answer within {timeout_s:g} s"
    with _probe_lock:
        _probed[url] = reason
    return reason


# --- making the root ----------------------------------------------------------------------------


def make_root(base: BaseRoot, target: Path, ids: IdMap) -> None:
    """Fill the empty folder `target` with `base`'s files, owned for `ids`, its WORKDIR made."""
    if isinstance(base, DebianRoot):
        _mmdebstrap(base, target)
        shift_owners(target, ids)
        return
    if base.path.is_dir():
        copied = subprocess.run(  # owners, modes, links and times kept, as `docker export` has them
            ["cp", "-a", "--", f"{base.path}/.", str(target)], capture_output=True, text=True, check=False
        )
        if copied.returncode != 0:
            raise BaseImageError(f"the local root {base.path} could not be copied: {copied.stderr.strip()[-500:]}")
    elif base.path.is_file():
        _untar(base.path, target)
    else:
        raise BaseImageError(f"the local root {base.path} is neither a folder nor a tarball")
    workdir = target / base.workdir.lstrip("/")
    if base.workdir != "/" and not os.path.lexists(workdir):
        workdir.mkdir(mode=0o755, parents=True)
    shift_owners(target, ids)


def mmdebstrap_argv(base: DebianRoot, target: Path, program: str = "mmdebstrap") -> list[str]:
    """The mmdebstrap command that builds `base` into `target`: its packages, its keyring, its
    apt sources as the root keeps them, and a hook, run in the new root, that makes its WORKDIR
    and, for `pip_system_wide`, installs pip as python.org's images have it."""
    argv = [program, "--variant=apt", "--quiet", f"--include={','.join(base.packages)}"]
    if base.keyring:
        argv.append(f"--keyring={base.keyring}")
    steps = ["set -e"]
    if base.workdir != "/":
        steps.append(f"mkdir -p {shlex.quote(base.workdir)}")
    if base.pip_system_wide:
        steps += [
            "rm -f /usr/lib/python3*/EXTERNALLY-MANAGED",
            "wheel=$(ls /usr/share/python-wheels/pip-*.whl)",
            'PIP_ROOT_USER_ACTION=ignore python3 "$wheel/pip" install --quiet --no-index --no-cache-dir --disable-pip-version-check --no-warn-script-location "$wheel"',
            "[ -e /usr/local/bin/python3 ] || ln -s /usr/bin/python3 /usr/local/bin/python3",
            "[ -e /usr/local/bin/python ] || ln -s /usr/bin/python3 /usr/local/bin/python",
        ]
    if len(steps) > 1:
        script = "; ".join(steps)
        clean = "env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8"  # nothing of the host's pip settings
        argv.append(f'--customize-hook=chroot "$1" {clean} sh -c {shlex.quote(script)}')
    return [*argv, base.suite, str(target), *base.apt_sources()]


def _mmdebstrap(base: DebianRoot, target: Path) -> None:
    program = shutil.which("mmdebstrap")
    if program is None:
        raise BaseImageError(
            f"{base.describe()} needs mmdebstrap: `apt-get install mmdebstrap` (Debian/Ubuntu), or map the base "
            f"image to a root of your own (${BASES_VARIABLE})"
        )
    run = subprocess.run(
        mmdebstrap_argv(base, target, program),
        capture_output=True,
        text=True,
        timeout=MMDEBSTRAP_TIMEOUT_S,
        check=False,
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
