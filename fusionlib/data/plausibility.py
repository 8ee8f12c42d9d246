"""Is a data file plausibly complete? Checked before its first-use hash is recorded.

A file whose checksum nobody publishes (``hash_policy="record-on-first-use"``, see
:mod:`fusionlib.data.registry`) has its SHA256 recorded the first time it is used, and every later
copy is compared with it. A truncated first copy must therefore never be recorded: it would become
the reference and the correct file would be refused. :func:`implausible` reads the bytes the way
the file's loader does (by its suffix): every CSV row has the header's number of fields, an
``.xls`` starts with the OLE2 magic bytes and opens with xlrd (when installed), a ``.zip``'s
directory reads and lists at least one file, and any other file is not empty.
"""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

__all__ = ["implausible"]

_OLE2_MAGIC = bytes.fromhex("d0cf11e0a1b11ae1")  # legacy Excel (.xls) compound file


def implausible(name: str, data: bytes | Path) -> tuple[str, str | None]:
    """(kind, reason) where reason says why ``data`` (the bytes, or the path of a file) cannot be
    a complete file ``name``, or is None if it looks complete: read as its loader reads it, so a
    truncated first copy is never recorded as the reference hash."""
    suffix = Path(name).suffix.lower()
    if suffix == ".zip":  # read in place: an archive of images can be large
        try:
            with zipfile.ZipFile(data if isinstance(data, Path) else io.BytesIO(data)) as zf:
                empty = not zf.namelist()
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            return "zip", f"not a readable zip archive ({exc})"
        return "zip", "the archive holds no files" if empty else None
    if isinstance(data, Path):
        data = data.read_bytes()
    if suffix == ".csv":
        return "CSV", _csv_problem(data)
    if suffix == ".xls":
        if not data.startswith(_OLE2_MAGIC):
            return "Excel .xls", "not an OLE2 compound file (wrong magic bytes)"
        try:
            import xlrd
        except ImportError:  # the loader says how to install it; the magic bytes were right
            return "Excel .xls", None
        try:
            xlrd.open_workbook(file_contents=data, on_demand=True).release_resources()
        except Exception as exc:  # any reader error: not a workbook xlrd (and pandas) can read
            return "Excel .xls", f"xlrd cannot read it ({type(exc).__name__}: {exc})"
        return "Excel .xls", None
    return "data", "empty" if not data else None


def _csv_problem(data: bytes) -> str | None:
    if not data.strip():
        return "empty"
    text = data.decode("utf-8", errors="replace")
    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    except csv.Error as exc:
        return f"unreadable ({exc})"
    if len(rows) < 2:
        return "no data row after the header"
    short = [i for i, r in enumerate(rows[1:], 2) if len(r) != len(rows[0])]
    if short:
        return (f"row {short[0]} has {len(rows[short[0] - 1])} fields, the header "
                f"{len(rows[0])} (cut off?)")
    return None
