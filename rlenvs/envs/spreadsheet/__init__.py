"""The workbook model and formula engine behind `rlenvs/Spreadsheet-v0`.

Why a formula engine of our own: the maintained Python engines are copyleft (the PyPI
package `formulas` is EUPL, `pycel` is GPLv3) and rlenvs is MIT; our subpackage
`formulas` shares only the name. Tasks are verified by cell values and by
recomputing the agent's formulas, so the engine must follow Excel's documented semantics
closely; where Excel and LibreOffice differ, the module docstrings say which one we follow.

Layout:

- `cells`: A1 addressing (column letters, `parse_ref`, `parse_range`, sheet-name quoting);
- `values`: the value types, Excel's errors, coercions, comparisons, date serials;
- `formulas`: tokenizer, parser (AST), evaluator, the function table, reference rewriting;
- `workbook`: `Workbook` — sheets, cells, row insertion and deletion, copies;
- `calc`: dependency-ordered, cached recalculation with cycle detection;
- `xlsx`: reading and writing .xlsx through openpyxl (also reachable as
  `Workbook.to_xlsx` / `Workbook.from_xlsx`).

The env's own modules (actions, operations, render, tasks, families, env) build on these.
Nothing is imported here, so importing one module does not load the others.
"""
