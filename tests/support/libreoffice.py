"""Recalculating .xlsx workbooks with LibreOffice, for the tests and benchmarks that check
the spreadsheet engine against a real spreadsheet program.

`recalculate_with_libreoffice` converts a batch of workbooks in ONE headless soffice run
and reads the computed values back with openpyxl. Starting LibreOffice is most of the cost:
one small workbook takes about 1.9 s, the six of tests/workbook/test_workbook_libreoffice.py 3.2 s.

LibreOffice keeps the cached results an .xlsx carries unless told otherwise: its setting
"Recalculation on File Load, Excel 2007 and newer" (/org.openoffice.Office.Calc/Formula/
Load/OOXMLRecalcMode: 0 always, 1 never, 2 prompt) defaults to 1, never, in 7.4. A formula
without a cached value (all of openpyxl's) is computed anyway, but one with a stale cached
value would come back stale; so every run uses a throw-away user profile that sets it to 0,
always recalculate. The profile also pins the locale to en-US, which TEXT and VALUE read
(decimal and thousands separators, month names).

Values come back as the file stores them: numbers (int or float; a date is its serial
number, whatever the cell's number format), text, booleans, and errors as `CellError` with
the code LibreOffice writes (an error cell, t="e": "#DIV/0!", "#N/A", "#VALUE!", "#REF!",
"#NAME?", "#NUM!"), so that an error is never mistaken for the text "#N/A". A formula
whose result is empty text comes back as "".
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import openpyxl
from openpyxl.utils.datetime import to_excel

INSTALL_HINT = "apt-get install libreoffice-calc-nogui"

_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" \
xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" \
oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" \
oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Setup/L10N"><prop oor:name="ooSetupSystemLocale" \
oor:op="fuse"><value>en-US</value></prop></item>
</oor:items>
"""
"""registrymodifications.xcu of the throw-away profile: always recalculate .xlsx and .ods on
load, en-US locale."""


class LibreOfficeMissing(RuntimeError):
    """soffice is not on PATH."""


@dataclass(frozen=True)
class CellError:
    """An error value as LibreOffice wrote it to the .xlsx: code is "#DIV/0!", "#N/A", ..."""

    code: str

    def __str__(self) -> str:
        return self.code


def find_soffice() -> str | None:
    """The LibreOffice binary on PATH, or None."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def recalculate_with_libreoffice(
    paths: Iterable[str | os.PathLike],
    outdir: str | os.PathLike,
    *,
    timeout: float = 300,
) -> dict[Path, dict[str, dict[str, object]]]:
    """Have LibreOffice recalculate every formula of each .xlsx in `paths` (one soffice run
    for all of them), save the results to `outdir`, and return
    {input path: {sheet name: {"A1": value}}} for every non-empty cell of every sheet.

    The input files are not changed. Their file names must differ (the copies land side by
    side in `outdir`), and `outdir` must not be the folder of any input.
    """
    soffice = find_soffice()
    if soffice is None:
        raise LibreOfficeMissing(f"LibreOffice (soffice) is not installed: {INSTALL_HINT}")
    sources = [Path(p) for p in paths]
    if not sources:
        return {}
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    names = [p.name for p in sources]
    if len(set(names)) != len(names):
        raise ValueError(f"input file names must differ (the copies share {out}): {names}")
    for source in sources:
        if not source.is_file():
            raise FileNotFoundError(source)
        if source.resolve().parent == out.resolve():
            raise ValueError(f"{source} is in the output folder {out}: it would be overwritten")
        (out / source.name).unlink(missing_ok=True)

    with tempfile.TemporaryDirectory(prefix="lo-profile-") as profile:
        user = Path(profile) / "user"
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(_PROFILE, encoding="utf-8")
        command = [
            soffice,
            f"-env:UserInstallation={Path(profile).as_uri()}",
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--nologo",
            "--nodefault",
            "--convert-to",
            "xlsx:Calc MS Excel 2007 XML",
            "--outdir",
            str(out),
            *[str(p.resolve()) for p in sources],
        ]
        # HOME too: some libraries LibreOffice loads write caches there.
        env = dict(os.environ, HOME=profile)
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    missing = [p for p in sources if not (out / p.name).is_file()]
    if done.returncode != 0 or missing:
        raise RuntimeError(
            f"LibreOffice did not convert {[str(p) for p in missing] or 'every file'} "
            f"(exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return {source: read_values(out / source.name) for source in sources}


def read_values(path: str | os.PathLike) -> dict[str, dict[str, object]]:
    """{sheet name: {"A1": value}} for every non-empty cell of a saved workbook, formula
    cells by their cached result (see the module doc for the types).

    A formula whose result is the empty text is saved as t="str" with an empty <v>, which
    openpyxl reads as None: it comes back as "" (a formula cell is never left out)."""
    formulas = openpyxl.load_workbook(path)
    workbook = openpyxl.load_workbook(path, data_only=True)
    try:
        values: dict[str, dict[str, object]] = {}
        for sheet in workbook.worksheets:
            source = formulas[sheet.title]
            cells: dict[str, object] = {}
            for row in sheet.iter_rows():
                for cell in row:
                    if cell.value is not None:
                        cells[cell.coordinate] = _plain(cell, workbook.epoch)
                    elif source[cell.coordinate].data_type == "f":
                        cells[cell.coordinate] = ""
            values[sheet.title] = cells
        return values
    finally:
        workbook.close()
        formulas.close()


def _plain(cell, epoch) -> object:
    value = cell.value
    if cell.data_type == "e":
        return CellError(str(value))
    # openpyxl turns a number in a date format into a datetime; the file holds the serial.
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time, datetime.timedelta)):
        serial = to_excel(value, epoch)
        return int(serial) if float(serial).is_integer() else serial
    return value
