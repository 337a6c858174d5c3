"""Every env id rlenvs ships: the single list that registration, `rlenvs list` and the env
tables of README.md and docs/index.md are made from (tests/test_readme.py checks one row per
id). Adding an env means adding its entry here."""

from __future__ import annotations

from rlenvs.core.registration import EnvEntry, check_env_id, register

CATALOG: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="rlenvs/GSM8K-v0",
        entry_point="rlenvs.envs.math.gsm8k:GSM8KEnv",
        family="math",
        summary="Grade-school math word problems (GSM8K) with one numeric answer.",
        observes="a word problem",
        acts="reasoning ending in \\boxed{N}",
        reward="1 iff the single final answer equals the gold number; 0 for hedging",
        turns="1 (max_turns=k gives format feedback on replies without an answer)",
    ),
    EnvEntry(
        id="rlenvs/MATH-v0",
        entry_point="rlenvs.envs.math.competition:CompetitionMathEnv",
        family="math",
        summary="Competition math (MATH / MATH-500 rows) with LaTeX answers checked symbolically.",
        observes="a competition problem (subject, level filters)",
        acts="reasoning ending in \\boxed{answer}",
        reward="1 iff the final answer is equivalent to the gold one (sympy under a time budget); 0 for hedging",
        turns="1 (max_turns=k gives format feedback on replies without an answer)",
    ),
    EnvEntry(
        id="rlenvs/GSM8K-Tool-v0",
        entry_point="rlenvs.envs.math.gsm8k_tool:GSM8KToolEnv",
        family="math",
        summary="GSM8K over several turns with a safe, exact calculator tool.",
        observes="a word problem, then calculator results",
        acts="<calculator>expr</calculator> calls, then reasoning ending in \\boxed{N}",
        reward="GSM8K-v0's on the reply with a final answer; 0 on tool turns",
        turns="up to 5 (max_turns); a final answer ends the episode",
    ),
    EnvEntry(
        id="rlenvs/GSM8K-Python-v0",
        entry_point="rlenvs.envs.math.gsm8k_python:GSM8KPythonEnv",
        family="math",
        summary="GSM8K over several turns with a sandboxed Python interpreter as a tool.",
        observes="a word problem, then the output of the model's code",
        acts="```python blocks (run in the sandbox), then reasoning ending in \\boxed{N}",
        reward="GSM8K-v0's on the reply with a final answer; 0 on tool turns",
        turns="up to 5 (max_turns); a final answer ends the episode",
        nondeterministic=True,
    ),
    EnvEntry(
        id="rlenvs/Arithmetic-v0",
        entry_point="rlenvs.envs.math.arithmetic:ArithmeticEnv",
        family="math",
        summary="Procedural arithmetic in 5 levels (single digits to fractions), no data needed.",
        observes="an arithmetic problem at level=1..5 (7 + 5 up to fractions, decimals, word problems)",
        acts="a reply ending in \\boxed{exact answer}",
        reward="1 iff the single final answer equals the exact one and is stated as a number (not 7 + 9); 0 for hedging",
        turns="1 (max_turns=k gives format feedback on replies without an answer)",
    ),
    EnvEntry(
        id="rlenvs/Algebra-v0",
        entry_point="rlenvs.envs.math.algebra:AlgebraEnv",
        family="math",
        summary="Procedural algebra in 5 levels (linear equations to polynomials), no data needed.",
        observes="an equation, a 2x2/3x3 linear system or a polynomial to simplify, at level=1..5",
        acts="reasoning ending in \\boxed{x}, \\boxed{(x, y)} or \\boxed{expression}",
        reward="1 iff the single final answer is equivalent to the exact one and in its form (a number, a tuple, an expanded polynomial); 0 for hedging",
        turns="1 (max_turns=k gives format feedback on replies without an answer)",
    ),
    EnvEntry(
        id="rlenvs/HumanEval-v0",
        entry_point="rlenvs.envs.code.humaneval:HumanEvalEnv",
        family="code",
        summary="HumanEval: complete a Python function from its signature and docstring (164 problems).",
        observes="a function signature and docstring; with max_turns=k, a failing docstring example in full, hidden tests as counts",
        acts="the function (or its body) in a ```python block",
        reward="1 iff every test passes in the sandbox (partial=True: the passed fraction)",
        turns="1 (max_turns=k: retries with test feedback)",
        nondeterministic=True,
    ),
    EnvEntry(
        id="rlenvs/MBPP-v0",
        entry_point="rlenvs.envs.code.mbpp:MBPPEnv",
        family="code",
        summary="MBPP: write a short Python function from a one-line description (974 problems).",
        observes="a description and one example test; with max_turns=k, that test in full if it fails, hidden tests as counts",
        acts="the code in a ```python block",
        reward="1 iff every test (the shown one and the hidden ones) passes in the sandbox",
        turns="1 (max_turns=k: retries with test feedback)",
        nondeterministic=True,
    ),
    EnvEntry(
        id="rlenvs/Terminal-v0",
        entry_point="rlenvs.envs.terminal.env:TerminalEnv",
        family="terminal",
        summary="Shell tasks (files, logs, CSV, configs, archives, permissions) in a sandboxed workspace, 12 procedural families.",
        observes="a task, then each command's output and exit code",
        acts="one shell command per turn in a ```bash block; `submit` or `submit <answer>` to finish",
        reward="1 iff the final workspace (read from the host, no symlink followed) and the answer meet every expectation",
        turns="up to 20 (max_turns); submit ends the episode",
        nondeterministic=True,
    ),
    EnvEntry(
        id="rlenvs/Spreadsheet-v0",
        entry_point="rlenvs.envs.spreadsheet.env:SpreadsheetEnv",
        family="spreadsheet",
        summary="Workbook tasks (computed columns, group totals, lookups, ranks, dates, cleaning, sorting) on our own formula engine, 12 procedural families.",
        observes="an instruction and the sheets as grids, then each action's result",
        acts="SET/FILL/READ/INSERT ROWS/DELETE ROWS/SORT actions, one per line; SUBMIT to finish",
        reward="1 iff the target cells' values match (SpreadsheetBench's comparison) and, where formulas are asked, they still match after the inputs change",
        turns="up to 10 (max_turns); SUBMIT ends the episode",
    ),
)


def catalog_entry(env_id: str) -> EnvEntry:
    """The catalog entry of an id (with or without the `rlenvs:` module prefix)."""
    env_id = env_id.removeprefix("rlenvs:")
    for entry in CATALOG:
        if entry.id == env_id:
            return entry
    check_env_id(env_id)  # an unknown id: the words every command uses
    raise KeyError(
        f"{env_id!r} is registered by another package, not by rlenvs: the catalog describes rlenvs' own envs "
        "(`rlenvs list`)"
    )


def register_envs() -> None:
    """Register every rlenvs id with gymnasium (idempotent; `import rlenvs` calls it)."""
    register(CATALOG)
