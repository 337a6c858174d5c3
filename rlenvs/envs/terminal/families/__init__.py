"""The procedural terminal task families, by name: one module each, named after its family.

A task is a pure function of (family, level, index) through the `rng` its generator gets
(task ids are `terminal/{family}/L{level}/{index}`), and every one is judged from the host by
what it can read in the workspace (contents, modes, folder listings; `rlenvs.envs.terminal.workspace`)
or by the submitted answer, never by what the agent's commands print. Each module's docstring
says what its family asks and why its verdict holds.

What several families share lives in modules named for what they hold: `words` (word pools),
`contents` (a file's body by its name), `paths` (distinct names, workspace entries), `times`
(file times and log timestamps), `instructions` (how an instruction ends), `byte_order`
(`LC_ALL=C sort`'s order) and `shell` (quoting for the reference solutions).

Adding a family: write its module, ending in `FAMILY`, and list it at the end of FAMILIES (the
order is the one the families have always had; tests/project/test_task_hashes.py pins their tasks).
"""

from __future__ import annotations

from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.families import (
    archive,
    count_files,
    csv_column,
    dedupe_sort,
    fix_config,
    largest_file,
    log_summary,
    make_tree,
    newer_files,
    permissions,
    rename_files,
    replace_text,
)

FAMILIES: dict[str, Family] = {
    module.FAMILY.name: module.FAMILY
    for module in (
        # the file chores
        count_files,
        largest_file,
        newer_files,
        log_summary,
        permissions,
        archive,
        # the text tasks
        csv_column,
        rename_files,
        fix_config,
        make_tree,
        dedupe_sort,
        replace_text,
    )
}
