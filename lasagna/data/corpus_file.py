"""A corpus named beside a question file: a BEIR corpus.jsonl (or any JSONL, or Parquet
table, of {_id, title, text}), a BEIR folder (its corpus.jsonl), or a folder of documents.

A folder of documents goes through the extractor and the fixed chunker that synthesis uses
(lasagna.data.extract, lasagna.data.chunk): each file becomes 200-word passages with ids
`<path in the folder>#<index>`, so a synthesized question file's contexts are, text for
text, passages of the same folder. A file that cannot be read is counted and named, not
fatal (as in synthesis); a folder with no readable document is refused.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from lasagna.common.digest import feed_file
from lasagna.data.beir import corpus_documents, read_corpus_jsonl
from lasagna.data.identity import BEIR_CORPUS, beir_file, digest_bytes
from lasagna.data.model import Document
from lasagna.data.parquetfile import read_parquet
from lasagna.data.text import GZIP, read_file
from lasagna.errors import Problem, UserError

CorpusKind = str  # "jsonl" | "parquet" | "beir" | "documents"


@dataclass
class CorpusData:
    """The documents of a named corpus, what they were read from, and their digest."""

    source: str
    kind: CorpusKind
    documents: dict[str, Document]
    digest: str  # sha256 hex of what was read (see corpus_digest)
    passages_of: dict[str, list[str]] = field(default_factory=dict)  # file -> its passage ids
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    skipped: list[str] = field(default_factory=list)  # a documents folder's unsupported files


def read_corpus(path: str | Path) -> CorpusData:
    """Read a corpus in any of its three forms; UserError naming every problem found."""
    path = Path(path)
    if not path.exists():
        raise UserError(
            Problem(
                "no such corpus file or folder",
                file=str(path),
                field="corpus",
                fix="check the corpus path (a sweep reads it from its folder)",
            )
        )
    if path.is_dir() and beir_file(path, BEIR_CORPUS).is_file():
        return _jsonl(beir_file(path, BEIR_CORPUS), "beir", str(path))
    if path.is_dir():
        return _documents(path)
    name = path.name.lower().removesuffix(GZIP)
    if not name.endswith((".jsonl", ".parquet")):
        raise UserError(
            Problem(
                "a corpus file must be JSONL or Parquet of {_id, title, text}, not "
                f"'{path.suffix}'",
                file=str(path),
                field="corpus",
                fix="give a corpus.jsonl or corpus.parquet, a BEIR folder, or a folder of "
                "md/txt/PDF/DOCX/HTML documents",
            )
        )
    return _jsonl(path, "parquet" if name.endswith(".parquet") else "jsonl", str(path))


def _jsonl(file: Path, kind: CorpusKind, source: str) -> CorpusData:
    """A corpus file of {_id, title, text} objects: JSONL, or a Parquet table of those
    columns (`kind` "parquet")."""
    problems: list[Problem] = []
    data = read_file(file)  # read once (a .gz decompressed once)
    if kind == "parquet":
        records, problems = read_parquet(data, str(file))
        objects = [(r.where, r.data) for r in records]
        documents = corpus_documents(objects, file, problems)
    else:
        documents = read_corpus_jsonl(file, problems, data)
    if not problems and not documents:
        problems.append(
            Problem(
                "the corpus holds no document",
                file=str(file),
                field="corpus",
                fix='write one {"_id": ..., "title": ..., "text": ...} per line',
            )
        )
    if problems:
        raise UserError(problems, title=f"{file}: {len(problems)} problem(s)")
    return CorpusData(source, kind, documents, digest_bytes(data))


def _documents(folder: Path) -> CorpusData:
    from lasagna.data.chunk import MIN_TAIL_WORDS, PASSAGE_WORDS, chunk_documents
    from lasagna.data.extract import HIDDEN, extract_folder

    found = extract_folder(folder)
    passages = chunk_documents(found.documents)
    if not passages:
        why = "; ".join(f"{i.doc_id}: {i.reason}" for i in found.failed[:3])
        raise UserError(
            Problem(
                "the corpus folder holds no readable document" + (f" ({why})" if why else ""),
                file=str(folder),
                field="corpus",
                fix="put .md, .txt, .pdf, .docx or .html files in it, or name a corpus.jsonl",
            )
        )
    documents = {p.passage_id: Document(id=p.passage_id, text=p.text) for p in passages}
    passages_of: dict[str, list[str]] = {}
    for p in passages:
        passages_of.setdefault(p.doc_id, []).append(p.passage_id)
    read = [folder / d.doc_id for d in found.documents] + [folder / f.doc_id for f in found.failed]
    digest = corpus_digest(
        folder, sorted(read), f"chunker words={PASSAGE_WORDS} min_tail={MIN_TAIL_WORDS}"
    )
    return CorpusData(
        str(folder),
        "documents",
        documents,
        digest,
        passages_of,
        [(f.doc_id, f.reason) for f in found.failed],
        [f.doc_id for f in found.skipped if f.reason != HIDDEN],
    )


def corpus_digest(folder: Path, files: list[Path], rule: str) -> str:
    """sha256 over the chunking rule, then each file as `<relative path>\\0<size>\\0<bytes>`
    in path order: a changed, added, renamed or removed document, or another chunking rule,
    is another corpus."""
    digest = hashlib.sha256(f"{rule}\0".encode())
    for file in files:
        rel = file.relative_to(folder).as_posix()
        digest.update(f"{rel}\0{file.stat().st_size}\0".encode())
        feed_file(digest, file)
    return digest.hexdigest()
