"""Nsight Systems `nsys stats` CSV reports and their text tables (SQLite exports are read by
:mod:`parsers.sqlite`)."""
