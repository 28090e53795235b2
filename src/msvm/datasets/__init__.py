"""Data sets used by the msvm examples, demo, tests and benchmarks.

- :func:`load_pendigits`: the UCI pen-based handwritten digits (bundled, works offline).
- :func:`make_reinforced_example`: the simulated three-class examples of Liu and Yuan (2011),
  sections 4.1.1 and 4.1.2, and their true class probabilities
  (:func:`reinforced_example_proba`).
- :func:`make_disc_example`: the contaminated unit-disc example of Wu and Liu (2007).
- :func:`make_utility_example`, :func:`utility_matrix`: Examples 1, 2 and 3 and the utility
  matrices of Liu, Wu and He (2011); the average utility is :mod:`msvm.metrics`.
- :func:`make_circle_example`: the K = 2, 3 circle example of Wu and Liu's adaptively
  weighted classifiers (Wu and Liu 2013); its WDBC data is scikit-learn's ``load_breast_cancer``,
  contaminated with :func:`flip_labels`.
- :func:`make_targeted_example`: the simulations S1 and S2 of Kang, Lin and Zhang (2019).
"""

from ._pendigits import load_pendigits
from ._robust_examples import (flip_labels, make_circle_example, make_disc_example,
                               make_utility_example, utility_matrix)
from ._simulated import make_reinforced_example, reinforced_example_proba
from ._targeted_examples import make_targeted_example

__all__ = ["flip_labels", "load_pendigits", "make_circle_example", "make_disc_example",
           "make_reinforced_example", "make_targeted_example", "make_utility_example",
           "reinforced_example_proba", "utility_matrix"]
