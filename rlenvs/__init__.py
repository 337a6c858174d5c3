"""rlenvs: reinforcement-learning environments for LLMs with verifiable rewards.

Importing the package registers every env id in gymnasium's `rlenvs` namespace:

    import gymnasium as gym
    import rlenvs
    env = gym.make("rlenvs/GSM8K-v1")

Without the import, `gym.make("rlenvs:rlenvs/GSM8K-v1")` imports it for you.

It registers too the envs of every installed package that declares them in the `rlenvs.envs`
entry-point group (rlenvs/envs/plugins.py): `gym.make("capitals/Capitals-v0")` after
`import rlenvs`, or `gym.make("rlenvs:capitals/Capitals-v0")`.
"""

from typing import Any

from rlenvs.core import (
    DatasetSource,
    GeneratorSource,
    Judgement,
    Task,
    TextEnv,
    UnicodeText,
)
from rlenvs.core.dataset_env import dataset_env
from rlenvs.core.registration import EnvEntry
from rlenvs.envs.catalog import CATALOG, register_envs
from rlenvs.envs.plugins import PluginWarning, register_plugins

__version__ = "0.1.0"
__all__ = [
    "CATALOG",
    "DatasetSource",
    "EnvEntry",
    "EvalResult",
    "GeneratorSource",
    "Judgement",
    "PluginWarning",
    "Task",
    "TextEnv",
    "UnicodeText",
    "dataset_env",
    "evaluate",
    "register_envs",
]

register_envs()
# Last, after every name above is bound: a plugin's module runs `from rlenvs import EnvEntry`
# while this module is still being imported.
register_plugins()


def __getattr__(name: str) -> Any:
    """`rlenvs.evaluate` and `rlenvs.EvalResult`, imported on first use: the evaluation package
    reads data files (pyarrow), which `import rlenvs` leaves out."""
    if name in ("evaluate", "EvalResult"):
        from rlenvs import evaluation

        value = getattr(evaluation, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rlenvs' has no attribute {name!r}")
