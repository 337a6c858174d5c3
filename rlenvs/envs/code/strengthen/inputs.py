"""New inputs for a code task's function, mutated from the inputs its own tests call it with.

The mutation is type-aware (EvalPlus's idea: an int becomes a nearby int, a list loses, gains
or reorders an element, a string a character) and stays inside the domain the task's own
inputs show, since a test on an input the task never meant (a negative count, an unsorted list
where every given list is sorted, a letter where every given string is digits) would fail
correct solutions that rely on what the task promised. Per argument position, and per level
inside a list, what every given value shares is kept: the type, the sign, sortedness,
distinct elements, non-emptiness, the alphabet of strings and a bound on sizes. The reference
solution later drops any input it rejects or answers with a type it never returns for the
given inputs (`build`).
"""

from __future__ import annotations

import ast
import math
import random
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from rlenvs.envs.code.examples import literal, literal_args

Call = tuple[str, tuple]
"""(the name the tests call, its positional arguments)."""
MAX_EXTRA_LENGTH = 3
"""Items or characters a mutated value may have beyond the longest given one."""
MAX_INT_GROWTH = 2
"""A mutated int stays within this factor (plus one) of the largest given magnitude."""


def literal_calls(tests: Iterable[str], names: Iterable[str]) -> list[Call]:
    """Every call in the tests of one of `names` whose arguments are all literals, once each."""
    names = set(names)
    calls: list[Call] = []
    for node in _nodes(tests):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            args = literal_args(node)
            if args is None:
                continue
            call = (node.func.id, args)
            if not any(same_value(call, seen) for seen in calls):
                calls.append(call)
    return calls


WRAPPERS = frozenset({"tuple", "list", "sorted", "set", "frozenset", "str", "int", "float", "round", "abs", "bool"})
"""Built-ins a task's tests may put around the call (`tuple(candidate(x)) == ...`): the
generated tests put the same around theirs, so they are as lenient as the task's own (a dict's
values view where the reference returns a list)."""


def call_wrapper(tests: Sequence[str], names: Iterable[str]) -> str:
    """The wrapping the tests put around their calls of `names` most often, as a template
    (`tuple({})`, `round({}, 2)`); `{}` where they use the call as it is."""
    names = set(names)
    found: dict[str, int] = {}
    for node in _nodes(tests):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WRAPPERS):
            continue
        inner = node.args[0] if node.args and not node.keywords else None
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in names:
            if all(literal(arg) is not None for arg in node.args[1:]):
                template = f"{node.func.id}({', '.join(['{}', *(ast.unparse(arg) for arg in node.args[1:])])})"
                found[template] = found.get(template, 0) + 1
    best = max(found, key=lambda template: found[template], default="{}")
    calls = sum(len(literal_calls([test], names)) for test in tests)
    return best if found.get(best, 0) * 2 >= max(calls, 1) else "{}"


def _nodes(tests: Iterable[str]) -> Iterator[ast.AST]:
    """Every syntax node of the tests that parse."""
    for test in tests:
        try:
            yield from ast.walk(ast.parse(test))
        except SyntaxError:
            continue


def same_value(left: object, right: object) -> bool:
    """Equal and of the same types all the way down (`1`, `1.0` and `True` differ)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, (list, tuple)):
        assert isinstance(right, (list, tuple))
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right))
    if isinstance(left, dict):
        assert isinstance(right, dict)
        return left.keys() == right.keys() and all(same_value(left[key], right[key]) for key in left)
    if isinstance(left, float) and math.isnan(left):
        return isinstance(right, float) and math.isnan(right)
    return left == right


@dataclass(frozen=True)
class Domain:
    """What every given value at one place shares; a mutated value must share it too."""

    values: tuple
    order_promised: bool = True
    """Whether the task's text speaks of order (sorted, ascending, increasing...): only then
    is sortedness that every given list shows a promise. People write example lists in
    order whatever the task, so without a word of it `[1, 2, 3]` is a habit, not a rule."""

    @property
    def kinds(self) -> set[type]:
        return {type(value) for value in self.values}

    def admits(self, value: object) -> bool:
        if type(value) not in self.kinds:
            return False
        given = [v for v in self.values if type(v) is type(value)]
        if isinstance(value, bool) or value is None:
            return True
        if isinstance(value, (int, float)):
            given_numbers = [v for v in given if isinstance(v, (int, float))]  # all: each is of value's type
            numbers = [float(v) for v in given_numbers]
            if all(v >= 0 for v in numbers) and value < 0:
                return False
            if all(v > 0 for v in numbers) and value <= 0:
                return False
            if all(v <= 0 for v in numbers) and value > 0:
                return False
            limit = max(abs(v) for v in numbers) * MAX_INT_GROWTH + 1
            digits = set("".join(str(abs(int(v))) for v in given_numbers))
            if isinstance(value, int) and any(abs(v) >= 100 for v in numbers) and not set(str(abs(value))) <= digits:
                return False  # where numbers are long enough to show it, binary stays binary
            return abs(float(value)) <= limit and (not isinstance(value, float) or math.isfinite(value))
        if isinstance(value, (str, list, tuple, dict)):
            sized: Sequence = given
            if all(len(v) > 0 for v in sized) and not value:
                return False
            if len(value) > max(len(v) for v in sized) + MAX_EXTRA_LENGTH:
                return False
            if isinstance(value, str):
                alphabet = set("".join(v for v in given if isinstance(v, str)))  # all: each is a str like value
                return set(value) <= alphabet
            items = list(value.items()) if isinstance(value, dict) else list(value)
            if isinstance(value, (list, tuple)):
                if self.order_promised and _all_ordered(given, ascending=True) and list(value) != _sorted(value):
                    return False
                if self.order_promised and _all_ordered(given, ascending=False) and list(value) != _sorted(value)[::-1]:
                    return False
                if _all_distinct(given) and not _distinct(items):
                    return False
            inner = self.inner(keys=False)
            if isinstance(value, dict):
                keys = self.inner(keys=True)
                return all(keys.admits(k) and inner.admits(v) for k, v in items) if keys.values else not items
            return all(inner.admits(item) for item in items) if inner.values else not items
        return same_value(value, given[0]) or any(same_value(value, v) for v in given)

    def resembles(self, value: object) -> bool:
        """Whether an answer is like the given ones: of one of their types, and, where they
        all share it, of their sign and non-empty (no bound on size or digits)."""
        given = [v for v in self.values if type(v) is type(value)]
        if not given:
            return False
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for holds in (lambda v: v > 0, lambda v: v >= 0, lambda v: v < 0, lambda v: v <= 0):
                if all(holds(v) for v in given) and not holds(value):
                    return False
        if isinstance(value, (str, list, tuple, dict, set)) and not value:
            # every given one is of value's type, so a container too
            return not all(len(v) for v in given if isinstance(v, (str, list, tuple, dict, set)))
        return True

    def inner(self, *, keys: bool) -> Domain:
        """The domain of the items (or of the keys) of the given containers."""
        items: list = []
        for value in self.values:
            if isinstance(value, dict):
                items += list(value.keys() if keys else value.values())
            elif isinstance(value, (list, tuple)) and not keys:
                items += list(value)
        return Domain(tuple(items), self.order_promised)


def mutated_inputs(calls: Sequence[Call], seed: str, count: int, text: str = "", attempts: int = 40) -> list[Call]:
    """Up to `count` new calls, each a given call with one argument mutated inside its domain
    (seeded by `seed`: the same task always gets the same inputs)."""
    rng = random.Random(seed)
    domains = _domains(calls, bool(ORDER_WORDS.search(text)))
    kept = invariants(calls)
    made: list[Call] = []
    for _ in range(count * attempts):
        if len(made) >= count or not calls:
            break
        name, args = rng.choice(list(calls))
        if not args:
            continue
        position = rng.randrange(len(args))
        domain = domains[(name, len(args), position)]
        value = mutate(args[position], domain, rng)
        if value is _NOTHING or not domain.admits(value):
            continue
        new = (name, (*args[:position], value, *args[position + 1 :]))
        if not all(rule(new) for rule in kept):
            continue
        if not any(same_value(new, seen) for seen in [*calls, *made]):
            made.append(new)
    return made


Rule = Callable[[tuple], bool]


def invariants(calls: Sequence[Call]) -> list[Callable[[Call], bool]]:
    """The catalogue's relations that hold on every given call, each checked only on calls of
    the same function with as many arguments."""
    kept: list[Callable[[Call], bool]] = []
    for name, arity in sorted({(name, len(args)) for name, args in calls}):
        mine = [args for n, args in calls if n == name and len(args) == arity]
        for rule, chance in _catalogue(mine[0]):
            if chance ** len(mine) < JUSTIFIED and all(_holds(rule, args) for args in mine):
                kept.append(_for_function(name, arity, rule))
    return kept


def _for_function(name: str, arity: int, rule: Rule) -> Callable[[Call], bool]:
    return lambda call: call[0] != name or len(call[1]) != arity or _holds(rule, call[1])


def _holds(rule: Rule, args: tuple) -> bool:
    try:
        return bool(rule(args))
    except Exception:
        return False


_BRACKETS = ("()", "[]", "{}", "<>")


JUSTIFIED = 0.05
"""A relation is kept only where it would hold on all the given calls by chance less often
than this (Daikon's justification): `a <= b` on three calls is a coin tossed three times, and
keeping it would stop `minimum(a, b)` from ever meeting a > b."""
COIN = 0.5
"""The chance that a relation such as `a <= b` or `n` even holds on one call by accident."""
RARE = 0.0
"""For relations that hardly ever hold by accident (balanced brackets, equal lengths), and
that an input the task never meant breaks: kept on a single call."""


def _catalogue(example: tuple) -> Iterator[tuple[Rule, float]]:
    """Candidate relations over a call's arguments, written for the types of `example`'s, each
    with its chance of holding on one call by accident."""
    for rule in _format_and_size_rules(example):
        yield rule, RARE
    numbers = [i for i, value in enumerate(example) if type(value) in (int, float)]
    for i in numbers:
        yield _even(i), COIN
        yield _odd(i), COIN
        for j in numbers:
            if i != j:
                yield _at_most(i, j), COIN
                yield _less(i, j), COIN


def _format_and_size_rules(example: tuple) -> Iterator[Rule]:
    strings = [i for i, value in enumerate(example) if isinstance(value, str)]
    sequences = [i for i, value in enumerate(example) if isinstance(value, (str, list, tuple))]
    numbers = [i for i, value in enumerate(example) if type(value) in (int, float)]
    for i in strings:
        yield from (_text_rule(rule, i) for rule in _TEXT_RULES)
    for i, value in enumerate(example):
        if isinstance(value, (list, tuple)) and any(isinstance(item, str) for item in value):
            yield from (_items_rule(rule, i) for rule in _TEXT_RULES)
    for i in sequences:
        for j in sequences:
            if i < j:
                yield _same_length(i, j)
            if i != j:
                yield _no_longer(i, j)
        for k in numbers:
            yield _length_of(i, k)
            yield _length_bound(i, k)
            yield _index_into(i, k)
    for i, value in enumerate(example):
        if isinstance(value, (list, tuple)) and any(type(item) is int for item in value):
            yield from (_numbers_rule(rule, i) for rule in _NUMBERS_RULES)


# The relations, each made by a function of the argument positions it relates (a lambda with
# the positions as default arguments is one mypy cannot type).


def _even(i: int) -> Rule:
    return lambda args: args[i] % 2 == 0


def _odd(i: int) -> Rule:
    return lambda args: args[i] % 2 == 1


def _at_most(i: int, j: int) -> Rule:
    return lambda args: args[i] <= args[j]


def _less(i: int, j: int) -> Rule:
    return lambda args: args[i] < args[j]


def _same_length(i: int, j: int) -> Rule:
    return lambda args: len(args[i]) == len(args[j])


def _no_longer(i: int, j: int) -> Rule:
    return lambda args: len(args[i]) <= len(args[j])


def _length_of(i: int, k: int) -> Rule:
    """The int at `k` is the length of the sequence at `i`."""
    return lambda args: type(args[k]) is int and args[k] == len(args[i])


def _length_bound(i: int, k: int) -> Rule:
    """The int at `k` is from 0 to the length of the sequence at `i`."""
    return lambda args: type(args[k]) is int and 0 <= args[k] <= len(args[i])


def _index_into(i: int, k: int) -> Rule:
    """The int at `k` is an index into the sequence at `i`."""
    return lambda args: type(args[k]) is int and 0 <= args[k] < len(args[i])


def _balanced(text: str, pair: str) -> bool:
    depth = 0
    for char in text:
        depth += (char == pair[0]) - (char == pair[1])
        if depth < 0:
            return False
    return depth == 0


_TEXT_RULES: tuple[Callable[[str], bool], ...] = (
    *((lambda text, pair=pair: _balanced(text, pair)) for pair in _BRACKETS),
    *((lambda text, pair=pair: all(_balanced(word, pair) for word in text.split())) for pair in _BRACKETS),
    lambda text: text == text.strip(),
    lambda text: "  " not in text,
    lambda text: text == text.lower(),
    lambda text: text == text.upper(),
    lambda text: text.isdigit(),
    lambda text: text.isalpha(),
    lambda text: text.isalnum(),
)


_NUMBERS_RULES: tuple[Callable[[list[int]], bool], ...] = (
    lambda items: any(item % 2 == 0 for item in items),
    lambda items: any(item % 2 == 1 for item in items),
    lambda items: any(item > 0 for item in items),
    lambda items: any(item < 0 for item in items),
    lambda items: any(item == 0 for item in items),
    lambda items: all(item != 0 for item in items),
)


def _numbers_rule(rule: Callable[[list[int]], bool], index: int) -> Rule:
    return lambda args: rule([item for item in args[index] if type(item) is int])


def _text_rule(rule: Callable[[str], bool], index: int) -> Rule:
    return lambda args: rule(args[index])


def _items_rule(rule: Callable[[str], bool], index: int) -> Rule:
    return lambda args: all(rule(item) for item in args[index] if isinstance(item, str))


ORDER_WORDS = re.compile(r"sort|ascend|descend|increas|decreas|monoton|non-?decreasing", re.IGNORECASE)


def _domains(calls: Sequence[Call], order_promised: bool) -> dict[tuple[str, int, int], Domain]:
    grouped: dict[tuple[str, int, int], list] = {}
    for name, args in calls:
        for position, value in enumerate(args):
            grouped.setdefault((name, len(args), position), []).append(value)
    return {key: Domain(tuple(values), order_promised) for key, values in grouped.items()}


_NOTHING = object()
"""A mutation that does not apply to the value."""


def mutate(value: object, domain: Domain, rng: random.Random) -> object:
    """One type-aware mutation of `value` (`_NOTHING` where none applies)."""
    if value is None:
        return _NOTHING
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        others = [v for v in domain.values if type(v) is int and v != value]
        choices = [value + 1, value - 1, value * 2, value // 2, -value, value + rng.randint(2, 10)]
        if others:
            choices.append(rng.randint(min(value, *others), max(value, *others)))
        return rng.choice(choices)
    if isinstance(value, float):
        return round(rng.choice([value + 0.5, value - 0.5, value * 1.5, value / 2, -value, value + rng.random()]), 3)
    if isinstance(value, str):
        return _mutate_string(value, domain, rng)
    if isinstance(value, (list, tuple)):
        items = _mutate_items(list(value), domain.inner(keys=False), rng)
        if items is _NOTHING:
            return _NOTHING
        assert isinstance(items, list)
        if domain.order_promised and _all_ordered(
            [v for v in domain.values if isinstance(v, (list, tuple))], ascending=True
        ):
            items = _sorted(items)
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return _mutate_dict(value, domain, rng)
    return _NOTHING


def _mutate_string(value: str, domain: Domain, rng: random.Random) -> object:
    alphabet = sorted(set("".join(v for v in domain.values if isinstance(v, str))))
    operations = ["reverse", "swap"]
    if value:
        operations += ["drop", "replace", "duplicate"]
    if alphabet:
        operations.append("insert")
    operation = rng.choice(operations)
    index = rng.randrange(len(value)) if value else 0
    if operation == "reverse":
        return value[::-1]
    if operation == "swap":
        if len(value) < 2:
            return _NOTHING
        other = rng.randrange(len(value))
        chars = list(value)
        chars[index], chars[other] = chars[other], chars[index]
        return "".join(chars)
    if operation == "drop":
        return value[:index] + value[index + 1 :]
    if operation == "duplicate":
        return value[:index] + value[index] + value[index:]
    letter = rng.choice(alphabet)
    if operation == "replace":
        return value[:index] + letter + value[index + 1 :]
    return value[:index] + letter + value[index:]


def _mutate_items(items: list, inner: Domain, rng: random.Random) -> object:
    operations = ["reverse", "shuffle"]
    if items:
        operations += ["drop", "duplicate", "change", "change"]
    if inner.values:
        operations.append("insert")
    operation = rng.choice(operations)
    index = rng.randrange(len(items)) if items else 0
    if operation == "reverse":
        return items[::-1]
    if operation == "shuffle":
        shuffled = list(items)
        rng.shuffle(shuffled)
        return shuffled
    if operation == "drop":
        return items[:index] + items[index + 1 :]
    if operation == "duplicate":
        return items[:index] + [items[index]] + items[index:]
    if operation == "change":
        changed = mutate(items[index], inner, rng)
        return _NOTHING if changed is _NOTHING else items[:index] + [changed] + items[index + 1 :]
    base = rng.choice(inner.values)
    new = mutate(base, inner, rng)
    return items[:index] + [base if new is _NOTHING else new] + items[index:]


def _mutate_dict(value: dict, domain: Domain, rng: random.Random) -> object:
    if not value:
        return _NOTHING
    key = rng.choice(list(value))
    operation = rng.choice(["drop", "change", "rekey"])
    if operation == "drop":
        return {k: v for k, v in value.items() if k != key}
    if operation == "change":
        changed = mutate(value[key], domain.inner(keys=False), rng)
        return _NOTHING if changed is _NOTHING else {**value, key: changed}
    new_key = mutate(key, domain.inner(keys=True), rng)
    if new_key is _NOTHING or new_key in value:
        return _NOTHING
    try:
        hash(new_key)
    except TypeError:
        return _NOTHING
    return {**{k: v for k, v in value.items() if k != key}, new_key: value[key]}


def _sorted(items: Iterable) -> list:
    try:
        return sorted(items)
    except TypeError:
        return list(items)


def _all_ordered(values: Sequence, *, ascending: bool) -> bool:
    """Every given sequence ordered so, and at least one long enough to show it."""
    sequences = [list(v) for v in values if isinstance(v, (list, tuple))]
    if not sequences or not any(len(set(map(repr, s))) > 1 for s in sequences):
        return False
    expected = [_sorted(s) if ascending else _sorted(s)[::-1] for s in sequences]
    return all(s == e for s, e in zip(sequences, expected))


def _all_distinct(values: Sequence) -> bool:
    sequences = [list(v) for v in values if isinstance(v, (list, tuple))]
    return bool(sequences) and any(len(s) > 1 for s in sequences) and all(_distinct(s) for s in sequences)


def _distinct(items: Sequence) -> bool:
    return len({repr(item) for item in items}) == len(items)
