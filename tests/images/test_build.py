"""Task images built from Dockerfiles without Docker (rlenvs.images) and episodes on them
(rlenvs.sandbox.ShellSession(image=...)): a real Debian root from mmdebstrap, real apt and
pip RUN steps over the network, bubblewrap over overlayfs."""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from rlenvs.images.bases import BaseImageError, DebianRoot, LocalRoot, base_for
from rlenvs.images.build import BuildOptions, ImageBuildError, build_image
from rlenvs.images.dockerfile import instructions
from rlenvs.images.layers import LayerStore, lookup
from rlenvs.sandbox.shells.session import ShellSession

FIXTURE = Path(__file__).parents[1] / "data" / "images" / "harbor-task" / "environment"
"""A Harbor task's environment in the shape measured over public Harbor tasks, its base the
t-bench Ubuntu image (mapped by default to a Debian trixie root: rlenvs.images.bases)."""


@pytest.fixture(scope="module")
def store(image_store):
    return image_store


@pytest.fixture(scope="module")
def built(store):
    lines: list[str] = []
    started = time.monotonic()
    image = build_image(FIXTURE / "Dockerfile", store=store, progress=lines.append)
    return image, lines, time.monotonic() - started


pytestmark = pytest.mark.images


def test_a_harbor_shaped_dockerfile_builds_with_apt_pip_and_copies_outside_the_workdir(built) -> None:
    image, lines, _ = built
    assert image.workdir == "/app" and image.user == "root"
    assert image.environment["PATH"].startswith("/opt/tools:/usr/local/sbin:")
    assert image.environment["GREETING"] == "hello"
    made = [line.rsplit(": ", 1)[1].rsplit(" (", 1)[0] for line in lines if line.startswith("step")]  # no time
    layer = ("built", "cached")  # cached: another test of the run built the same image first
    expected = [
        layer,
        "no files",
        "no files",
        layer,
        layer,
        layer,
        layer,
        layer,
        "no files",
        layer,
        "no files",
        "no files",  # WORKDIR /app: the t-bench image's own WORKDIR, there already
        layer,
    ]
    assert len(made) == len(expected) and all(
        got in (want if isinstance(want, tuple) else (want,)) for got, want in zip(made, expected)
    )
    assert lookup(image.layers, "/etc/issue.net") is None  # deleted by a RUN: a whiteout in its layer
    found = lookup(image.layers, "/home/agent/made-by-agent")
    assert found is not None and found[1].st_uid == found[1].st_gid  # the agent's own, as USER made it


def test_a_rebuild_takes_every_layer_from_the_cache(built, store) -> None:
    image, _, _ = built
    lines: list[str] = []
    again = build_image(FIXTURE / "Dockerfile", store=store, progress=lines.append)
    assert again.key == image.key and again.lowers == image.lowers
    assert lines and not any(": built (" in line for line in lines)


def test_a_new_step_is_built_once_then_found_in_the_cache(store, tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        f"FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\nRUN echo {tmp_path.name} > /made\n"
    )
    first: list[str] = []
    build_image(tmp_path / "Dockerfile", store=store, progress=first.append)
    second: list[str] = []
    image = build_image(tmp_path / "Dockerfile", store=store, progress=second.append)
    assert first[-1].endswith("built", 0, first[-1].rindex(" (")), first
    assert second[-1].endswith("cached", 0, second[-1].rindex(" (")), second
    found = lookup(image.layers, "/made")
    assert found is not None and (found[0].diff / "made").read_text() == f"{tmp_path.name}\n"


def test_an_episode_has_the_image_its_tools_and_its_workdir(built) -> None:
    image, _, _ = built
    with ShellSession(image=image.root(), workdir=image.workdir) as session:
        session.reset()
        environment = "".join(f"export {name}='{value}'\n" for name, value in image.environment.items())
        run = session.run(environment + "pwd; id -u; greet; jq -n 1+1; python3 -c 'import six; print(six.__version__)'")
        assert run.stdout.split("\n")[:5] == ["/app", "0", "hello from greet", "2", "1.16.0"], run.stdout
        listing = session.run("stat -c '%U %a' /app/numbers.txt /opt/tools/greet; sort -n /srv/data/numbers.txt")
        assert listing.stdout.split("\n")[:5] == ["agent 644", "root 755", "1", "2", "3"], listing.stdout


def test_episodes_are_copy_on_write_and_never_see_each_other(built) -> None:
    image, _, _ = built
    root = image.root()
    with ShellSession(image=root, workdir=image.workdir) as one, ShellSession(image=root, workdir="/app") as two:
        one.reset()
        two.reset()
        assert one.run("echo mine > /etc/motd-test && rm /srv/data/numbers.txt && echo ok").stdout == "ok\n"
        assert two.run("cat /etc/motd-test; cat /srv/data/numbers.txt | wc -l").stdout.endswith("3\n")
        one.reset()  # a new episode: a new view of the image
        assert one.run("cat /etc/motd-test; wc -l < /srv/data/numbers.txt").stdout.endswith("3\n")
    for layer in image.layers:  # nothing of it reached the layers on disk
        assert not (layer.diff / "etc" / "motd-test").exists()


def test_a_failing_step_names_its_line_and_output_and_leaves_no_layer(store, tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        "FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\nRUN echo about to fail && exit 3\n"
    )
    before = set(os.listdir(store.root / "layers"))
    with pytest.raises(
        ImageBuildError, match=r"line 2: `RUN echo about to fail && exit 3`\) failed with exit status 3"
    ):
        build_image(tmp_path / "Dockerfile", store=store, progress=lambda line: None)
    assert set(os.listdir(store.root / "layers")) == before and not os.listdir(store.root / "tmp")


def test_a_build_step_has_no_way_out_of_its_root(built, store, tmp_path: Path) -> None:
    """A RUN step sees the image, not the host: not the host's files, not its processes."""
    marker = Path("/var/tmp") / f"rlenvs-host-only-{os.getpid()}"
    marker.write_text("host")
    try:
        (tmp_path / "Dockerfile").write_text(
            "FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\n"
            f"RUN test ! -e {marker} && test ! -e /work && test $(ls /proc | grep -c '^[0-9]') -lt 10 && "
            "! unshare -U true 2>/dev/null\n"
        )
        build_image(tmp_path / "Dockerfile", store=store, progress=lambda line: None)
    finally:
        marker.unlink()


# --- refusals, before anything is built -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "FROM debian:trixie AS a\nFROM debian:trixie AS A\n",
            r"line 2: .*names a second stage a \(the first at line 1",
        ),
        ('FROM debian:trixie\nENTRYPOINT ["sleep"]\n', r"line 2: .*starts a process with the container"),
        ("FROM debian:trixie\nCOPY --parents a /b\n", r"line 2: .*uses --parents.*backend='docker'"),
        ("FROM debian:trixie\nRUN --mount=type=secret,id=k cat /run/secrets/k\n", r"line 2: .*--mount=type=secret"),
        ("FROM debian:trixie\nRUN <<EOF\necho hi\n", r"line 2: `RUN <<EOF`\) opens the heredoc EOF, which no later"),
        ("RUN true\nFROM debian:trixie\n", r"line 1: `RUN true`\) comes before any FROM"),
        ("FROM debian:trixie\nSTOPSIGNAL 9\nONBUILD RUN x\nMAINTAINER me\nFOO bar\n", r"line 5: `FOO bar`\) uses FOO"),
    ],
)
def test_what_cannot_be_built_is_refused_by_line_before_building(store, tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / "Dockerfile").write_text(text)
    before = set(os.listdir(store.root / "layers"))
    with pytest.raises(ImageBuildError, match=reason):
        build_image(tmp_path / "Dockerfile", store=store, progress=lambda line: None)
    assert set(os.listdir(store.root / "layers")) == before


def test_an_unmapped_base_says_how_to_map_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("RLENVS_BASE_IMAGES", raising=False)
    with pytest.raises(BaseImageError, match=r"quay.io/x/y:1 is neither mapped .* \$RLENVS_BASE_IMAGES names"):
        base_for("quay.io/x/y:1")
    table = tmp_path / "bases.json"
    table.write_text('{"quay.io/x/*": {"root": "/srv/roots/y.tar"}, "ubuntu:24.04": {"debian": "bookworm"}}')
    monkeypatch.setenv("RLENVS_BASE_IMAGES", str(table))
    assert base_for("quay.io/x/y:1") == LocalRoot(Path("/srv/roots/y.tar"))
    assert isinstance(base_for("ubuntu:24.04"), DebianRoot) and base_for("ubuntu:24.04").suite == "bookworm"
    table.write_text('{"quay.io/x/*": {"image": "somewhere"}}')
    with pytest.raises(BaseImageError, match=r'must map to \{"root": PATH\}'):
        base_for("quay.io/x/y:1")


def test_the_parser_joins_continuations_and_keeps_line_numbers() -> None:
    escape, found = instructions("# escape=`\nFROM x\nRUN echo a `\n  b\n# note\nenv A=1\n")
    assert escape == "`"
    assert [(ins.line, ins.keyword) for ins in found] == [(2, "FROM"), (3, "RUN"), (6, "ENV")]
    assert found[1].args.split() == ["echo", "a", "b"]


def test_a_local_root_tarball_is_a_base(tmp_path: Path) -> None:
    """A user's own root (say `docker export` of the real image) stands in for a base: here the
    test base's own files, packed."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "os-release").write_text("ID=mine\n")
    (root / "bin").symlink_to("usr/bin")
    archive = shutil.make_archive(str(tmp_path / "root"), "gztar", root)
    (tmp_path / "Dockerfile").write_text("FROM mine:1\nENV X=1\n")
    store = LayerStore(Path(f"/var/tmp/rlenvs-test-local-root-{os.getpid()}"))
    try:
        image = build_image(
            tmp_path / "Dockerfile",
            bases={"mine:*": LocalRoot(Path(archive))},
            store=store,
            progress=lambda line: None,
        )
        found = lookup(image.layers, "/etc/os-release")
        assert found is not None and stat.S_ISREG(found[1].st_mode)
        assert (image.layers[0].diff / "bin").is_symlink()
        with pytest.raises(ImageBuildError, match="has no python3"):
            image.root()
        (root / "etc" / "owned").write_text("x")
        os.chown(root / "etc" / "owned", 42, 42)  # as a package's own user would own it
        from_folder = build_image(
            tmp_path / "Dockerfile", bases={"mine:*": LocalRoot(root)}, store=store, progress=lambda line: None
        )
        owned = lookup(from_folder.layers, "/etc/owned")
        top = from_folder.layers[0].diff.stat()  # the root folder: the image's root's host ids
        expected = (top.st_uid + 42, top.st_gid + 42) if os.geteuid() == 0 else (top.st_uid, top.st_gid)
        assert owned is not None and (owned[1].st_uid, owned[1].st_gid) == expected
    finally:
        store.discard(store.root)


def test_a_step_may_refresh_the_ca_bundle_and_later_steps_still_reach_the_package_index(store, tmp_path: Path) -> None:
    """The host's CA bundle (a TLS-inspecting proxy's CA, on these machines) stands in for the
    image's under each step as a layer of the step's, not a mount: update-ca-certificates (run
    by Java's and other TLS packages' installs) renames a new bundle over it, which a mount
    point refused (EBUSY, exit status 1). The step's bundle is the image's own; the next step
    again reaches PyPI through the proxy."""
    (tmp_path / "Dockerfile").write_text(
        "FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\n"
        "RUN update-ca-certificates --fresh > /dev/null\n"
        "RUN pip download --no-deps --dest /tmp/wheels six==1.16.0 > /dev/null\n"
    )
    image = build_image(tmp_path / "Dockerfile", store=store, progress=lambda line: None)
    refreshed = lookup(image.layers[-2:-1], "/etc/ssl/certs/ca-certificates.crt")
    assert refreshed is not None  # written by the step itself, from the image's certificates
    assert lookup(image.layers[-1:], "/etc/ssl/certs/ca-certificates.crt") is None  # untouched: nothing kept


def test_a_python_image_lets_pip_install_system_wide_and_has_python(store, tmp_path: Path) -> None:
    """In python.org's images `pip install x` and `python` work as they are; Debian's python3
    is EXTERNALLY-MANAGED (PEP 668), so the Python images' stand-in drops that mark."""
    (tmp_path / "Dockerfile").write_text(
        "FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\n"
        "RUN pip install six==1.16.0 && python -c 'import six; assert six.__version__ == \"1.16.0\"'\n"
    )
    build_image(tmp_path / "Dockerfile", store=store, progress=lambda line: None)


def test_the_agent_is_root_with_dockers_default_capabilities_and_no_more(built) -> None:
    """As in a Docker container: the image's root may write a file another user owns (the
    COPY --chown=agent one) and chown; it may not mount (no CAP_SYS_ADMIN) or make a user
    namespace, so the verdict's read-only folders stay read-only."""
    image, _, _ = built
    with ShellSession(image=image.root(), workdir=image.workdir) as session:
        session.reset()
        run = session.run(
            "grep CapEff /proc/self/status; echo 9 >> /app/numbers.txt && chown root /app/numbers.txt && echo wrote; "
            "mount -t tmpfs none /mnt 2>/dev/null || echo no-mount; unshare -U true 2>/dev/null || echo no-userns"
        )
        assert run.stdout.split("\n")[:4] == ["CapEff:\t00000000a80425fb", "wrote", "no-mount", "no-userns"], run.stdout


def test_pip_installs_offline_from_a_wheel_folder_when_given(store, tmp_path: Path) -> None:
    """BuildOptions(wheels=...): pip in a RUN step installs from that folder and nowhere else
    (PIP_NO_INDEX), for machines whose builds cannot reach the package index."""
    import subprocess
    import sys

    package = tmp_path / "pkg"
    (package / "rlenvs_wheel_probe").mkdir(parents=True)
    (package / "rlenvs_wheel_probe" / "__init__.py").write_text("VALUE = 42\n")
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "rlenvs-wheel-probe"\nversion = "1.0"\n'
    )
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(package),
        ],
        check=True,
        timeout=120,
    )
    shutil.copytree(
        wheels, Path(store.root) / "wheels-probe"
    )  # reachable by the image's root (not /tmp/pytest-of-root)
    (tmp_path / "Dockerfile").write_text(
        "FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\n"
        "RUN pip install rlenvs-wheel-probe && python3 -c 'import rlenvs_wheel_probe as p; assert p.VALUE == 42'\n"
        "RUN ! pip download --no-deps -d /tmp/x six 2>/dev/null\n"  # nothing but the folder
    )
    options = BuildOptions(wheels=Path(store.root) / "wheels-probe")
    image = build_image(tmp_path / "Dockerfile", store=store, progress=lambda line: None, options=options)
    assert lookup(image.layers, "/opt/rlenvs-wheels") is None  # the folder's mount point is not in the image
