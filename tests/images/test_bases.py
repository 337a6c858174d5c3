"""What stands in for a Dockerfile's FROM image (rlenvs.images.bases): which root each base
maps to, with the image's WORKDIR and ENV; the Ubuntu archive where it can be had and the
Debian stand-in, reported, where not; nothing in a stand-in that a task's own build would
replace and fail on. The mapping is checked without building; two builds (roots shared with
tests/images/test_build.py in a whole run) check that the WORKDIR, the ENV and pip reach the image."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import socket
import subprocess
import time
from pathlib import Path

import pytest

from rlenvs.images import keyrings
from rlenvs.images.bases import (
    BUILDPACK,
    BUILDPACK_CURL,
    BUILDPACK_SCM,
    DEFAULT_BASES,
    DEFAULT_PATH,
    PYTHON_PATH,
    UBUNTU_COMPONENTS,
    UBUNTU_KEYRING,
    BaseImageError,
    DebianRoot,
    LocalRoot,
    base_for,
    debian_root,
    mmdebstrap_argv,
    probe,
    stand_in,
    ubuntu_root,
    with_a_keyring,
)
from rlenvs.images.build import build_image
from rlenvs.images.layers import lookup

T_BENCH = "ghcr.io/laude-institute/t-bench/"


@pytest.fixture(autouse=True)
def _no_user_table(monkeypatch) -> None:
    monkeypatch.delenv("RLENVS_BASE_IMAGES", raising=False)


@pytest.mark.parametrize(
    ("name", "distribution", "suite", "workdir", "note"),
    [
        (f"{T_BENCH}python-3-13:20250620", "Debian", "trixie", "/app", "Debian trixie, not bookworm"),
        (f"{T_BENCH}ubuntu-24-04:20250624", "Ubuntu", "noble", "/app", ""),
        ("ubuntu:24.04", "Ubuntu", "noble", "/", ""),
        ("ubuntu:noble-20240423", "Ubuntu", "noble", "/", ""),
        ("ubuntu:22.04", "Ubuntu", "jammy", "/", ""),
        ("ubuntu", "Ubuntu", "noble", "/", ""),
        ("debian:bookworm-slim", "Debian", "bookworm", "/", ""),
        ("debian:12.5", "Debian", "bookworm", "/", ""),
        ("debian:bullseye", "Debian", "bullseye", "/", ""),
        ("debian:latest", "Debian", "trixie", "/", ""),
        ("python:3.9-slim", "Debian", "bullseye", "/", "Debian bullseye's Python 3.9"),
        ("python:3.10", "Debian", "bookworm", "/", "Python 3.11, not 3.10"),
        ("python:3.11.9-slim-bookworm", "Debian", "bookworm", "/", "Debian bookworm's Python 3.11"),
        ("python:3.11-bullseye", "Debian", "bookworm", "/", "Debian bookworm, not bullseye"),
        ("python:3.12-slim", "Debian", "trixie", "/", "Python 3.13, not 3.12"),
        ("python:3.13-trixie", "Debian", "trixie", "/", "Debian trixie's Python 3.13"),
        ("python:3.8-slim-buster", "Debian", "bullseye", "/", "Python 3.9, not 3.8"),
        ("buildpack-deps:bookworm-curl", "Debian", "bookworm", "/", ""),
        ("buildpack-deps:jammy", "Ubuntu", "jammy", "/", ""),
    ],
)
def test_each_base_maps_to_the_suite_and_workdir_of_the_image_it_stands_for(
    name: str, distribution: str, suite: str, workdir: str, note: str
) -> None:
    base = base_for(name)
    assert isinstance(base, DebianRoot)
    assert (base.distribution, base.suite, base.workdir) == (distribution, suite, workdir)
    assert note in base.note and (note or not base.note)
    python_image = name.startswith(("python:", f"{T_BENCH}python"))
    assert dict(base.environment) == (
        {"PATH": PYTHON_PATH, "LANG": "C.UTF-8"} if python_image else {"PATH": DEFAULT_PATH}
    ), "the python images set PATH and LANG; the debian and ubuntu images only Docker's PATH"
    assert base.pip_system_wide == python_image
    if distribution == "Ubuntu":  # out of the Ubuntu archive's reach: Debian, with the same WORKDIR
        assert base.fallback is not None and base.fallback.distribution == "Debian"
        assert base.fallback.workdir == workdir and base.fallback.packages == base.packages
        assert base.fallback.note.startswith(f"Debian {base.fallback.suite}, not "), base.fallback.note


def test_no_stand_in_carries_a_python_package_that_pip_could_not_replace() -> None:
    """Debian's python3-pip cannot be uninstalled by pip ("no RECORD file ... installed by
    debian"): in the python images, where pip writes the system's Python, it is python.org's
    convention instead, pip installed into /usr/local. Nor pytest, whose Debian package brings
    pluggy, iniconfig and packaging along: the verdict brings its own (verdict_packages)."""
    for pattern, base in DEFAULT_BASES.items():
        assert isinstance(base, DebianRoot) and "python3" in base.packages, pattern  # the sandbox's shell
        assert not any(name.startswith("python3-pytest") for name in base.packages), pattern
        if base.pip_system_wide:
            assert "python3-pip" not in base.packages and "python3-venv" in base.packages, pattern
        if "asciinema" in base.packages:  # a Python program: Debian's would be pip's to replace
            assert not base.pip_system_wide, pattern


def test_buildpack_deps_and_the_full_python_images_carry_the_toolchain() -> None:
    assert set(BUILDPACK_CURL) < set(BUILDPACK_SCM) < set(BUILDPACK)
    assert {"gcc", "g++", "make", "git", "curl", "wget", "libssl-dev"} <= set(BUILDPACK)
    assert set(BUILDPACK_CURL) <= set(base_for("buildpack-deps:trixie-curl").packages)
    assert "git" in base_for("buildpack-deps:bookworm-scm").packages
    assert "gcc" not in base_for("buildpack-deps:bookworm-scm").packages
    assert set(BUILDPACK) | {"python3-dev"} <= set(base_for("python:3.11").packages)  # FROM buildpack-deps
    assert "gcc" not in base_for("python:3.11-slim").packages


@pytest.mark.parametrize(
    "name, hub",
    [
        # Harbor tasks name ECR's copy of Docker Hub's official images, pinned by digest
        ("public.ecr.aws/docker/library/ubuntu:24.04@sha256:0d39fcc8335d6d74d5502f6d", "ubuntu:24.04"),
        ("public.ecr.aws/docker/library/python:3.13-slim-bookworm@sha256:01f42367a0a9", "python:3.13-slim-bookworm"),
        ("docker.io/library/debian:bookworm", "debian:bookworm"),
        ("docker.io/python:3.12-slim", "python:3.12-slim"),
        ("library/python:3.11", "python:3.11"),
        ("ubuntu:22.04@sha256:ab12", "ubuntu:22.04"),
    ],
)
def test_docker_hubs_images_by_a_mirrors_name_or_a_digest_map_as_the_tag_does(name: str, hub: str) -> None:
    assert base_for(name) == base_for(hub)


def test_a_mapping_of_the_name_as_written_wins_and_other_registries_stay_unmapped(tmp_path: Path, monkeypatch) -> None:
    pinned = "public.ecr.aws/docker/library/ubuntu:24.04@sha256:0d39"
    mapping = tmp_path / "bases.json"
    mapping.write_text(json.dumps({pinned: {"debian": "bookworm"}}))
    monkeypatch.setenv("RLENVS_BASE_IMAGES", str(mapping))
    assert base_for(pinned).suite == "bookworm" and base_for("ubuntu:24.04").suite == "noble"
    with pytest.raises(BaseImageError, match="ghcr.io/example/ubuntu:24.04 is neither mapped"):
        base_for("ghcr.io/example/ubuntu:24.04")


@pytest.mark.parametrize("name", ["python:3.11-alpine", "python:3-alpine3.20", "python:3.12-windowsservercore"])
def test_a_base_no_debian_root_can_stand_for_is_refused_with_the_fix(name: str) -> None:
    with pytest.raises(BaseImageError, match=rf"{name} is .*\$RLENVS_BASE_IMAGES"):
        base_for(name)


def test_the_ubuntu_command_names_its_keyring_sources_and_workdir_without_the_network(tmp_path: Path) -> None:
    base = base_for(f"{T_BENCH}ubuntu-24-04:20250624")
    assert isinstance(base, DebianRoot)
    argv = mmdebstrap_argv(base, tmp_path / "root")
    assert f"--keyring={UBUNTU_KEYRING}" in argv
    assert "asciinema" in argv[3] and "tmux" in argv[3]
    hook = next(word for word in argv if word.startswith("--customize-hook="))
    assert "mkdir -p /app" in hook and "pip" not in hook
    assert argv[-5:-3] == ["noble", str(tmp_path / "root")]
    components = " ".join(UBUNTU_COMPONENTS)
    suites = [line.split()[2] for line in argv[-3:]]
    assert suites == ["noble", "noble-updates", "noble-security"]
    assert all(line.startswith("deb http") and line.endswith(f" {components}") for line in argv[-3:])
    python = mmdebstrap_argv(base_for("python:3.11-slim"), tmp_path / "root")
    assert "--keyring" not in " ".join(python) and "python3-pip" not in python[3].split(",")
    hook = next(word for word in python if word.startswith("--customize-hook="))
    assert "EXTERNALLY-MANAGED" in hook and "python-wheels/pip-" in hook and "mkdir" not in hook
    assert [line.split()[2] for line in python[-3:]] == ["bookworm", "bookworm-updates", "bookworm-security"]


def test_an_ubuntu_root_out_of_reach_falls_back_to_debian_and_says_why(tmp_path: Path) -> None:
    fallback = debian_root("trixie", note="Debian trixie, not Ubuntu 24.04")
    missing = ubuntu_root("noble", keyring=str(tmp_path / "none.gpg"), fallback=fallback)
    chosen = stand_in(missing, built=lambda base: False)
    assert chosen.key() == fallback.key()
    assert chosen.note.startswith("Debian trixie, not Ubuntu 24.04 (Ubuntu noble: its archive's keyring")
    assert stand_in(missing, built=lambda base: base is missing) is missing  # built before: no question asked
    keyring = tmp_path / "keys.gpg"
    keyring.write_bytes(b"")
    with socket.socket() as closed:  # a port nothing listens on: refused at once
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    refused = dataclasses.replace(missing, keyring=str(keyring), mirror=f"http://127.0.0.1:{port}/ubuntu")
    chosen = stand_in(refused, built=lambda base: False)
    assert chosen.key() == fallback.key() and f"127.0.0.1:{port}/ubuntu/dists/noble/Release" in chosen.note
    with pytest.raises(BaseImageError, match=r"Ubuntu noble built with mmdebstrap .* cannot be built: .*map the base"):
        stand_in(dataclasses.replace(refused, fallback=None), built=lambda base: False)


def _keyring_package(folder: Path, keys: bytes) -> Path:
    """A Debian package holding `keys` where ubuntu-keyring puts the archive's keyring."""
    root = folder / "package"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: ubuntu-keyring\nVersion: 1\nArchitecture: all\nMaintainer: test <t@example.org>\nDescription: keys\n"
    )
    (root / "usr/share/keyrings").mkdir(parents=True)
    (root / "usr/share/keyrings/ubuntu-archive-keyring.gpg").write_bytes(keys)
    subprocess.run(
        ["dpkg-deb", "--build", "--root-owner-group", str(root), str(folder / "k.deb")], check=True, capture_output=True
    )
    return folder / "k.deb"


def test_ubuntus_keyring_is_fetched_only_with_the_digest_rlenvs_pins(tmp_path: Path, monkeypatch) -> None:
    """Debian 12 packages no Ubuntu keyring: rlenvs fetches Ubuntu's keyring package, and uses it
    only if it is byte for byte the one whose SHA-256 it pins (a package served in its place
    would choose the keys that every Ubuntu root is checked against)."""
    package = _keyring_package(tmp_path, b"the keys")
    digest = hashlib.sha256(package.read_bytes()).hexdigest()
    monkeypatch.setenv("RLENVS_IMAGE_CACHE", str(tmp_path / "cache" / "images"))
    monkeypatch.setattr(keyrings, "_failures", [])
    monkeypatch.setattr(keyrings, "UBUNTU_KEYRING_PACKAGE", (package.as_uri(), "0" * 64))
    assert keyrings.ubuntu_keyring(fetch=False) == (None, "Ubuntu's keyring has not been fetched")
    path, reason = keyrings.ubuntu_keyring(fetch=True)
    assert path is None and "is not the one rlenvs knows" in reason
    assert keyrings.ubuntu_keyring(fetch=True) == (None, reason)  # a failure is remembered, not retried
    monkeypatch.setattr(keyrings, "_failures", [])
    monkeypatch.setattr(keyrings, "UBUNTU_KEYRING_PACKAGE", (package.as_uri(), digest))
    path, reason = keyrings.ubuntu_keyring(fetch=True)
    assert reason == "" and path == tmp_path / "cache" / "keyrings" / "ubuntu-archive-keyring.gpg"
    assert path.read_bytes() == b"the keys"
    base = ubuntu_root("noble", keyring=UBUNTU_KEYRING)
    if not Path(UBUNTU_KEYRING).is_file():  # the host's own ubuntu-keyring comes first where installed
        assert with_a_keyring(base, fetch=False) == (dataclasses.replace(base, keyring=str(path)), "")


def test_the_probe_of_an_archive_that_never_answers_gives_up_in_time() -> None:
    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        mirror = f"http://127.0.0.1:{silent.getsockname()[1]}/debian"
        started = time.monotonic()
        reason = probe(mirror, "trixie", timeout_s=0.5)
        took = time.monotonic() - started
        again_started = time.monotonic()
        assert probe(mirror, "trixie", timeout_s=0.5) == reason  # asked once per process
        assert time.monotonic() - again_started < 0.05
    assert took < 1.5 and "trixie/Release" in reason


def test_the_probe_of_an_archive_that_answers_is_no_reason(tmp_path: Path) -> None:
    release = tmp_path / "dists" / "noble" / "Release"
    release.parent.mkdir(parents=True)
    release.write_text("Suite: noble\n")
    assert probe(tmp_path.as_uri(), "noble") == ""


def test_user_mappings_name_an_archive_and_a_suite_and_each_mistake_names_its_key(tmp_path: Path, monkeypatch) -> None:
    table = tmp_path / "bases.json"
    monkeypatch.setenv("RLENVS_BASE_IMAGES", str(table))
    table.write_text(
        json.dumps(
            {
                "ubuntu:*": {"ubuntu": "noble", "mirror": "http://mirror.example/ubuntu/", "components": ["main"]},
                "mine:*": {"root": "/srv/roots/mine.tar", "workdir": "/app", "environment": {"PATH": "/bin"}},
                "deb:*": {"debian": "trixie", "components": ["main", "contrib"], "packages": ["python3"]},
            }
        )
    )
    ubuntu = base_for("ubuntu:24.04")
    assert isinstance(ubuntu, DebianRoot) and ubuntu.distribution == "Ubuntu" and ubuntu.keyring == UBUNTU_KEYRING
    assert ubuntu.apt_sources() == ("deb http://mirror.example/ubuntu noble main",) and ubuntu.fallback is None
    assert base_for("mine:1") == LocalRoot(Path("/srv/roots/mine.tar"), {"PATH": "/bin"}, "/app")
    debian = base_for("deb:1")
    assert isinstance(debian, DebianRoot) and debian.packages == ("python3",)
    assert [line.split(maxsplit=3)[3] for line in debian.apt_sources()] == ["main contrib"] * 3
    for spec, message in [
        ({"ubuntu": "noble", "mirorr": "x"}, r"'ubuntu:\*' has the key 'mirorr', which a ubuntu mapping does not take"),
        ({"debian": "trixie", "ubuntu": "noble"}, r"names debian and ubuntu: keep one"),
        ({"debian": ""}, r"debian must be a non-empty string"),
        ({"root": "/r", "packages": ["x"]}, r"has the key 'packages', which a root mapping does not take"),
        ({"debian": "trixie", "workdir": "app"}, r"workdir must be an absolute path"),
        (
            {"debian": "trixie", "pip_system_wide": True, "packages": ["python3", "python3-pip"]},
            r"packages must list python3-venv and not python3-pip",
        ),
        ({"image": "somewhere"}, r'must map to \{"root": PATH\}'),
    ]:
        table.write_text(json.dumps({"ubuntu:*": spec}))
        with pytest.raises(BaseImageError, match=message):
            base_for("ubuntu:24.04")


@pytest.mark.images
def test_a_python_image_starts_in_its_workdir_and_pip_can_replace_itself(image_store, tmp_path: Path) -> None:
    """t-bench/python-3-13 sets WORKDIR /app: a Dockerfile without its own starts there. pip is
    python.org's convention, in /usr/local, so `pip install --upgrade pip` works (Debian's
    python3-pip refused: "Cannot uninstall pip ... installed by debian")."""
    (tmp_path / "Dockerfile").write_text(
        f"FROM {T_BENCH}python-3-13:20250620\n"
        "RUN pwd > where.txt && pip install --no-cache-dir 'pip==24.3.1' && pip --version > pip.txt"
        " && /usr/local/bin/python -c 'import sys; print(sys.executable)' > python.txt\n"
    )
    image = build_image(tmp_path / "Dockerfile", store=image_store, progress=lambda line: None)
    assert image.workdir == "/app" and image.environment["PATH"] == PYTHON_PATH
    top = image.layers[-1].diff / "app"
    assert (top / "where.txt").read_text() == "/app\n"
    assert (top / "pip.txt").read_text().startswith("pip 24.3.1 from /usr/local/lib/python3")
    assert (top / "python.txt").read_text() == "/usr/local/bin/python\n"
    assert "t-bench/python-3-13" in image.note


@pytest.mark.images
def test_the_t_bench_ubuntu_image_is_ubuntu_where_its_archive_can_be_had_else_debian_reported(
    image_store, tmp_path: Path
) -> None:
    """Whichever this machine gives (Ubuntu's archive and keyring, or not), and the fallback for
    certain: an Ubuntu base whose keyring is missing builds on the Debian stand-in, in /app, and
    the image's note says so and why."""
    name = f"{T_BENCH}ubuntu-24-04:20250624"
    (tmp_path / "Dockerfile").write_text(f"FROM {name}\nRUN pwd > where.txt\n")
    image = build_image(tmp_path / "Dockerfile", store=image_store, progress=lambda line: None)
    release = lookup(image.layers, "/etc/os-release")
    assert release is not None and image.workdir == "/app"
    os_release = (release[0].diff / "etc" / "os-release").read_text()
    if image.note:  # the Debian stand-in
        assert "ID=debian" in os_release and "Debian trixie, not t-bench/ubuntu-24-04" in image.note
        assert "(Ubuntu noble: " in image.note
    else:
        assert 'VERSION_ID="24.04"' in os_release and "ID=ubuntu" in os_release
    default = base_for(name)
    assert isinstance(default, DebianRoot)
    missing = dataclasses.replace(default, keyring=str(tmp_path / "no-ubuntu-keyring.gpg"))
    forced = build_image(tmp_path / "Dockerfile", bases={name: missing}, store=image_store, progress=lambda line: None)
    assert forced.workdir == "/app" and (forced.layers[-1].diff / "app" / "where.txt").read_text() == "/app\n"
    assert (
        "Debian trixie, not t-bench/ubuntu-24-04" in forced.note and "no-ubuntu-keyring.gpg is missing" in forced.note
    )
    assert forced.base_root.startswith("Debian trixie built with mmdebstrap")
