"""Calling a reward function under test: either shape, on a thread that can be abandoned.

Why a thread: a reward function that hangs must not hang the check. Each call runs on a
daemon thread and the caller waits at most a timeout; a call still running then is
abandoned (its thread keeps running until the call returns, and never blocks the
interpreter's exit) and later calls get a fresh thread. Reward functions are required to be
thread-safe anyway (trainers and rlenvs' batched stepper call them from threads), so this
also catches one that only works on the main thread, e.g. one that uses `signal.alarm`.
"""

from __future__ import annotations

import math
import numbers
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Shape = Literal["plain", "trl"]
SHAPES: tuple[str, ...] = ("plain", "trl")

TRL_PROMPT = "Solve the problem. Put the final answer in \\boxed{}."
"""The prompt passed as `prompts=` in TRL-shaped calls: TRL always passes the prompts."""


@dataclass(frozen=True)
class Outcome:
    """What one call did: returned `value`, raised `error`, or was still running (`hung`)."""

    value: Any = None
    error: BaseException | None = None
    hung: bool = False
    seconds: float = 0.0

    @property
    def returned(self) -> bool:
        return self.error is None and not self.hung

    def describe_error(self) -> str:
        assert self.error is not None
        return f"{type(self.error).__name__}: {self.error}"


_Request = tuple[Callable[[], Any], list[Outcome], threading.Event]
"""A call to run, the list its outcome is appended to, and the event set once it is there."""


class CallThread:
    """Runs calls one at a time on a daemon thread; a call over its timeout is abandoned."""

    def __init__(self) -> None:
        self._requests = self._start()

    def _start(self) -> queue.SimpleQueue[_Request | None]:
        """A fresh thread serving a fresh queue; returns the queue (None on it stops the thread)."""
        requests: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
        threading.Thread(target=self._serve, args=(requests,), name="rlenvs-reward-call", daemon=True).start()
        return requests

    @staticmethod
    def _serve(requests: queue.SimpleQueue[_Request | None]) -> None:
        while (request := requests.get()) is not None:
            call, reply, done = request
            started = time.perf_counter()
            try:
                value = call()
            except BaseException as error:
                reply.append(Outcome(error=error, seconds=time.perf_counter() - started))
            else:
                reply.append(Outcome(value=value, seconds=time.perf_counter() - started))
            done.set()

    def call(self, call: Callable[[], Any], timeout: float) -> Outcome:
        reply: list[Outcome] = []
        done = threading.Event()
        self._requests.put((call, reply, done))
        if done.wait(timeout):
            return reply[0]
        self._requests.put(None)  # the abandoned thread exits once its call returns
        self._requests = self._start()
        return Outcome(hung=True, seconds=timeout)

    def close(self) -> None:
        self._requests.put(None)


@dataclass
class RewardUnderTest:
    """A reward function, the shape it is called in, and the range it promises.

    `shape="plain"` calls `function(completion, ground_truth)` and expects a number;
    `shape="trl"` calls `function(prompts=[...], completions=[...], <truth_column>=[...])`
    as TRL's GRPOTrainer does and expects one number per completion. The shape is never
    guessed: `probe` raises an error that names the fix when the function does not take it.
    """

    function: Callable[..., Any]
    shape: Shape = "plain"
    truth_column: str = "answer"
    conversational: bool = False
    bounds: tuple[float, float] = (0.0, 1.0)

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise TypeError(f"the reward function must be callable, got {self.function!r}")
        if self.shape not in SHAPES:
            raise ValueError(
                f"shape={self.shape!r}: pass 'plain' for f(completion, ground_truth) -> float or 'trl' for "
                "TRL's f(completions, **columns) -> list[float]"
            )
        low, high = self.bounds
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise ValueError(f"bounds={self.bounds!r}: pass finite (low, high) with low < high, e.g. (0.0, 1.0)")
        self.calls = CallThread()

    @property
    def name(self) -> str:
        module = getattr(self.function, "__module__", None)
        qualname = getattr(self.function, "__qualname__", None) or repr(self.function)
        return f"{module}:{qualname}" if module else qualname

    def invoke(self, completions: list[str], truths: list[str]) -> Any:
        """The function's raw result for a batch (plain shape: a batch of one)."""
        if self.shape == "plain":
            return self.function(completions[0], truths[0])
        shaped = [[{"role": "assistant", "content": c}] for c in completions] if self.conversational else completions
        prompts = (
            [[{"role": "user", "content": TRL_PROMPT}]] * len(completions)
            if self.conversational
            else ([TRL_PROMPT] * len(completions))
        )
        return self.function(prompts=prompts, completions=shaped, **{self.truth_column: truths})

    def call(self, completion: str, truth: str, timeout: float) -> Outcome:
        """One call on the call thread; a TRL result is unpacked to its one reward (a result
        of another length is an `Outcome` whose value is `WrongLength`)."""
        outcome = self.calls.call(lambda: self.invoke([completion], [truth]), timeout)
        if self.shape == "trl" and outcome.returned:
            return Outcome(value=_single_reward(outcome.value), seconds=outcome.seconds)
        return outcome

    def reward_problem(self, value: Any) -> str | None:
        """Why `value` is not a valid reward (not a real number, NaN, out of bounds), or None."""
        low, high = self.bounds
        if isinstance(value, WrongLength):
            return f"returned {value.length} rewards for one completion (TRL's shape wants exactly one per completion)"
        if value is None and self.shape == "trl":
            return "returned None, which TRL turns into NaN: score every completion"
        if not isinstance(value, numbers.Real):
            return f"returned {value!r} of type {type(value).__name__}, not a real number"
        number = float(value)
        if math.isnan(number):
            return "returned NaN"
        if not low <= number <= high:
            return f"returned {number!r}, outside the declared bounds [{low}, {high}]"
        return None

    def probe(self, completions: list[str], truths: list[str], timeout: float) -> None:
        """Call the function once on correct answers and check it takes the declared shape;
        raise a `TypeError` that names the fix if it does not (a `ValueError` if it hangs)."""
        outcome = self.calls.call(lambda: self.invoke(completions, truths), timeout)
        other = "trl" if self.shape == "plain" else "plain"
        other_form = (
            "TRL's f(completions, **columns) -> list[float]"
            if other == "trl"
            else "f(completion, ground_truth) -> float"
        )
        switch = f"if it is {other_form}, pass shape={other!r} (--shape {other} on the command line)"
        if outcome.hung:
            raise ValueError(
                f"{self.name} did not return within {timeout:g} s on a correct answer ({completions[0]!r}): a function "
                "that hangs on the plainest input cannot be checked; make it return, then run the checks"
            )
        if outcome.error is not None:
            if self.shape == "trl" and isinstance(outcome.error, TypeError):
                switch += (
                    f"; TRL passes prompts=, completions= and every data set column as keywords (the "
                    f"ground truths as {self.truth_column}=, truth_column= names another column), so a "
                    "TRL-shaped function should take **kwargs"
                )
            raise TypeError(
                f"calling {self.name} in the {self.shape} shape on a correct answer ({completions[0]!r}) raised "
                f"{outcome.describe_error()}; {switch} (calls run on a worker thread, as a trainer's may)"
            ) from outcome.error
        if self.shape == "plain" and isinstance(outcome.value, (list, tuple)):
            kind = type(outcome.value).__name__
            raise TypeError(f"{self.name}(completion, ground_truth) returned a {kind}; {switch}")
        if self.shape == "trl":
            length = _length(outcome.value)
            if length != len(completions):
                raise TypeError(
                    f"{self.name} returned {outcome.value!r} for {len(completions)} completions; TRL's shape wants a "
                    f"list with one reward per completion; {switch}"
                )

    def close(self) -> None:
        self.calls.close()


@dataclass(frozen=True)
class WrongLength:
    """A TRL-shaped result that did not hold exactly one reward for one completion."""

    length: int | None


def _length(result: Any) -> int | None:
    if isinstance(result, (str, bytes)) or not hasattr(result, "__len__"):
        return None
    return len(result)


def _single_reward(result: Any) -> Any:
    return result[0] if _length(result) == 1 else WrongLength(_length(result))
