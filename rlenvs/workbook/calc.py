"""Recalculation: the cached, dependency-ordered evaluation of formula cells.

Why this shape:

- Lazy and cached: asking for a value computes that cell and the formula cells it
  depends on, once; results stay cached until the workbook is edited, and then the whole
  cache is dropped (edits are rare next to reads, and recomputing is cheap — see
  `Workbook.recalculate`).
- Dependency order without recursion: a formula's precedents are read from its syntax
  tree (single references, and the formula cells inside its ranges) and computed first
  with an explicit stack, so a 10,000-cell running-total chain needs no Python recursion.
- Cycles: a precedent found on the current path (a "grey" cell) closes a cycle. The cell
  that found it is marked circular, and every cell that depends on a circular cell is
  circular too, so every cell of the cycle, and everything computed from it, shows
  #CIRCULAR! (and nothing else on the sheet changes). Precedents are static: a reference
  in an IF branch that is not taken still counts, as in Excel's own cycle check. A
  reference written as a position (`ROW(C5)`, OFFSET's anchor) is not a precedent; the
  cells OFFSET and INDIRECT compute are read when the formula runs, computed then if they
  are formulas, and a cycle through them shows #CIRCULAR! the same way. Computing such a
  cell nests a computation in the one that reads it; past `MAX_NESTING` levels (a long
  chain of `=OFFSET(C3,-1,0)+B3` read from its far end) the reading formula is put back,
  the deepest cell is computed first on a fresh stack, and the formula is run again, so
  any chain length is computed without deep recursion (`result`).
- Volatile values: a cell whose formula calls RAND, RANDBETWEEN, NOW or TODAY, or that read
  such a cell (through a written reference, OFFSET or INDIRECT alike), is recorded in
  `volatile` when it is computed, so that a judge can refuse a value that is not a function
  of the data (`formulas.functions.volatile`). Being cached like any value, it is drawn
  again at the next edit, that is at every recalculation.
- Reads of the data: a judge may name the cells a task's answer must be computed from
  (`data`); a formula cell that read one of them when it ran, or read a cell that did, is
  recorded in `read_data`, the same way as volatile values: `=IF(A1=0,"High","High")` reads
  the header A1 and no data, `=ROW(B5)` a position, `=INDIRECT("B"&ROW())` the cell it
  names.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from rlenvs.workbook.formulas import CellKey, Grid, Node
from rlenvs.workbook.formulas.nodes import Call, children
from rlenvs.workbook.values import CIRCULAR, REF, VALUE, ErrorValue, Scalar

BIG_RANGE = 100_000
"""A range of more cells than this that reaches past the used part of its sheet is cut to
the used part (so `A:A` or `A1:XFD1048576` reads the cells that exist, not millions of
empty ones). Only COUNTBLANK, ROWS and INDEX positions could tell the difference."""


@dataclass(frozen=True, eq=False)
class Formula:
    """A formula cell's compiled form; immutable, so copies of a workbook share it."""

    text: str
    ast: Node | None  # None: text that could not be read (kept from an .xlsx file)
    run: Callable[..., Scalar]
    refs: tuple[CellKey, ...]
    ranges: tuple[tuple[str, int, int, int, int], ...]
    volatile: bool = False  # calls RAND, RANDBETWEEN, NOW or TODAY


class SheetData:
    """One sheet's cells: `cells[(row, col)]` is what was entered (a constant, or a
    Formula); `formulas` is the set of formula positions."""

    def __init__(self, name: str):
        self.name = name
        self.cells: dict[tuple[int, int], object] = {}
        self.formulas: set[tuple[int, int]] = set()
        self._extent: tuple[int, int] | None = None

    def extent(self) -> tuple[int, int]:
        """(last used row, last used column), (0, 0) when empty; cached until an edit."""
        if self._extent is None:
            rows = max((r for r, _ in self.cells), default=0)
            cols = max((c for _, c in self.cells), default=0)
            self._extent = (rows, cols)
        return self._extent

    def touched(self) -> None:
        self._extent = None


_MISS = object()
MAX_NESTING = 30
"""How many computations may nest through OFFSET and INDIRECT before the deepest is
restarted on its own (each level takes about a dozen Python frames)."""


class _TooDeep(Exception):
    """Unwinds a nested computation to `result`, which computes `key` first."""

    def __init__(self, key: CellKey):
        super().__init__(key)
        self.key = key


class Calculator:
    """The evaluation context of a workbook's formulas (see `formulas.Context`)."""

    def __init__(self, sheets: dict[str, SheetData], consts: dict[CellKey, Scalar], formulas: dict[CellKey, Formula]):
        self.sheets = sheets
        self.consts = consts
        self.formulas = formulas
        self.cache: dict[CellKey, Scalar] = {}
        self.circular: set[CellKey] = set()
        self.volatile: set[CellKey] = set()
        self._read_volatile = False  # whether the formula being evaluated read a volatile value
        self.data: frozenset[CellKey] = frozenset()
        self.read_data: set[CellKey] = set()
        self._read_data = False  # whether the formula being evaluated read a cell of `data`
        self._nesting = 0
        self.rng = random.Random()
        self.grey: dict[CellKey, int] = {}  # key on a path -> id of the computation
        self._stacks = 0
        self.sheet, self.row, self.col = "", 0, 0

    def invalidate(self) -> None:
        self.cache.clear()
        self.circular.clear()
        self.volatile.clear()
        self.read_data.clear()

    # --- Context ---------------------------------------------------------------------

    def value(self, key: CellKey) -> Scalar:
        v = self.cache.get(key, _MISS)
        if v is not _MISS:
            if self.volatile and key in self.volatile:
                self._read_volatile = True
            if self.read_data and key in self.read_data:
                self._read_data = True
            return v  # type: ignore[return-value]
        if self.data and key in self.data:
            self._read_data = True
        v = self.consts.get(key, _MISS)
        if v is not _MISS:
            return v  # type: ignore[return-value]
        if key in self.formulas:
            if self._nesting >= MAX_NESTING:
                raise _TooDeep(key)
            where = (self.sheet, self.row, self.col)
            self._nesting += 1
            try:
                return self.compute(key)
            finally:
                self._nesting -= 1
                self.sheet, self.row, self.col = where
                if key in self.volatile:
                    self._read_volatile = True
                if key in self.read_data:
                    self._read_data = True
        if key[0] not in self.sheets:
            return REF
        return None

    def bounds(self, sheet: str, r1: int, c1: int, r2: int, c2: int) -> tuple[int, int, int, int] | None:
        data = self.sheets.get(sheet)
        if data is None:
            return None
        if (r2 - r1 + 1) * (c2 - c1 + 1) > BIG_RANGE:
            used_rows, used_cols = data.extent()
            if r2 > used_rows:
                r2 = max(r1, used_rows)
            if c2 > used_cols:
                c2 = max(c1, used_cols)
        return r1, c1, r2, c2

    def grid(self, sheet: str, r1: int, c1: int, r2: int, c2: int) -> Grid | ErrorValue:
        bounds = self.bounds(sheet, r1, c1, r2, c2)
        if bounds is None:
            return REF
        r1, c1, r2, c2 = bounds
        if (r2 - r1 + 1) * (c2 - c1 + 1) > 10 * BIG_RANGE:
            return VALUE
        value = self.value
        rows = [[value((sheet, r, c)) for c in range(c1, c2 + 1)] for r in range(r1, r2 + 1)]
        return Grid(rows, True, (sheet, r1, c1))

    def formula_calls(self, key: CellKey, names: frozenset[str]) -> bool:
        """Whether the cell holds a formula calling one of `names` (see `formulas.Context`)."""
        formula = self.formulas.get(key)
        if formula is None or formula.ast is None:
            return False
        stack = [formula.ast]
        while stack:
            node = stack.pop()
            if isinstance(node, Call) and node.name in names:
                return True
            stack.extend(children(node))
        return False

    # --- recalculation ---------------------------------------------------------------

    def precedents(self, key: CellKey) -> list[CellKey]:
        """The formula cells a formula reads (constants need no computing)."""
        f = self.formulas[key]
        formulas = self.formulas
        out = [k for k in f.refs if k in formulas]
        for s, r1, c1, r2, c2 in f.ranges:
            data = self.sheets.get(s)
            if data is None or not data.formulas:
                continue
            fc = data.formulas
            if (r2 - r1 + 1) * (c2 - c1 + 1) <= len(fc):
                out.extend((s, r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1) if (r, c) in fc)
            else:
                out.extend((s, r, c) for r, c in fc if r1 <= r <= r2 and c1 <= c <= c2)
        return out

    def compute(self, start: CellKey) -> Scalar:
        """The value of formula cell `start`, computing what it depends on first."""
        cache = self.cache
        if start in cache:
            return cache[start]
        if start in self.grey:  # asked for again while it is being computed: a cycle
            self.circular.add(start)
            return CIRCULAR
        self._run([start])
        return cache[start]

    def result(self, key: CellKey) -> Scalar:
        """The value of formula cell `key`, asked from outside any computation: where the
        computation nests too deep through OFFSET or INDIRECT, the deepest cell is computed
        first and the rest again (see the module docstring)."""
        todo = [key]  # each cell waits for the next one: a chain of what depends on what
        while todo:
            try:
                self.compute(todo[-1])
                todo.pop()
            except _TooDeep as deep:
                if deep.key in todo:  # the chain came back to a cell it waits for: a cycle
                    self.circular.add(deep.key)
                    self.cache[deep.key] = CIRCULAR
                else:
                    todo.append(deep.key)
        return self.cache[key]

    def compute_all(self) -> None:
        """Compute every formula cell that is not cached."""
        for key in self.formulas:
            if key not in self.cache:
                self.result(key)

    def _run(self, stack: list[CellKey]) -> None:
        """Depth-first over precedents with an explicit stack (see the module docstring).
        A cell is expanded once (its uncached precedents pushed above it, the cell turned
        grey) and evaluated when it is on top again; a cell whose precedents are all
        cached is evaluated at once."""
        self._stacks += 1
        me = self._stacks
        try:
            self._walk(stack, me)
        except _TooDeep:  # this computation is abandoned, to be run again: nothing of it stays grey
            for key in [k for k, owner in self.grey.items() if owner == me]:
                del self.grey[key]
            raise

    def _walk(self, stack: list[CellKey], me: int) -> None:
        cache, grey, circular = self.cache, self.grey, self.circular
        pending: dict[CellKey, list[CellKey]] = {}
        while stack:
            key = stack[-1]
            if key in cache:
                stack.pop()
                continue
            if key in grey:  # second visit: its precedents are done
                stack.pop()
                del grey[key]
                precs = pending.pop(key)
            else:
                precs = self.precedents(key)
                todo = [p for p in precs if p not in cache]
                if todo:
                    grey[key] = me
                    pending[key] = precs
                    for p in todo:
                        if p in grey:
                            circular.add(key)
                            if grey[p] != me:  # a cell on an outer computation's path
                                circular.add(p)
                        else:
                            stack.append(p)
                    continue
                stack.pop()
            if circular and (key in circular or any(p in circular for p in precs)):
                circular.add(key)
                cache[key] = CIRCULAR
            else:
                value = self._evaluate(key)
                cache[key] = CIRCULAR if key in circular else value  # it read itself through OFFSET/INDIRECT

    def _evaluate(self, key: CellKey) -> Scalar:
        self.sheet, self.row, self.col = key
        formula, outer, outer_data = self.formulas[key], self._read_volatile, self._read_data
        self._read_volatile, self._read_data = formula.volatile, False
        running = key not in self.grey
        if running:  # grey while it runs, so that OFFSET or INDIRECT reading it back finds the cycle
            self.grey[key] = -1
        try:
            return formula.run(self)
        except _TooDeep:
            raise
        except Exception:
            return VALUE
        finally:
            if running:
                del self.grey[key]
            if self._read_volatile:
                self.volatile.add(key)
            if self._read_data:
                self.read_data.add(key)
            self._read_volatile, self._read_data = outer, outer_data
