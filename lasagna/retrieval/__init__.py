"""lasagna.retrieval: BM25 (bm25s), dense (faiss), hybrid (RRF), and the index cache.

Modules, one job each:
- ranking   deterministic top-k (score desc, ties by doc id desc, as trec_eval)
- bm25      BM25Index over Document.indexed_text (tokenizer documented there)
- dense     DenseIndex: faiss flat / IVF / HNSW, inner product
- hybrid    fuse_rrf
- cache     cache_root, index_key, build_atomically (keys: dataset revision + index config)
- store     build-or-reuse cache entries for a retriever config
- searcher  Searcher: answer questions from a cached entry (used in and out of Ray)
- local     the in-process path (no Ray); lasagna.stages.retrieval is the Ray path
"""
