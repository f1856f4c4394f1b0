"""lasagna.judges: the eight judge benchmarks, one module each.

Each module holds its versioned prompts and reply schemas, a pure score formula and a
`judge(case, params)` generator (see `base.py`); `registry.py` names them by benchmark id.
"""
