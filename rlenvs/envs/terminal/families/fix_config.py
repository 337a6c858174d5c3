"""fix-config: change one config value and nothing else.

| level | asks | example (task id) |
|---|---|---|
| 1 | one key of a flat `key = value` or `KEY=value` file, nothing else | `MAX_CONNECTIONS=988` in `deploy/app.env`; the commented-out default stays (L1/0) |
| 2 | one key in one INI section: a value, another section's value or an increment | `host` of `[replica]` in `deploy/databases.ini` to `db2.internal`, other `host`s kept (L2/2) |

Why the verdict holds: the file's whole text is checked, so every other line, comments and
blank lines included, must stay as it was. Level 1 plants a commented-out line for the same
key and a longer key containing it (`max_connections_per_ip`, `read_timeout`). At level 2
the key is present in every section and changes in one only, and some section besides the
target (and the source) differs from the new value, so changing it everywhere is caught.
"""

from __future__ import annotations

import re

import numpy as np

from rlenvs.core.draw import coin, draw_from, draw_int, draw_sample, shuffled
from rlenvs.core.procedural import Family
from rlenvs.envs.terminal.families.instructions import DONE
from rlenvs.envs.terminal.families.shell import quote
from rlenvs.envs.terminal.tasks import Entry, Scenario
from rlenvs.envs.terminal.workspace import FileText

# A value spec: ("int", low, high) or ("choice", options) or ("fixed", text).
ValueSpec = tuple
CONF_GROUPS: tuple[tuple[str, tuple[tuple[str, ValueSpec], ...]], ...] = (
    (
        "Network",
        (
            ("listen_address", ("choice", ("0.0.0.0", "127.0.0.1", "10.0.0.5"))),
            ("listen_port", ("int", 1024, 9999)),
            ("max_connections", ("int", 50, 2000)),
            ("max_connections_per_ip", ("int", 5, 60)),
        ),
    ),
    (
        "Timeouts, in seconds",
        (
            ("timeout", ("int", 10, 300)),
            ("read_timeout", ("int", 5, 120)),
            ("write_timeout", ("int", 5, 120)),
            ("keepalive_timeout", ("int", 30, 600)),
        ),
    ),
    (
        "Logging",
        (
            ("log_level", ("choice", ("debug", "info", "warning", "error"))),
            ("log_file", ("fixed", "/var/log/app/server.log")),
            ("log_max_size_mb", ("int", 10, 500)),
        ),
    ),
    (
        "Cache",
        (
            ("cache_enabled", ("choice", ("true", "false"))),
            ("cache_size_mb", ("int", 64, 4096)),
            ("cache_ttl", ("int", 60, 86400)),
        ),
    ),
    (
        "Workers",
        (
            ("worker_threads", ("int", 2, 64)),
            ("worker_queue_size", ("int", 100, 10000)),
            ("retry_count", ("int", 1, 10)),
            ("retry_delay_ms", ("int", 100, 5000)),
        ),
    ),
)


def _value(rng: np.random.Generator, spec: ValueSpec) -> str:
    if spec[0] == "int":
        return str(draw_int(rng, spec[1], spec[2]))
    if spec[0] == "choice":
        return draw_from(rng, spec[1])
    return spec[1]


def _other_value(rng: np.random.Generator, spec: ValueSpec, old: str) -> str:
    """A value of the same kind as `old` but different from it."""
    while True:
        value = _value(rng, spec)
        if value != old:
            return value


def _sed_value(text: str) -> str:
    """`text` safe as a sed replacement with '|' as the delimiter."""
    return text.replace("\\", "\\\\").replace("&", "\\&").replace("|", "\\|")


def fix_config(rng: np.random.Generator, level: int) -> Scenario:
    return _fix_flat(rng) if level == 1 else _fix_ini(rng)


def _fix_flat(rng: np.random.Generator) -> Scenario:
    """Level 1: one key of a flat file. Decoys: a commented-out line for the same key and a
    longer key containing it (`max_connections_per_ip`, `read_timeout`)."""
    env_style = coin(rng)
    path = draw_from(
        rng,
        (".env", "config/production.env", "deploy/app.env")
        if env_style
        else ("config/app.conf", "etc/server.conf", "service.conf"),
    )
    targets = [
        (g, k) for g, (_, keys) in enumerate(CONF_GROUPS) for k, (_, spec) in enumerate(keys) if spec[0] != "fixed"
    ]
    # half the time a key with a look-alike (`timeout` beside `read_timeout`)
    lookalike = [
        (g, k)
        for g, k in targets
        if any(other != CONF_GROUPS[g][1][k][0] and CONF_GROUPS[g][1][k][0] in other for other, _ in CONF_GROUPS[g][1])
    ]
    target_group, target_key = draw_from(rng, lookalike if coin(rng) else targets)
    key_name, spec = CONF_GROUPS[target_group][1][target_key]

    def show(key: str) -> str:
        return key.upper() if env_style else key

    def line(key: str, value: str) -> str:
        return f"{show(key)}={value}" if env_style else f"{key} = {value}"

    lines = [
        f"# {draw_from(rng, ('Server', 'Service', 'Gateway', 'Worker pool'))} settings",
        "",
    ]
    old = new = ""
    for g in shuffled(rng, range(len(CONF_GROUPS))):
        title, keys = CONF_GROUPS[g]
        if g != target_group and not draw_int(rng, 0, 3):
            continue  # leave out some groups, so files differ in shape
        lines.append(f"# {title}")
        for k, (key, kspec) in enumerate(keys):
            related = g == target_group and (key_name in key or key in key_name)
            if not related and not draw_int(rng, 0, 2):
                continue
            value = _value(rng, kspec)
            if g == target_group and k == target_key:
                old = value
                new = _other_value(rng, spec, old)
                lines.append(f"# {line(key, _other_value(rng, spec, old))}  (old default)")
            lines.append(line(key, value))
        lines.append("")
    before = "\n".join(lines)
    after = before.replace(f"\n{line(key_name, old)}\n", f"\n{line(key_name, new)}\n")
    assert after != before
    pattern = re.escape(f"{show(key_name)}{'=' if env_style else ' = '}")
    command = f"sed -i {quote(f's|^{pattern}.*|{_sed_value(line(key_name, new))}|')} {path}"
    instruction = (
        f"In `{path}`, change the active (uncommented) `{show(key_name)}` setting to "
        f"`{new}`: that line must read `{line(key_name, new)}`. Every other line, comments "
        f"and blank lines included, must stay exactly as it is. {DONE}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(path, before),),
        solution=(f"grep -n {quote(show(key_name))} {path}", command),
        expect=(FileText(path, after),),
    )


INI_THEMES: tuple[tuple[str, str, tuple[str, ...], tuple[tuple[str, ValueSpec], ...]], ...] = (
    (
        "databases.ini",
        "Database connections",
        ("primary", "replica", "analytics", "reporting", "backup"),
        (
            (
                "host",
                (
                    "choice",
                    ("db1.internal", "db2.internal", "db3.internal", "10.0.4.12"),
                ),
            ),
            ("port", ("int", 5400, 5499)),
            ("replication_port", ("int", 6400, 6499)),
            ("pool_size", ("int", 5, 80)),
            ("connect_timeout", ("int", 2, 30)),
            ("timeout", ("int", 10, 120)),
            ("sslmode", ("choice", ("disable", "prefer", "require", "verify-full"))),
        ),
    ),
    (
        "services.ini",
        "Service settings",
        ("api", "worker", "scheduler", "frontend", "gateway"),
        (
            ("port", ("int", 8000, 8999)),
            ("metrics_port", ("int", 9100, 9199)),
            ("log_level", ("choice", ("debug", "info", "warning", "error"))),
            ("threads", ("int", 1, 32)),
            ("io_threads", ("int", 1, 16)),
            ("max_memory_mb", ("int", 256, 8192)),
        ),
    ),
    (
        "environments.ini",
        "Per-environment settings",
        ("development", "testing", "staging", "production"),
        (
            (
                "db_host",
                ("choice", ("localhost", "db.staging.lan", "db.prod.lan", "10.1.0.7")),
            ),
            (
                "cache_host",
                ("choice", ("localhost", "redis.staging.lan", "redis.prod.lan")),
            ),
            ("debug", ("choice", ("true", "false"))),
            ("log_level", ("choice", ("debug", "info", "warning", "error"))),
            ("sql_log_level", ("choice", ("debug", "info", "warning", "error"))),
            ("replicas", ("int", 1, 12)),
        ),
    ),
)


def _fix_ini(rng: np.random.Generator) -> Scenario:
    """Level 2: a key present in every section changes in one section only: to a given value,
    to another section's value, or by a stated amount."""
    name, title, section_pool, keys = draw_from(rng, INI_THEMES)
    path = draw_from(rng, (name, f"config/{name}", f"deploy/{name}"))
    sections = draw_sample(rng, section_pool, draw_int(rng, 3, len(section_pool)))
    key_index = draw_int(rng, 0, len(keys) - 1)
    key, spec = keys[key_index]
    values: dict[str, dict[str, str]] = {}
    for section in sections:
        values[section] = {}
        for k, (other, ospec) in enumerate(keys):
            if k == key_index or draw_int(rng, 0, 3):
                values[section][other] = _value(rng, ospec)
    target = sections[draw_int(rng, 0, len(sections) - 1)]
    old = values[target][key]
    others = [s for s in sections if s != target and values[s][key] != old]
    mode = draw_int(rng, 0, 2)
    if mode == 1 and others:
        source = draw_from(rng, others)
        new = values[source][key]
        ask = f"set `{key}` in the `[{target}]` section to the value that `{key}` has in the `[{source}]` section"
    elif mode == 2 and spec[0] == "int":
        step = draw_int(rng, 1, 5) * (10 if spec[2] - spec[1] >= 100 else 1)
        new = str(int(old) + step)
        ask = f"increase `{key}` in the `[{target}]` section by {step}"
        source = ""
    else:
        source = ""
        new = _other_value(rng, spec, old)
        ask = f"set `{key}` in the `[{target}]` section to `{new}`"
    # some section besides the target (and the source) differs from the new value, so
    # changing `{key}` everywhere is caught
    bystanders = [s for s in sections if s not in (target, source)]
    if all(values[s][key] == new for s in bystanders):
        values[bystanders[0]][key] = _other_value(rng, spec, new)

    def render(section_values: dict[str, dict[str, str]]) -> str:
        lines = [f"; {title}", ""]
        for section in sections:
            lines.append(f"[{section}]")
            lines += [f"{k} = {v}" for k, v in section_values[section].items()]
            lines.append("")
        return "\n".join(lines)

    before = render(values)
    values[target][key] = new
    after = render(values)
    script = f"/^\\[{target}\\]$/,/^\\[/ s|^{key} = .*|{key} = {_sed_value(new)}|"
    instruction = (
        f"In `{path}`, {ask}. The changed line keeps the `{key} = <value>` form. Other "
        f"sections have their own `{key}`: leave them alone, and keep every other line "
        f"exactly as it is. {DONE}"
    )
    return Scenario(
        instruction=instruction,
        files=(Entry(path, before),),
        solution=(f"cat {path}", f"sed -i {quote(script)} {path}"),
        expect=(FileText(path, after),),
    )


FAMILY: Family = Family(
    "fix-config",
    "Change one config value and nothing else.",
    {
        1: "one key of a flat `key = value` or `KEY=value` file, with decoy lines",
        2: "one key in one INI section, given literally, by another section's value or by an increment",
    },
    fix_config,
    tags=("text",),
)
