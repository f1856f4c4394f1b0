"""`from lasagna.knowledge_evaluation_sdk.synthesize import synthesize, write_jsonl`."""

from lasagna.synth.api import plan_synthesis, synthesize
from lasagna.synth.output import write_jsonl

__all__ = ["plan_synthesis", "synthesize", "write_jsonl"]
