"""A spreadsheet engine: a workbook model, a formula engine and .xlsx input and output.

It is the engine only: it imports nothing from `rlenvs.envs` (nor from the rest of rlenvs),
and `rlenvs/Spreadsheet-v1` (`rlenvs.envs.spreadsheet`: its families, actions, oracle and
verdict) is built on top of it.

Why a formula engine of our own: the maintained Python engines are copyleft (the PyPI
package `formulas` is EUPL, `pycel` is GPLv3) and rlenvs is MIT; our subpackage
`formulas` shares only the name. Tasks are verified by cell values and by
recomputing the agent's formulas, so the engine must follow Excel's documented semantics
closely; where Excel and LibreOffice differ, the module docstrings say which one we follow.

Layout (each module imports only those above it in this list):

- `cells`: A1 addressing (column letters, `parse_ref`, `parse_range`, sheet-name quoting);
- `values`: the value types, Excel's errors, coercions, comparisons, date serials;
- `formulas`: tokenizer, parser (AST), evaluator, the function table, reference rewriting;
- `calc`: dependency-ordered, cached recalculation with cycle detection;
- `workbook`: `Workbook`: sheets, cells, row insertion and deletion, copies;
- `xlsx`: reading and writing .xlsx through openpyxl (`read_xlsx(path)`,
  `write_xlsx(workbook, path)`); `workbook` does not import it, so the model needs no
  openpyxl.

Nothing is imported here, so importing one module does not load the others.
"""
