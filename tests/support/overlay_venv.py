"""A virtual environment that sees the running one's packages: where a test installs a package
as its user does (`pip install -e`), with no network and without touching the environment the
tests run in.

Why not `python -m venv --system-site-packages`: the tests run inside a virtual environment
themselves (.ci/run's .venv), and a venv made from one sees the base interpreter's packages,
not that venv's, so rlenvs would be missing; and its bundled pip brings a setuptools too old to
build a pyproject.toml package. Here the new venv gets no pip of its own and a .pth file that
adds the running environment's site folders after its own, with their .pth files processed
(`site.addsitedir`), so editable installs such as rlenvs' own are importable there too. pip
runs from the outer environment with the new venv's Python, and installs into the new venv.
"""

from __future__ import annotations

import site
import subprocess
import sysconfig
import venv
from pathlib import Path


def overlay_venv(folder: Path) -> Path:
    """Create the venv at `folder`; its Python."""
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    own = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    outer = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    if site.ENABLE_USER_SITE:
        outer.append(site.getusersitepackages())
    folders = [path for path in dict.fromkeys(outer) if Path(path).is_dir()]
    line = "import site; " + "; ".join(f"site.addsitedir({path!r})" for path in folders)
    (Path(own) / "_outer_environment.pth").write_text(line + "\n", encoding="utf-8")
    return python


def pip_install_editable(python: Path, *projects: Path) -> None:
    """`pip install -e` each project into the venv of `python`: no dependencies (the outer
    environment has them), no index, the outer environment's setuptools."""
    command = [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    for project in projects:
        command += ["-e", str(project)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"pip install failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def run(python: Path, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python args...` in `cwd`, output captured."""
    return subprocess.run([str(python), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
