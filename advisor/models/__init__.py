"""Analytic performance models (seeds 000, 001, 003, 004): pure functions with their sources."""
