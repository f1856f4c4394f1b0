"""lasagna.judges: the judge benchmarks, one module each: eight on outputs and
conversations, and the three retrieval-context ones (contextual-precision, -recall, -relevancy).

Each module holds its versioned prompts and reply schemas, a pure score formula and a
`judge(case, params)` generator (see `base.py`); `registry.py` names them by benchmark id.
"""
