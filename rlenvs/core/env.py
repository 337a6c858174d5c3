"""`TextEnv`: the `gymnasium.Env[str, str]` every rlenvs environment subclasses.

The base class owns everything that must behave the same in every env: task selection,
seeding, the chat messages, the turn budget, termination versus truncation, the errors for
misuse, fresh `info` objects and rendering. A subclass supplies only what differs: how a
row of its dataset becomes a task (`task_from_row`), how one reply is judged
(`judge(task, reply)`) and the gold reply (`oracle_reply(task, turn)`); the base class hands
both the current task, and raises gymnasium's `ResetNeeded` before the first `reset`. So an env file reads top to bottom as task source →
prompt → parse action → transition → reward.
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic

import gymnasium as gym
from gymnasium.error import ResetNeeded

from rlenvs.core.checks import check_int
from rlenvs.core.registration import UnknownKeywordError, keyword_parameters, keyword_problem
from rlenvs.core.spaces import DEFAULT_MAX_TEXT_LENGTH, UnicodeText
from rlenvs.core.task import TaskSource, TaskT, select_task

Message = dict[str, str]

MAX_STEPS_WITHOUT_TURN_LIMIT = 1000
"""A driver's cap on the steps of an episode whose env declares no `max_turns` (a foreign env):
an oracle or policy that never finishes ends there instead of looping."""


def chat_messages(info: Mapping[str, Any], observation: Any) -> list[Message]:
    """The env's messages of one reset or step, as a driver adds them to the conversation:
    `info["messages"]` where the env gives them (every rlenvs env does); else its observation
    as one user message (none when it is empty), as a plain gymnasium text env means it."""
    if "messages" in info:
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in info["messages"]]
    return [{"role": "user", "content": str(observation)}] if observation else []


@dataclass(frozen=True)
class Judgement:
    """What `judge` decides about one reply."""

    reward: float
    resolved: bool
    """The task is over because the reply resolved it (answered, submitted, solved)."""
    correct: bool | None = None
    """Whether the reply was right, where the env knows; None while still unknown."""
    feedback: str = ""
    """The env's next message if the episode goes on (tool output, a format reminder)."""
    stop_reason: str | None = None
    """Why the episode ended, when `resolved`."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """Extra keys for `step`'s info (e.g. the parsed answer, `reward_breakdown`)."""


class TextEnv(gym.Env[str, str], abc.ABC, Generic[TaskT]):
    """A multi-turn text environment: observations are env messages, actions model replies.

    `reset` poses a task (see `rlenvs.core.task.select_task` for how options choose it) and
    returns the user message; `info["messages"]` is the chat to send. `step(reply)` judges
    one whole model reply. An episode is `terminated` when a reply resolves the task, and
    when the one reply of a single-turn task (`max_turns=1`) does not; it is `truncated`
    when `max_turns > 1` replies were made without resolving it. Never both.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}
    reward_range: tuple[float, float] = (0.0, 1.0)

    def __new__(cls, *args: Any, **kwargs: Any) -> TextEnv[Any]:
        # A keyword typo (`gym.make(id, max_turn=2)`) would otherwise surface as Python's bare
        # "__init__() got an unexpected keyword argument": this names the env's keywords and
        # the close one. Checked here, before __init__, so it holds for every subclass
        # (users' too) without each constructor repeating it.
        problem = _keyword_problem(cls, tuple(kwargs))
        if problem is not None:
            raise UnknownKeywordError(problem)
        return super().__new__(cls)

    def __init__(
        self,
        tasks: TaskSource[TaskT],
        *,
        max_turns: int = 1,
        system_prompt: str | None = None,
        render_mode: str | None = None,
        max_text_length: int = DEFAULT_MAX_TEXT_LENGTH,
    ) -> None:
        check_int("max_turns", max_turns, at_least=1)
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise TypeError(f"system_prompt must be a str or None, got {type(system_prompt).__name__}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not supported: use one of {self.metadata['render_modes']} or None"
            )
        self.tasks = tasks
        self.max_turns = max_turns
        self.system_prompt = system_prompt
        self.render_mode = render_mode
        self.observation_space = UnicodeText(max_text_length)
        self.action_space = UnicodeText(max_text_length)
        self.task: TaskT | None = None
        self.turn = 0
        self.stop_reason: str | None = None
        self.transcript: list[Message] = []
        self._printed = 0

    # --- what a subclass supplies -------------------------------------------------------

    @abc.abstractmethod
    def task_from_row(self, row: Mapping[str, Any]) -> TaskT:
        """Build a task from one row in this env's dataset format (for `options["task"]`)."""

    @abc.abstractmethod
    def judge(self, task: TaskT, reply: str) -> Judgement:
        """Judge one model reply. Must accept any string and never raise on its content."""

    @abc.abstractmethod
    def oracle_reply(self, task: TaskT, turn: int) -> str:
        """A reply that earns the maximum reward for `task` from here, `turn` replies into the
        episode (0 before the first). An env whose state goes beyond the transcript (a
        workspace, a workbook) reads it from `self`. Raise when there is none, saying why."""

    # --- the contract ---------------------------------------------------------------------

    def oracle_action(self) -> str:
        """The gold reply now: `oracle_reply(task, turn)` for the current episode (what
        `rlenvs eval --policy oracle`, the SFT data and the testing kit play)."""
        return self.oracle_reply(self.current_task, self.turn)

    @property
    def current_task(self) -> TaskT:
        """The current episode's task; gymnasium's `ResetNeeded` before the first `reset()`."""
        if self.task is None:
            raise ResetNeeded(f"{type(self).__name__}: call reset() first; there is no task yet")
        return self.task

    @property
    def episode_over(self) -> bool:
        return self.stop_reason is not None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.task = select_task(self.tasks, options, self.np_random, self.task_from_row)
        self.turn = 0
        self.stop_reason = None
        messages = [{"role": "user", "content": self.task.prompt}]
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        self.transcript = [dict(m) for m in messages]
        self._printed = 0
        info = {
            "task_id": self.task.task_id,
            "max_turns": self.max_turns,
            "messages": messages,
        }
        self._render_if_human()
        return self.task.prompt, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if not isinstance(action, str):
            raise TypeError(
                f"{type(self).__name__}.step expects the model's reply as a str, got "
                f"{type(action).__name__}: decode token ids to text before stepping"
            )
        task = self.current_task
        if self.episode_over:
            raise ResetNeeded(
                f"{type(self).__name__}: the episode has ended (stop_reason={self.stop_reason!r}); "
                "call reset() to start a new one"
            )
        self.turn += 1
        self.transcript.append({"role": "assistant", "content": action})
        verdict = self.judge(task, action)
        reward = float(verdict.reward)
        low, high = self.reward_range
        if not (math.isfinite(reward) and low <= reward <= high):
            raise RuntimeError(
                f"{type(self).__name__}.judge returned reward {reward!r} outside reward_range {self.reward_range}"
            )
        out_of_turns = not verdict.resolved and self.turn >= self.max_turns
        # A single-turn task is one attempt, so its one reply always ends it in a terminal
        # state; only running out of a budget of several turns is a time-limit truncation
        # (gymnasium's check_env also insists a first step does not truncate).
        terminated = verdict.resolved or (out_of_turns and self.max_turns == 1)
        truncated = out_of_turns and self.max_turns > 1
        if verdict.resolved:
            self.stop_reason = verdict.stop_reason or "resolved"
        elif out_of_turns:
            self.stop_reason = "max_turns"
        observation = "" if self.episode_over else verdict.feedback
        messages = [{"role": "user", "content": observation}] if observation else []
        self.transcript.extend(dict(m) for m in messages)
        info = {
            "task_id": task.task_id,
            "turn": self.turn,
            "max_turns": self.max_turns,
            "messages": messages,
            "stop_reason": self.stop_reason,
            "correct": verdict.correct,
            **verdict.info,
        }
        self._render_if_human()
        return observation, reward, terminated, truncated, info

    # --- rendering ------------------------------------------------------------------------

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn(
                f"{type(self).__name__}.render() called without a render_mode: pass "
                "render_mode='ansi' (returns the transcript) or 'human' (prints it) to make()"
            )
            return None
        text = self.transcript_text()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def transcript_text(self) -> str:
        """The episode so far as plain text, one block per message."""
        return _format_messages(self.transcript, self.stop_reason if self.episode_over else None)

    def _render_if_human(self) -> None:
        # Print only the messages added since the last print, so a person follows along.
        if self.render_mode == "human":
            new = self.transcript[self._printed :]
            self._printed = len(self.transcript)
            print(_format_messages(new, self.stop_reason if self.episode_over else None), end="\n\n")


def _format_messages(messages: list[Message], stop_reason: str | None) -> str:
    blocks = [f"[{m['role']}]\n{m['content']}" for m in messages]
    if stop_reason is not None:
        blocks.append(f"[episode over: {stop_reason}]")
    return "\n\n".join(blocks)


@functools.lru_cache(maxsize=1024)
def _keyword_problem(cls: type[TextEnv[Any]], given: tuple[str, ...]) -> str | None:
    """`keyword_problem` for the constructor of `cls` (cached: a vector of envs makes the same
    class with the same keywords many times)."""
    parameters = keyword_parameters(cls.__init__)
    if parameters is None or not given:
        return None
    return keyword_problem(cls.__name__, parameters, given)
