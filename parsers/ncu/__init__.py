"""Nsight Compute readers: CSV exports (`--page raw`, `details`, `--print-summary`) and binary
`.ncu-rep` reports, with the metric values and device facts they share."""
