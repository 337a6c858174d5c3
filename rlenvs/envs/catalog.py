"""Every env id rlenvs ships: the single list that registration, `rlenvs list`, `rlenvs info`
and the env tables of README.md and docs/index.md are made from. Adding an env means adding
its entry here.

`observes`, `acts`, `reward` and `turns` are the table's columns, written once here in
Markdown: one line each, code in code spans (one backslash: `\\boxed{N}`), links relative to
docs/ (`[the verifier](rewards.md)`). After editing them run `python -m
rlenvs.envs.catalog_docs` to rewrite both tables (rlenvs/envs/catalog_docs.py renders them;
tests/project/test_catalog_docs.py fails while a committed table is stale); `rlenvs info` prints the
same text without the Markdown. Other packages' envs are not here: rlenvs/envs/plugins.py finds
them through the `rlenvs.envs` entry points, and its `all_entries()` is this list and theirs."""

from __future__ import annotations

from rlenvs.core.registration import EnvEntry, register

CATALOG: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="rlenvs/GSM8K-v1",
        entry_point="rlenvs.envs.math.gsm8k:GSM8KEnv",
        family="math",
        summary="Grade-school math word problems (GSM8K) with one numeric answer.",
        observes="a grade-school word problem (GSM8K)",
        acts="reasons, ends with `\\boxed{N}`",
        reward="1 iff the single final answer equals the gold number, 0 otherwise and for hedging",
        turns="1; with `max_turns=k`, a reply without any final answer gets a format reminder and another turn",
    ),
    EnvEntry(
        id="rlenvs/MATH-v1",
        entry_point="rlenvs.envs.math.competition:CompetitionMathEnv",
        family="math",
        summary="Competition math (MATH / MATH-500 rows) with LaTeX answers checked symbolically.",
        observes="a competition problem (MATH / MATH-500 rows)",
        acts="reasons, ends with `\\boxed{answer}`",
        reward=(
            "1 iff the final answer is equivalent to the gold one (see [the verifier](rewards.md)), "
            "0 otherwise and for hedging"
        ),
        turns="1; `max_turns=k` as for GSM8K",
    ),
    EnvEntry(
        id="rlenvs/GSM8K-Tool-v1",
        entry_point="rlenvs.envs.math.gsm8k_tool:GSM8KToolEnv",
        family="math",
        summary="GSM8K over several turns with a safe, exact calculator tool.",
        observes="a GSM8K problem, then calculator results (`<result>…</result>` / `<error>…</error>`)",
        acts="calls `<calculator>expr</calculator>` (up to 5 per reply), then ends with `\\boxed{N}`",
        reward="GSM8K-v1's on the reply with the final answer; 0 on tool turns",
        turns="up to 5 (`max_turns`); a final answer ends the episode, otherwise truncated",
    ),
    EnvEntry(
        id="rlenvs/GSM8K-Python-v2",
        entry_point="rlenvs.envs.math.gsm8k_python:GSM8KPythonEnv",
        family="math",
        summary="GSM8K over several turns with a sandboxed Python interpreter as a tool.",
        observes="a GSM8K problem, then the output of its code (```` ```output ```` blocks)",
        acts="writes ```` ```python ```` blocks (run in the sandbox, up to 3 per reply), then ends with `\\boxed{N}`",
        reward="GSM8K-v1's on the reply with the final answer; 0 on tool turns",
        turns="up to 5 (`max_turns`); a final answer ends the episode, otherwise truncated",
        nondeterministic=True,
    ),
    EnvEntry(
        id="rlenvs/Arithmetic-v1",
        entry_point="rlenvs.envs.math.arithmetic:ArithmeticEnv",
        family="math",
        summary="Procedural arithmetic in 5 levels (single digits to fractions), no data needed.",
        observes=(
            "a generated arithmetic problem at `level=1..5` (single-digit sums up to fractions, decimals and "
            "word problems); no data needed"
        ),
        acts="reasons, ends with `\\boxed{exact answer}`",
        reward="1 iff the final answer equals the exact one and is written as a number, 0 otherwise and for hedging",
        turns="1; `max_turns=k` as for GSM8K",
    ),
    EnvEntry(
        id="rlenvs/Arithmetic-Tool-v1",
        entry_point="rlenvs.envs.math.arithmetic_tool:ArithmeticToolEnv",
        family="math",
        summary="Arithmetic-v1's problems over several turns with the calculator tool, no data needed.",
        observes="an Arithmetic-v1 problem (`level=1..5`), then calculator results (`<result>…</result>` / `<error>…</error>`)",
        acts="calls `<calculator>expr</calculator>`, then ends with `\\boxed{exact answer}`",
        reward="Arithmetic-v1's on the reply with the final answer; 0 on tool turns",
        turns="up to 3 (`max_turns`); a final answer ends the episode, otherwise truncated",
    ),
    EnvEntry(
        id="rlenvs/Algebra-v1",
        entry_point="rlenvs.envs.math.algebra:AlgebraEnv",
        family="math",
        summary="Procedural algebra in 5 levels (linear equations to polynomials), no data needed.",
        observes="a generated equation, 2x2/3x3 linear system or polynomial to expand at `level=1..5`; no data needed",
        acts="reasons, ends with `\\boxed{x}`, `\\boxed{(x, y)}` or `\\boxed{polynomial}`",
        reward=(
            "1 iff the final answer is equivalent to the exact one and in its form (number, tuple, expanded "
            "polynomial: the unexpanded question scores 0), 0 otherwise and for hedging"
        ),
        turns="1; `max_turns=k` as for GSM8K",
    ),
    EnvEntry(
        id="rlenvs/HumanEval-v2",
        entry_point="rlenvs.envs.code.humaneval:HumanEvalEnv",
        family="code",
        summary="HumanEval: complete a Python function from its signature and docstring (164 problems).",
        observes=(
            "a function's signature and docstring (HumanEval, 164 problems); after a failed attempt, a failing "
            "test the docstring shows, in full, and the hidden tests' failures as counts"
        ),
        acts="the function (or only its body) in a ```` ```python ```` block",
        reward=(
            "1 iff every test passes in the sandbox, the data set's and the generated ones; `partial=True`: the "
            "passed fraction, on the attempt that ends the episode"
        ),
        turns="1; with `max_turns=k`, retries with test feedback",
        nondeterministic=True,
    ),
    EnvEntry(
        id="rlenvs/MBPP-v2",
        entry_point="rlenvs.envs.code.mbpp:MBPPEnv",
        family="code",
        summary="MBPP: write a short Python function from a one-line description (974 problems).",
        observes=(
            "a one-line description and one example test (MBPP, 974 problems); feedback as HumanEval (the "
            "shown test in full, the hidden ones as counts)"
        ),
        acts="the code in a ```` ```python ```` block",
        reward="1 iff the shown test and the hidden ones (the release's and the generated ones) all pass in the sandbox",
        turns="1; with `max_turns=k`, retries with test feedback",
        nondeterministic=True,
    ),
    EnvEntry(
        id="rlenvs/Terminal-v2",
        entry_point="rlenvs.envs.terminal.env:TerminalEnv",
        family="terminal",
        summary="Shell tasks (files, logs, CSV, configs, archives, permissions) in a sandboxed workspace, 12 procedural families.",
        observes=(
            "a shell task (files, logs, CSV, configs, archives, permissions; 12 procedural families, or your "
            "own task folders), then each command's output and exit code"
        ),
        acts="one shell command per turn in a ```` ```bash ```` block; `submit` or `submit <answer>` to finish",
        reward=(
            "1 iff the final workspace, read from the host without following symlinks, and the submitted "
            "answer meet every expectation of the task"
        ),
        turns="up to 20 (`max_turns`); `submit` ends the episode, otherwise the workspace is judged at the last turn",
        nondeterministic=True,
    ),
    EnvEntry(
        id="rlenvs/Spreadsheet-v1",
        entry_point="rlenvs.envs.spreadsheet.env:SpreadsheetEnv",
        family="spreadsheet",
        summary="Workbook tasks (computed columns, group totals, lookups, ranks, dates, cleaning, sorting) on our own formula engine, 12 procedural families.",
        observes=(
            "an instruction and the workbook's sheets as grids (12 procedural families, or "
            "SpreadsheetBench-style folders), then each action's result"
        ),
        acts=(
            "actions, one per line: `SET B2 =SUM(C2:C9)`, `FILL`, `READ`, `INSERT ROWS`, `DELETE ROWS`, "
            "`SORT`, `SUBMIT`"
        ),
        reward=(
            "1 iff every target cell's value matches (SpreadsheetBench's comparison) and, where formulas are "
            "asked, they still match after the env changes the input data and recalculates"
        ),
        turns="up to 10 (`max_turns`); `SUBMIT` ends the episode, otherwise the workbook is judged at the last turn",
    ),
)


def register_envs() -> None:
    """Register every rlenvs id with gymnasium (idempotent; `import rlenvs` calls it)."""
    register(CATALOG)
