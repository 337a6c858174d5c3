"""The value codec between the solution's process and the test runner (guest side, stdlib only).

A solution's return value crosses a process boundary before any test looks at it, and it
crosses as plain data: the solution side encodes it to tagged JSON, the test side decodes
that JSON into fresh built-in objects. So no object the solution made (one whose `__eq__`
always returns True, a `str` subclass, a value with a patched `__repr__`) ever reaches the
test's comparison: the decoder builds only exact built-in types, from data it validates.

The encoder runs in the untrusted process and may be bypassed; nothing depends on it
being honest. The decoder runs in the trusted one and rejects anything malformed.
"""

from __future__ import annotations

import collections
import collections.abc
import decimal
import fractions
import re

MAX_ITEMS = 1_000_000
"""Items in one encoded value (all levels together): a list of a million ints is fine, a
value large enough to exhaust the test runner's memory is not."""

_HEX_INT = re.compile(r"-?0x[0-9a-f]+")
"""Ints travel in hex: no decimal digit limit (`sys.set_int_max_str_digits`), linear time."""


class UnsupportedValue(TypeError):
    """The solution returned something that has no plain-data form."""


def encode(value: object) -> list:
    """The tagged, JSON-ready tree of `value` (called in the solution's process)."""
    try:
        return _encode(value, [MAX_ITEMS])
    except RecursionError:
        raise UnsupportedValue("the returned value is nested too deeply (or contains itself)") from None


def _encode(value: object, budget: list[int]) -> list:
    budget[0] -= 1
    if budget[0] < 0:
        raise UnsupportedValue(f"the returned value has more than {MAX_ITEMS} items")
    kind = type(value)
    if value is None:
        return ["none"]
    if kind is bool:
        return ["bool", value]
    if isinstance(value, int) and kind is not bool:
        return ["int", hex(int(value))]
    if isinstance(value, float):
        return ["float", repr(float(value))]
    if isinstance(value, complex):
        return ["complex", repr(complex(value).real), repr(complex(value).imag)]
    if isinstance(value, str):
        return ["str", str(value)]
    if isinstance(value, (bytes, bytearray)):
        return ["bytes", bytes(value).decode("latin-1")]
    if isinstance(value, fractions.Fraction):
        return ["fraction", str(value.numerator), str(value.denominator)]
    if isinstance(value, decimal.Decimal):
        return ["decimal", str(value)]
    if isinstance(value, range):
        return ["range", value.start, value.stop, value.step]
    if isinstance(value, tuple):
        return ["tuple", [_encode(item, budget) for item in value]]
    if isinstance(value, (list, collections.deque)):
        return ["list", [_encode(item, budget) for item in value]]
    if isinstance(value, frozenset):
        return ["frozenset", [_encode(item, budget) for item in value]]
    if isinstance(value, set):
        return ["set", [_encode(item, budget) for item in value]]
    if isinstance(value, dict):
        return ["dict", [[_encode(k, budget), _encode(v, budget)] for k, v in value.items()]]
    # A dict's views arrive as views, which compare as Python's own do (keys and items as sets,
    # values by identity only): `tuple(f(x)) == ...` passes, `f(x) == [...]` does not.
    if isinstance(value, collections.abc.KeysView):
        return ["dict_keys", [_encode(item, budget) for item in value]]
    if isinstance(value, collections.abc.ItemsView):
        return ["dict_items", [[_encode(k, budget), _encode(v, budget)] for k, v in value]]
    if isinstance(value, collections.abc.ValuesView):
        return ["dict_values", [_encode(item, budget) for item in value]]
    if isinstance(value, collections.abc.Iterator):  # generators, map, zip, reversed, itertools...
        return ["iterator", [_encode(item, budget) for item in value]]
    raise UnsupportedValue(
        f"the solution returned a {kind.__module__}.{kind.__qualname__} object, which the tests cannot "
        "receive: return built-in values (numbers, strings, lists, tuples, sets, dicts, None)"
    )


def decode(tree: object) -> object:
    """Fresh built-in objects from a tagged tree (called in the trusted test runner).

    Raises ValueError for anything that is not a well-formed encoding."""
    try:
        return _decode(tree, [MAX_ITEMS])
    except RecursionError:
        raise ValueError("the value from the solution's process is nested too deeply") from None
    except (TypeError, ArithmeticError) as error:  # an unhashable set item, a zero denominator
        raise ValueError(f"malformed value from the solution's process: {error}") from None


def _decode(node: object, budget: list[int]) -> object:  # one flat dispatch on the tag
    budget[0] -= 1
    if budget[0] < 0 or type(node) is not list or not node or type(node[0]) is not str:
        raise ValueError("malformed value from the solution's process")
    tag, args = node[0], node[1:]
    if tag == "none" and not args:
        return None
    if tag == "bool" and len(args) == 1 and type(args[0]) is bool:
        return args[0]
    if tag == "int" and _strings(args, 1) and _HEX_INT.fullmatch(args[0]):
        return int(args[0], 16)
    if tag == "float" and _strings(args, 1):
        return float(args[0])
    if tag == "complex" and _strings(args, 2):
        return complex(float(args[0]), float(args[1]))
    if tag == "str" and _strings(args, 1):
        return args[0]
    if tag == "bytes" and _strings(args, 1):
        return args[0].encode("latin-1")
    if tag == "fraction" and _strings(args, 2):
        return fractions.Fraction(int(args[0]), int(args[1]))
    if tag == "decimal" and _strings(args, 1):
        return decimal.Decimal(args[0])
    if tag == "range" and len(args) == 3 and all(type(a) is int for a in args):
        return range(*args)
    if len(args) == 1 and type(args[0]) is list:
        items = args[0]
        if tag in ("dict", "dict_items"):
            pairs = []
            for pair in items:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError("malformed dict from the solution's process")
                pairs.append((_decode(pair[0], budget), _decode(pair[1], budget)))
            return dict(pairs) if tag == "dict" else dict(pairs).items()
        decoded = [_decode(item, budget) for item in items]
        if tag == "dict_keys":
            return dict.fromkeys(decoded).keys()
        if tag == "dict_values":
            return dict(enumerate(decoded)).values()
        if tag == "list":
            return decoded
        if tag == "tuple":
            return tuple(decoded)
        if tag == "set":
            return set(decoded)
        if tag == "frozenset":
            return frozenset(decoded)
        if tag == "iterator":
            return iter(decoded)
    raise ValueError(f"malformed value from the solution's process (tag {tag!r})")


def _strings(args: list, count: int) -> bool:
    return len(args) == count and all(type(a) is str for a in args)
