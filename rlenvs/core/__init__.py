"""The env contract: `TextEnv`, `UnicodeText`, tasks and task sources, registration."""

from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.spaces import UnicodeText
from rlenvs.core.task import DatasetSource, FamilyMixSource, GeneratorSource, Task, select_task, task_source

__all__ = ["DatasetSource", "FamilyMixSource", "GeneratorSource", "Judgement", "Task", "TextEnv", "UnicodeText", "select_task", "task_source"]  # fmt: skip
