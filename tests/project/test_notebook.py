"""Execute each notebook top to bottom; any cell that raises fails the test.

The notebooks' cells assert what they show (quickstart: oracle reward 1.0, hedging scores
0; reward_properties: each planted bug fails its property with the expected counterexample,
the fixed function passes), so running them checks the documented behaviour as well as the
code. The kernel is pinned to this interpreter: it runs `sys.executable` (this venv, this
rlenvs) whatever kernelspecs the machine has installed, and it inherits os.environ, so
RLENVS_DATA_DIR from conftest.

train_grpo.ipynb trains for minutes in full; its test sets RLENVS_NOTEBOOK_SHORT=1, which the
notebook reads to shrink the run to a few steps, and checks the run's metrics.json.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOK_NAMES = ["quickstart.ipynb", "reward_properties.ipynb"]
TRAIN_NOTEBOOK = "train_grpo.ipynb"
TRAIN_SHORT_STEPS = 4
"""`trainer.max_steps` of the notebook's short run."""
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
    assert sorted(path.name for path in NOTEBOOKS.glob("*.ipynb")) == sorted([*NOTEBOOK_NAMES, TRAIN_NOTEBOOK])


@pytest.mark.parametrize("name", [*NOTEBOOK_NAMES, TRAIN_NOTEBOOK])
def test_notebook_is_stored_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    run = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and (cell.outputs or cell.execution_count)]
    assert not run, f"{name}: code cells {run} hold outputs; clear them before saving"


def _execute(name: str, tmp_path: Path) -> nbformat.NotebookNode:
    """The notebook run top to bottom in a kernel of this interpreter; fails on any error."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
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
    return nb


def _stdout(cell: nbformat.NotebookNode) -> str:
    return "".join(
        o.get("text", "")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebook_runs(name: str, tmp_path: Path) -> None:
    _execute(name, tmp_path)


@pytest.mark.slow  # trains a tiny model with GRPO inside a kernel: about a minute
def test_train_grpo_notebook_short_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quickstart in a notebook, shrunk to a few GRPO steps: it trains into a fresh
    temporary folder (TMPDIR is pointed at this test's, so the run lands here), plots,
    evaluates, and its metrics.json has one entry per step."""
    runs = tmp_path / "tmp"
    runs.mkdir()
    monkeypatch.setenv("RLENVS_NOTEBOOK_SHORT", "1")
    monkeypatch.setenv("TMPDIR", str(runs))  # the kernel's tempfile.mkdtemp
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    nb = _execute(TRAIN_NOTEBOOK, tmp_path)

    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert "short run" in "".join(_stdout(cell) for cell in code)
    assert any(
        o.get("output_type") == "display_data" and "image/png" in o.get("data", {}) for c in code for o in c.outputs
    ), "no inline plot"
    last = _stdout(code[-1])
    assert re.search(rf"^steps: {TRAIN_SHORT_STEPS}$", last, re.MULTILINE), last
    metrics = Path(re.search(r"^metrics: (.+)$", last, re.MULTILINE).group(1))
    assert metrics.parent.parent == runs, f"the run went to {metrics.parent}, not a fresh folder under {runs}"
    steps = json.loads(metrics.read_text(encoding="utf-8"))["steps"]
    assert [entry["step"] for entry in steps] == list(range(1, TRAIN_SHORT_STEPS + 1))
    assert all("reward" in entry for entry in steps)
    assert (metrics.parent / "reward.png").is_file()
    assert (metrics.parent / "final-model" / "config.json").is_file()
