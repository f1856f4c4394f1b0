"""lasagna.retrieval: BM25 (bm25s), dense (faiss), hybrid (RRF), and the index cache.

Modules, one job each:
- ranking   deterministic top-k (score desc, ties by doc id desc, as trec_eval)
- bm25      BM25Index over Document.indexed_text (tokenizer documented there)
- dense     DenseIndex: faiss flat / IVF / HNSW, inner product
- hybrid    fuse_rrf
- store     build-or-reuse cache entries for a retriever config (keys and folders:
            lasagna.cache.index)
- searcher  Searcher: answer questions from a cached entry (used in and out of Ray)
- local     the in-process path (no Ray); lasagna.stages.retrieval is the Ray path
"""
