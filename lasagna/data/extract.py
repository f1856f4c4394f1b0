"""The extractor: the one place in lasagna that turns a document file into text.

.md and .txt are read as plain UTF-8 text (markdown is not rendered); PDF goes through pypdf,
DOCX through python-docx (paragraphs, then table cells), HTML through trafilatura, which
keeps the main text and drops scripts, styles, navigation, headers and footers.
A file that cannot be read never stops the run: it is reported by name with the reason.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PLAIN_SUFFIXES = (".md", ".markdown", ".txt")
PDF_SUFFIXES = (".pdf",)
DOCX_SUFFIXES = (".docx",)
HTML_SUFFIXES = (".html", ".htm")
HIDDEN = "hidden file"  # a skipped file's reason: dot files and folders (.git, .DS_Store)
SUPPORTED_SUFFIXES = PLAIN_SUFFIXES + PDF_SUFFIXES + DOCX_SUFFIXES + HTML_SUFFIXES


class ExtractError(Exception):
    """A supported file that holds no readable text; the message is the reason, for people."""


@dataclass(frozen=True)
class Document:
    doc_id: str  # path relative to the folder, with forward slashes
    text: str


@dataclass(frozen=True)
class FileIssue:
    doc_id: str
    reason: str


@dataclass
class Extraction:
    """What a folder gave: documents, files skipped as unsupported, files that failed."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[FileIssue] = field(default_factory=list)  # unsupported type
    failed: list[FileIssue] = field(default_factory=list)  # supported but unreadable


def _plain(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ExtractError("the file is UTF-16, not UTF-8 (save it as UTF-8)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ExtractError(
            f"not UTF-8 text: byte 0x{data[err.start]:02x} at offset {err.start} (save it as UTF-8)"
        ) from None


def _pdf(data: bytes) -> str:
    import logging

    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its repair warnings are not ours

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractError("encrypted PDF (it needs a password); save a decrypted copy")
        pages = [page.extract_text() or "" for page in reader.pages]
    except ExtractError:
        raise
    except Exception as err:  # pypdf raises many types on damaged files; none may crash a run
        raise ExtractError(f"corrupt or unreadable PDF ({type(err).__name__}: {err})") from None
    text = "\n\n".join(p for p in pages if p.strip())
    if not text.strip():
        raise ExtractError(
            f"no extractable text in {len(pages)} page(s) (a scanned PDF needs OCR first)"
        )
    return text


def _docx(data: bytes) -> str:
    from docx import Document as open_docx

    try:
        doc = open_docx(io.BytesIO(data))
    except Exception as err:  # zipfile, lxml and python-docx errors alike
        raise ExtractError(
            f"not a readable DOCX (corrupt, password-protected, or an old .doc renamed: {err})"
        ) from None
    parts = [p.text for p in doc.paragraphs]
    for table in doc.tables:
        for row in table.rows:
            parts.append(" | ".join(cell.text for cell in row.cells))
    return "\n".join(p for p in parts if p.strip())


def _html(data: bytes) -> str:
    import trafilatura

    text = trafilatura.extract(data, favor_recall=True, include_comments=False, include_tables=True)
    if not text or not text.strip():
        raise ExtractError("no main text found in the HTML page")
    return text


READERS: dict[str, Callable[[bytes], str]] = {
    **{s: _plain for s in PLAIN_SUFFIXES},
    **{s: _pdf for s in PDF_SUFFIXES},
    **{s: _docx for s in DOCX_SUFFIXES},
    **{s: _html for s in HTML_SUFFIXES},
}


def extract_text(path: Path) -> str:
    """The text of one supported file; ExtractError (with the reason) when there is none."""
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise ExtractError(f"unsupported file type '{path.suffix or '(none)'}'")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ExtractError(f"cannot read the file ({err.strerror or err})") from None
    if not data:
        raise ExtractError("empty file")
    text = reader(data).replace("\r\n", "\n").replace("\x00", "")
    if not text.strip():
        raise ExtractError("the file holds no text")
    return text


def extract_folder(root: str | Path) -> Extraction:
    """Every file under `root`, recursively, in path order (hidden files and folders skipped)."""
    root = Path(root)
    found = Extraction()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        doc_id = rel.as_posix()
        if any(part.startswith(".") for part in rel.parts):
            found.skipped.append(FileIssue(doc_id, HIDDEN))
            continue
        if path.suffix.lower() not in READERS:
            found.skipped.append(
                FileIssue(doc_id, f"unsupported file type '{path.suffix or '(none)'}'")
            )
            continue
        try:
            found.documents.append(Document(doc_id, extract_text(path)))
        except ExtractError as err:
            found.failed.append(FileIssue(doc_id, str(err)))
    return found
