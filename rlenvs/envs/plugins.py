"""Other packages' envs, found through the `rlenvs.envs` entry-point group and registered on
`import rlenvs` beside the catalog, so that `gym.make`, `rlenvs list`/`info`/`eval`/`export`/
`serve`, `rlenvs-train` and the SkyRL adapter know them without importing the package.

A package declares its envs in its pyproject.toml:

    [project.entry-points."rlenvs.envs"]
    capitals = "capitals_env:ENVS"

and `capitals_env.ENVS` is an `rlenvs.EnvEntry` or a tuple or list of them, each with an id
`namespace/Name-vN` in the package's own namespace (`rlenvs` is reserved for rlenvs' own) and a
string entry point ("capitals_env.env:CapitalsEnv"). The module the entry point names is
imported on every `import rlenvs`, so it holds only the records; the env module loads on the
first `gym.make`, as the catalog's do.

One broken plugin must not cost the user the others, nor `import rlenvs` itself: a plugin that
fails to import, holds the wrong object, or lists a bad id gets one `PluginWarning` naming its
distribution, its entry point and the fix, and what can be registered still is. An id claimed
by two plugins is registered by neither (which one won would depend on the install order) and
gets one warning naming both.

Discovery runs once a process (`register_plugins`, called by `rlenvs/__init__.py`);
`all_entries()` and `find_entry()` are what every command that lists or describes ids reads.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib.metadata import EntryPoint, entry_points

import gymnasium as gym

from rlenvs.core.registration import NAMESPACE, EnvEntry, check_env_id, register
from rlenvs.envs.catalog import CATALOG

GROUP = "rlenvs.envs"
"""The entry-point group other packages declare their envs in."""

ENV_ID = re.compile(r"(?P<namespace>[\w.-]+)/[\w.-]+?-v(0|[1-9]\d*)")
"""`namespace/Name-vN`: gymnasium's id form with the namespace and the version required."""
ENTRY_POINT = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
"""`package.module:Attribute`: what gymnasium loads lazily on `make`."""

EXAMPLE = (
    'ENVS = (EnvEntry(id="yourpkg/YourEnv-v0", entry_point="yourpkg.env:YourEnv", summary="..."),) '
    "with `from rlenvs import EnvEntry`"
)


class PluginWarning(UserWarning):
    """A package's `rlenvs.envs` entry point could not be registered (or part of it): the
    message names the distribution, the entry point and the fix. A class of its own so that
    tools and tests can tell it from other warnings; a UserWarning, so that `-W
    error::UserWarning` makes a broken plugin fail `import rlenvs` instead."""


@dataclass(frozen=True)
class _Plugin:
    """One entry point of the group, its distribution's name and the entries it gave."""

    source: EntryPoint
    package: str
    entries: tuple[EnvEntry, ...]


_discovered: tuple[EnvEntry, ...] | None = None
_discovering = False


def register_plugins() -> tuple[EnvEntry, ...]:
    """Find, check and register every installed package's envs; the entries registered.

    Runs once a process (`import rlenvs` calls it): a second call returns the first's result
    without reading the entry points again or repeating its warnings."""
    global _discovered, _discovering
    if _discovered is not None:
        return _discovered
    if _discovering:  # a plugin's module asked for the entries while being loaded
        return ()
    _discovering = True
    try:
        _discovered = _register(_load_all())
    finally:
        _discovering = False
    return _discovered


def plugin_entries() -> tuple[EnvEntry, ...]:
    """The other packages' entries that are registered, in id order."""
    return register_plugins()


def all_entries() -> tuple[EnvEntry, ...]:
    """Every id `import rlenvs` registers: the catalog's, in its order, then the plugins', in
    id order. What `rlenvs list`, `rlenvs data`, the env server and the SkyRL adapter read."""
    return CATALOG + plugin_entries()


def find_entry(env_id: str) -> EnvEntry:
    """The entry of an id (with or without a `module:` prefix). An unknown id raises the error
    every command gives (`check_env_id`); an id registered with gymnasium by other means
    (its own `gym.register` call) has no entry and raises KeyError."""
    name = env_id.rpartition(":")[2]
    for entry in all_entries():
        if entry.id == name:
            return entry
    check_env_id(env_id)
    raise KeyError(
        f"{env_id!r} is registered with gymnasium by other means, not through rlenvs' catalog or the "
        f"{GROUP!r} entry points, so rlenvs has no description of it (`rlenvs list` shows those it has)"
    )


def _load_all() -> list[_Plugin]:
    """Load every entry point of the group, sorted by distribution and name so that the order
    (and that of the warnings) does not depend on the order of sys.path's folders."""
    plugins = []
    # The distribution's name once each: every reading parses its METADATA file again.
    found = sorted(((_package(ep), ep.name, ep) for ep in entry_points(group=GROUP)), key=lambda row: row[:2])
    for package, _, source in found:
        try:
            loaded = _load(source)
        except Exception as error:  # any failure of a third-party import: warn, go on
            _warn(
                source,
                f"failed to load ({type(error).__name__}: {error}); none of its envs is registered",
                f"make {source.module!r} import cleanly (it should hold only EnvEntry records), or "
                f"`pip uninstall {package}`",
            )
            continue
        entries = _entries_of(loaded)
        if entries is None:
            _warn(
                source,
                f"is {_describe(loaded)}, not an rlenvs.EnvEntry or a tuple or list of them; none of its envs is "
                "registered",
                f"point the entry point at a module-level tuple of EnvEntry, e.g. {EXAMPLE}",
            )
            continue
        plugins.append(_Plugin(source, package, entries))
    return plugins


def _load(source: EntryPoint) -> object:
    """The entry point's object, also when its module is being imported right now.

    That is the case when the user imports the plugin before rlenvs and the plugin's module
    begins with `from rlenvs import EnvEntry`: rlenvs is imported, and discovery runs, while the
    module stands half-run without its records. A second, private run of the module's code gives
    them (the module holds only records, so running it twice is harmless); the half-run module
    in sys.modules finishes as usual."""
    module = sys.modules.get(source.module)
    spec = getattr(module, "__spec__", None)
    if module is None or spec is None or not getattr(spec, "_initializing", False) or spec.loader is None:
        return source.load()
    try:
        return _attribute(module, source.attr)  # defined before the module imported rlenvs
    except AttributeError:
        pass
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    return _attribute(copy, source.attr)


def _attribute(module: object, path: str | None) -> object:
    """`module`'s object at `path` ("name" or "name.name", as EntryPoint.load reads it)."""
    value = module
    for name in path.split(".") if path else ():
        value = getattr(value, name)
    return value


def _entries_of(loaded: object) -> tuple[EnvEntry, ...] | None:
    if isinstance(loaded, EnvEntry):
        return (loaded,)
    if isinstance(loaded, tuple | list) and loaded and all(isinstance(item, EnvEntry) for item in loaded):
        return tuple(loaded)
    return None


def _register(plugins: list[_Plugin]) -> tuple[EnvEntry, ...]:
    """Check each plugin's entries, refuse the ids two plugins claim, register the rest."""
    claims: dict[str, list[_Plugin]] = {}
    accepted: list[tuple[_Plugin, EnvEntry]] = []
    for plugin in plugins:
        problems = []
        seen: set[str] = set()
        for entry in plugin.entries:
            problem = _problem(entry) or (f"{entry.id!r} is listed twice" if entry.id in seen else None)
            if problem:
                problems.append(problem)
                continue
            seen.add(entry.id)
            claims.setdefault(entry.id, []).append(plugin)
            accepted.append((plugin, replace(entry, package=plugin.package)))
        if problems:
            kept = len(plugin.entries) - len(problems)
            _warn(
                plugin.source,
                "lists entries that cannot be registered: "
                + "; ".join(problems)
                + f" ({kept} of its {len(plugin.entries)} entries are)",
                f"give each entry an id 'namespace/Name-vN' in the package's own namespace (not {NAMESPACE!r}) "
                "that no other registration uses, a string entry point 'package.module:EnvClass' and a summary",
            )
    for env_id, claimants in claims.items():
        if len(claimants) > 1:
            named = " and ".join(_name(plugin.source) for plugin in claimants)
            warnings.warn(
                f"env id {env_id!r} is claimed by {len(claimants)} {GROUP} plugins, {named}: registered by none "
                "of them. Fix: uninstall all but one, or rename the id in one package (its own namespace).",
                PluginWarning,
                stacklevel=3,  # at `register_plugins()` in rlenvs/__init__.py: met on `import rlenvs`
            )
    registered = []
    for plugin, entry in accepted:
        if len(claims[entry.id]) > 1:
            continue
        try:
            register([entry])
        except (ValueError, RuntimeError) as error:  # checked above; a last guard, never a failed import
            _warn(plugin.source, f"cannot register {entry.id!r} ({error})", "rename the id")
            continue
        registered.append(entry)
    return tuple(sorted(registered, key=lambda entry: entry.id))


def _problem(entry: EnvEntry) -> str | None:
    """Why `entry` cannot be registered, or None."""
    match = ENV_ID.fullmatch(entry.id) if isinstance(entry.id, str) else None
    if match is None:
        return f"id {entry.id!r} is not 'namespace/Name-vN'"
    if match.group("namespace") == NAMESPACE:
        return f"{entry.id!r} is in the namespace {NAMESPACE!r}, which is reserved for rlenvs' own envs"
    if not isinstance(entry.entry_point, str) or not ENTRY_POINT.fullmatch(entry.entry_point):
        return (
            f"{entry.id!r} has entry point {entry.entry_point!r}, not a string 'package.module:EnvClass' "
            "(a string keeps the env's module out of `import rlenvs`)"
        )
    if not isinstance(entry.summary, str) or not entry.summary.strip():
        return f"{entry.id!r} has no summary (one line: what the task is)"
    if not isinstance(entry.kwargs, Mapping):
        return f"{entry.id!r} has kwargs {entry.kwargs!r}, not a mapping of keyword arguments"
    existing = gym.registry.get(entry.id)
    if existing is not None and existing.entry_point != entry.entry_point:
        return (
            f"{entry.id!r} is already registered with gymnasium with entry point {existing.entry_point!r}, "
            f"not {entry.entry_point!r} (a gym.register call elsewhere)"
        )
    return None


def _warn(source: EntryPoint, what: str, fix: str) -> None:
    name = _name(source)
    # Shown at `register_plugins()` in rlenvs/__init__.py: the reader sees it came with `import rlenvs`.
    warnings.warn(f"{name[0].upper()}{name[1:]} {what}. Fix: {fix}.", PluginWarning, stacklevel=4)


def _package(source: EntryPoint) -> str:
    return source.dist.name if source.dist is not None else "an unknown distribution"


def _name(source: EntryPoint) -> str:
    """The package and the entry point as its pyproject.toml writes them."""
    version = f" {source.dist.version}" if source.dist is not None else ""
    return f"the {GROUP} plugin of {_package(source)}{version} (entry point {source.name} = {source.value!r})"


def _describe(value: object) -> str:
    if isinstance(value, tuple | list) and value:
        wrong = next(item for item in value if not isinstance(item, EnvEntry))
        return f"a {type(value).__name__} holding a {type(wrong).__name__} ({wrong!r:.60})"
    if isinstance(value, tuple | list):
        return f"an empty {type(value).__name__}"
    return f"a {type(value).__name__} ({value!r:.60})"
