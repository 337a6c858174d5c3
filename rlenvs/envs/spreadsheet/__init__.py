"""`rlenvs/Spreadsheet-v1`: the env, its task families, actions, oracle and verdict.

The workbook model and formula engine it runs on are the peer package `rlenvs.workbook`
(`cells`, `values`, `formulas`, `calc`, `workbook`, `xlsx`), which imports nothing from here.

Layout:

- `tasks`, `families`: the procedural task families and their levels; `folders`: tasks
  read from SpreadsheetBench-style folders;
- `actions`, `operations`: parsing the agent's actions and running them on the workbook;
- `render`: the workbook's sheets as text grids;
- `oracle`: replies that solve a task; `verdict`, `perturb`: judging a workbook, with the
  input data perturbed and recalculated;
- `env`: `SpreadsheetEnv`.

Nothing is imported here, so importing one module does not load the others.
"""
