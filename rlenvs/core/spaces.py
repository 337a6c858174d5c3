"""`UnicodeText`: the observation and action space of every text env.

gymnasium's stock `Text` admits only its charset (alphanumeric by default), so a model reply
with a space, a newline or a `\\boxed{}` is not a member. Giving it a charset of all of
unicode instead makes `deepcopy` (which gymnasium does on every `make`) cost seconds. This
subclass keeps `Text`'s type, so code that dispatches on `Text` still works, but membership
is "a `str` within the length bounds" and the charset is only what `sample` draws from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Text

DEFAULT_MAX_TEXT_LENGTH = 1 << 20
"""About a million characters: far above any prompt or reply, so every real one is a member."""

SAMPLE_LENGTH_CAP = 1024
"""`sample` draws lengths up to this (or `max_length` if smaller): a uniform draw up to a
million characters would make random actions slow and no more useful."""

# What `sample` draws from: printable ASCII, whitespace, and a few characters from outside
# it (accents, CJK, maths symbols, an emoji, a unicode minus) so that random actions probe
# unicode handling too.
SAMPLE_CHARSET = (
    "".join(chr(c) for c in range(32, 127)) + "\n\t" + "éüßñ中文数学∑√π×÷−½²€£😀"
)


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
