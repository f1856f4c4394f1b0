"""Cache entries a node copies into its own cache root (lasagna.cache.entries): written once,
atomically, only when missing; a hybrid's parts found in the copy's own tree; a cache root
that cannot be written is named with the fix. The copies between real nodes are in
tests/test_cluster.py (every node there has its own LASAGNA_CACHE)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lasagna.cache.entries import entry_files, entry_name, local_copy
from lasagna.data.model import Document
from lasagna.retrieval.searcher import Searcher
from lasagna.retrieval.store import ensure_retriever, entries_of, hybrid_parts
from lasagna.stages.index_copies import IndexRef
from lasagna.systems import BM25Retriever, HybridRetriever

DOCS = [
    Document(id="d1", text="the solidus was a gold coin of Constantine"),
    Document(id="d2", text="soda lowers the melting point of silica in glass"),
    Document(id="d3", text="the hyperpyron replaced the debased solidus"),
]


def _no_encoder(cfg):
    raise AssertionError("BM25 parts encode nothing")


def _hybrid_of_two_bm25(revision: str) -> tuple[Path, HybridRetriever]:
    cfg = HybridRetriever(
        kind="hybrid", retrievers=(BM25Retriever(), BM25Retriever(k1=0.9, b=0.4)), top_k=3
    )
    return ensure_retriever(revision, DOCS, cfg, _no_encoder), cfg


def _copy(folder: Path):
    return lambda: ((rel, (folder / rel).read_bytes()) for rel in entry_files(folder))


def test_a_hybrid_entry_copied_to_another_root_searches_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path / "driver"))
    path, cfg = _hybrid_of_two_bm25("rev1")
    names = [entry_name(e) for e in entries_of(path)]
    assert names[0].startswith("indexes/hybrid/") and len(names) == 3
    listed = json.loads((path / "parts.json").read_text())
    assert listed == names[1:]  # names under the root, not this machine's paths
    want = Searcher(path, cfg).search(["gold coin", "melting glass"])

    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path / "node"))
    copies = [local_copy(n, _copy(e)) for n, e in zip(names, entries_of(path), strict=True)]
    assert copies[0] == tmp_path / "node" / names[0]
    assert hybrid_parts(copies[0]) == copies[1:]
    assert Searcher(copies[0], cfg).search(["gold coin", "melting glass"]) == want


def test_parts_written_as_absolute_paths_resolve_in_the_entry_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path / "c"))
    path, _ = _hybrid_of_two_bm25("rev2")
    names = json.loads((path / "parts.json").read_text())
    (path / "parts.json").write_text(json.dumps([f"/elsewhere/cache/{n}" for n in names]))
    assert hybrid_parts(path) == [tmp_path / "c" / n for n in names]


def test_a_copy_is_written_once_and_read_after(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))
    calls = []

    def files():
        calls.append(1)
        yield "a/b.bin", b"\x00\x01"
        yield "c.json", memoryview(b"{}")

    first = local_copy("indexes/bm25/k", files)
    assert (first / "a" / "b.bin").read_bytes() == b"\x00\x01" and calls == [1]
    assert local_copy("indexes/bm25/k", files) == first and calls == [1]
    assert not [p for p in (tmp_path / "indexes" / "bm25").iterdir() if p.name.startswith(".")]


def test_a_failed_copy_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("LASAGNA_CACHE", str(tmp_path))

    def broken():
        yield "x", b"1"
        raise ConnectionError("the object store lost it")

    with pytest.raises(ConnectionError):
        local_copy("indexes/bm25/k", broken)
    assert list((tmp_path / "indexes" / "bm25").iterdir()) == []


def test_a_cache_root_that_cannot_be_written_is_named_with_the_fix(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("LASAGNA_CACHE", str(blocker / "cache"))
    with pytest.raises(OSError) as err:
        local_copy("indexes/bm25/k", lambda: iter(()))
    text = str(err.value)
    assert "indexes/bm25/k" in text and str(blocker / "cache") in text
    assert "set LASAGNA_CACHE to a writable folder on every node" in text


def test_on_one_machine_the_index_is_opened_where_it_is(tmp_path):
    assert IndexRef(str(tmp_path)).open() == tmp_path
    with pytest.raises(FileNotFoundError, match="unset LASAGNA_CACHE_SHARED unless"):
        IndexRef(str(tmp_path / "elsewhere")).open()


def test_a_cache_said_to_be_shared_sends_no_copies(tmp_path, monkeypatch):
    """On several nodes the files travel, unless LASAGNA_CACHE_SHARED says every node
    mounts the cache (the node count is stubbed: the copies between real nodes are
    tests/test_cluster.py's)."""
    from lasagna.stages import index_copies

    monkeypatch.setattr(index_copies, "_alive_nodes", lambda: 3)
    monkeypatch.setenv("LASAGNA_CACHE_SHARED", "1")
    assert index_copies.share_index(tmp_path) == IndexRef(str(tmp_path))


def test_a_killed_build_is_removed_by_the_next_build_of_that_entry(tmp_path):
    """A build killed mid-way (an index's vectors: large) leaves its temporary folder; the
    next build of the entry on this host removes it, and leaves a live builder's and
    another host's alone."""
    import os
    import socket

    from ray_procs import dead_pid

    from lasagna.cache.atomic import build_atomically

    dead = dead_pid()
    host = socket.gethostname()
    killed = tmp_path / f".tmp-idx@{host}.{dead}.0123abcd"
    live = tmp_path / f".tmp-idx@{host}.{os.getpid()}.0123abcd"
    remote = tmp_path / f".tmp-idx@not-{host}.{dead}.0123abcd"
    other = tmp_path / f".tmp-other@{host}.{dead}.0123abcd"  # another entry's
    for folder in (killed, live, remote, other):
        (folder / "vectors").mkdir(parents=True)
    built = build_atomically(tmp_path / "idx", lambda tmp: (tmp / "done").write_text("1"))
    assert (built / "done").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["idx", live.name, remote.name, other.name]
    )
