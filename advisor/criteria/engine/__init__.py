"""The machinery every criterion shares: gathering a kernel's launches into units, recipes and
their inputs, duration-weighted means, the evaluation flow, speedups and the bound, the analysis
records, hints, profiler collection commands and the metric names the report reads; the
criterion spec every criterion module exposes (spec.py) and the code two criteria share (levels.py,
balance.py)."""
