"""Discovery of other packages' envs through the `rlenvs.envs` entry points (rlenvs/envs/plugins.py).

Real discovery: each test installs throwaway distributions (tests/support/plugins.py) into a
folder and runs a fresh interpreter with that folder on its path, so `importlib.metadata` finds
them exactly as it finds a pip-installed package. One interpreter per case keeps it to a few."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlenvs.envs.plugins import GROUP, all_entries, find_entry, plugin_entries
from tests.support.plugins import GOOD, GOOD_BARE_ID, GOOD_ENTRY_POINTS, GOOD_ID, run_python, write_distribution

ENTRY = "from rlenvs import EnvEntry\n"


def entries_module(*ids: str) -> str:
    """A plugin module holding a well-formed entry per id (the good plugin's env class)."""
    records = "".join(f'    EnvEntry(id="{i}", entry_point="good_plugin.env:GoodEnv", summary="x"),\n' for i in ids)
    return f"{ENTRY}ENVS = (\n{records})\n"


# Every id the throwaway plugins below declare, good or bad.
IDS = [
    GOOD_ID,
    GOOD_BARE_ID,
    "rlenvs/Sneaky-v0",
    "reserved/NoVersion",
    "reserved/Fine-v0",
    "clash/Same-v0",
    "clash/OnlyA-v0",
]

# What a fresh interpreter reports after `import rlenvs`: the plugin warnings, which of IDS are
# registered, every plugin entry (the packages pip installed here too, such as the examples),
# and whether the good plugin's env module was imported before its first make.
PROBE = (
    f"IDS = {IDS!r}\n"
    + """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import rlenvs
import gymnasium as gym
from rlenvs.envs.plugins import plugin_entries
before_make = "good_plugin.env" in sys.modules
env = gym.make("good/Reverse-v0")
env.reset(seed=0)
reward = env.step(env.unwrapped.oracle_action())[1]
print(json.dumps({
    "warnings": [str(w.message) for w in caught if issubclass(w.category, rlenvs.PluginWarning)],
    "plugins": {e.id: e.package for e in plugin_entries()},
    "registered": sorted(i for i in IDS if i in gym.registry),
    "env_module_imported_by_import_rlenvs": before_make,
    "reward": reward,
}))
"""
)


INSTALLED = {entry.id: entry.package for entry in plugin_entries()}
"""The packages of envs installed in this interpreter (the examples, in CI): the probes see them too."""


def probe(site: Path, code: str = PROBE) -> dict:
    result = run_python(site, "-c", code)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A good plugin beside every kind of broken one."""
    site = tmp_path_factory.mktemp("site")
    write_distribution(site, "good-plugin", GOOD, GOOD_ENTRY_POINTS)
    write_distribution(
        site,
        "broken-plugin",
        {"broken_plugin.py": 'raise RuntimeError("boom at import")\n'},
        {"b": "broken_plugin:ENVS"},
    )
    write_distribution(
        site, "wrong-plugin", {"wrong_plugin.py": 'ENVS = {"id": "wrong/W-v0"}\n'}, {"w": "wrong_plugin:ENVS"}
    )
    write_distribution(
        site,
        "reserved-plugin",
        {"reserved_plugin.py": entries_module("rlenvs/Sneaky-v0", "reserved/NoVersion", "reserved/Fine-v0")},
        {"r": "reserved_plugin:ENVS"},
    )
    write_distribution(
        site, "clash-a", {"clash_a.py": entries_module("clash/Same-v0", "clash/OnlyA-v0")}, {"a": "clash_a:ENVS"}
    )
    write_distribution(site, "clash-b", {"clash_b.py": entries_module("clash/Same-v0")}, {"b": "clash_b:ENVS"})
    return site


def test_each_broken_plugin_warns_once_by_name_and_the_others_register(site: Path) -> None:
    report = probe(site)
    messages = report["warnings"]
    assert len(messages) == 4, messages
    (broken,) = [m for m in messages if "broken-plugin" in m]
    assert "b = 'broken_plugin:ENVS'" in broken and "RuntimeError: boom at import" in broken
    assert "pip uninstall broken-plugin" in broken
    (wrong,) = [m for m in messages if "wrong-plugin" in m]
    assert "is a dict" in wrong and "not an rlenvs.EnvEntry" in wrong and "Fix:" in wrong
    (reserved,) = [m for m in messages if "reserved-plugin" in m]
    assert "'rlenvs/Sneaky-v0' is in the namespace 'rlenvs', which is reserved" in reserved
    assert "'reserved/NoVersion' is not 'namespace/Name-vN'" in reserved and "(1 of its 3 entries are)" in reserved
    (clash,) = [m for m in messages if "clash/Same-v0" in m]
    assert "clash-a 0.1" in clash and "clash-b 0.1" in clash and "registered by none" in clash

    assert report["registered"] == ["clash/OnlyA-v0", GOOD_BARE_ID, GOOD_ID, "reserved/Fine-v0"]
    assert report["plugins"] == {
        **INSTALLED,
        "clash/OnlyA-v0": "clash-a",
        GOOD_BARE_ID: "good-plugin",
        GOOD_ID: "good-plugin",
        "reserved/Fine-v0": "reserved-plugin",
    }
    assert report["env_module_imported_by_import_rlenvs"] is False
    assert report["reward"] == 1.0


def test_a_plugin_imported_before_rlenvs_still_registers(tmp_path: Path) -> None:
    """The plugin's module imports rlenvs for EnvEntry, so discovery meets it half-imported."""
    write_distribution(tmp_path, "good-plugin", GOOD, GOOD_ENTRY_POINTS)
    report = probe(tmp_path, "import good_plugin\n" + PROBE)
    assert report["warnings"] == [] and report["reward"] == 1.0
    assert report["registered"] == [GOOD_BARE_ID, GOOD_ID]


def test_an_id_already_registered_elsewhere_is_refused(tmp_path: Path) -> None:
    write_distribution(tmp_path, "good-plugin", GOOD, GOOD_ENTRY_POINTS)
    code = (
        "import gymnasium as gym\n"
        f"gym.register('{GOOD_BARE_ID}', entry_point='somewhere.else:Env')\n" + PROBE  # before rlenvs discovers
    )
    report = probe(tmp_path, code)
    (message,) = report["warnings"]
    assert f"'{GOOD_BARE_ID}' is already registered with gymnasium with entry point 'somewhere.else:Env'" in message
    assert report["plugins"] == {**INSTALLED, GOOD_ID: "good-plugin"}


def test_without_plugins_the_entries_are_the_catalog() -> None:
    """This interpreter may have example packages installed: their entries follow the catalog."""
    import rlenvs

    entries = all_entries()
    assert entries[: len(rlenvs.CATALOG)] == rlenvs.CATALOG
    assert all(entry.package == "rlenvs" for entry in rlenvs.CATALOG)
    assert all(
        entry.package != "rlenvs" and not entry.id.startswith("rlenvs/") for entry in entries[len(rlenvs.CATALOG) :]
    )
    assert find_entry("rlenvs:rlenvs/GSM8K-v1") == rlenvs.CATALOG[0]
    with pytest.raises(ValueError, match="unknown env id"):
        find_entry("nowhere/Nope-v0")
    assert GROUP == "rlenvs.envs"
