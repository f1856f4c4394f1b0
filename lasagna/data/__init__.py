"""lasagna.data: load a user's file or BEIR folder into one validated, content-named
`Benchmark` (rows, corpus, qrels, identity, capabilities)."""

from lasagna.data.loader import load_benchmark
from lasagna.data.model import Benchmark, Capabilities, Document, Row, Turn
from lasagna.data.select import select_rows

__all__ = ["Benchmark", "Capabilities", "Document", "Row", "Turn", "load_benchmark", "select_rows"]
