"""Ubuntu's archive keyring, for hosts whose own distribution does not package it.

mmdebstrap checks an archive's Release file against the archive's signing keys. Debian 12 has
no `ubuntu-keyring` package (Debian 13 and Ubuntu do), so on such a host no Ubuntu root could
be built, and every `ubuntu:*` base stood in as Debian although the Ubuntu archive answered.
The keyring is a package of the Ubuntu archive itself; fetching it from there over plain
HTTP (or TLS through an inspecting proxy, as on this project's machines) would let whoever
answers in the archive's place choose the keys. So the package is named by its SHA-256,
checked here before a byte of it is used, and kept in rlenvs' cache beside the image layers.
The pinned package was checked when it was pinned by what it holds: exactly Ubuntu's three
published signing keys, the Archive Automatic Signing Keys of 2012
(790BC7277767219C42C86F933B4FE6ACC0B21F32) and 2018 (F6ECB3762474EDA9D21B7022871920D1991BC93C)
and the CD Image key of 2012 (843938DF228D22F7B3742BC0D94AA3F0EFE21092); anyone can recheck
that with `gpg --show-keys`. A host with `ubuntu-keyring` installed uses its own and never
fetches this.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tarfile
import tempfile
import threading
import urllib.request
from pathlib import Path

from rlenvs.images.layers import store_dir

UBUNTU_KEYRING_PACKAGE = (
    "https://security.ubuntu.com/ubuntu/pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb",
    "36de43b15853ccae0028e9a767613770c704833f82586f28eb262f0311adb8a8",
)
"""Where Ubuntu's keyring package is fetched from, and the SHA-256 it must have."""
KEYRING_MEMBER = "./usr/share/keyrings/ubuntu-archive-keyring.gpg"
FETCH_TIMEOUT_S = 20.0
_lock = threading.Lock()
_failures: list[str] = []


def ubuntu_keyring(*, fetch: bool) -> tuple[Path | None, str]:
    """Ubuntu's archive keyring from the pinned package, kept in the cache: (its path, "") or
    (None, why it could not be had). `fetch`: fetch it if the cache has none (once per process:
    a failure is remembered); else only the cache is looked at."""
    target = store_dir().parent / "keyrings" / "ubuntu-archive-keyring.gpg"
    with _lock:
        if target.is_file():
            return target, ""
        if not fetch or _failures:
            return None, _failures[0] if _failures else "Ubuntu's keyring has not been fetched"
        path, reason = _fetch(target)
        if path is None:
            _failures.append(reason)
        return path, reason


def _fetch(target: Path) -> tuple[Path | None, str]:
    """Fetch the pinned package, check its digest, and keep its keyring file at `target`."""
    url, digest = UBUNTU_KEYRING_PACKAGE
    try:
        with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S) as response:
            package = response.read(1 << 20)
    except (OSError, ValueError) as error:
        return None, f"Ubuntu's keyring package could not be fetched from {url}: {error}"
    if hashlib.sha256(package).hexdigest() != digest:
        return None, f"Ubuntu's keyring package from {url} is not the one rlenvs knows (SHA-256 {digest})"
    try:
        keyring = _member(package, KEYRING_MEMBER)
    except (OSError, subprocess.SubprocessError, tarfile.TarError, KeyError) as error:
        return None, f"Ubuntu's keyring could not be read from its package: {error}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as staged:
        staged.write(keyring)
    os.chmod(staged.name, 0o644)
    os.replace(staged.name, target)
    return target, ""


def _member(package: bytes, name: str) -> bytes:
    """The file `name` of a Debian package's data, read with dpkg-deb (every host mmdebstrap
    runs on has it)."""
    with tempfile.NamedTemporaryFile(suffix=".deb") as deb:
        deb.write(package)
        deb.flush()
        data = subprocess.run(
            ["dpkg-deb", "--fsys-tarfile", deb.name], capture_output=True, check=True, timeout=60
        ).stdout
    with tempfile.TemporaryFile() as tar_file:
        tar_file.write(data)
        tar_file.seek(0)
        with tarfile.open(fileobj=tar_file) as tar:
            member = tar.extractfile(name)
            if member is None:
                raise KeyError(f"{name} is not a file in the package")
            return member.read()
