"""Execute each notebook top to bottom; any cell that raises fails the test.

The notebooks' cells assert what they show (quickstart: oracle reward 1.0, hedging scores
0; reward_properties: each planted bug fails its property with the expected counterexample,
the fixed function passes), so running them checks the documented behaviour as well as the
code. The kernel is pinned to this interpreter: it runs `sys.executable` (this venv, this
rlenvs) whatever kernelspecs the machine has installed, and it inherits os.environ, so
RLENVS_DATA_DIR from conftest.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOK_NAMES = ["quickstart.ipynb", "reward_properties.ipynb"]
KERNEL_NAME = "python3"
CELL_TIMEOUT_S = 120


def _python3_kernel_specs(tmp_path: Path) -> KernelSpecManager:
    """A kernelspec manager whose only `python3` kernel runs this interpreter.

    An installed `python3` spec may belong to another Python (a system Jupyter, a conda
    base) that lacks rlenvs or has an older one; ipykernel writes a spec for the running
    interpreter instead, and the manager looks nowhere else.
    """
    kernels_dir = tmp_path / "kernels"
    write_kernel_spec(kernels_dir / KERNEL_NAME)
    specs = KernelSpecManager(kernel_dirs=[str(kernels_dir)])
    argv = specs.get_kernel_spec(KERNEL_NAME).argv
    assert Path(argv[0]) == Path(sys.executable), f"kernel would run {argv[0]}, not {sys.executable}"
    return specs


def _check_interpreter_cell() -> nbformat.NotebookNode:
    """A cell, run in the kernel first, that fails unless it is this interpreter and env."""
    expected = json.dumps({"prefix": sys.prefix, "executable": str(Path(sys.executable).resolve())})
    return nbformat.v4.new_code_cell(
        "import json, sys\n"
        "from pathlib import Path\n"
        f"expected = json.loads({expected!r})\n"
        "actual = {'prefix': sys.prefix, 'executable': str(Path(sys.executable).resolve())}\n"
        "assert actual == expected, f'kernel runs {actual}, tests run {expected}'"
    )


def test_every_notebook_is_executed() -> None:
    assert sorted(path.name for path in NOTEBOOKS.glob("*.ipynb")) == sorted(NOTEBOOK_NAMES)


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_runs(name: str, tmp_path: Path) -> None:
    notebook = NOTEBOOKS / name
    nb = nbformat.read(notebook, as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == KERNEL_NAME
    assert any(cell.cell_type == "code" for cell in nb.cells)
    nb.cells.insert(0, _check_interpreter_cell())  # only in this in-memory copy

    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=_python3_kernel_specs(tmp_path))
    client = nbclient.NotebookClient(
        nb,
        km=km,
        kernel_name=KERNEL_NAME,
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(NOTEBOOKS)}},  # the kernel's cwd
    )
    try:
        client.execute()
    except CellExecutionError as error:
        pytest.fail(f"{name}: a cell failed:\n{error}", pytrace=False)

    errors = [
        output
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors, f"{name}: cells produced errors: {errors}"
