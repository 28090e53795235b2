"""Shared test configuration for msvm.

- The helper modules of this directory (`_signals`) and the oracle package at the repository
  root (`oracle`) are importable whatever pytest's import mode: pyproject.toml puts both
  directories on pytest's `pythonpath`.
- Hypothesis profiles: 'default' (used unless HYPOTHESIS_PROFILE says otherwise) keeps the
  property tests fast and deterministic; 'thorough' runs many more examples.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    max_examples=30,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=500,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def dask_synchronous():
    """Run the test's Dask computations on the synchronous scheduler (in this thread, so
    that a failure shows its own traceback); the Dask test files use it for every test."""
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture
def cg_route(monkeypatch):
    """Every chunked (Dask) fit of the test takes the conjugate-gradient route (beyond
    ``msvm._dask.DENSE_MAX_UNKNOWNS`` unknowns; mapped Nystroem features kept factored)."""
    import msvm._dask as chunked

    monkeypatch.setattr(chunked, "DENSE_MAX_UNKNOWNS", 0)
