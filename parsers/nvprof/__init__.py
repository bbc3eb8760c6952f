"""nvprof CSV and fixed-width text exports: summaries, GPU and API traces, metric and event tables
(databases `.nvprof`/`.nvvp` are read by :mod:`parsers.sqlite`)."""
