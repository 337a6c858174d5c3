"""The fenced blocks of a model's reply, as a Markdown reader sees them (`fences`).

Rules, each for a way real replies are written:
- Line endings: CRLF and lone CR count as newlines (a closing fence followed by `\\r` closes).
- A fence is a run of three or more backticks or tildes (```` ```python ````, ````` ````python `````,
  `~~~python`), at the start of a line after any indentation (a fence inside a list item is
  indented), or, for backticks naming a language, after text on the same line ("Here is my
  solution: ```python"). The first word after it is the block's tag (lower-cased).
- A block closes at a line holding only a fence of the same character, at least as long as
  the opening one (so a ```` block may contain ``` lines) and indented at most 3 columns
  more than it (so a docstring's own example fence, inside a function, does not close it),
  or at a line of code that ends with
  such a backtick fence (`    return n```` closes, without its backticks). A block left open
  at the end of the reply (the model ran out of tokens) runs to the end.
- Each line of a block loses the opening fence's indentation (a list item's block is code
  at the margin, as it was written).
- Reasoning is not the answer (`answer_blocks`): where the reply has a `</think>`, the
  answer is the text after the last one (an unclosed fence inside the reasoning must not
  swallow it): its blocks, or that text itself when it is a program. Only when it is
  neither (prose such as "the function above does it") is the whole reply read, as if there
  were no tags.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_OPENING = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>.*)$")
_INLINE_OPENING = re.compile(r"(?<=.)(?P<fence>`{3,})(?P<tag>[A-Za-z][A-Za-z0-9_+.-]*)[ \t]*$")
_TAG = re.compile(r"[A-Za-z0-9_+.-]*")
THINK_END = "</think>"
MAX_FENCE_INDENT = 3
"""Columns a closing fence may sit right of its opening one (CommonMark's rule): further in,
it is a line of the block, such as a docstring's own example fence."""


def _columns(line: str) -> int:
    """The width of a line's indentation, tabs to the next multiple of 4 (as Markdown)."""
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


@dataclass
class _Block:
    indent: str
    fence: str
    tag: str
    lines: list[str] = field(default_factory=list)

    def closes(self, line: str) -> bool:
        stripped = line.strip()
        if not (len(stripped) >= len(self.fence) and stripped == self.fence[0] * len(stripped)):
            return False
        return _columns(line) - _columns(self.indent) <= MAX_FENCE_INDENT

    def code_before_fence(self, line: str) -> str | None:
        """The code of a line that ends with this block's closing fence, else None."""
        if self.fence[0] != "`":
            return None
        stripped = line.rstrip()
        code = stripped.rstrip("`")
        if len(stripped) - len(code) < len(self.fence) or not code.strip():
            return None
        return code

    def add(self, line: str) -> None:
        """`line` without the opening fence's indentation (as much of it as it has)."""
        width = len(line) - len(line.lstrip(" \t"))
        self.lines.append(line[min(width, len(self.indent)) :])

    @property
    def body(self) -> str:
        return "\n".join(self.lines) + ("\n" if self.lines else "")


def answer_blocks(text: str, is_program: Callable[[str], bool]) -> tuple[list[tuple[str, str]], str]:
    """The blocks of a reply's answer (`fences`) and the answer's text (what runs when it
    has no block), by the module's rule on reasoning; `is_program(text)` says whether a text
    is code (it parses)."""
    text = _newlines(text)
    end = text.rfind(THINK_END)
    if end < 0:
        return fences(text), text
    after = text[end + len(THINK_END) :]
    blocks = fences(after)
    if blocks or (after.strip() and is_program(after)):
        return blocks, after
    return fences(text), after if after.strip() else text


def fences(text: str) -> list[tuple[str, str]]:
    """(tag, body) of every fenced block of `text`, in order, by the module's rules."""
    blocks: list[tuple[str, str]] = []
    block: _Block | None = None
    for line in _newlines(text).split("\n"):
        if block is None:
            block = _opening(line)
            continue
        if block.closes(line):
            blocks.append((block.tag, block.body))
            block = None
            continue
        code = block.code_before_fence(line)
        if code is not None:
            block.add(code)
            blocks.append((block.tag, block.body))
            block = None
            continue
        block.add(line)
    if block is not None:
        blocks.append((block.tag, block.body))
    return blocks


def outside_fences(text: str, mark: str = "") -> str:
    """`text` with every fenced block (`fences`' rules, fence lines included) emptied, line
    for line: the prose a reader sees around the code. Text before an inline opening fence
    ("Here it is: ```python") is prose and stays; `mark` stands where each block opened."""
    kept: list[str] = []
    block: _Block | None = None
    for line in _newlines(text).split("\n"):
        if block is None:
            block = _opening(line)
            inline = _INLINE_OPENING.search(line) if block is not None and not _OPENING.match(line) else None
            kept.append(line if block is None else (line[: inline.start()] if inline else "") + mark)
            continue
        if block.closes(line) or block.code_before_fence(line) is not None:
            block = None
        kept.append("")
    return "\n".join(kept)


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _opening(line: str) -> _Block | None:
    match = _OPENING.match(line)
    if match and not (match.group("fence")[0] == "`" and "`" in match.group("info")):
        tag = _TAG.match(match.group("info"))
        assert tag is not None  # `_TAG` is a starred class: it matches, maybe empty, at any start
        return _Block(match.group("indent"), match.group("fence"), tag.group(0).lower())
    inline = _INLINE_OPENING.search(line)
    if inline:
        return _Block("", inline.group("fence"), inline.group("tag").lower())
    return None
