"""Shared test configuration for msvm.

- Makes the helper modules of this directory (`_reference`) importable whatever pytest's
  import mode.
- Hypothesis profiles: 'default' (used unless HYPOTHESIS_PROFILE says otherwise) keeps the
  property tests fast and deterministic; 'thorough' runs many more examples.
"""

import os
import sys

from hypothesis import HealthCheck, settings

sys.path.insert(0, os.path.dirname(__file__))

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
