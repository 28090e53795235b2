"""msvm: multicategory support vector machines from the statistics literature.

Every estimator is scikit-learn compatible and solves its dual with one compiled solver
(msvm._core._solver); the exact objective of each model is in its docstring.
"""

from .angle import AngleBasedMSVM
from .reinforced import ReinforcedMSVM
from .robust import RobustMSVM
from .targeted import TargetedLocalMSVM
from .weighted import AdaptiveWeightedSVM, WeightedRobustMSVM
from .weston_watkins import WestonWatkinsMSVM

__version__ = "0.1.0"

__all__ = [
    "AdaptiveWeightedSVM",
    "AngleBasedMSVM",
    "ReinforcedMSVM",
    "RobustMSVM",
    "TargetedLocalMSVM",
    "WeightedRobustMSVM",
    "WestonWatkinsMSVM",
    "__version__",
]
