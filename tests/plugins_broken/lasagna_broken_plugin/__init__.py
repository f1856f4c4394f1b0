"""A package whose plugins do not load (what a user sees: one line each, nothing else)."""
