"""Formulas: tokenizer -> parser (syntax tree) -> compiled closures, plus rewriting.

- `parse_formula(text)` reads a formula (FormulaError with a position on bad text);
- `to_text(tree)` writes the canonical text (upper case, no spaces);
- `compile_formula(tree, sheet)` / `evaluate(tree, ctx)` compute it;
- `shift_formula` (copy/fill) and `adjust_for_rows` (row insertion/deletion) rewrite
  references;
- `FUNCTIONS` is the function table (`functions/`).
"""

from __future__ import annotations

from rlenvs.workbook.formulas.evaluator import (
    CellKey,
    Context,
    EmptyContext,
    calls,
    compile_formula,
    dependencies,
    evaluate,
    validate,
)
from rlenvs.workbook.formulas.functions import FUNCTIONS, FunctionSpec, function
from rlenvs.workbook.formulas.grid import Grid
from rlenvs.workbook.formulas.nodes import Node, references, to_text
from rlenvs.workbook.formulas.parser import parse_formula
from rlenvs.workbook.formulas.rewrite import (
    adjust_for_rows,
    adjust_rows_ast,
    shift_ast,
    shift_formula,
)
from rlenvs.workbook.formulas.tokenizer import FormulaError

__all__ = [
    "FUNCTIONS",
    "CellKey",
    "Context",
    "EmptyContext",
    "FormulaError",
    "FunctionSpec",
    "Grid",
    "Node",
    "adjust_for_rows",
    "adjust_rows_ast",
    "calls",
    "compile_formula",
    "dependencies",
    "evaluate",
    "function",
    "parse_formula",
    "references",
    "shift_ast",
    "shift_formula",
    "to_text",
    "validate",
]
