"""Tables derived from profiler runs by the BSP-model studies' scripts: timing tables, R data sets
and wall-clock tables."""
