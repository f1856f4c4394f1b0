"""What an evaluator's return value means (lasagna.stages.sdk_scores, re-exported)."""

from lasagna.stages.sdk_scores import ScoreError, averages, score_dimensions

__all__ = ["ScoreError", "averages", "score_dimensions"]
