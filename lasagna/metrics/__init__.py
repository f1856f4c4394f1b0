"""lasagna.metrics: pure functions from plain data to scores.

`retrieval` (trec_eval semantics) and `qa` (SQuAD v2 EM / token F1). All values are
fractions in [0, 1]. Bump METRIC_DEFINITIONS_VERSION whenever any definition changes: it is
part of the comparability key, so results scored under different definitions never share a
leaderboard.
"""

METRIC_DEFINITIONS_VERSION = "1"
