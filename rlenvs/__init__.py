"""rlenvs: reinforcement-learning environments for LLMs with verifiable rewards.

Importing the package registers every env id in gymnasium's `rlenvs` namespace:

    import gymnasium as gym
    import rlenvs
    env = gym.make("rlenvs/GSM8K-v1")

Without the import, `gym.make("rlenvs:rlenvs/GSM8K-v1")` imports it for you.
"""

from rlenvs.core import (
    DatasetSource,
    GeneratorSource,
    Judgement,
    Task,
    TextEnv,
    UnicodeText,
)
from rlenvs.core.dataset_env import dataset_env
from rlenvs.envs.catalog import CATALOG, register_envs

__version__ = "0.1.0"
__all__ = [
    "CATALOG",
    "DatasetSource",
    "GeneratorSource",
    "Judgement",
    "Task",
    "TextEnv",
    "UnicodeText",
    "dataset_env",
    "register_envs",
]

register_envs()
