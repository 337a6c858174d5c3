"""The formula engine against LibreOffice: a fixed set of realistic workbooks, written with
openpyxl (so without cached values), recalculated by LibreOffice in one headless batch, and
every formula cell's value compared with `read_xlsx(path).value(ref)`.

Numbers must agree within 1e-9 relative, text and booleans exactly, errors by their code.
The workbooks call every function of the engine's table (`formulas.FUNCTIONS`; a test fails
when one is added without a formula here), with the operators (comparisons of mixed types,
percent, power, unary minus, &), cross-sheet references (one sheet name quoted), whole-
column references, dates, blanks, text that looks like numbers, booleans, and the errors
#DIV/0!, #N/A, #VALUE! and #REF!.

The engine follows Excel. Where LibreOffice is known to compute something else, the case is
left out (the comparison is never loosened); these are:

- booleans are numbers in LibreOffice: SUM/COUNT/AVERAGE over a range holding booleans
  count them (Excel skips them), TRUE=1 is TRUE and TRUE>"a" FALSE (Excel: FALSE, TRUE),
  and a boolean turned into text is "1" (Excel "TRUE"). Booleans here sit in columns that
  are only tested with IF/AND/OR/NOT, COUNTIF(...,TRUE) and COUNTIFS(...,FALSE) (a column of
  booleans only: LibreOffice matches TRUE as 1, which no other cell there equals). The same
  goes for ISNUMBER(TRUE) (LibreOffice TRUE, Excel FALSE), and for LARGE, SMALL, MEDIAN and
  TEXTJOIN over ranges with booleans;
- an index outside the range (INDEX, VLOOKUP's column, HLOOKUP's row): Excel #REF!,
  LibreOffice #VALUE!; so #REF! comes from #REF! written in the formula, as Excel leaves it
  after the referenced cells are deleted (not as Sheet!#REF!, which LibreOffice reads as
  #NAME?);
- Excel's #NUM! for an argument out of the domain: LN(0), LOG(-1), SQRT(-1), LARGE beyond
  the count, CEILING(2.5,-2) are #VALUE! in LibreOffice, FLOOR(7,0) (Excel #DIV/0!) too;
- FIND("","abc"): 1 in Excel, #VALUE! in LibreOffice;
- text typed straight into a function's arguments: SUM("5",1) and PRODUCT(2,"3") are 6 in
  Excel, #VALUE! in LibreOffice (text in referenced cells is skipped by both, and tested);
- a number turned into text with an exponent: Excel "1.23E+20", LibreOffice "1.23E+020";
- a negative number to a fractional power: (-8)^(1/3) and POWER(-8,1/3) are #NUM! in Excel,
  -2 in LibreOffice;
- DATEDIF with the start after the end: Excel #NUM!, LibreOffice #VALUE!; QUOTIENT by 0:
  Excel #DIV/0!, LibreOffice #VALUE!; CHAR(0): Excel #VALUE!, LibreOffice a NUL character
  (and CHAR above 127 follows the system's character set in LibreOffice, Windows-1252 in
  Excel); EOMONTH and EDATE of a range on a row inside it (LibreOffice takes that row's
  cell, Excel is #VALUE!), and EOMONTH of a range inside SUMPRODUCT;
- dates before 1 March 1900 (Excel's serials count a 29 February 1900 that never was);
- UPPER of "ß" (LibreOffice gives the capital "ẞ");
- XLOOKUP, XMATCH, SEQUENCE and `@` (SINGLE), which LibreOffice 7.4 does not have
  (NOT_IN_LIBREOFFICE);
- MROUND of a number and a multiple of opposite signs: Excel #NUM!, LibreOffice rounds
  (MROUND(5,-2) is 6);
- OFFSET off the sheet or with a height or width below 1: Excel #REF!, LibreOffice #VALUE!;
  and a reference to several cells shown in one cell (`=OFFSET(A1,0,0,2,2)`,
  `=INDIRECT("A1:A2")`): LibreOffice #VALUE!, the engine its top-left value;
- RANDBETWEEN with fractional ends (LibreOffice rounds the top up) and the volatile
  functions' values themselves, which are only compared where they are certain.

Functions newer than Excel 2007 are written as Excel writes them in a file, with the _xlfn.
prefix (_xlfn.CONCAT, _xlfn.DAYS, _xlfn.RANK.EQ, _xlfn.IFS, ...): LibreOffice reads an
unprefixed CONCAT as #NAME?, and so would Excel.

The module skips (with the reason) where LibreOffice is missing, unless the environment
variable CI is set: CI installs it (.ci/run), so there a missing soffice fails.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path

import openpyxl
import pytest
from openpyxl.utils.datetime import to_excel

from rlenvs.workbook.formulas import FUNCTIONS
from rlenvs.workbook.values import ErrorValue
from rlenvs.workbook.xlsx import read_xlsx
from tests.support.libreoffice import (
    INSTALL_HINT,
    CellError,
    find_soffice,
    recalculate_with_libreoffice,
)

pytestmark = pytest.mark.libreoffice
"""Without soffice these are skipped naming the install (tests/conftest.py), and fail in CI."""

D = dt.date

# Every workbook: {sheet name: rows}, row 1 first, column A first; None is a blank cell and
# a string starting with "=" a formula. Sheets are written in this order.
WORKBOOKS: dict[str, dict[str, list[list[object]]]] = {}

# --------------------------------------------------------------------------------------
# Orders of a small company and a summary sheet over them: aggregation, conditional
# aggregation, SUMPRODUCT, RANK, cross-sheet references (one to a quoted sheet name).
# Units holds a blank and a number typed as text ("7"): arithmetic converts it, SUM/COUNT
# and SUMPRODUCT's plain arguments skip it.
WORKBOOKS["sales.xlsx"] = {
    "Orders": [
        ["Order", "Region", "Rep", "Product", "Units", "Unit price", "Order date", "Paid", "Notes",
         "Revenue", "Status", "Rank", "Check"],
        [1001, "East", "Ann", "Widget A", 12, 9.5, D(2024, 1, 8), True, None],
        [1002, "West", "Bob", "Widget B", 5, 14.25, D(2024, 1, 15), False, "rush"],
        [1003, "East", "Cara", "Gadget", 20, 3.1, D(2024, 1, 22), True, None],
        [1004, "North", "Dan", "Widget A", None, 9.5, D(2024, 2, 2), False, "cancelled"],
        [1005, "South", "Ann", "Gizmo", 8, 22, D(2024, 2, 9), True, None],
        [1006, "West", "Eve", "Widget A", 15, 9.5, D(2024, 2, 16), True, None],
        [1007, "East", "Bob", "Gadget", "7", 3.1, D(2024, 2, 23), False, "units typed as text"],
        [1008, "North", "Cara", "Gizmo", 3, 22, D(2024, 3, 1), True, None],
        [1009, "South", "Dan", "Widget B", 10, 14.25, D(2024, 3, 8), False, None],
        [1010, "West", "Eve", "Gadget", 30, 3.1, D(2024, 3, 15), True, "bulk"],
        [1011, "East", "Ann", "Widget B", 6, 14.25, D(2024, 3, 22), True, None],
        [1012, "North", "Bob", "Widget A", 10, 9.5, D(2024, 3, 29), False, None],
    ],
    "Q1 Targets": [
        ["Region", "Target"],
        ["East", 300],
        ["West", 250],
        ["North", 150],
        ["South", 250],
    ],
    "Summary": [
        ["Measure", "Value"],
        ["Total revenue", "=SUM(Orders!J2:J13)"],
        ["Units sold", "=SUM(Orders!E2:E13)"],
        ["Orders", "=COUNTA(Orders!A2:A13)"],
        ["Orders with units", "=COUNT(Orders!E2:E13)"],
        ["Orders missing units", "=COUNTBLANK(Orders!E2:E13)"],
        ["Orders with notes", "=COUNTA(Orders!I2:I13)"],
        ["Orders without notes", "=COUNTBLANK(Orders!I2:I13)"],
        ["Average units", "=AVERAGE(Orders!E2:E13)"],
        ["Cheapest price", "=MIN(Orders!F2:F13)"],
        ["Dearest price", "=MAX(Orders!F2:F13)"],
        ["Largest order", "=MAX(Orders!J2:J13)"],
        ["Smallest order", "=MIN(Orders!J2:J13)"],
        ["First order date", "=MIN(Orders!G2:G13)"],
        ["East orders", '=COUNTIF(Orders!B2:B13,"East")'],
        ["East orders (lower case)", '=COUNTIF(Orders!B2:B13,"east")'],
        ["Other regions", '=COUNTIF(Orders!B2:B13,"<>East")'],
        ["Orders of 10+ units", '=COUNTIF(Orders!E2:E13,">=10")'],
        ["Widget orders", '=COUNTIF(Orders!D2:D13,"Widget*")'],
        ["Paid orders", "=COUNTIF(Orders!H2:H13,TRUE)"],
        ["Unpaid West orders", '=COUNTIFS(Orders!B2:B13,"West",Orders!H2:H13,FALSE)'],
        ["February orders", '=COUNTIFS(Orders!G2:G13,">="&DATE(2024,2,1),Orders!G2:G13,"<"&DATE(2024,3,1))'],
        ["East revenue", '=SUMIF(Orders!B2:B13,"East",Orders!J2:J13)'],
        ["Units in orders over 10", '=SUMIF(Orders!E2:E13,">10")'],
        ["East revenue before March", '=SUMIFS(Orders!J2:J13,Orders!B2:B13,"East",Orders!G2:G13,"<"&DATE(2024,3,1))'],
        ["Ann's widget units", '=SUMIFS(Orders!E2:E13,Orders!C2:C13,"Ann",Orders!D2:D13,"Widget*")'],
        ["Average North order", '=AVERAGEIF(Orders!B2:B13,"North",Orders!J2:J13)'],
        ["Average units over 5", '=AVERAGEIF(Orders!E2:E13,">5")'],
        ["Average Central order", '=AVERAGEIF(Orders!B2:B13,"Central",Orders!J2:J13)'],
        ["Units x price", "=SUMPRODUCT(Orders!E2:E13,Orders!F2:F13)"],
        ["West units", '=SUMPRODUCT((Orders!B2:B13="West")*Orders!E2:E13)'],
        ["Paid revenue", "=SUMPRODUCT(--(Orders!H2:H13=TRUE),Orders!J2:J13)"],
        ["East share", "=B23/B2"],
        ["East line", '="East: "&TEXT(B23,"#,##0.00")&" ("&TEXT(B33,"0.0%")&" of total)"'],
        ["East vs target", "=SUMIF(Orders!B2:B13,'Q1 Targets'!A2,Orders!J2:J13)/'Q1 Targets'!B2"],
        ["East target", '=IF(B35>=1,"met","missed")'],
        ["West vs target", "=SUMIF(Orders!B2:B13,'Q1 Targets'!A3,Orders!J2:J13)/'Q1 Targets'!B3"],
        ["Rank of order 1010 (ascending)", "=RANK(Orders!J11,Orders!J2:J13,1)"],
        ["Targets total", "=SUM('Q1 Targets'!B2:B5)"],
        ["Units (whole column)", "=SUM(Orders!E:E)"],
        ["East orders (whole column)", '=COUNTIF(Orders!B:B,"East")'],
        ["Orders with notes (criterion)", '=COUNTIF(Orders!I2:I13,"<>")'],
        ["Orders without notes (criterion)", '=COUNTIF(Orders!I2:I13,"")'],
        ["Orders of exactly 10 units", '=COUNTIF(Orders!E2:E13,"10")'],
        ["Orders above average", '=COUNTIF(Orders!J2:J13,">"&AVERAGE(Orders!J2:J13))'],
        ["Revenue outside East", '=SUMIF(Orders!B2:B13,"<>East",Orders!J2:J13)'],
    ],
}  # fmt: skip
for _row in range(2, 14):
    WORKBOOKS["sales.xlsx"]["Orders"][_row - 1] += [
        f"=E{_row}*F{_row}",
        f'=IF(H{_row},"paid","due")',
        f"=_xlfn.RANK.EQ(J{_row},$J$2:$J$13)",
        f'=IF(AND(H{_row},J{_row}>100),"top",IF(OR(E{_row}="",NOT(H{_row})),"check","ok"))',
    ]

# --------------------------------------------------------------------------------------
# A quote priced from a product list: VLOOKUP exact (text and number keys, a wildcard, a
# key in other case, a missing key) and approximate (discount tiers, 4th argument given and
# omitted, below the first tier), HLOOKUP over a horizontal month table, INDEX/MATCH with
# match types 0, 1 and -1.
WORKBOOKS["quote.xlsx"] = {
    "Products": [
        ["Code", "Name", "Category", "Price", "Stock"],
        ["P-100", "Desk lamp", "Lighting", 24.5, 40],
        ["P-101", "Office chair", "Furniture", 149, 12],
        ["P-102", "Standing desk", "Furniture", 399, 5],
        ["P-103", "Monitor arm", "Accessories", 59.9, 0],
        ["P-104", "Cable tray", "Accessories", 18, 75],
        ["P-105", "Floor lamp", "Lighting", 89, 9],
        ["P-106", "Bookshelf", "Furniture", 120, 3],
        ["P-107", "Desk mat", "Accessories", 15.5, 60],
    ],
    "Rates": [
        ["From", "Discount", None, "Tiers (descending)", None, "Surnames from", "Desk"],
        [0, 0, None, 1000, None, "A", "Desk 1"],
        [100, 0.02, None, 500, None, "H", "Desk 2"],
        [250, 0.05, None, 250, None, "O", "Desk 3"],
        [500, 0.08, None, 100, None, "T", "Desk 4"],
        [1000, 0.1, None, 0],
    ],
    "Monthly": [
        ["Month", "Jan", "Feb", "Mar", "Apr", "May", "Jun"],
        ["Sales", 1200, 950, 1430, 1610, 1380, 1720],
        ["Target", 1000, 1000, 1200, 1500, 1500, 1600],
        [None],
        ["Level from", 0, 50, 100, 200],
        ["Level", "low", "mid", "high", "top"],
    ],
    "Quote": [
        ["Code", "Qty", "Name", "Unit price", "Line total", "In stock", "Category", "Counted"],
        ["P-102", 2],
        ["P-107", 10],
        ["P-109", 1],
        ["p-104", 4],
        ["P-100", 3],
        [None],
        ["Subtotal", "=SUM(H2:H6)"],
        ["Discount rate", "=VLOOKUP(B8,Rates!$A$2:$B$6,2,TRUE)"],
        ["Discount rate (sorted lookup)", "=VLOOKUP(B8,Rates!$A$2:$B$6,2)"],
        ["Total", "=ROUND(B8*(1-B9),2)"],
        ["Tier", "=MATCH(B8,Rates!$A$2:$A$6,1)"],
        ["Tier (sorted match)", "=MATCH(B8,Rates!$A$2:$A$6)"],
        ["Tier from the top", "=MATCH(B8,Rates!$D$2:$D$6,-1)"],
        ["Tier of 250 from the top", "=MATCH(250,Rates!$D$2:$D$6,-1)"],
        ["Rate below the first tier", "=VLOOKUP(-5,Rates!$A$2:$B$6,2,TRUE)"],
        ["Floor lamp row", '=MATCH("floor LAMP",Products!$B$2:$B$9,0)'],
        ["Sofa row", '=MATCH("Sofa",Products!$B$2:$B$9,0)'],
        ["Stock at 399", "=VLOOKUP(399,Products!$D$2:$E$9,2,FALSE)"],
        ["Floor* price", '=VLOOKUP("Floor*",Products!$B$2:$D$9,3,FALSE)'],
        ["March sales", '=HLOOKUP("Mar",Monthly!$B$1:$G$3,2,FALSE)'],
        ["June target", '=HLOOKUP("jun",Monthly!$B$1:$G$3,3,FALSE)'],
        ["Level of 130", "=HLOOKUP(130,Monthly!$B$5:$E$6,2,TRUE)"],
        ["Level of 49.99", "=HLOOKUP(49.99,Monthly!$B$5:$E$6,2)"],
        ["Level of 500", "=HLOOKUP(500,Monthly!$B$5:$E$6,2,TRUE)"],
        ["Missing month", '=HLOOKUP("Jul",Monthly!$B$1:$G$3,2,FALSE)'],
        ["April target", "=INDEX(Monthly!$B$2:$G$3,2,4)"],
        ["Third month's sales", "=INDEX(Monthly!$B$2:$G$2,3)"],
        ["Best month", "=INDEX(Monthly!$B$1:$G$1,MATCH(MAX(Monthly!$B$2:$G$2),Monthly!$B$2:$G$2,0))"],
        ["Furniture stock", '=SUMIF(Products!$C$2:$C$9,"Furniture",Products!$E$2:$E$9)'],
        ["Out of stock", "=COUNTIF(Products!$E$2:$E$9,0)"],
        ["Average lighting price", '=AVERAGEIF(Products!$C$2:$C$9,"Lighting",Products!$D$2:$D$9)'],
        ["Months over target", "=SUMPRODUCT((Monthly!$B$2:$G$2>Monthly!$B$3:$G$3)*1)"],
        ["Desk of Jones", '=VLOOKUP("Jones",Rates!$F$2:$G$5,2,TRUE)'],
        ["Desk of Abbott", '=VLOOKUP("abbott",Rates!$F$2:$G$5,2)'],
        ["Surname band of Smith", '=MATCH("Smith",Rates!$F$2:$F$5,1)'],
        ["Surname band of Zhou", '=MATCH("Zhou",Rates!$F$2:$F$5)'],
    ],
}
for _row in range(2, 7):
    WORKBOOKS["quote.xlsx"]["Quote"][_row - 1] += [
        f'=IFERROR(VLOOKUP(A{_row},Products!$A$2:$E$9,2,FALSE),"unknown code")',
        f"=VLOOKUP(A{_row},Products!$A$2:$E$9,4,FALSE)",
        f"=D{_row}*B{_row}",
        f"=INDEX(Products!$E$2:$E$9,MATCH(A{_row},Products!$A$2:$A$9,0))>=B{_row}",
        f"=INDEX(Products!$A$2:$E$9,MATCH(A{_row},Products!$A$2:$A$9,0),3)",
        f"=IFERROR(E{_row},0)",
    ]

# --------------------------------------------------------------------------------------
# A staff list with messy text: the text functions, TEXT with each supported format,
# VALUE, & with numbers (a number turned into text has up to 15 significant digits).
WORKBOOKS["staff.xlsx"] = {
    "Staff": [
        ["First", "Last", "Email", "Phone", "Dept code", "Start date", "Salary", "Bonus rate",
         "Employee no", "Full name", "Initials", "Username", "Label", "Code", "Digits",
         "Extension", "Dept no", "Name length", "Salary text", "Monthly", "Bonus", "Bonus (whole %)",
         "Start", "Start (dd/mm/yyyy)", "Start month", "Next employee no", "Email (lower)",
         "Salary (0)", "Salary (0.00)", "Sentence", "Dots in email", "Email or nothing"],
        ["  alice ", "SMITH", "Alice.Smith@Example.com", "555-0134", "HR-01", D(2019, 4, 1), 52000, 0.05, "00123"],
        ["bob", "o'neil", "bob.oneil@example.com", "555-0178", "IT-12", D(2021, 11, 15), 67500.5, 0.075, "00456"],
        ["CARA  JANE", "de la cruz", "cara@example.com", "555-0199", "FIN-3", D(2015, 7, 20), 81250, 0.1, "00789"],
        ["dan", "lee", None, "555-0100", "IT-07", D(2023, 1, 9), 45999.99, 0, "01011"],
        [None],
        ["IT staff", '=COUNTIF(E2:E5,"IT*")'],
        ["IT salaries", '=SUMIF(E2:E5,"IT-*",G2:G5)'],
        ["Parsed numbers", '=VALUE("1,250.75")+VALUE(" 42 ")'],
        ["Parsed percent", '=VALUE("15%")'],
        ["Parsed date", '=VALUE("2024-03-15")'],
        ["Not a number", '=VALUE("abc")'],
        ["Digits in a salary", "=LEN(G3)"],
        ["First digits of a salary", "=LEFT(G2,2)"],
        ["Total line", '="Total: "&0.1+0.2'],
        ["A third", '=1/3&""'],
        ["Spaces", '=TRIM("  multiple   spaces   here ")'],
        ["Hyphenated name", '=PROPER("mary-kate o\'brien 2nd")'],
        ["Quarter label", '=CONCATENATE("Q",ROUNDUP(MONTH(F2)/3,0)," ",YEAR(F2))'],
        ["Third dot", '=SUBSTITUTE("a.b.c.d",".","-",3)'],
        ["Beyond the end", '=MID("abc",5,2)'],
        ["Whole text", '=RIGHT("abc",10)'],
        ["First letter", '=LEFT("abc")'],
        ["Range joined", "=_xlfn.CONCAT(A2:B2)"],
        ["Number and text", '="5"&5'],
        ["Text plus number", '="5"+5'],
        ["Rounded text", '=TEXT(2.5,"0")&"|"&TEXT(-1234.5,"#,##0")&"|"&TEXT(0.5,"0%")'],
        ["Text of text", '=TEXT("12.5","0.00")'],
        ["Upper", '=UPPER("mixed Case 123")'],
        ["Lower", '=LOWER("MiXeD")'],
        ["Emails listed", "=COUNTA(AF2:AF5)"],
        ["Emails missing", "=COUNTBLANK(AF2:AF5)"],
        ["Emails missing (criterion)", '=COUNTIF(AF2:AF5,"")'],
        ["Formatted and parsed back", '=VALUE(TEXT(1234.5,"#,##0.00"))'],
        ["Zero formatted", '=TEXT(0,"#,##0.00")'],
        ["Negative percent", '=TEXT(-0.5,"0%")'],
        ["Minus a number as text", '=-"3"'],
        ["Trailing space matters", '="a "="a"'],
        ["A date joined to text", '=CONCATENATE("Started ",F2)'],
        ["Trimmed and marked", '=TRIM(" x ")&"|"'],
    ],
}  # fmt: skip
for _row in range(2, 6):
    WORKBOOKS["staff.xlsx"]["Staff"][_row - 1] += [
        f'=PROPER(TRIM(A{_row}))&" "&PROPER(TRIM(B{_row}))',
        f"=UPPER(LEFT(TRIM(A{_row}),1)&LEFT(B{_row},1))",
        f'=LOWER(LEFT(TRIM(A{_row}),1)&SUBSTITUTE(SUBSTITUTE(B{_row},"\'","")," ",""))',
        f'=CONCATENATE(UPPER(TRIM(B{_row})),", ",PROPER(TRIM(A{_row})))',
        f'=_xlfn.CONCAT(E{_row},"/",I{_row})',
        f'=SUBSTITUTE(D{_row},"-","")',
        f"=RIGHT(D{_row},4)",
        f"=MID(E{_row},4,2)",
        f"=LEN(TRIM(A{_row}))",
        f'="$"&TEXT(G{_row},"#,##0.00")',
        f'=TEXT(G{_row}/12,"#,##0")',
        f'=TEXT(H{_row},"0.0%")',
        f'=TEXT(H{_row},"0%")',
        f'=TEXT(F{_row},"yyyy-mm-dd")',
        f'=TEXT(F{_row},"dd/mm/yyyy")',
        f'=TEXT(F{_row},"mmm yyyy")',
        f"=VALUE(I{_row})+1",
        f"=LOWER(C{_row})",
        f'=TEXT(G{_row},"0")',
        f'=TEXT(G{_row},"0.00")',
        f'=J{_row}&" earns "&G{_row}/12&" a month"',
        f'=LEN(C{_row})-LEN(SUBSTITUTE(C{_row},".",""))',
        f'=IF(C{_row}="","",LOWER(C{_row}))',
    ]

# --------------------------------------------------------------------------------------
# Project dates: date arithmetic, DATE with months and days out of range, YEAR/MONTH/DAY,
# DAYS, DATEDIF in days, months and years (month ends, leap days), TEXT of dates.
WORKBOOKS["projects.xlsx"] = {
    "Projects": [
        ["Project", "Start", "Due", "Done", "Length", "Days", "DATEDIF d", "DATEDIF m", "DATEDIF y",
         "Start year", "Start month", "Due day", "Start month end", "Review", "Next quarter",
         "Span", "Due (dd/mm/yyyy)", "Due (ISO)", "Late", "Due quarter"],
        ["Website", D(2024, 1, 15), D(2024, 3, 31), True],
        ["Migration", D(2023, 11, 30), D(2024, 2, 29), False],
        ["Audit", D(2024, 1, 31), D(2024, 4, 30), True],
        ["Launch", D(2022, 6, 15), D(2024, 6, 14), False],
        ["Payroll", D(2020, 2, 29), D(2024, 2, 28), True],
        [None],
        ["A year after a leap day", "=DATE(2024,2,29)+365"],
        ["29 February 2023", "=DATE(2023,2,29)"],
        ["Month 0", "=DATE(2024,0,1)"],
        ["Month 14", "=DATE(2024,14,1)"],
        ["Day 0", "=DATE(2024,3,0)"],
        ["Year after New Year's Eve", "=YEAR(DATE(2024,12,31)+1)"],
        ["Month of a text date", '=MONTH("2024-07-04")'],
        ["Day of a fraction", "=DAY(45366.75)"],
        ["Age the day before", '=DATEDIF(DATE(1990,5,17),DATE(2024,5,16),"y")'],
        ["Age on the day", '=DATEDIF(DATE(1990,5,17),DATE(2024,5,17),"y")'],
        ["Month end to month end", '=DATEDIF(DATE(2024,1,31),DATE(2024,2,29),"m")'],
        ["Done and started 2024", '=COUNTIFS(B2:B6,">="&DATE(2024,1,1),D2:D6,TRUE)'],
        ["Earliest due", "=MIN(C2:C6)"],
        ["Latest due", "=MAX(C2:C6)"],
        ["Days between text dates", '=_xlfn.DAYS("2024-03-01","2024-02-01")'],
        ["Due in 2024", "=SUMPRODUCT((YEAR(C2:C6)=2024)*1)"],
        ["Dates compare as numbers", "=C2>45000"],
        ["A date against text", '=C2>"2024-01-01"'],
        ["Month label", '=TEXT(DATE(2024,1,5),"mmm yyyy")'],
        ["Average length", "=AVERAGE(E2:E6)"],
    ],
}  # fmt: skip
for _row in range(2, 7):
    WORKBOOKS["projects.xlsx"]["Projects"][_row - 1] += [
        f"=C{_row}-B{_row}",
        f"=_xlfn.DAYS(C{_row},B{_row})",
        f'=DATEDIF(B{_row},C{_row},"d")',
        f'=DATEDIF(B{_row},C{_row},"m")',
        f'=DATEDIF(B{_row},C{_row},"y")',
        f"=YEAR(B{_row})",
        f"=MONTH(B{_row})",
        f"=DAY(C{_row})",
        f"=DATE(YEAR(B{_row}),MONTH(B{_row})+1,0)",
        f"=B{_row}+30",
        f"=DATE(YEAR(B{_row}),(INT((MONTH(B{_row})-1)/3)+1)*3+1,1)",
        f'=TEXT(B{_row},"mmm yyyy")&" - "&TEXT(C{_row},"mmm yyyy")',
        f'=TEXT(C{_row},"dd/mm/yyyy")',
        f'=TEXT(C{_row},"yyyy-mm-dd")',
        f'=IF(AND(NOT(D{_row}),C{_row}<DATE(2024,3,15)),"overdue","ok")',
        f'="Q"&ROUNDUP(MONTH(C{_row})/3,0)',
    ]

# --------------------------------------------------------------------------------------
# Course grades: weighted scores from another sheet, rounding, IF/AND/OR/NOT, RANK, and a
# block of operator checks (precedence, percent, power, unary minus, mixed-type comparison).
WORKBOOKS["grades.xlsx"] = {
    "Weights": [
        ["Part", "Weight"],
        ["Exam 1", 0.3],
        ["Exam 2", 0.3],
        ["Project", 0.4],
    ],
    "Scores": [
        ["Student", "Exam 1", "Exam 2", "Project", "Attendance", "Returning", "Weighted", "Rounded",
         "Up", "Down", "Grade", "Pass", "Review", "Fail", "Change", "Size of change", "Band",
         "Exam 1 mod 7", "Curved", "Squared share", "Root", "Drop", "Rank", "Rank (ascending)",
         "Cohort"],
        ["Ana", 78, 85.5, 92, 0.95, True],
        ["Ben", 55, 61, None, 0.8, False],
        ["Chloe", 91, 88, 95, 1, True],
        ["Dev", 67.25, 72.75, 70, 0.65, False],
        ["Emma", 88, 91, 84, 0.9, True],
        ["Finn", 43, 50, 61, 0.72, False],
        [None],
        ["Class average", "=AVERAGE(G2:G7)"],
        ["Class average (2 dp)", "=ROUND(AVERAGE(G2:G7),2)"],
        ["Passed", "=COUNTIF(L2:L7,TRUE)"],
        ["Exam 2 weighted by exam 1", "=SUMPRODUCT(B2:B7,C2:C7)/SUM(B2:B7)"],
        ["Best", "=MAX(G2:G7)"],
        ["Worst", "=MIN(G2:G7)"],
        ["Returning all passed", "=AND(L2,L4,L6)"],
        ["Any returning failed", "=OR(N2,N4,N6)"],
        ["Returning students", "=AND(F2:F4)"],
        [None],
        ["Text against number", '="abc">100'],
        ["Number against its text", '=B2="78"'],
        ["Blank is zero", "=Z99=0"],
        ["Blank is empty text", '=Z99=""'],
        ["Text order ignores case", '="apple"<"Banana"'],
        ["Text order of digits", '="10"<"9"'],
        ["Same text, other case", '=A2<>"ana"'],
        ["Power is left to right", "=2^3^2"],
        ["Unary minus before power", "=-2^2"],
        ["Minus a reference", "=-B2+100"],
        ["Subtraction is left to right", "=10-2-3"],
        ["Precedence", "=2*3+4/2"],
        ["Percent", "=5+10%"],
        ["Percent of a number", "=200*15%"],
        ["Brackets", "=(1+2)*3^2"],
        ["Booleans add", "=TRUE+TRUE"],
        ["IFs add", "=IF(F2,1,0)+IF(F3,1,0)"],
        ["Double minus", '=--"3.5"'],
        ["IF without else", '=IF(B3>60,"ok")'],
        ["IF true branch only", '=IF(B3<60,"low")'],
        ["IFERROR catches", '=IFERROR(B2/0,"n/a")'],
        ["IFERROR passes", '=IFERROR(B2/2,"n/a")'],
        ["All over 50", "=AND(B2>50,C2>50,D2>50)"],
        ["Either over 60", "=OR(B3>60,C3>60)"],
        ["Not over 50", "=NOT(B2>50)"],
        ["ROUND 2.675", "=ROUND(2.675,2)"],
        ["ROUND 1.005", "=ROUND(1.005,2)"],
        ["ROUND -2.5", "=ROUND(-2.5,0)"],
        ["ROUND to hundreds", "=ROUND(1234.5678,-2)"],
        ["ROUNDUP negative", "=ROUNDUP(-2.1,0)"],
        ["ROUNDDOWN negative", "=ROUNDDOWN(-2.9,0)"],
        ["ROUNDUP pi", "=ROUNDUP(3.14159,3)"],
        ["ROUNDDOWN to hundreds", "=ROUNDDOWN(1234.5678,-2)"],
        ["MOD negative dividend", "=MOD(-7,3)"],
        ["MOD negative divisor", "=MOD(7,-3)"],
        ["MOD fraction", "=MOD(5.5,2)"],
        ["INT negative", "=INT(-3.5)"],
        ["INT positive", "=INT(7.9)"],
        ["ABS", "=ABS(-12.5)"],
        ["ROUND negative to hundreds", "=ROUND(-1250,-2)"],
        ["AND of numbers", "=AND(1,0)"],
        ["Attendance at least 90%", '=COUNTIF(E2:E7,">=90%")'],
    ],
}  # fmt: skip
for _row in range(2, 8):
    WORKBOOKS["grades.xlsx"]["Scores"][_row - 1] += [
        f"=B{_row}*Weights!$B$2+C{_row}*Weights!$B$3+D{_row}*Weights!$B$4",
        f"=ROUND(G{_row},1)",
        f"=ROUNDUP(G{_row},0)",
        f"=ROUNDDOWN(G{_row},0)",
        f'=IF(H{_row}>=90,"A",IF(H{_row}>=80,"B",IF(H{_row}>=70,"C",IF(H{_row}>=60,"D","F"))))',
        f"=AND(G{_row}>=60,E{_row}>=75%)",
        f'=OR(D{_row}="",E{_row}<0.7)',
        f"=NOT(L{_row})",
        f"=C{_row}-B{_row}",
        f"=ABS(O{_row})",
        f"=INT(G{_row}/10)*10",
        f"=MOD(B{_row},7)",
        f"=B{_row}*(1+5%)",
        f"=(B{_row}/100)^2",
        f"=B{_row}^0.5",
        f"=-O{_row}",
        f"=RANK(G{_row},$G$2:$G$7)",
        f"=_xlfn.RANK.EQ(B{_row},$B$2:$B$7,1)",
        f'=IF(F{_row},"returning","new")',
    ]

# --------------------------------------------------------------------------------------
# A budget with the usual mistakes: a zero divisor, a blank, text where a number should be,
# a lookup that misses, an error pasted in as a value, #REF! left by a deleted row. Errors
# propagate through arithmetic and aggregation and stop at IFERROR, COUNT and COUNTIF.
WORKBOOKS["budget.xlsx"] = {
    "Categories": [
        ["Item", "Category"],
        ["Rent", "Fixed"],
        ["Software", "Fixed"],
        ["Travel", "Variable"],
    ],
    "Budget": [
        ["Item", "Planned", "Actual", "Headcount", "Variance", "Variance %", "Per head", "Safe %",
         "Category", "Category or other", "Forecast", "Forecast or 0"],
        ["Rent", 12000, 12000, 10],
        ["Travel", 5000, 6250.5, 0],
        ["Software", 3000, "n/a", 4],
        ["Training", 0, 450, 4],
        ["Misc", None, 120, 2],
        [None],
        ["Total actual", "=SUM(C2:C6)"],
        ["Total variance", "=SUM(E2:E6)"],
        ["Total variance %", "=SUM(F2:F6)"],
        ["Variances that are numbers", "=COUNT(F2:F6)"],
        ["Variance cells", "=COUNTA(F2:F6)"],
        ["Fixed items", '=COUNTIF(I2:I6,"Fixed")'],
        ["Largest per head", "=MAX(G2:G6)"],
        ["Average safe %", "=AVERAGE(H2:H6)"],
        ["Forecast total", "=SUM(K2:K6)"],
        ["Forecast numbers", "=COUNT(K2:K6)"],
        ["Forecast total or 0", "=SUM(L2:L6)"],
        ["Error then #N/A", "=IFERROR(1/0,VLOOKUP(\"Food\",A2:C6,3,FALSE))"],
        ["Rent row", '=MATCH("Rent",A2:A6,0)'],
        ["Food row", '=MATCH("Food",A2:A6,0)'],
        ["Text times two", '="abc"*2'],
        ["Not a number", '=VALUE("12abc")'],
        ["Year from text", '=DATE("x",1,1)'],
        ["MID from 0", '=MID("abc",0,1)'],
        ["Minus text", "=-A2"],
        ["Deleted reference", "=#REF!+1"],
        ["Sum with a deleted reference", "=SUM(C2,#REF!)"],
        ["Deleted reference caught", '=IFERROR(#REF!,"fixed")'],
        ["Unused branch", "=IF(TRUE,1,1/0)"],
        ["Error in the condition", "=IF(1/0>1,1,2)"],
        ["AND with an error", "=AND(TRUE,1/0>0)"],
        ["Text with an error", '=CONCATENATE("x",1/0)'],
        ["First error wins", "=1/0+VLOOKUP(\"Food\",A2:C6,3,FALSE)"],
        ["First error wins (other order)", "=VLOOKUP(\"Food\",A2:C6,3,FALSE)+1/0"],
        ["Average of nothing", "=AVERAGE(N2:N6)"],
        ["AVERAGEIF with no match", '=AVERAGEIF(B2:B6,">100000")'],
        ["MOD by zero", "=MOD(5,0)"],
        ["Zero by zero", "=0/0"],
        ["ROUND of text", '=ROUND("abc",1)'],
        ["LEN of an error", "=LEN(1/0)"],
        ["Error compared", "=1/0=1"],
        ["Planned for Software", "=INDEX(B2:C6,3,1)"],
        ["Total line", '="Total: "&SUM(C2:C6)'],
        ["IFERROR of a blank", '=IFERROR(Z99,"none")'],
        ["Positive forecasts", '=SUMIF(K2:K6,">0")'],
        ["Forecast errors", '=COUNTIF(K2:K6,"#N/A")'],
        ["Largest safe forecast", "=MAX(L2:L6)"],
    ],
}  # fmt: skip
_FORECAST = [12500, 5100, "#N/A", 300, 100]
"""openpyxl writes the text "#N/A" as an error cell (t="e"), as a file saved by Excel holds
an error pasted in as a value."""
for _row in range(2, 7):
    WORKBOOKS["budget.xlsx"]["Budget"][_row - 1] += [
        f"=C{_row}-B{_row}",
        f"=E{_row}/B{_row}",
        f"=C{_row}/D{_row}",
        f'=IFERROR(F{_row},"-")',
        f"=VLOOKUP(A{_row},Categories!$A$2:$B$4,2,FALSE)",
        f'=IFERROR(I{_row},"Other")',
        _FORECAST[_row - 2],
        f"=IFERROR(K{_row},0)",
    ]

# --------------------------------------------------------------------------------------
# A stock list: the information functions (IS*), FIND/SEARCH/REPLACE/REPT/EXACT, IFS,
# SWITCH, IFNA, XOR, CHOOSE, ROW/COLUMN(S), EDATE/EOMONTH/WEEKDAY, CEILING/FLOOR/TRUNC,
# the math functions, LARGE/SMALL/MEDIAN/PRODUCT, AVERAGEIFS/MAXIFS/MINIFS and TEXTJOIN.
# Supplier has a blank, and "Reorder" formulas return "" (not blank for ISBLANK, skipped by
# TEXTJOIN when told to ignore empty text).
WORKBOOKS["inventory.xlsx"] = {
    "Stock": [
        ["SKU", "Description", "Qty", "Reorder at", "Unit cost", "Last counted", "Supplier", "Location",
         "Value", "Reorder", "Aisle", "Shelf", "Is a bolt", "Exactly ACME", "Next count", "Month end",
         "Weekday", "Day name", "Supplier or none", "Order qty", "Dozens", "Short code", "Stars", "Row",
         "Surplus sign", "Code number", "Status", "Supplier name", "Position of x", "Cost + 20%",
         "Supplier is text", "Supplier is not text"],
        ["SKU-0042", "Steel bolt M6 x 30", 1200, 500, 0.12, D(2024, 2, 12), "ACME", "A-01-3"],
        ["SKU-0107", "Wood screw 4 x 40", 350, 400, 0.08, D(2024, 1, 30), "BoltCo", "A-02-1"],
        ["SKU-0233", "Hinge, brass", 48, 50, 2.35, D(2023, 12, 18), "ACME", "B-11-2"],
        ["SKU-0301", "Cable tie 200mm", 0, 1000, 0.03, D(2024, 3, 1), None, "C-04-4"],
        ["SKU-0450", "Wall plug 6mm", 2600, 800, 0.02, D(2024, 2, 27), "FixIt", "A-01-1"],
        ["SKU-0512", "Shelf bracket (bolt-on)", 75, 60, 4.9, D(2024, 3, 4), "BoltCo", "B-02-2"],
    ],
    "Stats": [
        ["Measure", "Value"],
        ["Columns", "=COLUMNS(Stock!A1:H1)"],
        ["Items", "=ROWS(Stock!A2:A7)"],
        ["Column of unit cost", "=COLUMN(Stock!E1)"],
        ["Last row", "=ROW(Stock!A7)"],
        ["This column", "=COLUMN()"],
        ["Largest value", "=LARGE(Stock!I2:I7,1)"],
        ["Second largest value", "=LARGE(Stock!I2:I7,2)"],
        ["Second smallest qty", "=SMALL(Stock!C2:C7,2)"],
        ["Median cost", "=MEDIAN(Stock!E2:E7)"],
        ["Median qty", "=MEDIAN(Stock!C2:C7)"],
        ["Two price rises", "=PRODUCT(1+5%,1+3%)"],
        ["Product of costs", "=PRODUCT(Stock!E2:E3)"],
        ["ACME average value in stock", '=AVERAGEIFS(Stock!I2:I7,Stock!G2:G7,"ACME",Stock!C2:C7,">0")'],
        ["Average value, none matching", '=AVERAGEIFS(Stock!I2:I7,Stock!G2:G7,"Nobody")'],
        ["Largest BoltCo value", '=_xlfn.MAXIFS(Stock!I2:I7,Stock!G2:G7,"BoltCo")'],
        ["Smallest qty in stock", '=_xlfn.MINIFS(Stock!C2:C7,Stock!C2:C7,">0")'],
        ["Suppliers", '=_xlfn.TEXTJOIN(", ",TRUE,Stock!G2:G7)'],
        ["Suppliers with gaps", '=_xlfn.TEXTJOIN("/",FALSE,Stock!G4:G6)'],
        ["To reorder", '=_xlfn.TEXTJOIN(", ",TRUE,Stock!J2:J7)'],
        ["Quantities", '=_xlfn.TEXTJOIN(";",TRUE,Stock!C2:C4,"end")'],
        ["Exactly one of two over 1000", "=_xlfn.XOR(Stock!C2>1000,Stock!C6>1000)"],
        ["One over 1000", "=_xlfn.XOR(Stock!C2>1000,Stock!C3>1000)"],
        ["Unknown SKU", '=_xlfn.IFNA(VLOOKUP("SKU-9999",Stock!A2:C7,3,FALSE),"not stocked")'],
        ["Known SKU", '=_xlfn.IFNA(VLOOKUP("SKU-0107",Stock!A2:C7,3,FALSE),"not stocked")'],
        ["IFNA lets other errors through", '=_xlfn.IFNA(1/Stock!C5,"none")'],
        ["Unknown SKU is #N/A", '=ISNA(MATCH("SKU-9999",Stock!A2:A7,0))'],
        ["Division is an error", "=ISERROR(1/Stock!C5)"],
        ["Division is an error but #N/A", "=ISERR(1/Stock!C5)"],
        ["#N/A is not ISERR", "=ISERR(NA())"],
        ["A flag is logical", "=ISLOGICAL(Stock!M2)"],
        ["A number is not logical", "=ISLOGICAL(1)"],
        ["Qty is a number", "=ISNUMBER(Stock!C2)"],
        ["SKU is not a number", "=ISNUMBER(Stock!A2)"],
        ["A date is a number", "=ISNUMBER(Stock!F2)"],
        ["SKU is text", "=ISTEXT(Stock!A2)"],
        ["A blank is not text", "=ISNONTEXT(Stock!G5)"],
        ["Empty text is not blank", "=ISBLANK(Stock!J2)"],
        ["A blank is blank", "=ISBLANK(Stock!G5)"],
        ["Not available", "=NA()"],
        ["Area of a circle", "=PI()*2^2"],
        ["Pi to 4 places", "=ROUND(PI(),4)"],
        ["Root of the largest qty", "=SQRT(MAX(Stock!C2:C7))"],
        ["Ten years at 5%", "=POWER(1.05,10)"],
        ["e", "=EXP(1)"],
        ["Log of e squared", "=LN(EXP(2))"],
        ["Log of 1000", "=LOG(1000)"],
        ["Log base 2 of 8", "=LOG(8,2)"],
        ["Log10 of 0.001", "=LOG10(0.001)"],
        ["TRUE()", "=TRUE()"],
        ["FALSE()", "=FALSE()"],
        ["Functions as booleans", "=AND(TRUE(),NOT(FALSE()))"],
        ["Size", '=CHOOSE(3,"small","medium","large")'],
        ["Size of 2.7", '=CHOOSE(2.7,"small","medium","large")'],
        ["No fourth size", '=CHOOSE(4,"small","medium","large")'],
        ["TRUNC negative", "=TRUNC(-3.7)"],
        ["TRUNC to hundreds", "=TRUNC(1234.5678,-2)"],
        ["CEILING to 5 cents", "=CEILING(0.234,0.05)"],
        ["CEILING negative, positive step", "=CEILING(-2.5,2)"],
        ["CEILING negative, negative step", "=CEILING(-2.5,-2)"],
        ["CEILING step 0", "=CEILING(7,0)"],
        ["FLOOR negative, positive step", "=FLOOR(-2.5,2)"],
        ["FLOOR negative, negative step", "=FLOOR(-2.5,-2)"],
        ["FLOOR", "=FLOOR(2.5,1)"],
        ["FIND from 3", '=FIND("b","abcb",3)'],
        ["FIND is case-sensitive", '=FIND("B","abcb")'],
        ["SEARCH misses", '=SEARCH("x","abc")'],
        ["SEARCH with a wildcard", '=SEARCH("*c","abc")'],
        ["SEARCH with ?", '=SEARCH("?c","abcb")'],
        ["A month after 31 January", "=EDATE(DATE(2024,1,31),1)"],
        ["A month before 31 March", "=EDATE(DATE(2024,3,31),-1)"],
        ["Month end two months back", "=EOMONTH(DATE(2024,1,15),-2)"],
        ["WEEKDAY", "=WEEKDAY(DATE(2024,3,15))"],
        ["WEEKDAY from Monday", "=WEEKDAY(DATE(2024,3,15),2)"],
        ["WEEKDAY from Monday, 0-based", "=WEEKDAY(DATE(2024,3,15),3)"],
        ["No repeat", '=REPT("-",0)'],
        ["SWITCH without a default", '=_xlfn.SWITCH(5,1,"one",2,"two")'],
        ["IFS without a match", '=_xlfn.IFS(1>2,"a")'],
        ["Replace the middle", '=REPLACE("abcdef",2,3,"X")'],
        ["Equal, other case", '=EXACT("abc","ABC")'],
        ["Rounded root", "=ROUND(SQRT(2),6)"],
        ["Sign of zero", "=SIGN(0)"],
    ],
}  # fmt: skip
for _row in range(2, 8):
    WORKBOOKS["inventory.xlsx"]["Stock"][_row - 1] += [
        f"=C{_row}*E{_row}",
        f'=IF(C{_row}<D{_row},A{_row},"")',
        f'=LEFT(H{_row},FIND("-",H{_row})-1)',
        f'=MID(H{_row},FIND("-",H{_row})+1,2)',
        f'=ISNUMBER(SEARCH("bolt",B{_row}))',
        f'=EXACT(G{_row},"ACME")',
        f"=EDATE(F{_row},3)",
        f"=EOMONTH(F{_row},0)",
        f"=WEEKDAY(F{_row},2)",
        f'=CHOOSE(WEEKDAY(F{_row}),"Sun","Mon","Tue","Wed","Thu","Fri","Sat")',
        f'=IF(ISBLANK(G{_row}),"none",G{_row})',
        f"=IF(C{_row}<D{_row},CEILING(D{_row}-C{_row},25),0)",
        f"=FLOOR(C{_row},12)/12",
        f'=REPLACE(A{_row},1,4,"")',
        f'=REPT("*",ROUND(I{_row}/50,0))',
        "=ROW()",
        f"=SIGN(C{_row}-D{_row})",
        f"=VALUE(RIGHT(A{_row},4))",
        f'=_xlfn.IFS(C{_row}=0,"out",C{_row}<D{_row},"low",TRUE,"ok")',
        f'=_xlfn.SWITCH(G{_row},"ACME","Acme Ltd","BoltCo","Bolt & Co","other")',
        f'=IFERROR(SEARCH(" x ",B{_row}),0)',
        f"=TRUNC(E{_row}*1.2,2)",
        f"=ISTEXT(G{_row})",
        f"=ISNONTEXT(G{_row})",
    ]

# --------------------------------------------------------------------------------------
# A stock ledger whose running balance reads the row above through OFFSET, with the anchor
# the formula's own cell (a place, not a dependency: no cycle), per-row references built as
# text for INDIRECT (A1 and R1C1, another sheet, quoted), ROW and ROWS of ranges that hold
# the formula itself, and the volatile functions where their value is certain.
WORKBOOKS["ledger.xlsx"] = {
    "Ledger": [
        ["Date", "In", "Out", "Balance", "Via INDIRECT", "Row", "Count", "Last 3 in"],
        [D(2024, 4, 1), 120, None, "=B2-C2", '=INDIRECT("D"&ROW())', "=ROW(F2)", "=ROWS($G$2:G2)", "=SUM(OFFSET(H2,0,-6,1,1))"],
        [D(2024, 4, 2), None, 45, "=OFFSET(D3,-1,0)+B3-C3", '=INDIRECT("D"&ROW())', "=ROW(F3)", "=ROWS($G$2:G3)",
         "=SUM(OFFSET(B3,-1,0,2,1))"],
        [D(2024, 4, 3), 80, 15, "=OFFSET(D4,-1,0)+B4-C4", '=INDIRECT("R"&ROW()&"C4",FALSE)', "=ROW(F4)", "=ROWS($G$2:G4)",
         "=SUM(OFFSET(B4,-2,0,3,1))"],
        [D(2024, 4, 4), 200, None, "=OFFSET(D5,-1,0)+B5-C5", '=INDIRECT("R[0]C[-1]",FALSE)', "=ROW(F5)", "=ROWS($G$2:G5)",
         "=SUM(OFFSET(B5,-2,0,3))"],
        [D(2024, 4, 5), None, 60, "=OFFSET(D6,-1,0)+B6-C6", '=INDIRECT("Ledger!D"&ROW())', "=ROW(F6)", "=ROWS($G$2:G6)",
         "=SUM(OFFSET(B6,-2,,3))"],
    ],
    "Checks": [
        ["Check", "Value"],
        ["Opening via INDIRECT", '=INDIRECT("Ledger!D2")'],
        ["Quoted sheet", """=INDIRECT("'Ledger'!B2")"""],
        ["Total in via INDIRECT", '=SUM(INDIRECT("Ledger!B2:B6"))'],
        ["Whole column", '=SUM(INDIRECT("Ledger!B:B"))'],
        ["Lower case", '=INDIRECT("ledger!b4")+0'],
        ["Absolute", '=INDIRECT("Ledger!$D$6")'],
        ["R1C1 on another sheet", '=INDIRECT("Ledger!R3C3",FALSE)'],
        ["Not a reference", '=INDIRECT("nonsense")'],
        ["No such sheet", '=INDIRECT("Nope!A1")'],
        ["Space before", '=INDIRECT(" Ledger!A1")'],
        ["Reference from a cell", "=INDIRECT(A2)"],
        ["OFFSET across sheets", "=OFFSET(Ledger!A1,2,3)"],
        ["Column of an OFFSET", "=COLUMN(OFFSET(Ledger!A1,2,3))"],
        ["Rows of an OFFSET", "=ROWS(OFFSET(Ledger!A1,0,0,4,2))"],
        ["Fraction of a row", "=OFFSET(Ledger!B1,1.9,0)"],
        ["Sum of a moved range", "=SUM(OFFSET(Ledger!B2:C3,1,0))"],
        ["Own row", "=ROW(B18)"],
        ["Own column", "=COLUMN(B19)"],
        ["Rows to here", "=ROWS(B$2:B20)"],
        ["RANDBETWEEN of one number", "=RANDBETWEEN(3,3)"],
        ["RAND in [0, 1)", "=AND(RAND()>=0,RAND()<1)"],
        ["RAND times 0", "=ROUND(RAND()*0,0)"],
        ["NOW is today", "=INT(NOW())=TODAY()"],
        ["TODAY after 2024", "=TODAY()>DATE(2024,1,1)"],
    ],
}  # fmt: skip

# --------------------------------------------------------------------------------------
# A month-end report: the Analysis ToolPak date functions refuse a range of several cells
# where they take one date (#VALUE! in Excel, and in LibreOffice where the formula's row is
# outside the range; on a row inside it LibreOffice takes the cell of that row, and inside
# SUMPRODUCT it computes something else for EOMONTH, so those cases are not here).
WORKBOOKS["report.xlsx"] = {
    "Orders": [
        ["Date", "Amount"],
        [D(2024, 1, 10), 120.5],
        [D(2024, 2, 5), 80.25],
        [D(2024, 1, 31), 42.0],
        [None, None],
        ["Month end of a range", "=EOMONTH(A2:A4,0)"],
        ["Months after a range, summed", "=SUMPRODUCT((EDATE(A2:A4,1)>A2)*B2:B4)"],
        ["Month end of one cell of a range", "=EOMONTH(A3:A3,0)"],
    ],
}

# --------------------------------------------------------------------------------------
# A regional sales report with subtotal rows: SUBTOTAL and AGGREGATE leave out the subtotals
# inside their ranges (and AGGREGATE errors, by option), LOOKUP in vector and array form and
# the LOOKUP(2,1/(...)) idiom for the last match, N for a running total under a text header,
# QUOTIENT, CHAR, RANK.AVG with ties, DATEVALUE of the date texts an en-US locale reads,
# ADDRESS (and INDIRECT of it), and zero-padded TEXT formats.
WORKBOOKS["regions.xlsx"] = {
    "Sales": [
        ["Region", "Rep", "Amount", "Running", "Rank (avg)", "Rank ascending", "Month", "Month code"],
        ["East", "Ana", 1200, "=N(D1)+C2", "=_xlfn.RANK.AVG(C2,$C$2:$C$4)", "=_xlfn.RANK.AVG(C2,$C$2:$C$4,1)", 3,
         '=TEXT(G2,"00")'],
        ["East", "Ben", 800, "=N(D2)+C3", "=_xlfn.RANK.AVG(C3,$C$2:$C$4)", "=_xlfn.RANK.AVG(C3,$C$2:$C$4,1)", 11,
         '=TEXT(G3,"00")'],
        ["East", "Cy", 1200, "=N(D3)+C4", "=_xlfn.RANK.AVG(C4,$C$2:$C$4)", "=_xlfn.RANK.AVG(C4,$C$2:$C$4,1)", 7,
         '=TEXT(G4,"000")'],
        ["East total", None, "=SUBTOTAL(9,C2:C4)"],
        ["West", "Dee", 950.5],
        ["West", "Eli", "#N/A"],
        ["West", "Fay", 410.25],
        ["West total", None, "=_xlfn.AGGREGATE(9,6,C6:C8)"],
        ["Grand total", None, "=SUBTOTAL(9,C2:C9)"],
    ],
    "Checks": [
        ["Check", "Value"],
        ["Average, subtotals left out", "=SUBTOTAL(1,Sales!C2:C5)"],
        ["Count", "=SUBTOTAL(2,Sales!C2:C5)"],
        ["Count of values", "=SUBTOTAL(3,Sales!B2:B10)"],
        ["Largest", "=SUBTOTAL(4,Sales!C2:C5)"],
        ["Smallest", "=SUBTOTAL(5,Sales!C2:C5)"],
        ["Product", "=SUBTOTAL(6,Sales!C6,Sales!C8)"],
        ["Sum ignoring hidden rows", "=SUBTOTAL(109,Sales!C2:C5)"],
        ["Average ignoring hidden rows", "=SUBTOTAL(101,Sales!C2:C4)"],
        ["Sum with an error", "=SUBTOTAL(9,Sales!C6:C8)"],
        ["Sum, nothing left out", "=_xlfn.AGGREGATE(9,4,Sales!C2:C5)"],
        ["Sum, subtotals left out", "=_xlfn.AGGREGATE(9,0,Sales!C2:C5)"],
        ["Sum, errors left out", "=_xlfn.AGGREGATE(9,6,Sales!C2:C8)"],
        ["Second largest, errors left out", "=_xlfn.AGGREGATE(14,6,Sales!C2:C8,2)"],
        ["Smallest, errors left out", "=_xlfn.AGGREGATE(15,6,Sales!C2:C8,1)"],
        ["Median, errors left out", "=_xlfn.AGGREGATE(12,6,Sales!C2:C4)"],
        ["Count, errors left out", "=_xlfn.AGGREGATE(2,6,Sales!C2:C8)"],
        ["Rep of 800", "=LOOKUP(800,Sales!C3:C3,Sales!B3:B3)"],
        ["Region at or below Mid", '=LOOKUP("Mid",{"East","West"},{"E","W"})'],
        ["Array form", "=LOOKUP(5,{1,2;4,8;6,9})"],
        ["Last East rep", '=LOOKUP(2,1/(Sales!A2:A8="East"),Sales!B2:B8)'],
        ["Below every entry", "=LOOKUP(0,{1,2,3},{4,5,6})"],
        ["N of text", '=N("12")'],
        ["N of TRUE", "=N(TRUE)"],
        ["N of a number", "=N(Sales!C2)"],
        ["Years in 30 months", "=QUOTIENT(30,12)"],
        ["Quotient toward zero", "=QUOTIENT(-7,2)"],
        ["Letters", "=CHAR(65)&CHAR(98)&CHAR(32)&CHAR(126)"],
        ["Phone without spaces", '=SUBSTITUTE("(555) 123 4567",CHAR(32),"")'],
        ["No character 256", "=CHAR(256)"],
        ["ISO date text", '=DATEVALUE("2024-01-31")'],
        ["US date text", '=DATEVALUE("1/31/2024")'],
        ["Day-month-year text", '=DATEVALUE("31-Jan-2024")'],
        ["Month name text", '=DATEVALUE("January 31, 2024")'],
        ["Not a date", '=DATEVALUE("soon")'],
        ["Date of a formatted date", '=DATEVALUE(TEXT(DATE(2024,2,29),"yyyy-mm-dd"))'],
        ["Absolute address", "=ADDRESS(2,3)"],
        ["Row absolute", "=ADDRESS(2,3,2)"],
        ["Column absolute", "=ADDRESS(2,3,3)"],
        ["Relative", "=ADDRESS(2,28,4)"],
        ["R1C1", "=ADDRESS(2,3,1,FALSE)"],
        ["R1C1 relative", "=ADDRESS(2,3,4,FALSE)"],
        ["With a sheet", '=ADDRESS(1,1,1,TRUE,"Sales")'],
        ["With a quoted sheet", '=ADDRESS(1,1,4,TRUE,"Q1 Data")'],
        ["Sum through ADDRESS", '=SUM(INDIRECT("Sales!"&ADDRESS(2,3)&":"&ADDRESS(4,3)))'],
        ["Off the sheet", "=ADDRESS(0,1)"],
        ["Padded number", '=TEXT(3.14159,"00.0")'],
        ["Padded negative", '=TEXT(-5,"00")'],
    ],
}  # fmt: skip

# --------------------------------------------------------------------------------------
# The honest idioms the third red-team pass found refused (Excel and LibreOffice compute
# them): the left lookup through CHOOSE with an array index, ROW of INDIRECT or OFFSET over
# the rows that hold the formula (the digits of a text, pre-365), ranges ending in INDEX or
# OFFSET, CLEAN, MROUND, dates written as en-US text in criteria and DATEVALUE, and WEEKDAY's
# types 11-17. (The
# digits of a text as TEXTJOIN(...IFERROR(MID(...))...) in a cell of its own is "" in
# LibreOffice, which evaluates arrays there only inside SUMPRODUCT and array formulas;
# Excel 365 gives the digits, as the engine does: tests/workbook/test_workbook.py.)
WORKBOOKS["idioms.xlsx"] = {
    "Codes": [
        ["Code", "Price", "Name", "Text", "Date", "Amount", "Out"],
        ["K-1", 3, "Ann", "a1b2c3", D(2023, 12, 31), 10, '=SUMPRODUCT(IFERROR(--MID(D2,ROW(INDIRECT("1:"&LEN(D2))),1),0))'],
        ["K-2", 1, "Bob", "x9", D(2024, 1, 1), 20, '=SUMPRODUCT(IFERROR(--MID(D3,ROW(INDIRECT("1:"&LEN(D3))),1),0))'],
        ["K-3", 2, "Cy", "n0", D(2024, 2, 3), 30, "=SUM($B$2:INDEX($B:$B,ROW()))"],
    ],
    "Checks": [
        ["Check", "Value"],
        ["Left lookup", '=VLOOKUP("Bob",CHOOSE({1,2},Codes!C2:C4,Codes!B2:B4),2,FALSE)'],
        ["Rows of the table", "=ROWS(CHOOSE({1,2},Codes!C2:C4,Codes!A2:A4))"],
        ["Sum of the table", "=SUM(CHOOSE({1,2},Codes!B2:B4,Codes!F2:F4))"],
        ["Digits summed", '=SUMPRODUCT(--MID("123",ROW(INDIRECT("1:3")),1))'],
        ["Rows 1 to 5 over this one", '=SUMPRODUCT(ROW(INDIRECT("1:5")))'],
        ["Rows of an OFFSET over this one", "=SUMPRODUCT(ROW(OFFSET(B1,0,0,6,1)))"],
        ["Rows of INDIRECT", '=ROWS(INDIRECT("A1:B9"))'],
        ["To INDEX", "=SUM(Codes!$B$2:INDEX(Codes!$B:$B,3))"],
        ["From INDEX", "=SUM(INDEX(Codes!B2:B4,2):Codes!B4)"],
        ["Row of INDEX", "=ROW(INDEX(Codes!A1:A9,3))"],
        ["To OFFSET", "=SUM(Codes!B2:OFFSET(Codes!B2,2,0))"],
        ["Clean", '=CLEAN("a"&CHAR(10)&"b"&CHAR(9)&"c")'],
        ["To cents", "=MROUND(2.675,0.01)"],
        ["To 2", "=MROUND(7,2)"],
        ["Negative to -2", "=MROUND(-7,-2)"],
        ["To 0.2", "=MROUND(1.3,0.2)"],
        ["To 0", "=MROUND(10,0)"],
        ["From US date text", '=COUNTIF(Codes!E2:E4,">=1/1/2024")'],
        ["A month by TEXT m/d/yyyy", '=SUMIFS(Codes!F2:F4,Codes!E2:E4,">="&TEXT(DATE(2024,1,1),"m/d/yyyy"),Codes!E2:E4,"<"&TEXT(DATE(2024,2,1),"m/d/yyyy"))'],
        ["On a US date", '=COUNTIF(Codes!E2:E4,"1/1/2024")'],
        ["Before a month-name date", '=COUNTIF(Codes!E2:E4,"<Jan 15, 2024")'],
        ["Date and time", '=DATEVALUE("2024-01-15 10:30")'],
        ["US date and time", '=DATEVALUE("1/15/2024 10:30 PM")'],
        ["Weekdays from Monday to Sunday", "=" + "&".join(f"WEEKDAY(Codes!E2,{t})" for t in range(11, 18)) + "&WEEKDAY(Codes!E3,16)"],
    ],
}  # fmt: skip

NOT_IN_LIBREOFFICE = {"XLOOKUP", "XMATCH", "SEQUENCE", "SINGLE"}
"""Functions of the engine that LibreOffice 7.4 (Debian 12) does not have: it reads
_xlfn.XLOOKUP, _xlfn.XMATCH, _xlfn.SEQUENCE and _xlfn.SINGLE (Excel 365's `@`) as #NAME?
(the first three came in LibreOffice 24.8). tests/workbook/test_workbook.py checks them
against Excel's documented examples."""
COVERED_FUNCTIONS = set(FUNCTIONS) - NOT_IN_LIBREOFFICE
"""Every function of the engine's table must appear in some formula here, and no other."""
TEXT_FORMATS = ("0", "0.00", "00", "000", "00.0", "#,##0", "#,##0.00", "0%", "0.0%", "yyyy-mm-dd", "dd/mm/yyyy", "mmm yyyy")  # fmt: skip


def formula_cells(name: str) -> list[tuple[str, str, str]]:
    """(sheet, "B2", formula) of every formula cell of a workbook."""
    cells = []
    for sheet, rows in WORKBOOKS[name].items():
        for r, row in enumerate(rows, start=1):
            for c, value in enumerate(row, start=1):
                if isinstance(value, str) and value.startswith("="):
                    cells.append((sheet, f"{openpyxl.utils.get_column_letter(c)}{r}", value))
    return cells


def write_workbook(name: str, folder: Path) -> Path:
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for sheet, rows in WORKBOOKS[name].items():
        worksheet = workbook.create_sheet(sheet)
        for r, row in enumerate(rows, start=1):
            for c, value in enumerate(row, start=1):
                if value is not None:
                    worksheet.cell(r, c, value)
    path = folder / name
    workbook.save(path)
    return path


@pytest.fixture(scope="module")
def recalculated(tmp_path_factory) -> dict[str, tuple[Path, dict[str, dict[str, object]]]]:
    """{workbook name: (the .xlsx as written, LibreOffice's values)}: one soffice run."""
    if find_soffice() is None:
        pytest.fail(f"CI is set and LibreOffice (soffice) is missing; .ci/run installs it ({INSTALL_HINT})")
    folder = tmp_path_factory.mktemp("workbooks")
    paths = {name: write_workbook(name, folder) for name in WORKBOOKS}
    values = recalculate_with_libreoffice(paths.values(), tmp_path_factory.mktemp("libreoffice"))
    return {name: (path, values[path]) for name, path in paths.items()}


def quoted(sheet: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", sheet):
        return sheet
    return "'" + sheet.replace("'", "''") + "'"


def comparable(value: object) -> tuple[str, object]:
    """(kind, value): errors by code, numbers as floats (a date as its serial), booleans,
    text; never a boolean as a number."""
    if isinstance(value, CellError):
        return ("error", value.code)
    if isinstance(value, ErrorValue):
        return ("error", value.code)
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", float(value))
    if isinstance(value, (dt.datetime, dt.date)):
        return ("number", float(to_excel(value)))
    if isinstance(value, str):
        return ("text", value)
    return ("other", value)


def agree(libreoffice: object, engine: object) -> bool:
    (kind_lo, lo), (kind_engine, got) = comparable(libreoffice), comparable(engine)
    if kind_lo != kind_engine:
        return False
    if kind_lo == "number":
        return math.isclose(lo, got, rel_tol=1e-9)
    return lo == got


def test_every_supported_function_and_text_format_is_covered():
    formulas = " ".join(f for name in WORKBOOKS for _, _, f in formula_cells(name)).upper()
    called = set(re.findall(r"(?<![A-Z0-9_.])(?:_XLFN\.)?([A-Z][A-Z0-9.]*)\(", formulas))
    assert not COVERED_FUNCTIONS - called, f"no workbook calls {sorted(COVERED_FUNCTIONS - called)}"
    assert not called - set(FUNCTIONS), f"not in the engine's table: {sorted(called - set(FUNCTIONS))}"
    for fmt in TEXT_FORMATS:
        assert f'"{fmt.upper()}")' in formulas, fmt
    for unit in "DMY":
        assert f',"{unit}")' in formulas, f"DATEDIF {unit}"
    for match_type in ("0", "1", "-1"):
        assert re.search(rf"MATCH\([^()]*,{match_type}\)", formulas), f"MATCH type {match_type}"


def test_libreoffice_computes_every_formula(recalculated):
    """A #NAME? or a missing value from LibreOffice means the workbook, not the engine, is
    wrong (a function LibreOffice does not know under that name)."""
    for name, (_, values) in recalculated.items():
        for sheet, cell, formula in formula_cells(name):
            value = values[sheet].get(cell)
            assert value is not None and value != CellError("#NAME?"), (name, sheet, cell, formula, value)


@pytest.mark.parametrize("name", list(WORKBOOKS))
def test_engine_agrees_with_libreoffice(recalculated, name):
    path, values = recalculated[name]
    workbook = read_xlsx(path)
    disagreements = []
    for sheet, cell, formula in formula_cells(name):
        ref = f"{quoted(sheet)}!{cell}"
        expected = values[sheet].get(cell)
        got = workbook.value(ref)
        if not agree(expected, got):
            disagreements.append(f"{ref} {formula}: LibreOffice {expected!r}, engine {got!r}")
    assert not disagreements, f"{len(disagreements)} of {len(formula_cells(name))} formulas differ:\n" + "\n".join(
        disagreements
    )
