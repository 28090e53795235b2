"""The msvm benchmarks and paper reproductions (not installed with msvm).

Run from the repository root as modules, e.g. ``python -m benchmarks.run_benchmarks --quick``
or ``python -m benchmarks.reproduce.liu_yuan_2011_table1 --quick``; `benchmarks.harness` holds what
they share, and the independent reference solvers come from the ``oracle`` package.
"""
