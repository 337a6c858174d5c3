"""`UnicodeText`: the observation and action space of every text env.

gymnasium's stock `Text` admits only its charset (alphanumeric by default), so a model reply
with a space, a newline or a `\\boxed{}` is not a member. Giving it a charset of all of
unicode instead makes `deepcopy` (which gymnasium does on every `make`) cost seconds. This
subclass keeps `Text`'s type, so code that dispatches on `Text` still works, but membership
is "a `str` within the length bounds" and the charset is only what `sample` draws from.

It also brings its own shared-memory layout for `gymnasium.vector.AsyncVectorEnv` (whose
default is `shared_memory=True`): the stock `Text` one stores charset indices, so every
character outside the charset, and every step after the first, came back as padding (a
million spaces).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

DEFAULT_MAX_TEXT_LENGTH = 1 << 20
"""About a million characters: far above any prompt or reply, so every real one is a member."""

SAMPLE_LENGTH_CAP = 1024
"""`sample` draws lengths up to this (or `max_length` if smaller): a uniform draw up to a
million characters would make random actions slow and no more useful."""

# What `sample` draws from: printable ASCII, whitespace, and a few characters from outside
# it (accents, CJK, maths symbols, an emoji, a unicode minus) so that random actions probe
# unicode handling too.
SAMPLE_CHARSET = "".join(chr(c) for c in range(32, 127)) + "\n\t" + "éüßñ中文数学∑√π×÷−½²€£😀"


class UnicodeText(Text):
    """A `Text` space whose members are any `str` with `min_length <= len(x) <= max_length`."""

    def __init__(
        self,
        max_length: int = DEFAULT_MAX_TEXT_LENGTH,
        *,
        min_length: int = 0,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is None and probability is None:
            upper = min(self.max_length, max(self.min_length, SAMPLE_LENGTH_CAP))
            length = int(self.np_random.integers(self.min_length, upper + 1))
            return super().sample(mask=(length, None))
        return super().sample(mask=mask, probability=probability)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    @property
    def is_np_flattenable(self) -> bool:
        # Flattening maps each character to its charset index; arbitrary unicode has none.
        return False

    def __repr__(self) -> str:
        return f"UnicodeText(min_length={self.min_length}, max_length={self.max_length})"

    def __eq__(self, other: object, /) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )


# --- AsyncVectorEnv's shared memory ------------------------------------------------------------
#
# One row of `max_length + 1` code points per env: the length, then the text as UTF-32. The
# main process reads the buffer once, when the vector env is built (gymnasium assumes array
# views that stay live), so the read returns `SharedTexts`, a live view decoded on access;
# the vector env's default `copy=True` deep-copies it into a plain tuple on every reset and step.

_CODE = np.uint32
_ENCODING = "utf-32-le"
_ERRORS = "surrogatepass"  # a lone surrogate is a valid str, and a reply may hold one


@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = multiprocessing) -> Any:
    return ctx.Array(np.dtype(_CODE).char, n * (space.max_length + 1))


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    codes = np.frombuffer(value.encode(_ENCODING, _ERRORS), dtype=_CODE)
    if len(codes) > space.max_length:
        raise ValueError(
            f"an observation of {len(codes)} characters does not fit {space!r}: the env must keep its "
            "messages within its observation space's max_length"
        )
    row = _rows(space, shared_memory)[index]
    row[0] = len(codes)
    row[1 : 1 + len(codes)] = codes


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(_rows(space, shared_memory, n))


def _rows(space: UnicodeText, shared_memory: Any, n: int | None = None) -> np.ndarray:
    codes = np.frombuffer(shared_memory.get_obj(), dtype=_CODE)
    return codes.reshape((-1 if n is None else n, space.max_length + 1))


class SharedTexts(Sequence[str]):
    """The texts in an AsyncVectorEnv's shared memory, decoded when read, so they are always
    the latest step's. Copying or pickling gives a plain tuple (what the sync vector env and
    `shared_memory=False` return); with `copy=False` the view itself is returned and, like a
    numpy observation, changes under the caller on the next step."""

    __slots__ = ("_rows",)

    def __init__(self, rows: np.ndarray) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return self._rows.shape[0]

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        row = self._rows[index]
        return row[1 : 1 + int(row[0])].tobytes().decode(_ENCODING, _ERRORS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, SharedTexts)):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # it changes with every step

    def __copy__(self) -> tuple[str, ...]:
        return tuple(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (tuple(self),)

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"
