"""Dataset identity: digests and registered names."""

from __future__ import annotations

import hashlib
import json

import pytest

from lasagna.data import load_benchmark
from lasagna.data.identity import dataset_digest, registered_name
from lasagna.errors import UserError


def test_file_digest_is_sha256_of_bytes(tmp_path):
    path = tmp_path / "my_data.jsonl"
    path.write_bytes(b'{"question": "A?"}\n')
    digest = dataset_digest(path)
    assert digest == hashlib.sha256(b'{"question": "A?"}\n').hexdigest()
    assert registered_name(path, digest) == f"local/my_data@{digest[:12]}"
    assert registered_name(path, digest, "tickets") == f"tickets@{digest[:12]}"
    bench = load_benchmark(path, name="tickets")
    assert bench.revision == digest and bench.name == f"tickets@{digest[:12]}"


def test_one_changed_byte_changes_the_name(tmp_path):
    a, b = tmp_path / "a" / "d.jsonl", tmp_path / "b" / "d.jsonl"
    a.parent.mkdir()
    b.parent.mkdir()
    a.write_bytes(b'{"question": "A?"}\n')
    b.write_bytes(b'{"question": "B?"}\n')
    assert load_benchmark(a).name != load_benchmark(b).name
    b.write_bytes(a.read_bytes())
    assert load_benchmark(a).name == load_benchmark(b).name  # same bytes, any folder


def test_bad_names_refused(tmp_path):
    with pytest.raises(UserError, match="cannot be used"):
        registered_name(tmp_path / "x.jsonl", "0" * 64, "has space@x")


def _beir(root, qrels="q1\td1\t1\n"):
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "t"}) + "\n")
    (root / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "q"}) + "\n")
    (root / "qrels" / "test.tsv").write_text(qrels)
    return root


def test_beir_digest_order_and_framing(tmp_path):
    folder = _beir(tmp_path / "f")
    h = hashlib.sha256()
    for rel in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        data = (folder / rel).read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode() + data)
    assert dataset_digest(folder) == h.hexdigest()
    assert load_benchmark(folder).name == f"local/f@{h.hexdigest()[:12]}"


def test_beir_digest_sees_renames_and_qrels_edits(tmp_path):
    folder = _beir(tmp_path / "f")
    before = dataset_digest(folder)
    (folder / "qrels" / "test.tsv").rename(folder / "qrels" / "dev.tsv")
    renamed = dataset_digest(folder)
    assert renamed != before
    (folder / "qrels" / "dev.tsv").write_text("q1\td1\t2\n")
    assert dataset_digest(folder) not in (before, renamed)
    other = _beir(tmp_path / "g")
    assert dataset_digest(other) == before  # same files, another folder: same revision
