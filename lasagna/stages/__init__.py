"""lasagna.stages: the stage library a track's pipeline is made of.

`stage.py` (a `Stage` is plain data; `check_pipeline`, `apply_stages` over Ray Data), the
run's pooled model servers (`pools.py`: chat-model engines; `embedding.py`: embedders), the
actor helpers, and the stage classes (`retrieval.py`, `generation.py`, `judging.py`,
`scoring.py`). Imported by tracks and the engine; imports retrieval, results, systems,
judges, models, data, metrics and common.
"""
