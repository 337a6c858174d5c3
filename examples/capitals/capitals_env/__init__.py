"""Only the record of this package's env: `import rlenvs` reads it (pyproject.toml's entry point)."""

from rlenvs import EnvEntry

ENVS = (
    EnvEntry(
        id="capitals/Capitals-v0",
        entry_point="capitals_env.env:CapitalsEnv",
        summary="Name the capital of a country: 58 questions, each with one short text answer.",
        observes="What is the capital of <country>?",
        acts="the city's name, as \\boxed{City}",
        reward="1 iff the one answer given is the capital (any accepted spelling); 0 for another, or for two",
        turns="1 (max_turns=k: a wrong answer gets 'try again' and another turn)",
    ),
)
