"""lasagna.metrics: pure metric functions.

`METRIC_DEFINITIONS_VERSION` is part of every trial key: bump it whenever a metric's
definition changes so `--resume` never restores scores computed under the old definition.
"""

METRIC_DEFINITIONS_VERSION = "1"
