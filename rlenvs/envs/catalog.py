"""Every env id rlenvs ships: the single list that registration, `rlenvs list` and the
README's table are made from. Adding an env means adding its entry here."""

from __future__ import annotations

from rlenvs.core.registration import EnvEntry, register

CATALOG: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="rlenvs/GSM8K-v0",
        entry_point="rlenvs.envs.math.gsm8k:GSM8KEnv",
        family="math",
        summary="Grade-school math word problems (GSM8K) with one numeric answer.",
        observes="a word problem",
        acts="reasoning ending in \\boxed{N}",
        reward="1 iff the single final answer equals the gold number; 0 for hedging",
        turns="1 (max_turns=k gives format feedback on replies without an answer)",
    ),
)


def catalog_entry(env_id: str) -> EnvEntry:
    """The catalog entry of an id (with or without the `rlenvs:` module prefix)."""
    env_id = env_id.removeprefix("rlenvs:")
    for entry in CATALOG:
        if entry.id == env_id:
            return entry
    known = ", ".join(entry.id for entry in CATALOG)
    raise KeyError(f"unknown env id {env_id!r}: rlenvs has {known} (see `rlenvs list`)")


def register_envs() -> None:
    """Register every rlenvs id with gymnasium (idempotent; `import rlenvs` calls it)."""
    register(CATALOG)
