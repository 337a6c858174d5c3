"""The verdict's own packages: pytest, and what a task's test script installs, for the tests.

A Terminal-Bench or Harbor test script fetches its test tools when it runs: uv's installer,
a `uv venv`, `uv pip install pytest==8.4.1 numpy`, then `uv run pytest ...`. The sandbox has
no network when the tests run, and the image's own Python is no place for them either: an
image that installs pytest itself (a Dockerfile's `pip install pytest==8.4.1`) must not meet
one the stand-in put there, and a package the agent could replace is no tool of the verdict's.

So the script's requirements are installed when the folder loads, from PyPI, by the host's
pip (`pip install --target`), for the Python the tests run on: the image's python3 version
and its C library, read from its layers (`image_python_target`), never by running anything
of the image's. They are a layer of their own (`packages_layer`), cached in the image store
by (Python version, C library, machine, requirements), put on top of the image's layers at
VERDICT_PACKAGES, and first on the tests' PYTHONPATH after the verdict's sitecustomize
(rlenvs.sandbox.shells.verdict). Out of the agent's reach: the layer's files belong to the host's
root, which is no id of the sandbox's when rlenvs runs as root (the image's root cannot
write them); on a host where it is, an episode that changed anything there gets no test
run (verdict.toolchain_changes), as for the image's own interpreter.

pytest's plugins among them load because the verdict names them (`pytest_plugins`:
PYTEST_PLUGINS), not because they are installed: PYTEST_DISABLE_PLUGIN_AUTOLOAD stays on.

Only wheels are installed (`--only-binary=:all:`: pip on the host cannot build a source
distribution for another Python); a requirement without a wheel for the image is refused
by name when the folder loads.

`distribution_imports` answers the other question, for a Python that runs the tests as it
is (the host's): whether a distribution (`pyyaml`, `scikit-learn`) is installed there and
which modules it provides (`yaml`, `sklearn`), read from its own metadata.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlenvs.images.layers import LayerStore, image_python, layer_key
from rlenvs.sandbox.shells.rootfs import OPAQUE_XATTR, IdMap, image_entry
from rlenvs.sandbox.shells.verdict import VERDICT_PACKAGES

DEFAULT_PYTEST = "pytest==8.4.1"
"""The pytest the verdict brings when the script names none (Terminal-Bench's own pin)."""
INSTALL_TIMEOUT_S = 900.0
PIP_SOURCES = (
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CERT", "PIP_CLIENT_CERT", "PIP_FIND_LINKS",
    "PIP_NO_INDEX", "PIP_PROXY", "PIP_TIMEOUT", "PIP_RETRIES",
)  # fmt: skip
"""The host's pip settings the verdict's install keeps: where packages come from, not where they go."""
_LIBC = ("/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6",
         "/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6")  # fmt: skip
_GLIBC = re.compile(rb"GNU C Library [^\n\x00]*? version (\d+)\.(\d+)")
_REQUIREMENT = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?([=<>!~]=?[A-Za-z0-9.*+!_-]+(,[=<>!~]=?[A-Za-z0-9.*+!_-]+)*)?"
)
"""A requirement pip takes from PyPI by name (`numpy`, `pytest==8.4.1`, `requests[socks]>=2,<3`):
no URL, path, option or environment marker."""


class PackagesError(ValueError):
    """The verdict's packages cannot be had; the message names the requirement and the fix."""


@dataclass(frozen=True)
class PythonTarget:
    """What wheels the tests' Python takes: CPython `version` ("3.13") on glibc `glibc`
    ((2, 41)) for `machine` ("x86_64")."""

    version: str
    glibc: tuple[int, int]
    machine: str

    def pip_options(self) -> list[str]:
        tag = "cp" + self.version.replace(".", "")
        platforms = [f"manylinux_2_{minor}_{self.machine}" for minor in range(self.glibc[1], 4, -1)]
        legacy = {(2, 17): "manylinux2014", (2, 12): "manylinux2010", (2, 5): "manylinux1"}
        platforms += [f"{name}_{self.machine}" for floor, name in legacy.items() if self.glibc >= floor]
        options = ["--python-version", self.version, "--implementation", "cp", "--only-binary=:all:"]
        for abi in (tag, "abi3", "none"):
            options += ["--abi", abi]
        for platform in (*platforms, f"linux_{self.machine}"):
            options += ["--platform", platform]
        return options


def normalise(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503): `Scikit_Learn` is `scikit-learn`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The distribution a requirement names (`numpy==2.1` -> `numpy`)."""
    return normalise(re.split(r"[\[=<>!~]", requirement, maxsplit=1)[0])


def check_requirements(requirements: Iterable[str]) -> tuple[str, ...]:
    """The requirements, each one pip takes from PyPI by name; PackagesError for one that is
    a URL, a path, a file or an option."""
    found = tuple(requirements)
    for requirement in found:
        if not _REQUIREMENT.fullmatch(requirement):
            raise PackagesError(
                f"the test script installs {requirement!r}, which is not a package name with an optional version "
                "(the verdict installs from PyPI by name only): name the package, e.g. numpy==2.1.0"
            )
    return found


def with_pytest(requirements: Iterable[str]) -> tuple[str, ...]:
    """`requirements` sorted and unique, with DEFAULT_PYTEST unless they name pytest."""
    found = sorted(set(requirements))
    if not any(requirement_name(r) == "pytest" for r in found):
        found.append(DEFAULT_PYTEST)
    return tuple(sorted(found))


def image_python_target(lowers: Sequence[str], opaque_xattr: str = OPAQUE_XATTR) -> PythonTarget:
    """The image's python3 (layer folders `lowers`, top first; `opaque_xattr`: how its layers
    mark an opaque folder) as pip's target, read from its files: the version from the name its
    python3 link leads to, glibc's from libc.so.6."""
    python = image_python(lowers, opaque_xattr)
    if python is None:
        raise PackagesError("the image has no python3 in /usr/bin or /usr/local/bin to run the tests' pytest")
    name = python
    for _ in range(8):  # python3 -> python3.13, maybe through another link
        entry = image_entry(lowers, name, opaque_xattr)
        if entry is None or not stat.S_ISLNK(entry[1].st_mode):
            break
        target = os.readlink(f"{entry[0]}{name}")
        name = target if target.startswith("/") else os.path.normpath(os.path.join(os.path.dirname(name), target))
    match = re.fullmatch(r"python(3\.\d+)", os.path.basename(name))
    if match is None:
        raise PackagesError(f"the image's {python} names no versioned python3.X, so its version cannot be read")
    for path in _LIBC:
        entry = image_entry(lowers, path, opaque_xattr)
        if entry is not None and stat.S_ISREG(entry[1].st_mode):
            version = _GLIBC.search(Path(f"{entry[0]}{path}").read_bytes())
            if version:
                return PythonTarget(match.group(1), (int(version.group(1)), int(version.group(2))), os.uname().machine)
    raise PackagesError(
        "the image has no GNU C library (libc.so.6) whose version can be read, and the verdict's packages are "
        "wheels built for glibc (manylinux): use a Debian, Ubuntu or python image"
    )


def packages_layer(target: PythonTarget, requirements: Iterable[str], store: LayerStore | None = None) -> Path:
    """The layer folder (to put on top of an image's layers) holding `requirements`, pytest
    among them, at VERDICT_PACKAGES; built with the host's pip the first time, then cached
    by (target, requirements). PackagesError names what pip could not install."""
    store = store or LayerStore()
    ids = IdMap.for_this_user()
    wanted = with_pytest(check_requirements(requirements))
    key = layer_key("verdict-packages", target.version, target.glibc, target.machine, wanted, ids.name)
    layer = store.get(key)
    if layer is not None:
        return layer.diff
    folder = store.new(key)
    try:
        packages = folder / "diff" / VERDICT_PACKAGES.lstrip("/")
        started = time.monotonic()
        _pip_install(packages, target, wanted)
        for mine in (folder / "diff", folder / "diff" / VERDICT_PACKAGES.lstrip("/").split("/")[0]):
            os.chmod(mine, 0o755)  # the top layer's / and /opt are what the image shows: its root's to write in
            os.chown(mine, *ids.host_ids(0, 0))
        made_by = {
            "made_by": ["verdict packages", *wanted],
            "python": target.version,
            "seconds": time.monotonic() - started,
        }
        return store.commit(key, folder, made_by).diff
    except BaseException:
        store.discard(folder)
        raise


def _pip_install(into: Path, target: PythonTarget, requirements: Sequence[str]) -> None:
    into.mkdir(parents=True)
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input",
        "--no-compile", "--target", str(into), *target.pip_options(), *requirements,
    ]  # fmt: skip
    # the host's pip settings would redirect the install (PIP_TARGET, PIP_USER, PIP_PREFIX, a
    # constraints file); where packages come from is kept (a mirror, an offline wheel folder)
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("PIP_") or name in PIP_SOURCES
    }
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, env=environment)
    except subprocess.TimeoutExpired:
        raise PackagesError(f"pip did not install {' '.join(requirements)} in {INSTALL_TIMEOUT_S:.0f} s") from None
    except OSError as error:
        raise PackagesError(f"pip could not be started ({error}): install pip for {sys.executable}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-1500:]
        raise PackagesError(
            f"pip could not install the tests' packages {' '.join(requirements)} for Python {target.version} "
            f"(glibc {target.glibc[0]}.{target.glibc[1]}, {target.machine}) from PyPI, wheels only; the end of its "
            f"output:\n{tail}\nPin versions that have wheels for that Python, or install them in the Dockerfile"
        )
    for folder in (into / "bin",):  # console scripts name the host's interpreter: not the tests' to run
        shutil.rmtree(folder, ignore_errors=True)
    for path in (into, *into.rglob("*")):  # readable by the image's users, writable by none of them
        info = path.lstat()
        if not stat.S_ISLNK(info.st_mode):
            path.chmod(0o755 if stat.S_ISDIR(info.st_mode) or info.st_mode & 0o111 else 0o644)
    (into / ".rlenvs-requirements.json").write_text(json.dumps(list(requirements)) + "\n", encoding="utf-8")
    os.chmod(into / ".rlenvs-requirements.json", 0o644)
    os.chmod(into.parent, 0o755)


def pytest_plugins(layer: Path) -> tuple[str, ...]:
    """The modules of the pytest plugins installed in the packages layer `layer` (their
    `pytest11` entry points): what the verdict names in PYTEST_PLUGINS for them to load."""
    entry_points = sorted((layer / VERDICT_PACKAGES.lstrip("/")).glob("*.dist-info/entry_points.txt"))
    return tuple(sorted({module for path in entry_points for module in _plugin_modules(path)}))


def image_pytest_plugins(lowers: Sequence[str], version: str, opaque_xattr: str = OPAQUE_XATTR) -> tuple[str, ...]:
    """The modules of the pytest plugins the image's own build installed for the python3 the
    tests run (`version`, "3.12") under /usr: a Dockerfile's `pip install pytest-json-ctrf`,
    whose test script then passes `--ctrf`. Real pytest loads every installed plugin, the
    verdict's only those it names, so these are named too. Read from the image's layers as
    built (`lowers`, top first), never from the episode: a plugin the agent installs is not
    among them, and an episode that changed one under /usr gets no test run
    (verdict.TOOLCHAIN_PREFIXES). A dist-info a higher layer deleted or hid is not read."""
    sites = (
        f"usr/lib/python{version}/*-packages",
        "usr/lib/python3/dist-packages",
        f"usr/local/lib/python{version}/*-packages",
    )
    found: set[str] = set()
    for lower in lowers:
        for site in sites:
            for path in Path(lower).glob(f"{site}/*.dist-info/entry_points.txt"):
                entry = image_entry(lowers, "/" + path.relative_to(lower).as_posix(), opaque_xattr)
                if entry is not None and entry[0] == lower and stat.S_ISREG(entry[1].st_mode):
                    found.update(_plugin_modules(path))
    return tuple(sorted(found))


def _plugin_modules(entry_points: Path) -> set[str]:
    """The modules an entry_points.txt's `pytest11` section names."""
    found, section = set(), ""
    for line in entry_points.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]").strip()
        elif section == "pytest11" and "=" in line:
            found.add(line.split("=", 1)[1].split(":")[0].strip())
    return found


_IMPORTS = """\
import importlib.metadata as metadata, importlib.util as util, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        distribution = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        found[name] = None
        continue
    top = (distribution.read_text("top_level.txt") or "").split()
    if not top:
        for file in distribution.files or ():
            parts = file.parts
            if len(parts) > 1 and parts[1] == "__init__.py" or len(parts) == 1 and file.suffix in (".py", ".so"):
                top.append(parts[0].split(".")[0])
    top = sorted({t for t in top if t.isidentifier()})
    found[name] = [t for t in top if util.find_spec(t) is not None] if top else []
print(json.dumps(found))
"""


def distribution_imports(python: str, names: Iterable[str]) -> dict[str, list[str] | None]:
    """For each distribution name (`pyyaml`, `scikit-learn`), the top-level modules it provides
    that `python` can import, read from the installed distribution's own metadata
    (top_level.txt, else its RECORD); None for a distribution `python` does not have."""
    names = sorted(set(names))
    if not names:
        return {}
    try:
        done = subprocess.run(
            [python, "-I", "-c", _IMPORTS, *names], capture_output=True, text=True, timeout=60, check=False
        )
        found = json.loads(done.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return dict.fromkeys(names)
    return {name: found.get(name) for name in names}
