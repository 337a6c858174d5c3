"""permissions: set file and folder modes exactly, changing nothing else.

| level | asks | judged by |
|---|---|---|
| 1 | mode 755 for the named scripts, nothing else changes | mode and content of every entry |
| 2 | modes by rule over a tree: directories, scripts, a private folder that wins | mode of every entry |

Why the verdict holds: every entry's mode is checked, not only those the instruction names.
At level 1 other scripts in the folder are not named (one already 755, one owner-only 700), a
sourced library stays 644, and a named script may start at 640 so that `chmod +x` (751) is not
755. At level 2 the private folder holds a script, so its rule must win over the scripts';
every other file keeps a mode of its own, and files outside the tree must not change:
`chmod -R` of anything fails.
"""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample
from rlenvs.core.procedural import Family, Level
from rlenvs.envs.terminal.families.contents import content_for, sentence
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import Expectation, FileMode, FileText

SCRIPTS = ("deploy", "backup", "rotate_logs", "healthcheck", "migrate_db", "sync_assets", "cleanup", "build", "release",
           "restart_workers", "seed_data", "renew_certs")  # fmt: skip


def _script(rng: np.random.Generator, name: str) -> str:
    return f'#!/bin/sh\n# {name.removesuffix(".sh").replace("_", " ")}\nset -eu\necho "{name}: done"\n'


def executable_scripts(rng: np.random.Generator) -> Scenario:
    """Mode 755 for the named scripts only. Other scripts in the folder are not named (one
    already 755, one owner-only 700), a sourced library stays 644, and a named script may
    start at 640 so that `chmod +x` (751) is not 755."""
    folder = draw_from(rng, ("scripts", "bin", "tools", "ops"))
    names = [f"{s}.sh" for s in draw_sample(rng, SCRIPTS, draw_int(rng, 5, 8))]
    wanted = names[: draw_int(rng, 2, 3)]
    modes = {name: draw_from(rng, (0o644, 0o644, 0o640, 0o600)) for name in wanted}
    modes[names[-1]] = 0o755
    modes[names[-2]] = 0o700
    for name in names[len(wanted) : -2]:
        modes[name] = draw_from(rng, (0o644, 0o664))
    files: dict[str, tuple[str, int]] = {f"{folder}/{n}": (_script(rng, n), modes[n]) for n in names}
    files[f"{folder}/lib/common.sh"] = ('# sourced by the other scripts\nlog() { echo "$(date) $*"; }\n', 0o644)
    files[f"{folder}/README.md"] = (f"# {folder}\n\n{sentence(rng)}\n", 0o644)
    files[f"{folder}/credentials.env"] = (f"API_TOKEN={rng.integers(16**8, 16**9):x}\n", 0o600)
    final = {path: (0o755 if path.rsplit("/", 1)[-1] in wanted else mode) for path, (_, mode) in files.items()}
    listed = ", ".join(f"`{folder}/{n}`" for n in wanted)
    dirs = (folder, f"{folder}/lib")
    workspace = [Entry(d, is_dir=True, mode=0o755) for d in dirs]
    workspace += [Entry(p, text, mode=mode) for p, (text, mode) in sorted(files.items())]
    expect: list[Expectation] = [FileMode(d, 0o755) for d in dirs]
    expect += [FileMode(p, final[p]) for p in sorted(files)]
    expect += [FileText(p, text) for p, (text, _) in sorted(files.items())]
    return Scenario(
        instruction=(
            f"Make these scripts executable with mode 755 (rwxr-xr-x): {listed}. Change nothing else: every other file "
            f"and folder keeps its mode and content. {DONE}"
        ),
        files=tuple(workspace),
        solution=(f"chmod 755 {' '.join(f'{folder}/{n}' for n in wanted)}",),
        expect=tuple(expect),
    )


PRIVATE_FOLDERS = {"secrets": ("db_password.txt", "api_token", "tls/server.key", "tls/server.crt"),
                   "keys": ("deploy_ed25519", "deploy_ed25519.pub", "gpg/release.asc"),
                   "credentials": ("aws.ini", "smtp.env", "oauth/client_secret.json")}  # fmt: skip
PLAIN_FILES = ("nginx.conf", "app.yml", "README.md", "hosts.ini", "Dockerfile", "logrotate.conf", "crontab.txt")


def mode_rules(rng: np.random.Generator) -> Scenario:
    """Modes by rule over a tree: directories, scripts, and a private folder whose rule wins
    over the scripts' (it holds a script). Every other file keeps a mode of its own, and
    files outside the tree must not change: `chmod -R` of anything fails."""
    root = draw_from(rng, ("deploy", "server", "infra", "release"))
    private = draw_from(rng, sorted(PRIVATE_FOLDERS))
    dir_mode, script_mode, private_mode = (
        draw_from(rng, (0o700, 0o750)),
        draw_from(rng, (0o750, 0o755, 0o700)),
        draw_from(rng, (0o600, 0o400)),
    )
    subfolders = draw_sample(rng, ("bin", "hooks", "conf", "conf/nginx", "cron"), draw_int(rng, 2, 4))
    files: dict[str, int] = {}
    for folder in ["", *subfolders]:
        prefix = f"{root}/{folder}/" if folder else f"{root}/"
        for name in draw_sample(rng, SCRIPTS, draw_int(rng, 1, 2)):
            files[f"{prefix}{name}.sh"] = draw_from(rng, (0o644, 0o755, 0o775, 0o700))
        for name in draw_sample(rng, PLAIN_FILES, draw_int(rng, 0, 2)):
            files[f"{prefix}{name}"] = draw_from(rng, (0o644, 0o664, 0o640, 0o444, 0o755))
    for name in draw_sample(rng, PRIVATE_FOLDERS[private], draw_int(rng, 2, len(PRIVATE_FOLDERS[private]))):
        files[f"{root}/{private}/{name}"] = draw_from(rng, (0o644, 0o640, 0o664))
    files[f"{root}/{private}/rotate.sh"] = draw_from(rng, (0o755, 0o644))
    outside = {"README.md": 0o644, "notes/todo.txt": 0o644, "notes/run.sh": 0o755}
    dirs = sorted({p.rsplit("/", 1)[0] for p in files} | {root} | {p.rsplit("/", 1)[0] for p in outside if "/" in p})
    dirs = sorted({"/".join(d.split("/")[:i]) for d in dirs for i in range(1, d.count("/") + 2)})

    def wanted(path: str, mode: int) -> int:
        if path.startswith(f"{root}/{private}/"):
            return private_mode
        return script_mode if path.endswith(".sh") else mode

    all_files = {**files, **outside}
    final = (
        {p: wanted(p, m) for p, m in files.items()}
        | outside
        | {d: dir_mode if d.split("/")[0] == root else 0o755 for d in dirs}
    )
    workspace = [Entry(d, is_dir=True, mode=0o755) for d in dirs]
    workspace += [Entry(p, content_for(rng, p.rsplit("/", 1)[-1]), mode=m) for p, m in sorted(all_files.items())]
    return Scenario(
        instruction=(
            f"Fix the permissions under `{root}/` by these rules: (1) every directory under `{root}/`, `{root}` itself "
            f"included, gets mode {dir_mode:o}; (2) every file whose name ends in `.sh` gets {script_mode:o}; (3) every "
            f"file anywhere under `{root}/{private}/` gets {private_mode:o}, and this rule wins over rule 2; (4) every "
            f"other file keeps its current mode. Modes are octal. Change nothing outside `{root}/`. {DONE}"
        ),
        files=tuple(workspace),
        solution=(
            f"find {root} -type d -exec chmod {dir_mode:o} {{}} +",
            f"find {root} -type f -name '*.sh' -exec chmod {script_mode:o} {{}} +",
            f"find {root}/{private} -type f -exec chmod {private_mode:o} {{}} +",
        ),
        expect=tuple(FileMode(p, m) for p, m in sorted(final.items())),
    )


FAMILY: Family = Family.of_levels(
    "permissions",
    "Set file and folder modes exactly, changing nothing else.",
    {
        1: Level("mode 755 for the named scripts only", executable_scripts),
        2: Level("modes by rule over a tree: directories, scripts, a private folder", mode_rules),
    },
    tags=("files", "chmod"),
)
