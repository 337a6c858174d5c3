"""The procedural spreadsheet task families, by name, one module each. Adding a family:
write its generator in a module of its own that ends with its `FAMILY`, and list that
module here.

Formula families (`formula_cells`, `rounding`, `formula_pools`): row-formula,
group-totals, lookup, percent-of-total, running-total, conditional-label. Table families
(`table_cells`, `table_pools`, `drawn_tables`): sort-rows, dedupe-rows, fill-missing,
rank, date-diff, clean-text. Texts the check brings into clean-text tasks: `fresh`.

Task ids are `spreadsheet/{family}/L{level}/{index}`. The order below is the registry's
order."""

from __future__ import annotations

from rlenvs.core.procedural import Family
from rlenvs.envs.spreadsheet.families import (
    clean_text,
    conditional_label,
    date_diff,
    dedupe_rows,
    fill_missing,
    group_totals,
    lookup,
    percent_of_total,
    rank,
    row_formula,
    running_total,
    sort_rows,
)

FAMILIES: dict[str, Family] = {
    module.FAMILY.name: module.FAMILY
    for module in (
        row_formula,
        group_totals,
        lookup,
        percent_of_total,
        running_total,
        conditional_label,
        sort_rows,
        dedupe_rows,
        fill_missing,
        rank,
        date_diff,
        clean_text,
    )
}
