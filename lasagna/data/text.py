"""Turn a file's bytes into text, or say exactly why not (empty, not UTF-8).

Every text format goes through here so BOMs, CRLF and bad encodings behave the same in
JSONL, JSON, CSV and BEIR files.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from lasagna.errors import Problem, UserError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_MAX_BAD_LINES = 5


GZIP = ".gz"


def read_file(path: Path, limit: int = -1) -> bytes:
    """A data file's bytes (its first `limit` only, when given); a `.gz` file's once
    decompressed (BEIR sets as Hugging Face ships them: corpus.jsonl.gz), or the problem of
    a file that is not gzip."""
    import gzip
    import zlib

    try:
        with (gzip.open if path.name.endswith(GZIP) else open)(path, "rb") as handle:
            return handle.read(limit)
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:
        raise UserError(
            Problem(
                f"not a readable gzip file ({err})",
                file=str(path),
                fix="download it again, or give the file uncompressed (without .gz)",
            )
        ) from None


def decode_utf8(data: bytes, file: str) -> str:
    """Decode UTF-8 (a leading BOM is accepted and dropped); refuse empty or non-UTF-8 files.

    CRLF line ends are left in place: the JSON and CSV parsers treat them as line ends.
    """
    if data.startswith(_UTF16_BOMS):
        raise UserError(
            Problem(
                "the file is UTF-16, not UTF-8",
                file=file,
                where="line 1",
                fix="save the file as UTF-8 (most editors: 'Save with encoding' > UTF-8)",
            )
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(_bad_utf8_lines(data, file)) from None
    if not text.strip():
        raise UserError(
            Problem(
                "the file is empty" if not data else "the file holds only blank space",
                file=file,
                fix="add at least one row, or point lasagna at the right file",
            )
        )
    return text


def text_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) pairs of a JSON Lines text: records end at `\n` only.

    `str.splitlines()` also breaks at U+0085, U+2028, U+2029 and other characters that a
    JSON string may hold, which would cut a valid record in two and shift every later line
    number. A trailing `\r` (CRLF files) is dropped.
    """
    return [(n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), start=1)]


def _bad_utf8_lines(data: bytes, file: str) -> list[Problem]:
    """One problem per line holding bytes that are not UTF-8 (first few), for the user."""
    problems: list[Problem] = []
    bad = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as err:
            bad += 1
            if len(problems) < _MAX_BAD_LINES:
                byte = raw[err.start : err.start + 1].hex()
                problems.append(
                    Problem(
                        f"byte 0x{byte} at column {err.start + 1} is not valid UTF-8",
                        file=file,
                        where=f"line {number}",
                        fix="save the file as UTF-8 (it looks like Latin-1 or Windows-1252)",
                    )
                )
    if bad > len(problems):
        problems.append(
            Problem(f"{bad - len(problems)} more line(s) are not valid UTF-8", file=file)
        )
    return problems
