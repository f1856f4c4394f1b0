"""lasagna: a distributed batch evaluator for RAG and LLM systems, on Ray."""

__version__ = "0.1.0"
