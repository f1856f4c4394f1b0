"""Dataset identity: the content digest (the revision) and the registered name.

A file's digest is the sha256 of its bytes, exactly what `sha256sum FILE` prints.

A BEIR folder's digest is one sha256 over the files lasagna reads from it, in this order:
corpus.jsonl, queries.jsonl, then every qrels/*.tsv sorted by relative path (byte order).
A gzipped file (`corpus.jsonl.gz`) counts as the file it holds, under that name, so a
folder and its gzipped copy have one revision.
Each file contributes `<relative path>\\0<size in bytes>\\0` followed by its bytes, so a
renamed, moved, added or removed file changes the digest, and no two layouts collide by
concatenation. All qrels files are hashed whatever split is chosen: the digest names the
folder's content, and the split is recorded separately (Benchmark.split), so the test and
train splits of one folder share a name and a revision and differ in their split.

A question file with a named corpus has the digest of the pair (`pair_digest`): editing the
questions or the corpus is a new benchmark.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from lasagna.common.digest import bytes_sha256, feed_file
from lasagna.data.text import GZIP, read_file
from lasagna.errors import Problem, UserError

BEIR_CORPUS = "corpus.jsonl"
BEIR_QUERIES = "queries.jsonl"
BEIR_QRELS_DIR = "qrels"
SHORT_HEX = 12
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


def beir_file(folder: Path, name: str) -> Path:
    """`folder/name`, or `folder/name.gz` when only the compressed file is there."""
    plain, packed = folder / name, folder / f"{name}{GZIP}"
    return packed if not plain.is_file() and packed.is_file() else plain


def qrels_files(folder: Path) -> dict[str, Path]:
    """split -> its qrels file (`qrels/<split>.tsv`, or `.tsv.gz`), sorted by split."""
    qrels = folder / BEIR_QRELS_DIR
    if not qrels.is_dir():
        return {}
    found = [p for p in qrels.iterdir() if p.name.endswith((".tsv", f".tsv{GZIP}"))]
    splits = {p.name.removesuffix(GZIP).removesuffix(".tsv") for p in found}
    ordered = sorted(splits, key=lambda s: f"{s}.tsv".encode())  # the digest's file order
    return {s: beir_file(qrels, f"{s}.tsv") for s in ordered}


def beir_files(folder: Path) -> list[Path]:
    """The files a BEIR folder's digest covers, in hashing order (those that exist)."""
    files = [beir_file(folder, BEIR_CORPUS), beir_file(folder, BEIR_QUERIES)]
    return [f for f in files if f.is_file()] + list(qrels_files(folder).values())


def dataset_digest(path: str | Path) -> str:
    """Full sha256 hex of a file's bytes, or of a BEIR folder's files (see module doc)."""
    path = Path(path)
    digest = hashlib.sha256()
    if path.is_dir():
        for file in beir_files(path):
            rel = file.relative_to(path).as_posix().removesuffix(GZIP)
            if file.name.endswith(GZIP):  # named and hashed as the file it holds
                data = read_file(file)
                digest.update(f"{rel}\0{len(data)}\0".encode())
                digest.update(data)
                continue
            digest.update(f"{rel}\0{file.stat().st_size}\0".encode())
            feed_file(digest, file)
    else:
        feed_file(digest, path)
    return digest.hexdigest()


def pair_digest(questions: str, corpus: str) -> str:
    """The revision of a question file read against a corpus: sha256 of both digests."""
    return hashlib.sha256(f"questions\0{questions}\0corpus\0{corpus}\0".encode()).hexdigest()


digest_bytes = bytes_sha256  # sha256 of bytes already read, equal to dataset_digest(file)


def registered_name(path: str | Path, digest: str, name: str | None = None) -> str:
    """`local/<stem>@<12 hex>` (folder: its name), or `<name>@<12 hex>` when named."""
    short = digest[:SHORT_HEX]
    if name is not None:
        if not _NAME_RE.match(name):
            raise UserError(
                Problem(
                    f"the name {name!r} cannot be used",
                    field="name",
                    fix="use letters, digits and . _ - / only, starting with a letter or "
                    "digit (the @<hash> part is added by lasagna)",
                )
            )
        return f"{name}@{short}"
    path = Path(path)
    stem = path.resolve().name if path.is_dir() else Path(path.name.removesuffix(GZIP)).stem
    return f"local/{stem}@{short}"
