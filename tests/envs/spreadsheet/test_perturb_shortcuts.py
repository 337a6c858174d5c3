"""What the formula check's changes of the data are for, through the env: every formula that
hard-codes what the task asks it to find (a cell, a row choice, a group, a key, a
comparison) is right on the starting data and scores 0, and the honest formulas, the
reference's and the natural alternatives, score 1.

The shortcut replies are built from each task's own data, as a policy that did the lookup
or the grouping by hand would write them; `tests/data/redteam/spreadsheet.jsonl` keeps one of each,
written out for a fixed task id. (The steps themselves: tests/envs/spreadsheet/test_perturb.py.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401  (registers the envs)
from rlenvs.workbook.cells import column_letters

SEEDS = range(12)

# --- replies a policy could write ----------------------------------------------------------


def block(*lines: str) -> str:
    return "```\n" + "\n".join(lines) + "\nSUBMIT\n```"


def data(t, sheet: str) -> list[list]:
    return [list(row) for row in t.sheets[sheet]]


def at(rows: list[list], row: int, col: int):
    """1-based row and column, None beyond the data."""
    return rows[row - 1][col - 1] if row - 1 < len(rows) and col - 1 < len(rows[row - 1]) else None


def reference(t) -> str:
    """The reference reply without its fence, as lines."""
    return t.solution[0].strip("`\n")


def swapped(t, old: str, new: str) -> str:
    """The reference reply with one piece of its formulas replaced."""
    text = reference(t)
    assert old in text, (t.task_id, old, text)
    return block(*text.replace(old, new).splitlines())


def per_row(
    t, column: str, first: int, last: int, formula: Callable[[int], str], header: str | None = None, sheet: str = ""
) -> str:
    prefix = f"{sheet}!" if sheet else ""
    lines = [f'SET {prefix}{column}1 "{header}"'] if header else []
    lines += [f"SET {prefix}{column}{row} {formula(row)}" for row in range(first, last + 1)]
    return block(*lines)


def header_line(t) -> str | None:
    match = re.search(r'SET (?:\w+!)?[A-Z]+1 "([^"]*)"', reference(t))
    return match.group(1) if match else None


Replies = list[tuple[str, str, float]]
"""(kind, reply, the reward a correct verifier gives)."""


def unrounded(t) -> str:
    """The reference reply without its ROUNDs: the values the task asks rounded, unrounded."""
    text = reference(t)
    for digits in (1, 2):
        text = re.sub(rf"ROUND\((.*?),{digits}\)(,|$|\))", r"(\1)\2", text, flags=re.M)
    assert "ROUND(" not in text, text
    return block(*text.splitlines())


def row_formula_replies(t) -> Replies:
    sheet = next(iter(t.sheets))
    rows = data(t, sheet)
    n = len(rows) - 1
    text = reference(t)
    out: Replies = []
    if "ROUND(" in text:
        out.append(("careless-unrounded", unrounded(t), 0.0))
    if text.endswith(f"=C2*D2\nFILL E2 E3:E{n + 1}"):  # a product: rows whose factor is 1 given without it
        ones = [row for row in range(2, n + 2) if 1 in (at(rows, row, 3), at(rows, row, 4))]
        if ones:
            out.append(
                (
                    "factor-1-left-out",
                    block(
                        *text.splitlines(),
                        *(f"SET E{row} ={'D' if at(rows, row, 3) == 1 else 'C'}{row}" for row in ones),
                    ),
                    0.0,
                )
            )
    if "IF(D2>=" in text:  # volume discount
        minimum, multiplier = re.search(r"IF\(D2>=([\d.]+),([\d.]+),1\)", text).groups()
        out.append(("threshold->", swapped(t, f"D2>={minimum}", f"D2>{minimum}"), 0.0))

        def branch(row):
            factor = f"*{multiplier}" if at(rows, row, 4) >= float(minimum) else ""
            return f"=ROUND(C{row}*D{row}{factor},2)"

        out.append(("branch-by-hand", per_row(t, "E", 2, n + 1, branch, "Net Amount"), 0.0))

        def other_branch(row):  # the starting branch while the quantity is the starting one, else the other
            quantity = at(rows, row, 4)
            here, there = (multiplier, "1") if quantity >= float(minimum) else ("1", multiplier)
            return f"=ROUND(C{row}*D{row}*IF(D{row}={quantity},{here},{there}),2)"

        out.append(("branch-other-when-changed", per_row(t, "E", 2, n + 1, other_branch, "Net Amount"), 0.0))
        out.append(
            (
                "honest-if-outside",
                swapped(t, f"C2*D2*IF(D2>={minimum},{multiplier},1)", f"IF(D2<{minimum},C2*D2,C2*D2*{multiplier})"),
                1.0,
            )
        )
    elif "IF(C2>" in text:  # overtime
        regular, factor = re.search(r"IF\(C2>(\d+),\d+\*D2\+\(C2-\d+\)\*D2\*([\d.]+)", text).groups()

        def branch(row):
            hours = at(rows, row, 3)
            if hours > float(regular):
                return f"=ROUND({regular}*D{row}+(C{row}-{regular})*D{row}*{factor},2)"
            return f"=ROUND(C{row}*D{row},2)"

        out.append(("branch-by-hand", per_row(t, "E", 2, n + 1, branch, "Gross Pay"), 0.0))

        def other_branch(row):  # the starting branch while the hours are the starting ones, else the other
            hours = at(rows, row, 3)
            over, plain = f"{regular}*D{row}+(C{row}-{regular})*D{row}*{factor}", f"C{row}*D{row}"
            here, there = (over, plain) if hours > float(regular) else (plain, over)
            return f"=ROUND(IF(C{row}={hours},{here},{there}),2)"

        out.append(("branch-other-when-changed", per_row(t, "E", 2, n + 1, other_branch, "Gross Pay"), 0.0))
        out.append(
            (
                "honest-min-max",
                block(
                    'SET E1 "Gross Pay"',
                    f"SET E2 =ROUND(MIN(C2,{regular})*D2+MAX(C2-{regular},0)*D2*{factor},2)",
                    f"FILL E2 E3:E{n + 1}",
                ),
                1.0,
            )
        )
    elif "$H$2" in text:  # discount and tax
        out.append(("rate-typed", swapped(t, "$H$2", str(at(rows, 2, 8))), 0.0))

        def skip_zero(row):
            if at(rows, row, 5) == 0:
                return f"=ROUND(C{row}*D{row}*(1+$H$2),2)"
            return f"=ROUND(C{row}*D{row}*(1-E{row})*(1+$H$2),2)"

        if any(at(rows, row, 5) == 0 for row in range(2, n + 2)):
            out.append(("row-choice", per_row(t, "F", 2, n + 1, skip_zero, "Total"), 0.0))
        out.append(("honest-order", swapped(t, "C2*D2*(1-E2)*(1+$H$2)", "(1+Orders!$H$2)*(C2*D2-C2*D2*E2)"), 1.0))
    return out


def group_totals_replies(t) -> Replies:
    out: Replies = []
    text = reference(t)
    if t.task_id.split("/")[2] == "L1":
        rows = data(t, "Sales")
        n = len(rows) - 1
        key = 2 if "SUMIF($B$" in text else 3
        groups = [at(rows, row, 6) for row in range(2, len(rows) + 1) if at(rows, row, 6)]

        def by_hand(row):
            cells = [f"D{r}" for r in range(2, n + 2) if at(rows, r, key) == at(rows, row, 6)]
            return "=" + "+".join(cells)

        last = len(groups) + 1
        out.append(("group-by-hand", per_row(t, "G", 2, last, by_hand, "Total Amount"), 0.0))

        def by_id(row):
            ids = ",".join(f'"{at(rows, r, 1)}"' for r in range(2, n + 2) if at(rows, r, key) == at(rows, row, 6))
            return f"=SUMPRODUCT(ISNUMBER(MATCH($A$2:$A${n + 1},{{{ids}}},0))*$D$2:$D${n + 1})"

        out.append(("group-by-order-id", per_row(t, "G", 2, last, by_id, "Total Amount"), 0.0))
        k = column_letters(key)
        out.append(
            (
                "criterion-typed",
                per_row(
                    t,
                    "G",
                    2,
                    last,
                    lambda row: f'=SUMIF(${k}$2:${k}${n + 1},"{at(rows, row, 6)}",$D$2:$D${n + 1})',
                    "Total Amount",
                ),
                0.0,
            )
        )
        out.append(
            (
                "honest-sumproduct",
                block(
                    'SET G1 "Total Amount"',
                    f"SET G2 =SUMPRODUCT((${k}$2:${k}${n + 1}=F2)*$D$2:$D${n + 1})",
                    f"FILL G2 G3:G{last}",
                ),
                1.0,
            )
        )
        out.append(
            (
                "honest-whole-columns",
                block('SET G1 "Total Amount"', f"SET G2 =SUMIFS(D:D,{k}:{k},F2)", f"FILL G2 G3:G{last}"),
                1.0,
            )
        )
        return out
    sheet = next(iter(t.sheets))
    rows, summary = data(t, sheet), data(t, "Summary")
    n, k = len(rows) - 1, len(summary) - 1
    wanted = re.search(r',"([^"]+)"\)', text)
    condition_col = None
    if wanted:
        letter = re.search(r"Summary!A2,\w+!\$([A-Z])\$2", text).group(1)
        condition_col = ord(letter) - 64

    def chosen(group):
        return [
            r
            for r in range(2, n + 2)
            if at(rows, r, 3) == group and (not wanted or at(rows, r, condition_col) == wanted.group(1))
        ]

    def total(row):
        return "=" + "+".join(f"{sheet}!E{r}" for r in chosen(at(summary, row, 1)))

    def average(row):
        cells = chosen(at(summary, row, 1))
        return f"=AVERAGE({','.join(f'{sheet}!E{r}' for r in cells)})"

    lines = ['SET Summary!B1 "Total"', 'SET Summary!C1 "Average"']
    lines += [f"SET Summary!B{row} {total(row)}" for row in range(2, k + 2)]
    lines += [f"SET Summary!C{row} {average(row)}" for row in range(2, k + 2)]
    out.append(("group-by-hand", block(*lines), 0.0))
    keys, values = f"{sheet}!$C$2:$C${n + 1}", f"{sheet}!$E$2:$E${n + 1}"
    extra = ""
    if wanted:
        c = column_letters(condition_col)
        extra = f',{sheet}!${c}$2:${c}${n + 1},"{wanted.group(1)}"'
    lines = ['SET Summary!B1 "Total"', 'SET Summary!C1 "Average"']
    for row in range(2, k + 2):
        group = at(summary, row, 1)
        lines += [
            f'SET Summary!B{row} =SUMIFS({values},{keys},"{group}"{extra})',
            f'SET Summary!C{row} =AVERAGEIFS({values},{keys},"{group}"{extra})',
        ]
    out.append(("criterion-typed", block(*lines), 0.0))
    condition = (
        f'*({sheet}!${column_letters(condition_col)}$2:${column_letters(condition_col)}${n + 1}="{wanted.group(1)}")'
        if wanted
        else ""
    )
    out.append(
        (
            "honest-sumproduct-averageifs",
            block(
                'SET Summary!B1 "Total"',
                'SET Summary!C1 "Average"',
                f"SET Summary!B2 =SUMPRODUCT(({keys}=A2){condition}*{values})",
                f"SET Summary!C2 =AVERAGEIFS({values},{keys},A2{extra})",
                f"FILL Summary!B2 Summary!B3:B{k + 1}",
                f"FILL Summary!C2 Summary!C3:C{k + 1}",
            ),
            1.0,
        )
    )
    return out


def lookup_replies(t) -> Replies:
    out: Replies = []
    text = reference(t)
    if "VLOOKUP" in text:
        orders, prices = data(t, "Orders"), data(t, "Prices")
        n, m = len(orders) - 1, len(prices) - 1
        row_of = {at(prices, r, 1): r for r in range(2, m + 2)}
        out.append(
            (
                "lookup-by-hand",
                per_row(t, "D", 2, n + 1, lambda row: f"=Prices!C{row_of[at(orders, row, 2)]}", "Unit Price"),
                0.0,
            )
        )
        out.append(
            (
                "key-typed",
                per_row(
                    t,
                    "D",
                    2,
                    n + 1,
                    lambda row: f'=VLOOKUP("{at(orders, row, 2)}",Prices!$A$2:$C${m + 1},3,FALSE)',
                    "Unit Price",
                ),
                0.0,
            )
        )
        out.append(("careless-approximate-match", swapped(t, ",3,FALSE)", ",3,TRUE)"), 0.0))
        for kind, formula in (
            ("honest-index-match", f"=INDEX(Prices!$C$2:$C${m + 1},MATCH(B2,Prices!$A$2:$A${m + 1},0))"),
            ("honest-lookup-last-match", f"=LOOKUP(2,1/(Prices!$A$2:$A${m + 1}=B2),Prices!$C$2:$C${m + 1})"),
            ("honest-xlookup", f"=XLOOKUP(B2,Prices!$A$2:$A${m + 1},Prices!$C$2:$C${m + 1})"),
            ("honest-sumif", f"=SUMIF(Prices!$A$2:$A${m + 1},B2,Prices!$C$2:$C${m + 1})"),
        ):
            out.append((kind, block('SET D1 "Unit Price"', f"SET D2 {formula}", f"FILL D2 D3:D{n + 1}"), 1.0))
    elif "Catalog" in text:
        orders, catalog = data(t, "Orders"), data(t, "Catalog")
        n, m = len(orders) - 1, len(catalog) - 1
        row_of = {at(catalog, r, 4): r for r in range(2, m + 2)}
        out.append(
            (
                "lookup-by-hand",
                per_row(t, "D", 2, n + 1, lambda row: f"=C{row}*Catalog!C{row_of[at(orders, row, 2)]}", "Line Total"),
                0.0,
            )
        )
        out.append(
            (
                "honest-xlookup",
                block(
                    'SET D1 "Line Total"',
                    f"SET D2 =C2*XLOOKUP(B2,Catalog!$D$2:$D${m + 1},Catalog!$C$2:$C${m + 1})",
                    f"FILL D2 D3:D{n + 1}",
                ),
                1.0,
            )
        )
        out.append(
            (
                "honest-sumproduct",
                block(
                    'SET D1 "Line Total"',
                    f"SET D2 =SUMPRODUCT((Catalog!$D$2:$D${m + 1}=B2)*Catalog!$C$2:$C${m + 1})*C2",
                    f"FILL D2 D3:D{n + 1}",
                ),
                1.0,
            )
        )
    else:
        ships, rates = data(t, "Shipments"), data(t, "Rates")
        n, z, s = len(ships) - 1, len(rates) - 1, len(rates[0]) - 1
        end = column_letters(s + 1)
        row_of = {at(rates, r, 1): r for r in range(2, z + 2)}
        col_of = {at(rates, 1, c): column_letters(c) for c in range(2, s + 2)}
        out.append(
            (
                "lookup-by-hand",
                per_row(
                    t,
                    "E",
                    2,
                    n + 1,
                    lambda row: f"=D{row}*Rates!{col_of[at(ships, row, 3)]}{row_of[at(ships, row, 2)]}",
                    "Shipping Cost",
                ),
                0.0,
            )
        )
        grid, down, across = f"Rates!$B$2:${end}${z + 1}", f"Rates!$A$2:$A${z + 1}", f"Rates!$B$1:${end}$1"
        out.append(
            (
                "honest-sumproduct",
                block(
                    'SET E1 "Shipping Cost"',
                    f"SET E2 =D2*SUMPRODUCT(({down}=B2)*({across}=C2)*{grid})",
                    f"FILL E2 E3:E{n + 1}",
                ),
                1.0,
            )
        )
        out.append(
            (
                "honest-xlookup",
                block(
                    'SET E1 "Shipping Cost"',
                    f"SET E2 =D2*XLOOKUP(B2,{down},XLOOKUP(C2,{across},{grid}))",
                    f"FILL E2 E3:E{n + 1}",
                ),
                1.0,
            )
        )
    return out


def running_total_replies(t) -> Replies:
    out: Replies = []
    text = reference(t)
    sheet = next(iter(t.sheets))
    rows = data(t, sheet)
    if "IF(A3=A2" in text:
        n = len(rows) - 1

        def restart(row):
            return f"=C{row}" if row == 2 or at(rows, row, 1) != at(rows, row - 1, 1) else f"=D{row - 1}+C{row}"

        out.append(("restart-by-hand", per_row(t, "D", 2, n + 1, restart, "Year to Date"), 0.0))
        out.append(
            (
                "honest-sumif",
                block('SET D1 "Year to Date"', "SET D2 =SUMIF($A$2:A2,A2,$C$2:C2)", f"FILL D2 D3:D{n + 1}"),
                1.0,
            )
        )
        out.append(
            (
                "honest-if-differs",
                block('SET D1 "Year to Date"', "SET D2 =IF(A2<>A1,C2,D1+C2)", f"FILL D2 D3:D{n + 1}"),
                1.0,
            )
        )
        out.append(
            (
                "honest-by-month",
                block('SET D1 "Year to Date"', "SET D2 =C2", 'SET D3 =IF(B3="Jan",C3,D2+C3)', f"FILL D3 D4:D{n + 1}"),
                1.0,
            )
        )
    elif "E2+D3-C3" in text:
        last = len(rows)

        def side(row):
            return f"=E{row - 1}-C{row}" if at(rows, row, 3) is not None else f"=E{row - 1}+D{row}"

        out.append(("side-by-hand", per_row(t, "E", 3, last, side), 0.0))
        out.append(("honest-sums", block("SET E3 =$E$2+SUM($D$3:D3)-SUM($C$3:C3)", f"FILL E3 E4:E{last}"), 1.0))
    else:
        out.append(("honest-mixed-reference", swapped(t, "SUM($B$2:B2)", "SUM(B$2:B2)"), 1.0))
        out.append(("honest-n-of-the-header", swapped(t, "=SUM($B$2:B2)", "=N(C1)+B2"), 1.0))
        out.append(
            (
                "honest-indirect-address",
                swapped(t, "=SUM($B$2:B2)", '=SUM(INDIRECT(ADDRESS(2,2)&":"&ADDRESS(ROW(),2)))'),
                1.0,
            )
        )
    return out


def label_replies(t) -> Replies:
    out: Replies = []
    text = reference(t)
    sheet = next(iter(t.sheets))
    rows = data(t, sheet)
    n = len(rows) - 1
    column = re.search(r"SET ([A-Z])2 ", text).group(1)
    header = header_line(t)
    for row in (2, n + 1):  # one row's label typed, dressed as a formula of its own row's data
        label = t.expected[f"{sheet}!{column}{row}"]
        out.append(
            (
                "one-label-typed",
                block(*text.splitlines(), f'SET {column}{row} =IF(B{row}=B{row},"{label}","{label}")'),
                0.0,
            )
        )
    labels = sorted({t.expected[cell] for cell in t.formula_cells})
    if (
        len(labels) == 2
    ):  # each row's label typed, and the other one wherever the row's data differ from the starting data
        tested = [column_letters(c) for c in range(2, ord(column) - 64)]

        def other_label(row):
            label = t.expected[f"{sheet}!{column}{row}"]
            same = ",".join(f"{c}{row}={at(rows, row, ord(c) - 64)!r}" for c in tested)
            return f'=IF(AND({same}),"{label}","{labels[labels[0] == label]}")'

        out.append(("labels-other-when-changed", per_row(t, column, 2, n + 1, other_label, header), 0.0))
        signature = f"SUM($B$2:$B${n + 1})"

        def other_by_sum(row):  # the same, the data's change seen in a column's sum
            label = t.expected[f"{sheet}!{column}{row}"]
            return f'=IF({signature}={sum(at(rows, r, 2) for r in range(2, n + 2))!r},"{label}","{labels[labels[0] == label]}")'

        out.append(("labels-other-when-the-sum-changed", per_row(t, column, 2, n + 1, other_by_sum, header), 0.0))
    if "AND(" in text:
        minimum = re.search(r"D2>=([\d.]+)", text).group(1)
        out.append(("threshold->", swapped(t, "B2>=C2", "B2>C2"), 0.0))
        out.append(("threshold->", swapped(t, f"D2>={minimum}", f"D2>{minimum}"), 0.0))
        out.append(
            (
                "honest-nested",
                block(
                    f'SET {column}1 "{header}"',
                    f'SET {column}2 =IF(B2<C2,"No",IF(D2<{minimum},"No","Yes"))',
                    f"FILL {column}2 {column}3:{column}{n + 1}",
                ),
                1.0,
            )
        )
    elif "OR(" in text:
        exam, coursework = re.search(r"OR\(B2<(\d+),C2<(\d+)\)", text).groups()
        out.append(("threshold-<=", swapped(t, f"B2<{exam}", f"B2<={exam}"), 0.0))
        out.append(("threshold-<=", swapped(t, f"C2<{coursework}", f"C2<={coursework}"), 0.0))
        out.append(
            (
                "honest-and",
                block(
                    f'SET {column}1 "{header}"',
                    f'SET {column}2 =IF(AND(B2>={exam},C2>={coursework}),"OK","Review")',
                    f"FILL {column}2 {column}3:{column}{n + 1}",
                ),
                1.0,
            )
        )
    elif text.count("IF(") == 2:
        upper, top, lower, middle, bottom = re.search(
            r'IF\(B2>=([\d.]+),"(\w+)",IF\(B2>=([\d.]+),"(\w+)","(\w+)"\)\)', text
        ).groups()
        out.append(("threshold->", swapped(t, f"B2>={upper}", f"B2>{upper}"), 0.0))
        out.append(("threshold->", swapped(t, f"B2>={lower}", f"B2>{lower}"), 0.0))
        out.append(
            (
                "honest-ifs",
                block(
                    f'SET {column}1 "{header}"',
                    f'SET {column}2 =IFS(B2<{lower},"{bottom}",B2<{upper},"{middle}",TRUE,"{top}")',
                    f"FILL {column}2 {column}3:{column}{n + 1}",
                ),
                1.0,
            )
        )
    else:
        sign, threshold, high, low = re.search(r'IF\(B2(>=?)([\d.]+),"(\w+)","(\w+)"\)', text).groups()
        other = ">" if sign == ">=" else ">="
        out.append((f"threshold-{other}", swapped(t, f"B2{sign}{threshold}", f"B2{other}{threshold}"), 0.0))

        def label(row):
            value = at(rows, row, 2)
            return (
                f'="{high}"&LEFT(B{row},0)'
                if (value >= float(threshold) if sign == ">=" else value > float(threshold))
                else f'="{low}"&LEFT(B{row},0)'
            )

        out.append(("labels-by-hand", per_row(t, column, 2, n + 1, label, header), 0.0))
        flipped = "<" if sign == ">=" else "<="
        out.append(
            (
                "honest-flipped",
                block(
                    f'SET {column}1 "{header}"',
                    f'SET {column}2 =IF(B2{flipped}{threshold},"{low}","{high}")',
                    f"FILL {column}2 {column}3:{column}{n + 1}",
                ),
                1.0,
            )
        )
    return out


def fill_missing_replies(t) -> Replies:
    out: Replies = []
    text = reference(t)
    sheet = next(iter(t.sheets))
    rows = data(t, sheet)
    n = len(rows) - 1
    average = re.search(r"ROUND\((.*),2\),D2\)", text).group(1)

    def blank_by_hand(row):
        return f"=ROUND({average.replace('B2', f'B{row}')},2)" if at(rows, row, 4) is None else f"=D{row}"

    out.append(("blanks-by-hand", per_row(t, "E", 2, n + 1, blank_by_hand), 0.0))
    if "AVERAGEIF(" in text:

        def group_typed(row):
            typed = average.replace(",B2,", ',"' + at(rows, row, 2) + '",')
            return f'=IF(D{row}="",ROUND({typed},2),D{row})'

        out.append(("group-typed", per_row(t, "E", 2, n + 1, group_typed), 0.0))
    out.append(("honest-isblank", swapped(t, 'IF(D2=""', "IF(ISBLANK(D2)"), 1.0))
    out.append(("honest-len", swapped(t, 'IF(D2=""', "IF(LEN(D2)=0"), 1.0))
    out.append(("careless-unrounded", unrounded(t), 0.0))
    for other in ("ROUNDDOWN", "TRUNC", "ROUNDUP"):  # another rounding rule than the ROUND asked for
        out.append((f"careless-{other.lower()}", swapped(t, "ROUND(", f"{other}("), 0.0))
    out.append(("careless-zero-as-blank", swapped(t, 'IF(D2=""', "IF(D2=0"), 0.0))
    return out


def rank_replies(t) -> Replies:
    out: Replies = []
    text = reference(t)
    sheet = next(iter(t.sheets))
    rows = data(t, sheet)
    n = len(rows) - 1
    last = n + 1
    if "COUNTIFS" in text:
        sign = re.search(r'"([<>])"&C2', text).group(1)
        out.append(
            (
                "group-typed",
                per_row(
                    t,
                    "D",
                    2,
                    last,
                    lambda row: f'=COUNTIFS($B$2:$B${last},"{at(rows, row, 2)}",$C$2:$C${last},"{sign}"&C{row})+1',
                ),
                0.0,
            )
        )
        out.append(
            (
                "honest-sumproduct",
                block(f"SET D2 =SUMPRODUCT(($B$2:$B${last}=B2)*($C$2:$C${last}{sign}C2))+1", f"FILL D2 D3:D{last}"),
                1.0,
            )
        )
        return out
    order = ",1" if ",1)" in text else ""
    sign = "<" if order else ">"
    out.append(("honest-countif", block(f'SET D2 =COUNTIF($C$2:$C${last},"{sign}"&C2)+1', f"FILL D2 D3:D{last}"), 1.0))
    best = next(cell for cell in t.formula_cells if t.expected[cell] == 1).split("!")[
        1
    ]  # the best row's rank typed, reading its score
    out.append(("one-rank-typed", block(*text.splitlines(), f"SET {best} =1+0*C{best[1:]}"), 0.0))
    if t.task_id.split("/")[2] == "L1":  # distinct scores: a tie-breaking rank, or RANK.AVG, is as right as RANK
        out.append(
            ("honest-rank-avg", block(f"SET D2 =RANK.AVG(C2,$C$2:$C${last}{order})", f"FILL D2 D3:D{last}"), 1.0)
        )
        out.append(
            (
                "honest-unique-rank",
                block(f"SET D2 =RANK(C2,$C$2:$C${last}{order})+COUNTIF($C$2:C2,C2)-1", f"FILL D2 D3:D{last}"),
                1.0,
            )
        )
    else:
        out.append(
            (
                "careless-ties-broken",
                block(f"SET D2 =RANK(C2,$C$2:$C${last}{order})+COUNTIF($C$2:C2,C2)-1", f"FILL D2 D3:D{last}"),
                0.0,
            )
        )
    return out


def date_diff_replies(t) -> Replies:
    out: Replies = []
    text = reference(t)
    sheet = next(iter(t.sheets))
    rows = data(t, sheet)
    n = len(rows) - 1
    if "=DAYS(D2,C2)" in text:
        out.append(("honest-subtraction", swapped(t, "=DAYS(D2,C2)", "=D2-C2"), 1.0))
        out.append(
            ("honest-datedif-days", swapped(t, "=DAYS(D2,C2)", '=DATEDIF(C2,D2,"D")'), 1.0)
        )  # End never before Start
        out.append(("honest-datevalue", swapped(t, "=DAYS(D2,C2)", '=D2-DATEVALUE(TEXT(C2,"yyyy-mm-dd"))'), 1.0))
    elif "=DAYS(E2,C2)-D2" in text:
        out.append(("honest-datedif-days", swapped(t, "=DAYS(E2,C2)-D2", '=DATEDIF(C2,E2,"D")-D2'), 1.0))
    elif "=D2-C2" in text:
        out.append(("honest-datedif-days", swapped(t, "=D2-C2", '=DATEDIF(C2,D2,"D")'), 1.0))
        out.append(("honest-never-negative", swapped(t, "=D2-C2", "=MAX(0,D2-C2)"), 1.0))
    elif '$F$2,"Y"' in text:
        report = at(rows, 2, 6)

        def by_hand(row):
            hired = at(rows, row, 3)
            late = (hired.month, hired.day) > (report.month, report.day)
            return f"=YEAR($F$2)-YEAR(C{row})" + ("-1" if late else "")

        out.append(("anniversary-by-hand", per_row(t, "D", 2, n + 1, by_hand), 0.0))
        out.append(
            (
                "threshold->=",
                block('SET D2 =YEAR($F$2)-YEAR(C2)-(TEXT(C2,"mmdd")>=TEXT($F$2,"mmdd"))', f"FILL D2 D3:D{n + 1}"),
                0.0,
            )
        )
        out.append(
            (
                "honest-date",
                block("SET D2 =YEAR($F$2)-YEAR(C2)-(DATE(YEAR($F$2),MONTH(C2),DAY(C2))>$F$2)", f"FILL D2 D3:D{n + 1}"),
                1.0,
            )
        )
        out.append(
            (
                "honest-text-mmdd",
                block('SET D2 =YEAR($F$2)-YEAR(C2)-(TEXT(C2,"mmdd")>TEXT($F$2,"mmdd"))', f"FILL D2 D3:D{n + 1}"),
                1.0,
            )
        )
        far = max(range(2, n + 2), key=lambda row: abs((at(rows, row, 3).replace(year=report.year) - report).days))
        out.append(
            (
                "one-count-typed",
                block(
                    'SET D2 =DATEDIF(C2,$F$2,"Y")',
                    f"FILL D2 D3:D{n + 1}",
                    f"SET D{far} ={t.expected[f'Staff!D{far}']}+0*C{far}",
                ),
                0.0,
            )
        )
        out.append(
            (
                "honest-quotient-of-months",
                block('SET D2 =QUOTIENT(DATEDIF(C2,$F$2,"m"),12)', f"FILL D2 D3:D{n + 1}"),
                1.0,
            )
        )
        for year in ("365.25", "365.2425", "365"):  # whole years as days over an average year, maybe with an offset
            out.append((f"careless-days/{year}", block(f"SET D2 =INT(($F$2-C2)/{year})", f"FILL D2 D3:D{n + 1}"), 0.0))
            for offset in ("0.25", "0.5", "1"):
                out.append(
                    (
                        f"careless-(days+{offset})/{year}",
                        block(f"SET D2 =INT(($F$2-C2+{offset})/{year})", f"FILL D2 D3:D{n + 1}"),
                        0.0,
                    )
                )
    elif 'DATEDIF(C2,D2,"M")' in text:
        out.append(
            (
                "threshold-<=",
                swapped(t, 'DATEDIF(C2,D2,"M")', "(YEAR(D2)-YEAR(C2))*12+MONTH(D2)-MONTH(C2)-(DAY(D2)<=DAY(C2))"),
                0.0,
            )
        )
        out.append(
            (
                "honest-arithmetic",
                swapped(t, 'DATEDIF(C2,D2,"M")', "(YEAR(D2)-YEAR(C2))*12+MONTH(D2)-MONTH(C2)-(DAY(D2)<DAY(C2))"),
                1.0,
            )
        )
        for month in ("30.4375", "30", "(365/12)"):  # whole months as days over an average month
            out.append((f"careless-days/{month}", swapped(t, 'DATEDIF(C2,D2,"M")', f"INT((D2-C2)/{month})"), 0.0))
    elif "SUMPRODUCT((YEAR(" in text:
        summary = data(t, "Summary")
        sales = data(t, "Sales")
        n, out_last = len(sales) - 1, len(summary)
        dates, amounts = f"Sales!$B$2:$B${n + 1}", f"Sales!$D$2:$D${n + 1}"
        out.append(
            (
                "month-only",
                block(
                    f"SET Summary!C2 =SUMPRODUCT((MONTH({dates})=B2)*{amounts})",
                    f"FILL Summary!C2 Summary!C3:C{out_last}",
                ),
                0.0,
            )
        )
        out.append(
            (
                "period-typed",
                per_row(
                    t,
                    "C",
                    2,
                    out_last,
                    lambda row: (
                        f"=SUMPRODUCT((YEAR({dates})={at(summary, row, 1)})*(MONTH({dates})={at(summary, row, 2)})*{amounts})"
                    ),
                    sheet="Summary",
                ),
                0.0,
            )
        )
        first = "DATE(A2,B2,1)"
        out.append(
            (
                "threshold->",
                block(
                    f'SET Summary!C2 =SUMIFS({amounts},{dates},">"&{first},{dates},"<="&EOMONTH({first},0))',
                    f"FILL Summary!C2 Summary!C3:C{out_last}",
                ),
                0.0,
            )
        )
        out.append(
            (
                "threshold-<",
                block(
                    f'SET Summary!C2 =SUMIFS({amounts},{dates},">="&{first},{dates},"<"&EOMONTH({first},0))',
                    f"FILL Summary!C2 Summary!C3:C{out_last}",
                ),
                0.0,
            )
        )
        out.append(
            (
                "honest-sumifs",
                block(
                    f'SET Summary!C2 =SUMIFS({amounts},{dates},">="&{first},{dates},"<"&EDATE({first},1))',
                    f"FILL Summary!C2 Summary!C3:C{out_last}",
                ),
                1.0,
            )
        )
        out.append(
            (
                "honest-text-of-the-month",
                block(
                    f'SET Summary!C2 =SUMPRODUCT((TEXT({dates},"yyyymm")=A2&TEXT(B2,"00"))*{amounts})',
                    f"FILL Summary!C2 Summary!C3:C{out_last}",
                ),
                1.0,
            )
        )
        out.append(
            (
                "careless-month-end-of-a-range",
                block(
                    f"SET Summary!C2 =SUMPRODUCT((EOMONTH({dates},0)=EOMONTH({first},0))*{amounts})",
                    f"FILL Summary!C2 Summary!C3:C{out_last}",
                ),
                0.0,
            )
        )
        for days in ("31", "30"):  # a month taken as a fixed number of days
            out.append(
                (
                    f"careless-month-of-{days}-days",
                    block(
                        f'SET Summary!C2 =SUMIFS({amounts},{dates},">="&{first},{dates},"<"&{first}+{days})',
                        f"FILL Summary!C2 Summary!C3:C{out_last}",
                    ),
                    0.0,
                )
            )
    return out


def typed_table(t, column: str = "Z", value=lambda text: text) -> tuple[list[str], str]:
    """The cleaned answers typed into `column` by hand (the lines), and its range."""
    lines = [f"SET {column}{i} {json.dumps(value(t.expected[cell]))}" for i, cell in enumerate(t.formula_cells, 2)]
    return lines, f"${column}$2:${column}${len(t.formula_cells) + 1}"


def clean_text_replies(t) -> Replies:
    out: Replies = []
    text = reference(t)
    sheet = next(iter(t.sheets))
    rows = data(t, sheet)
    n = len(rows) - 1
    if "SUBSTITUTE" in text:

        def partial(row):
            phone = at(rows, row, 2)
            formula = f"B{row}"
            for ch in "() -":
                if ch in phone:
                    formula = f'SUBSTITUTE({formula},"{ch}","")'
            return "=" + formula

        if any(partial(row).count("SUBSTITUTE") < 4 for row in range(2, n + 2)):
            out.append(("row-choice", per_row(t, "C", 2, n + 1, partial), 0.0))

        def positions(row):  # the digits read at the places the row's starting phone has them
            runs = re.finditer(r"\d+", at(rows, row, 2))
            return "=" + "&".join(f"MID(B{row},{run.start() + 1},{len(run.group())})" for run in runs)

        out.append(("positions-by-hand", per_row(t, "C", 2, n + 1, positions), 0.0))

        def fallback(row):  # the places of "(555) 123-4567" read where a phone starts with "(", else the answer typed
            places = f"MID(B{row},2,LEN(B{row})-11)&MID(B{row},LEN(B{row})-7,3)&RIGHT(B{row},4)"
            phone = at(rows, row, 2)
            typed = json.dumps(t.expected[f"{sheet}!C{row}"])
            return (
                f'=IF(LEFT(B{row})="(",{places},{typed})'
                if re.fullmatch(r"\(\d+\) \d{3}-\d{4}", phone)
                else f"={typed}&LEFT(B{row},0)"
            )

        out.append(("typed-for-other-shapes", per_row(t, "C", 2, n + 1, fallback), 0.0))
        keys = [at(rows, row, 2)[-4:] for row in range(2, n + 2)]
        if len(set(keys)) == n:  # the digits typed into a table keyed by the phone's last 4 characters
            table = [
                line
                for row, key in enumerate(keys, 2)
                for line in (f"SET Y{row} {json.dumps(key)}", f"SET Z{row} {json.dumps(t.expected[f'{sheet}!C{row}'])}")
            ]
            out.append(
                (
                    "typed-keyed-by-last-digits",
                    block(*table, f"SET C2 =VLOOKUP(RIGHT(B2,4),$Y$2:$Z${n + 1},2,FALSE)", f"FILL C2 C3:C{n + 1}"),
                    0.0,
                )
            )
        out.append(
            (
                "honest-other-order",
                block(
                    'SET C2 =SUBSTITUTE(SUBSTITUTE(SUBSTITUTE(SUBSTITUTE(B2,"-",""),CHAR(32),""),")",""),"(","")',
                    f"FILL C2 C3:C{n + 1}",
                ),
                1.0,
            )
        )
        return out
    match = re.search(r"SET ([A-Z])2 =(PROPER|UPPER|LOWER)\(TRIM\(B2\)\)", text)
    if match:
        column, function = match.groups()

        def skip_trim(row):
            value = at(rows, row, 2)
            return (
                f"={function}(B{row})" if value.strip() == value and "  " not in value else f"={function}(TRIM(B{row}))"
            )

        if any("TRIM" not in skip_trim(row) for row in range(2, n + 2)):
            out.append(("row-choice", per_row(t, column, 2, n + 1, skip_trim), 0.0))
        out.append(("honest-trim-outside", swapped(t, f"{function}(TRIM(B2))", f"TRIM({function}(B2))"), 1.0))
        lines, table = typed_table(t)
        out.append(
            (
                "typed-case-blind-lookup",
                block(
                    *lines,
                    f"SET {column}2 =VLOOKUP(TRIM(B2),{table},1,FALSE)",
                    f"FILL {column}2 {column}3:{column}{n + 1}",
                ),
                0.0,
            )
        )
    elif "PROPER(TRIM(C2))" in text:
        out.append(("honest-left-default", swapped(t, "LEFT(TRIM(B2),1)", "LEFT(TRIM(B2))"), 1.0))
        lines, table = typed_table(t, value=lambda key: key.split(".", 1)[1])
        out.append(
            (
                "typed-case-blind-lookup",
                block(
                    *lines,
                    f'SET E2 =UPPER(LEFT(TRIM(B2)))&"."&INDEX({table},MATCH(TRIM(C2),{table},0))',
                    f"FILL E2 E3:E{n + 1}",
                ),
                0.0,
            )
        )
        firsts = sorted(
            {" ".join(at(rows, row, 2).split()).lower() for row in range(2, n + 2)}
        )  # each initial typed, keyed by the first name
        table = [
            line
            for row, first in enumerate(firsts, 2)
            for line in (f"SET Y{row} {json.dumps(first)}", f'SET Z{row} "{first[0].upper()}"')
        ]
        out.append(
            (
                "typed-initial-keyed-by-first-name",
                block(
                    *table,
                    f'SET E2 =VLOOKUP(TRIM(B2),$Y$2:$Z${len(firsts) + 1},2,FALSE)&"."&PROPER(TRIM(C2))',
                    f"FILL E2 E3:E{n + 1}",
                ),
                0.0,
            )
        )
    else:
        domain = re.search(r'"@([^"]+)"', text).group(1)
        out.append(
            (
                "honest-lower-each",
                swapped(
                    t, f'LOWER(TRIM(A2)&"."&TRIM(B2)&"@{domain}")', f'LOWER(TRIM(A2))&"."&LOWER(TRIM(B2))&"@{domain}"'
                ),
                1.0,
            )
        )
        lines, table = typed_table(t)
        out.append(
            (
                "typed-case-blind-lookup",
                block(
                    *lines,
                    f'SET D2 =VLOOKUP(TRIM(A2)&"."&TRIM(B2)&"@{domain}",{table},1,FALSE)',
                    f"FILL D2 D3:D{n + 1}",
                ),
                0.0,
            )
        )
        firsts = sorted(
            {" ".join(at(rows, row, 1).split()).lower() for row in range(2, n + 2)}
        )  # the first names typed, fetched case-blind
        table = [f"SET Z{row} {json.dumps(first)}" for row, first in enumerate(firsts, 2)]
        out.append(
            (
                "typed-first-names-lookup",
                block(
                    *table,
                    f'SET D2 =VLOOKUP(TRIM(A2),$Z$2:$Z${len(firsts) + 1},1,FALSE)&"."&LOWER(TRIM(B2))&"@{domain}"',
                    f"FILL D2 D3:D{n + 1}",
                ),
                0.0,
            )
        )
    return out


def percent_replies(t) -> Replies:
    text = reference(t)
    if "ROUND(" in text:
        out = [("careless-unrounded", unrounded(t), 0.0)]
        total = re.search(r"=SUM\(B2:B(\d+)\)", text)
        if total and "D2 =B2+C2" not in text:  # the total row by SUBTOTAL or AGGREGATE
            out.append(("honest-subtotal", swapped(t, total.group(0), f"=SUBTOTAL(9,B2:B{total.group(1)})"), 1.0))
            out.append(("honest-aggregate", swapped(t, total.group(0), f"=AGGREGATE(9,4,B2:B{total.group(1)})"), 1.0))
        return out
    last = len(data(t, next(iter(t.sheets)))) - 1
    return [("honest-sum-of-the-rows", swapped(t, f"$B${last + 1}", f"SUM($B$2:$B${last})"), 1.0)]


BUILDERS = {
    "row-formula": row_formula_replies,
    "group-totals": group_totals_replies,
    "lookup": lookup_replies,
    "running-total": running_total_replies,
    "conditional-label": label_replies,
    "fill-missing": fill_missing_replies,
    "rank": rank_replies,
    "date-diff": date_diff_replies,
    "clean-text": clean_text_replies,
    "percent-of-total": percent_replies,
}
CASES = [(name, level) for name in BUILDERS for level in (1, 2) if (name, level) != ("fill-missing", 1)]


def play(env, index: int, reply: str) -> tuple[float, dict]:
    """One episode of task `index`, its seed the index too (the verdict's changed data come
    from the episode seed, so every task meets other ones)."""
    env.reset(seed=index, options={"task_index": index})
    _, reward, terminated, truncated, info = env.step(reply)
    if not (terminated or truncated):
        _, reward, terminated, truncated, info = env.step("SUBMIT")
    return reward, info


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(("name", "level"), CASES)
def test_hard_coded_formulas_score_zero_and_honest_alternatives_one(name, level):
    env = gym.make("rlenvs/Spreadsheet-v1", families=name, level=level).unwrapped
    tried = 0
    try:
        for index in SEEDS:
            env.reset(options={"task_index": index})
            for kind, reply, want in BUILDERS[name](env.task):
                reward, info = play(env, index, reply)
                tried += 1
                if want == 0.0 and not kind.startswith(("threshold", "careless")):  # right on the starting data
                    breakdown = info["reward_breakdown"]
                    assert breakdown["values_matched"] == breakdown["values_total"], (
                        env.task.task_id,
                        kind,
                        info["mismatches"],
                    )
                assert reward == want, (
                    env.task.task_id,
                    kind,
                    info["mismatches"],
                    info["reward_breakdown"],
                    reply[:300],
                )
    finally:
        env.close()
    assert tried or (name, level) == ("row-formula", 1)
