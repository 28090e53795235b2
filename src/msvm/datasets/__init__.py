"""Data sets used by the msvm examples, demo, tests and benchmarks.

- :func:`load_pendigits`: the UCI pen-based handwritten digits (bundled, works offline).
- :func:`make_reinforced_example`: the simulated three-class examples of Liu and Yuan (2011),
  sections 4.1.1 and 4.1.2.
"""

from ._pendigits import load_pendigits
from ._simulated import make_reinforced_example

__all__ = ["load_pendigits", "make_reinforced_example"]
