"""Question synthesis: documents -> text (extract) -> 200-word passages (chunk) -> a seeded
plan -> an LLM writes each question and a second call checks it -> JSONL rows."""
