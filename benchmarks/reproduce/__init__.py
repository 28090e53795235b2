"""Reproductions of the papers' tables and figures, one module per table or figure.

Run from the repository root, e.g. ``python -m benchmarks.reproduce.liu_yuan_2011_table1 --quick``;
the ``_common`` and ``_seedNNN`` modules hold what the scripts of one paper share.
"""
