"""Class probabilities from the classifiers themselves, by weighted refits and bracketing.

A large-margin classifier estimates the Bayes rule, not the class probabilities; but a
*weighted* classifier estimates the weighted Bayes rule, and the weights at which its
decision flips reveal the probabilities.  Wang, Shen and Liu (2008) do this for the binary
SVM: with weight 1 - pi on class +1 and pi on class -1 the weighted SVM estimates
sign(p(x) - pi), so bracketing the sign changes over a grid of pi gives p(x).  Wu, Zhang and
Liu (2010) extend it to k classes with weighted multicategory SVMs over a grid of weight
vectors.  This module implements that idea for every msvm estimator, with the same model and
the same solver (the weighted fits are ordinary fits with sample weights, warm-started one
from the next), in the form below.

The weighted Bayes rule
-----------------------
A Fisher-consistent multicategory loss with weight c_l on class l estimates
argmax_l c_l p_l(x).  Give class j weight 1/t, t in (0, 1], and every other class weight 1:
the weighted classifier predicts j exactly when

    p_j(x) > t * max_{l != j} p_l(x),   i.e.   r_j(x) = p_j(x) / max_{l != j} p_l(x) > t.

So for each class j a grid t_1 < ... < t_m < 1 of weight levels brackets the ratio r_j(x): it
lies between the largest level at which j is still predicted and the smallest at which it is
not.  At t = 1 the weighted fit is the estimator's own fit, so no extra fit is needed there.
For k = 2 this is the binary scheme of Wang, Shen and Liu with pi = t / (1 + t).  Only the
ratio of the weights decides the weighted Bayes rule; up-weighting class j (rather than
down-weighting the others by t) keeps every sample at least at its own weight, so the fits
at small t are not flattened by the penalty (down-weighting gave nearly constant fits and
clearly worse estimates at moderate C).

From ratios to probabilities
----------------------------
Let j* be the class the estimator predicts at x (the argmax of its decision values).  For
every other class j, max_{l != j} p_l = p_{j*} (j* is the most probable class), so
r_j = p_j / p_{j*} <= 1 and

    p_{j*}(x) = 1 / (1 + sum_{j != j*} r_j(x)),     p_j(x) = r_j(x) p_{j*}(x).

These probabilities are in [0, 1], sum to one, and their argmax is j*, the estimator's own
prediction (every r_j of another class is capped just below 1): ``predict_proba`` never
disagrees with ``predict``, unlike Platt scaling.  Within a bracket [t_lo, t_hi] the ratio is
placed where the generalized margin f_j - max_{l != j} f_l of the two fits crosses zero,
interpolated linearly in log t; below the smallest level it is put at t_1 / sqrt(q), q the
ratio of consecutive levels (half a grid step below it, in log t).

Cross-validated: the refits' C, the exponent and the floor
---------------------------------------------------------
The bracketed ratios are biased towards 1 (too flat): a weighted fit at finite C is pulled by
the penalty towards the constant classifier, which predicts the class of largest weighted mass,
so the region where the up-weighted class j wins is larger than {r_j > t} (measured on Liu and
Yuan's example 4.1.2, n = 400: at t = 0.18 class 0 was predicted on 69 % of the test points
against 59 % for the weighted Bayes rule at C = 10, 71 % at C = 1), the more so the smaller C.
And below the smallest level at which the fits still change (the hinge loss ignores samples
classified with margin, so up-weighting them further changes nothing) the ratios are not
resolved.  Three choices, made by cross-validation, correct this:

- the C of the weighted fits, C or 3 C (``REFIT_C_FACTORS``; a larger C pulls them less
  towards the constant classifier).  With 3 C the chains start from an unweighted fit at 3 C,
  which is also the top t = 1 of their brackets; the predicted class j* stays the
  estimator's own;
- an exponent a in [0.25, 4] and a floor eps in [0, 0.5] of the estimate

      p = (1 - eps) r^a / sum_l r_l^a + eps / k       (a > 1 sharpens),

  chosen for each C factor to minimize the log loss of held-out samples; the factor with the
  smaller held-out log loss is kept (``FACTOR_SE`` = 0).  The two are often within noise of
  each other (breast cancer: 0.0787 and 0.0789), but keeping C unless 3 C wins by more than
  one standard error of the paired per-sample differences (``FACTOR_SE`` = 1) was measured
  and not kept: on example 4.1.2 at C = 1 it kept C on two of five draws where 3 C helps,
  and the mean absolute error rose from 0.0451 to 0.0496.

The held-out ratios come from repeating the whole construction (the estimator's own fit and the
weighted chains for each factor) on the training part of two of 3 stratified folds (shuffled
with seed 0: 2/3 of the samples each), with the sample weights scaled by n / n_train so that
the balance of loss and penalty is that of the full fit; their two held-out thirds calibrate.
Above ``CALIBRATION_TRAIN_MAX`` (1,000) training samples a fold trains on a stratified random
1,000 of them and holds out every other sample (:func:`calibration_splits`; Cost, below).
All 3 folds were refitted before (``REFITTED_FOLDS = 3``), at 1.4 times the cost in all: on Liu
and Yuan's examples (n = 400, 2 examples x C = 1, 10 x 3 draws) the mean absolute error against
the truth went from 0.0374 to 0.0392 with two folds (0.0390 with one: the difference is mostly
the noise of the calibration), the pendigits log loss (2,000 samples, C = 10) from 0.0392 to
0.0389 (0.0461 with one fold, at half the time of three) and the breast cancer log loss from
0.1408 to 0.1453 (0.1616 with one fold). One fold broke the limits of issue 25 (+0.01 log loss,
+0.002 mean absolute error) there. Both maps of the estimate are increasing in r_j, so its
argmax stays the estimator's prediction. On examples 4.1.1 and 4.1.2 (n = 400) the chosen a is
1.2 to 1.6 at C = 1 and 1.1 to 1.4 at C = 10; 3 C was chosen on 4 of 5 draws of 4.1.2 at C = 1
and on none of 3 at C = 10; the mean absolute error against the true probabilities fell by a
third to two fifths at C = 1 and by a tenth to a fifth at C = 10
(benchmarks/results/probability.md). Measured and dropped: a fixed 3 C (helps at C = 1, hurts
at C = 10), and normalizing the weights to keep the total loss mass fixed (more regularization,
flatter estimates).

Cost
----
One fit of the estimator plus at most k * m weighted fits (m = ``probability_grid``), for
each class along the grid from t = 1 down; and on the training part of each refitted fold an
own fit, the unweighted fit at 3 C and at most k * m weighted fits for each of the two
factors: at most 1 + k m (+ 1) + 2 (2 + 2 k m) fits in all (``n_probability_fits_``, the
fits made), about 5 times 1 + k m; the fits at 3 C are the slower ones.  Fewer fits, and
cheaper ones:

- a class's chain stops at the level where its fit is settled (:func:`_settled`): no
  variable of the up-weighted class sits at a bound that grows with its weight, so the
  solution meets the optimality conditions of every level below with the same residual,
  and those levels hold that fit (counted once).  The hinge loss stops responding once the
  class is fitted with margin: on pendigits (C = 10) the chains settle at t = 0.075 to
  0.013 of t_1 = 0.001, after 3 to 5 of 8 levels.  For a model fitted by one convex solve,
  read from the kept row source's dual (the approximate-kernel path's chains keep theirs
  since round 9, identified by the key of the feature map, ``BaseMSVM._row_source_key``);
  for a DC model, a reweighting and a targeted grid (round 14), from the samples whose
  weights any solve of the fit read (:func:`_path_settled`).  The probability fit,
  ReinforcedMSVM(C=10) (CPU, shared machine, one run): pendigits 7,694 samples 44.4 to
  20.3 s (17x to 7.8x one fit; 405 to 109 fits; log loss 0.0321 to 0.0322), 2,000
  samples 14.7 to 4.3 s (41x to 12x; 406 to 144 fits; log loss 0.0354 to 0.0390: 3 C no
  longer chosen there).  The levels below a settled one, refitted, moved the margins at
  held-out samples by up to 1 (on margins of median size 12) and flipped their sign at 0
  to 7 of 3,298 samples: the refits' tolerance, not the model
  (benchmarks/results/probability.md, section 7);
- a refit at the same C starts from the previous level's dual itself
  (``msvm._sequence.path_start``), whose scores the kept row source holds: no score update
  (the rescaled start of a C path restored the equalities by moving every free variable:
  3 % of the time on 7,694 pendigits samples);
- a class's chain is one estimator refitted at every level, warm-started from the previous
  level's dual and on the previous level's row source (its scores and kernel-row cache are
  kept, as along a lambda path: ``_join_path(keep_rows=True)``); a copy of the fitted
  estimator, without the row source, is kept at each level.  On the approximate-kernel path
  too (since round 9): a calibration fold's 1,000 samples are solved on the kernel rows of
  phi(X), which every level computed afresh (n = 5,000, 1,000 components: 78 of 122 s);
- on explicit features (an approximate kernel's map; the linear kernel, whose chains run on
  explicit features from 500 samples, ``msvm._plan.refit_rows``, where a fit from zero
  takes the kernel rows x_i^T X up to 2,000) a refit starts from the smoothed primal
  wherever a fit from zero would, and that primal is smoothed with bands alike for all
  samples (``msvm._primal._balanced``, round 11): with one smoothing parameter the bands
  were set by the up-weighted class (weight up to 1,000), those of the other samples 1/t
  times narrower than the tolerance needs, and the Newton steps were cut at their kinks
  (one class's chain, 200 Nystroem components, d = 20, k = 5, n = 20,000: 8 to 133 Newton
  steps a level, 18.7 s; 24.4 s with round 9's dual coordinate descent first, which
  ``msvm._plan.REFIT_DUAL_FIRST`` restores; balanced: 7 to 23 steps, 4.9 s, every level
  certified at once).  The linear kernel with d = 5, C = 10 on 5,000 samples: the
  calibration folds' 1,000-sample chains ran 90 epochs a refit on the kernel rows, now none
  (benchmarks/results/probability_scale.md, round 11);
- the chains of up to ``CHAIN_GROUP_CLASSES`` (5) classes on the same X run one after
  another on one row source (:func:`_task_chains`): a chain's first fit reuses the kernel
  rows the last chain cached and moves its scores to the start (the rows whose variables
  differ), where a chain on a row source of its own computed the same kernel rows and the
  start's scores again, k times per X.  The rows are stored in one dtype along the chains,
  the one the plan resolves for their start (``msvm._plan.resolve_cache_dtype`` at the
  refits' C, tol and weights): with ``cache_dtype='auto'``, the levels whose C / t passed
  ``FLOAT32_MAX_BOUND`` (100) asked for float64 rows and rebuilt the row source in the
  middle of every chain; at the refits' tolerance the float32 rounding of a kernel value
  (6e-8 of it) is far below the accuracy asked for.  The groups depend on the classes
  alone, so the fits are the same for every ``n_jobs``.  Pendigits (C = 10, CPU, shared
  machine, one run): 2,000 samples 4.0 to 2.9 s (11x to 8.1x one fit), 7,694 samples 17.7
  to 9.6 s (7.0x to 3.8x), the same log loss (benchmarks/results/probability.md, section
  8, for the examples and breast cancer); the probabilities move by the refits' rounding
  and tolerance only;
- the probability fit runs with one BLAS thread (``msvm._thread_pools.one_blas_thread``):
  its products are small and many, and a second OpenBLAS thread spinning on a busy core
  made a 134 x 265 by 265 x 48 product cost 7 ms of CPU instead of 0.06 ms (load 12):
  about 10 % of a fit on 400 samples;
- the weighted fits stop at ``REFIT_TOL_FACTOR`` (300) times the estimator's ``tol`` (the
  threshold of the scaled KKT residual and the relative duality gap), at most at
  ``REFIT_TOL_MAX`` (0.3): the bracketing reads only where a margin changes sign between two
  levels, and the calibration folds' fits stop at the same tolerance, so the exponent and
  the floor absorb what is systematic in the early stop. Against fits solved to the
  estimator's own tol, the uncalibrated estimate moved by 0.0001 (mean absolute difference)
  on pendigits (2,000 samples, chains 3.7 times cheaper than at tol) and by 0.0026 and
  0.0046 on breast cancer and Liu and Yuan's example 4.1.2 (400 samples, where a weighted
  fit costs about as much at any tol: its Python overhead dominates); at 10 times tol, used
  before, by less than 0.0003. A certified stop was measured and not used: the primal is
  1-strongly convex in h, so a fit with duality gap g is within sqrt(2 g) sqrt(K(x, x)) of
  the optimum at x (the intercept aside). Fits solved to the estimator's own tol certify the
  sign at 98 % of the (sample, level) pairs of breast cancer and example 4.1.2, but both
  ends of only 1 of 5 and 3,482 of 4,828 brackets (a bracket is where a margin crosses
  zero); on pendigits sqrt(2 g) at 10 times tol (7.3) is the size of the margins themselves.
  A stop that waits for the brackets to be certified would be slower than a fixed tolerance;
- the calibration folds train on at most ``CALIBRATION_TRAIN_MAX`` = 1,000 samples (a
  stratified random part of their 2/3), every other sample held out: their fits cost about
  n_train^2, and the three numbers they choose are set by the held-out samples, of which
  there are then more.  Pendigits, C = 10 (CPU, shared machine, one run): 7,694 samples
  119 to 47 s (43x to 17x one fit), log loss 0.0265 to 0.0322; 2,000 samples 17.1 to
  15.6 s (41x to 37x: 3 C is now chosen, whose chains on the full data cost more), log loss
  0.0410 to 0.0355; Liu and Yuan's examples at n = 3,000: 9 to 28 % less time, the mean
  absolute error against the truth -0.0018 to +0.0012 (benchmarks/results/probability.md,
  section 6).  Below 1,500 samples nothing changes.
  Measured and not kept: 500 (example 4.1.1 at C = 10, n = 3,000: mean absolute error
  0.0138 against 0.0120 uncapped, near the limit of +0.002);
- the kernel width a heuristic ('scale', 'median') resolved in the estimator's fit is
  passed on as a number, so it is neither recomputed in every weighted fit nor changed on
  the calibration folds (whose fits are meant to be those of the estimator on fewer samples);
- the held-out samples of a fold are scored by all the fold's fits (its own fit too)
  through one block of kernel columns, those of the union of their supports, each computed
  once, and one matrix product with their coefficients side by side
  (``_stacked_decision_values``); so is the X of ``predict_proba`` (whose own fit scores X
  itself, so that the argmax is exactly ``predict``).  With the columns added fit by fit
  to a block of all n_train columns (``KernelColumns``) and every class's margins sorted
  for one class's, the scoring took 0.50 s of pendigits' (2,000 samples) 4.4 s, now 0.25;
- a chain's refits validate X and y once (``BaseMSVM._checked_refits``: each is the fit the
  public ``fit`` makes), and :func:`fit_shape` minimizes with the exact gradient (TNC): with
  L-BFGS-B and a numerical gradient it took 40 % of a breast cancer probability fit.
  Breast cancer (398 samples): 0.57 to about 0.3 s CPU; pendigits (2,000), where the
  compiled solver dominates: 36x one fit before and after (shared, loaded machine);
- the refits are lean (round 10): every weighted refit, and the folds' own fits and fits at
  3 C, is the model step of ``fit`` alone (``BaseMSVM._refit``), without the parameters'
  validation: the estimators of the probability fit are copies of the validated estimator
  (:func:`_with_params`, :func:`_fresh_copy`: no ``clone``, whose ``get_params`` calls
  ``inspect.signature``) with C, tol, gamma and the cache storage set to values valid by
  construction; X and y are validated once per data set, the full data and each fold's
  training part (``_ChainRunner._checked``: one ``CheckedInput`` for the own fit, the fits
  at 3 C and the chains at both C factors, with one hash of X), not once per chain and fit
  (20 validations of 0.5 to 1 ms per probability fit at k = 3); and the exact intercepts
  test their remaining candidates at once and bisect the shift on Python floats
  (msvm._intercept: 0.53 to 0.35 ms per search at 400 samples, the same bits).  The fits
  are the same bit for bit.  Profile before (ReinforcedMSVM(C=1), Liu and Yuan's example
  4.1.1, n = 400, 87 fits, 0.20 s CPU): per refit about 2 ms, of which the compiled solve
  0.4 ms, the intercept search 0.5 ms, parameter validation 0.17 ms, the input checks
  0.17 ms.  Measured in one run (CPU, shared machine; benchmarks/results/probability.md,
  section 9): the examples at n = 400 27x-29x to 24x-25x one fit, breast cancer 25x to
  24x, wine 35x to 24x, digits (1,257 samples, k = 10) 7.3x to 7.0x, pendigits 2,000
  samples 8.0x to 7.8x and 7,694 samples 3.7x both; the same probabilities.  On small data a
  refit still costs 1.5 to 1.8 ms, a quarter of it the compiled solve and a fifth the
  intercept search, the rest the Python steps of a fit outside this module, about 0.1 ms
  each: with about 80 fits (34 at k = 2) the fit stays at 20x to 25x one fit (the 10x
  target of issue 25 is missed there; 0.07x to 0.2x Platt scaling);
- round 13 (``LEAN_LEVELS``; docs/probability.md, "The fixed cost of a refit"): X and y
  validated once for the whole probability fit (the own fit's ``CheckedInput`` adopted by
  the runner, :meth:`_ChainRunner.adopt`; the folds' parts are rows of its validated X,
  :meth:`_ChainRunner.fold_part`), the kernel width once per data set
  (``BaseMSVM._kernel_width``), the folds' fits without objective, penalty and duality
  gap (``BaseMSVM._decision_only``: they are read through their decision functions only),
  no DegenerateFitWarning formed for a refit, no joblib at one job, the held-out
  scoring's intercepts, margins and brackets formed at once (:func:`_stacked_ratios`,
  :func:`_decision_of`).  The same
  probabilities bit for bit; 6 to 13 % less CPU time on the small sets (wine 22x to 20x
  one fit, example 4.1.1 at n = 400 22x to 20x), the 10x target still missed there: no
  step left is more than a fifth of a refit (section 9b of the probability benchmarks).

Measured and not kept in round 10 (fewer calibration fits where a fit costs its Python
overhead more than its solve; section 9 of benchmarks/results/probability.md, 3 draws of
each small set, with the SMALL_DATA_* knobs of commit a7ce215, removed after it): the folds'
chains at C alone (48 to 51 fits instead of 77 to 85 on the examples at n = 400, 16x to 17x
one fit: the mean absolute error on example 4.1.2 at C = 1 rose by 0.0021, over the limit of
0.002, where 3 C was chosen on one draw), on every other level of the grid (breast cancer
log loss +0.0104, over 0.01) and the C factor decided on the first fold (example 4.1.1 at C
= 10 +0.0021).

Measured and not kept in the round of the shared row sources (CPU time, shared machine):
one refitted calibration fold where its held-out part has at least 1,000 samples (the
second fold's fits are a third of the time at 2,000 pendigits samples: 4.1 to 2.9 s, log
loss 0.0390 to 0.0407, where 3 C was then chosen; 7,694 samples 18.3 to 16.8 s, log loss
0.0322 to 0.0321), because on Liu and Yuan's example 4.1.2 at n = 3,000 (3 draws) the mean
absolute error against the truth rose by 0.0019 at C = 1 and by 0.0032 at C = 10, over the
limit of +0.002 (one draw's single fold gave 0.030 against 0.023); the folds' own fits
warm-started from the full fit's dual on their rows (rescaled to their weights, 2 n_train /
n): 0.46 to 0.36 s of pendigits' 2,000-sample fit, too little for a start on another
problem's variables.  Not tried: the folds' chains at a looser tol (their refits already
end after one to three solver passes on pendigits, the floor of a refit), and deciding
the C factor on the folds first (it is: the full data's chains run at the chosen factor
only).

Measured (CPU time, shared machine): ReinforcedMSVM(C=10) on 2,000 pendigits samples, one
fit 0.6 s, ``probability=True`` 145 s before these changes, 62 s with three refitted folds
(about 100x one fit; log loss 0.0392), 45 s with two (about 75x; log loss 0.0389) and 31 s
with one (about 50x; log loss 0.0461); with two and the weighted fits at 300 times tol (10)
21 s against 44 s in the same run (41x against 84x one fit, log loss 0.0410 against 0.0389);
two thirds of it are the calibration folds' chains (at C and 3 C). On the approximate-kernel
path a chain also keeps the feature map and phi(X) from one level to the next
(``BaseMSVM._fit_feature_map``): the map depends on neither y nor the weights; and every
chain and top fit on the same X (the full fit's, or a fold's for both C factors) starts with
the map and phi(X) of the own fit on that X (``BaseMSVM._kept_feature_state``): 3 maps per
probability fit instead of 1 + k + 2 (2 + 2 k), the same probabilities. With
``n_jobs`` the units of work (the folds' own and top fits, then the chains of every
(fold or full fit, factor, group of classes)) run in parallel through joblib; each is
computed from its inputs alone, so the result is the same for every ``n_jobs`` and backend (a
``joblib.parallel_backend('dask')`` context runs them on a Dask cluster). ``predict_proba``
evaluates the k * m + 1 (+ 1) fitted functions of the full fit. A DC model runs its DC
algorithm in every weighted fit, AdaptiveWeightedSVM its reweighting, TargetedLocalMSVM its
whole grid of local fits (its probabilities are those of the local classifier at the
sample's targeted value). When a class has fewer than 3 samples the cross-validation is
skipped (factor 1, a = 1, eps = 0; 1 + k m fits) with a UserWarning.

The levels are geometric, t_l = t_min^((m + 1 - l) / m) with t_min = 1e-3, so that ratios
from 1e-3 to 1 (the range that matters for the log loss) are bracketed with a constant
relative resolution.

References
----------
Wang, J., Shen, X. and Liu, Y. (2008).  Probability estimation for large-margin classifiers.
Biometrika, 95(1), 149-167.

Wu, Y., Zhang, H. H. and Liu, Y. (2010).  Robust model-free multiclass probability
estimation.  Journal of the American Statistical Association, 105(489), 424-436.
"""

import copy
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ._approx import shared_map_decision_values
from ._available import probability_method
from ._dask import chunkwise, is_dask_collection
from ._kernels import kernel_matrix
from ._level_chain import LevelState, ScaledDual
from ._level_chain import applies as level_steps_apply
from ._losses import margins as generalized_margins
from ._plan import fold_finish_overrides, fold_overrides, refit_rows, resolve_cache_dtype
from ._thread_pools import one_blas_thread
from ._validation import check_finite_decision
from ._warm_start import DualStart
from .exceptions import DegenerateFitWarning

# Smallest weight level t_1: ratios p_j / p_{j*} below it are not resolved.
SMALLEST_LEVEL = 1e-3
# A ratio r_j of a class other than the predicted one is capped here, so that the predicted
# class keeps the strictly largest probability.
_RATIO_CAP = 1.0 - 1e-9

# Folds of the cross-validation that chooses the exponent and the floor of the estimate.
CALIBRATION_FOLDS = 3
# How many of the folds are refitted (their held-out samples calibrate the estimate).
REFITTED_FOLDS = 2
# Largest training part of a refitted calibration fold (larger ones are subsampled, and every
# sample outside the part is held out: see ``calibration_splits``); None: no limit.
CALIBRATION_TRAIN_MAX = 1000
# Another C factor than the first is chosen only when it lowers the held-out log loss by
# more than this many standard errors (of the paired per-sample differences); 0: whenever
# it lowers it.
FACTOR_SE = 0.0
EXPONENT_BOUNDS = (0.25, 4.0)
# Candidate multiples of C for the weighted fits, chosen by the same cross-validation.
REFIT_C_FACTORS = (1.0, 3.0)
FLOOR_BOUNDS = (0.0, 0.5)
# The weighted fits stop at this multiple of the estimator's tol (the threshold of the KKT
# residual and of the relative duality gap), at most at REFIT_TOL_MAX.
REFIT_TOL_FACTOR = 300.0
REFIT_TOL_MAX = 0.3
# A class's chain stops at the level where its fit is settled (``_settled``): the levels
# below have the same solution.
SETTLED_CHAINS = True
# The settled rule of the fits that are sequences of solves (a DC model's, a reweighting's,
# a targeted grid's: ``_path_settled``, round 14); False: only a fit of one convex solve
# settles, as before (benchmarks' "before").
SETTLED_PATHS = True
# The chains of at most this many classes run on one row source, one after another (one
# unit of work for ``n_jobs``: ``_task_chains``).
CHAIN_GROUP_CLASSES = 5
# The fixed cost of a refit cut where it arises (round 13): sequential units of work without
# joblib, X and y validated once for the probability fit (the folds' training parts taken
# from the validated arrays), a chain's levels after its first refitted without the
# estimator's per-fit round trip (``BaseMSVM._refit_level``), the calibration folds' fits
# without the attributes nobody reads.  False restores round 12's path (the same
# probabilities: tests and the benchmark's "before").
LEAN_LEVELS = True
# The top fit of a task's chains at a C other than the own fit's (the calibration's 3 C) as
# the first lean step of their state (round 15, ``_ChainRunner._top_inline``); False: a
# refit of its own (the same probabilities: tests and the benchmark's "before").
LEAN_TOP_FITS = True

PROBABILITY_PARAMETER_CONSTRAINTS = {
    "probability": ["boolean"],
    "probability_grid": [Interval(numbers.Integral, 1, None, closed="left")],
    "n_jobs": [numbers.Integral, None],
}


def probability_levels(m, smallest=None):
    """The weight levels t_1 < ... < t_m < 1 of the other classes (geometric, from ``smallest``).

    Parameters
    ----------
    m : int
        Number of levels (``probability_grid``).
    smallest : float, default=None
        t_1; None means ``SMALLEST_LEVEL`` (1e-3).

    Returns
    -------
    levels : ndarray of shape (m,)
    """
    smallest = SMALLEST_LEVEL if smallest is None else smallest
    return smallest ** ((m - np.arange(m)) / m)


def bracket_ratios(margins, levels):
    """Estimate r_j = p_j / max_{l != j} p_l from the margins of class j along the levels.

    Parameters
    ----------
    margins : ndarray of shape (n_samples, m + 1)
        Margin f_j - max_{l != j} f_l of class j at levels t_1 < ... < t_m and, last, at
        t = 1 (the estimator's own fit), where it must be <= 0 (j is not the predicted class).
    levels : ndarray of shape (m,)
        The levels t_1 .. t_m.

    Returns
    -------
    ratios : ndarray of shape (n_samples,)
        The first sign change along the grid (from the smallest level up), placed by linear
        interpolation of the margin in log t; below the grid (no positive margin at t_1),
        t_1 / sqrt(q) with q = t_2 / t_1 (t_1 ** 1.5 for a single level).  Capped just below 1.
    """
    log_t = np.log(np.append(levels, 1.0))
    n = margins.shape[0]
    nonpositive = margins <= 0
    first = np.argmax(nonpositive, axis=1)           # index of the first level with j lost
    rows = np.arange(n)
    below = first == 0
    lo = np.maximum(first - 1, 0)
    s_lo, s_hi = margins[rows, lo], margins[rows, first]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(below, 0.0, s_lo / (s_lo - s_hi))
    frac = np.clip(np.nan_to_num(frac, nan=1.0), 0.0, 1.0)
    log_r = log_t[lo] + frac * (log_t[first] - log_t[lo])
    step = log_t[1] - log_t[0]                       # the grid step in log t (t_2 or 1 over t_1)
    log_r = np.where(below, log_t[0] - 0.5 * step, log_r)
    return np.minimum(np.exp(log_r), _RATIO_CAP)


def probabilities_from_ratios(ratios, predicted):
    """Probabilities from the ratios r_j = p_j / p_{j*} of the non-predicted classes.

    Parameters
    ----------
    ratios : ndarray of shape (n_samples, k)
        r_j for every class; the entry of the predicted class is ignored.
    predicted : ndarray of int, shape (n_samples,)
        The predicted class j* of each sample.

    Returns
    -------
    proba : ndarray of shape (n_samples, k)
        ``p_{j*} = 1 / (1 + sum_{j != j*} r_j)`` and ``p_j = r_j p_{j*}``.
    """
    R = np.array(ratios, dtype=np.float64)
    R[np.arange(len(R)), predicted] = 1.0
    return R / R.sum(axis=1, keepdims=True)


def bracketed_ratios(own_fit, chains, levels, X, n_train=None, own_stacked=False):
    """Ratios r_j = p_j / p_{j*} at X, from a fit and its weighted chains (1 at j*).

    Parameters
    ----------
    own_fit : fitted estimator
        The fit at t = 1; its argmax is the predicted class j*.
    chains : list of k lists of m fitted estimators
        For each class j, the weighted fits at the levels t_1 .. t_m.
    levels : ndarray of shape (m,)
    X : array-like of shape (n_samples, n_features)
    n_train : int, default=None
        Number of training samples of the chains' fits: their kernel columns at X are then
        computed once for all of them (:func:`_stacked_decision_values`) instead of once
        per fit.
    own_stacked : bool, default=False
        Score the own fit in the same product (a calibration fold's held-out samples); by
        default it scores X itself, so that j* is exactly ``own_fit.predict(X)``.

    Returns
    -------
    ratios : ndarray of shape (n_samples, k)
        :func:`bracket_ratios` for every class but j*, whose entry is 1.
    """
    # each fit once (a settled chain repeats its last fit at the levels below it)
    fits = list({id(est): est for chain in chains for est in chain}.values())
    mapped = _mapped_ratios(own_fit, chains, fits, levels, X)
    if mapped is not None:
        return mapped
    own_first = own_stacked and id(own_fit) not in {id(est) for est in fits}
    scored = [own_fit, *fits] if own_first else fits
    flat = _stacked_decision_values(scored, X, n_train)
    flat = [est.decision_values(X) for est in scored] if flat is None else flat
    by_fit = dict(zip(map(id, scored), flat))
    G = by_fit[id(own_fit)] if own_stacked and id(own_fit) in by_fit \
        else own_fit.decision_values(X)
    values = [[by_fit[id(est)] for est in chain] for chain in chains]
    return ratios_from_decision_values(G, values, levels)


def _mapped_ratios(own_fit, chains, fits, levels, X):
    """``bracketed_ratios`` of fits that share the own fit's feature map (the approximate
    path: ``_kept_feature_state``), phi(X) computed once per block of rows for all of them
    (``msvm._approx.shared_map_decision_values``: the values each fit's
    ``decision_values`` gives); None when they do not share it.  ``fits``: the chains' fits,
    each once."""
    if getattr(own_fit, "feature_coef_", None) is None:
        return None
    X = validate_data(own_fit, X, dtype=np.float64, order="C", reset=False,
                      accept_sparse="csr", ensure_all_finite=True)
    blocks = shared_map_decision_values([own_fit, *fits], X)
    if blocks is None:
        return None
    out = np.empty((X.shape[0], len(own_fit.classes_)))
    for rows, values in blocks:
        by_fit = dict(zip(map(id, fits), values[1:]))
        out[rows] = ratios_from_decision_values(
            values[0], [[by_fit[id(est)] for est in chain] for chain in chains], levels)
    return out


def _stacked_decision_values(estimators, X, n_train):
    """Decision values of kernel fits on the same ``n_train`` training samples, as
    ``decision_values`` computes them up to the rounding of the sum, with one kernel block
    and one matrix product for all; None when they are not such fits.

    ``decision_values`` of such a fit is K @ coef + b with K its support vectors' kernel
    columns at X.  The columns of the union of the fits' supports are computed once, in
    blocks of rows of at most the fits' ``cache_size``, and multiplied by the fits'
    coefficients side by side (zero off each fit's support): one kernel evaluation per
    (sample, support vector) instead of one per fit, and one product instead of k m
    products of width k (about 10 times faster on pendigits' held-out samples).  Before,
    the columns were added fit by fit to a block of all n_train columns (``KernelColumns``),
    which compared each fit's support vectors with the kept ones and multiplied the zero
    columns too (0.5 of pendigits' 4.4 s at 2,000 samples went to scoring).
    """
    if n_train is None or not estimators or _support_span(estimators) is None:
        return None
    first = estimators[0]
    key = (first.kernel, first.gamma_, first.degree, first.coef0)
    if callable(first.kernel) or first.kernel == "precomputed" or sp.issparse(X) or any(
            (est.kernel, est.gamma_, est.degree, est.coef0) != key or sp.issparse(
                est.support_vectors_) for est in estimators):
        return None
    X = validate_data(first, X, dtype=np.float64, order="C", reset=False,
                      ensure_all_finite=True)
    support = np.concatenate([est.support_ for est in estimators])
    union, where = np.unique(support, return_index=True)
    if len(union) and union[-1] >= n_train:
        return None
    sv = np.concatenate([est.support_vectors_ for est in estimators])
    if not np.array_equal(sv, sv[where][np.searchsorted(union, support)]):
        return None                      # not the same training samples
    widths = np.cumsum([0] + [est.dual_coef_.shape[0] for est in estimators])
    coef = np.zeros((len(union), widths[-1]))
    for est, lo, hi in zip(estimators, widths[:-1], widths[1:]):
        coef[np.searchsorted(union, est.support_), lo:hi] = est.dual_coef_.T
    F = np.empty((X.shape[0], widths[-1]))
    step = max(1, int(first.cache_size * 2 ** 20 // (8 * max(len(union), 1))))
    for start in range(0, X.shape[0], step):
        K = kernel_matrix(X[start:start + step], sv[where], *key)
        F[start:start + step] = K @ coef
    if not LEAN_LEVELS:
        return [est._decision_from_output(check_finite_decision(F[:, lo:hi] + est.intercept_))
                for est, lo, hi in zip(estimators, widths[:-1], widths[1:])]
    # every fit's intercepts added to its columns at once (the same sums), checked at once
    F += np.concatenate([est.intercept_ for est in estimators])
    check_finite_decision(F)
    return [_decision_of(est, F[:, lo:hi]) for est, lo, hi in zip(estimators, widths[:-1],
                                                                  widths[1:])]


def _decision_of(est, f):
    """``est._decision_from_output(f)`` of a block ``f`` of a wider array: the block itself
    where the output map is the identity (its values, read in any layout, are the decision
    values), else the map applied to a contiguous copy (as to the new array of
    ``f_block + intercept_`` before: a matrix product's rounding may depend on the layout)."""
    from ._base import BaseMSVM

    if type(est)._decision_from_output is BaseMSVM._decision_from_output:
        return f
    return est._decision_from_output(np.ascontiguousarray(f))


def ratios_from_decision_values(G, chain_values, levels):
    """Ratios r_j = p_j / p_{j*} from decision values alone (row by row: maps over chunks).

    Parameters
    ----------
    G : ndarray of shape (n_samples, k)
        Decision values of the estimator's own fit (t = 1); its argmax is j*.
    chain_values : list of k lists of m (or m + 1) ndarrays of shape (n_samples, k)
        For each class j, the decision values of its weighted fits at t_1 .. t_m and, when
        the weighted fits are at another C, last, of the unweighted fit at that C.
    levels : ndarray of shape (m,)

    Returns
    -------
    ratios : ndarray of shape (n_samples, k)
        :func:`bracket_ratios` for every class but j*, whose entry is 1.
    """
    if LEAN_LEVELS:
        return _stacked_ratios(G, chain_values, levels)
    own = generalized_margins(G)
    ratios = np.ones_like(G)
    for j, values in enumerate(chain_values):
        M = np.empty((G.shape[0], len(levels) + 1))
        for level, V in enumerate(values[:len(levels)]):
            # a settled chain repeats one fit's values: its margin is computed once
            M[:, level] = (M[:, level - 1] if level and V is values[level - 1]
                           else _class_margin(V, j))
        # t = 1: the own fit, or the chain's own top fit at another C (m + 1 entries)
        top = own[:, j] if len(values) == len(levels) else _class_margin(values[-1], j)
        M[:, -1] = np.minimum(top, 0.0)
        ratios[:, j] = bracket_ratios(M, levels)
    ratios[np.arange(len(G)), np.argmax(G, axis=1)] = 1.0
    return ratios


def _stacked_ratios(G, chain_values, levels):
    """:func:`ratios_from_decision_values` with each chain's margins formed at once for
    its distinct fits (one stacked array per chain: a settled chain repeats one fit) and
    every class's brackets in one call of :func:`bracket_ratios` (its rows are
    independent): the same numbers, elementwise, in 2 + 2 k NumPy steps instead of about
    k (m + 15)."""
    m, (n, k) = len(levels), G.shape
    M = np.empty((k, n, m + 1))
    own = generalized_margins(G)
    for j, values in enumerate(chain_values):
        fits = values[:m] + values[m:]             # the top fit at another C, last
        first = [i for i, V in enumerate(fits) if i == 0 or i == m or V is not fits[i - 1]]
        stack = np.stack([fits[i] for i in first])
        margins = stack[:, :, j] - np.delete(stack, j, axis=2).max(axis=2)
        which = np.cumsum([i in first for i in range(len(fits))]) - 1
        M[j, :, :m] = margins[which[:m]].T
        top = own[:, j] if len(values) == m else margins[which[m]]
        M[j, :, m] = np.minimum(top, 0.0)
    ratios = bracket_ratios(M.reshape(k * n, m + 1), levels).reshape(k, n).T.copy()
    ratios[np.arange(n), np.argmax(G, axis=1)] = 1.0
    return ratios


def _class_margin(V, j):
    """The generalized margin f_j - max_{l != j} f_l of class j alone (column j of
    ``msvm._losses.margins``, the same numbers, without sorting every row)."""
    others = np.delete(V, j, axis=1)
    return V[:, j] - others.max(axis=1)


def _support_span(estimators):
    """1 + the largest support index of kernel fits with ``support_vectors_``, else None."""
    if not all(hasattr(est, "support_vectors_") for est in estimators):
        return None
    spans = [int(est.support_.max()) + 1 for est in estimators if len(est.support_)]
    return max(spans) if spans else None


def shaped_probabilities(ratios, exponent=1.0, floor=0.0):
    """Probabilities ``(1 - eps) r^a / sum(r^a) + eps / k`` from ratios that are 1 at j*.

    Parameters
    ----------
    ratios : ndarray of shape (n_samples, k)
        r_j = p_j / p_{j*}, in (0, 1], 1 at the predicted class.
    exponent : float, default=1.0
        a > 0; a > 1 sharpens the estimate.
    floor : float, default=0.0
        eps in [0, 1): the weight of the uniform distribution mixed in.

    Returns
    -------
    proba : ndarray of shape (n_samples, k)
        Rows sum to one; the argmax is j* (both maps are increasing in r_j).
    """
    powered = np.exp(exponent * np.log(ratios))
    proba = powered / powered.sum(axis=1, keepdims=True)
    return (1.0 - floor) * proba + floor / ratios.shape[1]


def fit_shape(ratios, y_enc, sample_weight=None):
    """Exponent a and floor eps minimizing the (weighted) log loss of held-out ratios.

    The loss and its exact gradient (:func:`_shape_loss`) go to a truncated Newton method
    with bounds (scipy's TNC), from a = 1, eps = 0.01.  Before, L-BFGS-B with a
    finite-difference gradient found the same minimum (log loss within 1e-10 on breast
    cancer's held-out ratios) at 50 times the cost: about 0.1 s per call in this scipy,
    40 % of a breast cancer probability fit.

    Parameters
    ----------
    ratios : ndarray of shape (n_samples, k)
        Held-out ratios (1 at each sample's predicted class).
    y_enc : ndarray of int, shape (n_samples,)
        True class indices.
    sample_weight : ndarray of shape (n_samples,), default=None

    Returns
    -------
    exponent, floor : float
        a in [EXPONENT_BOUNDS], eps in [FLOOR_BOUNDS].
    log_loss : float
        The (weighted) mean held-out log loss at (a, eps).
    """
    from scipy.optimize import minimize

    w = np.ones(len(y_enc)) if sample_weight is None else np.asarray(sample_weight, float)
    log_r = np.log(np.asarray(ratios, dtype=np.float64))
    result = minimize(_shape_loss, np.array([1.0, 0.01]), args=(log_r, np.asarray(y_enc),
                                                                 w / w.sum()),
                      jac=True, method="TNC", bounds=[EXPONENT_BOUNDS, FLOOR_BOUNDS],
                      options={"ftol": 1e-12, "xtol": 1e-10, "gtol": 1e-10})
    return float(result.x[0]), float(result.x[1]), float(result.fun)


def _shape_loss(params, log_r, y_enc, w):
    """The weighted log loss of :func:`shaped_probabilities` at (a, eps), and its gradient.

    With s = r^a / sum_l r_l^a and p_y = (1 - eps) s_y + eps / k:
    d(-log p_y)/da = -(1 - eps) s_y (log r_y - sum_l s_l log r_l) / p_y and
    d(-log p_y)/deps = (s_y - 1/k) / p_y.
    """
    a, eps = params
    rows = np.arange(len(y_enc))
    powered = np.exp(a * log_r)
    s = powered / powered.sum(axis=1, keepdims=True)
    s_y = s[rows, y_enc]
    p_y = (1.0 - eps) * s_y + eps / log_r.shape[1]
    d_a = -(1.0 - eps) * s_y * (log_r[rows, y_enc] - np.sum(s * log_r, axis=1)) / p_y
    d_eps = (s_y - 1.0 / log_r.shape[1]) / p_y
    return -np.sum(w * np.log(p_y)), np.array([np.sum(w * d_a), np.sum(w * d_eps)])


def _refit_template(template, factor):
    """The estimator of the weighted fits: C times ``factor``, tol times REFIT_TOL_FACTOR
    (at most REFIT_TOL_MAX, but never tighter than the estimator's own)."""
    tol = max(min(template.tol * REFIT_TOL_FACTOR, REFIT_TOL_MAX), template.tol)
    return _with_params(template, C=template.C * factor, tol=tol)


def _caught(function, *args):
    """``function(*args)`` with its warnings recorded: (result, n_unconverged, others).

    A weighted fit's ``DegenerateFitWarning`` is dropped (at small t a fit that predicts j
    almost everywhere is expected), its ``ConvergenceWarning``s counted, any other warning
    returned as (category, message) for the caller to raise: a joblib worker's warnings
    would otherwise be lost.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", DegenerateFitWarning)
        result = function(*args)
    unconverged = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    others = [(w.category, str(w.message)) for w in caught
              if not issubclass(w.category, ConvergenceWarning)]
    return result, unconverged, others


def _own_fit(template, X, y, sample_weight, checked=None):
    """A cold fit of ``template`` (the estimator's own fit on a calibration fold), lean
    (``BaseMSVM._refit``); ``checked``: the ``CheckedInput`` of X and y, shared with the
    fits that follow on them (:class:`_ChainRunner`), or None."""
    est = _with_params(template, warm_start=False)
    with est._checked_refits(X, y, checked):
        return est._refit(X, y, sample_weight)


def _top_fit(template, start, X, y, sample_weight, features=None, checked=None):
    """The unweighted fit at the refits' C, warm-started from ``start`` (the own fit), lean;
    ``features``: ``start``'s feature map and phi(X) (``_kept_feature_state``), reused;
    ``checked``: as for :func:`_own_fit`."""
    est = _fresh_copy(template)._start_from(start._warm_start_state())
    if features is not None:
        est._join_path(keep_rows=True)._share_features(features)
    with est._checked_refits(X, y, checked):
        est._refit(X, y, sample_weight)
    return est._leave_path()


def _weighted_chain(template, start, X, y, sample_weight, levels, label, features=None,
                    rows=None, checked=None, kept_dual=None):
    """The weighted fits of one class along the levels, t_m first, t_1 last.

    One estimator (a copy of ``template``, ``warm_start=True``: :func:`_fresh_copy`) is
    refitted at every level
    with the samples of class ``label`` weighted by 1/t, each fit warm-started from the
    previous one's dual (the first from ``start``, the fit at t = 1) and on the previous
    one's row source (its scores and kernel-row cache: ``_join_path(keep_rows=True)``); a
    copy of the fitted estimator (without that row source) is kept at each level.  On the
    approximate-kernel path ``features`` (``start``'s ``_kept_feature_state``, or None) gives
    the chain the feature map and phi(X) of the fit it starts from: the map depends on
    neither y nor the weights, so it is fitted once for X, not once per chain.  ``rows``:
    a row source on the same X kept by an earlier fit (``_kept_rows``), whose kernel-row
    cache the chain's first fit reuses (its scores are moved to the start), or None.
    ``kept_dual``: a ``msvm._level_chain.ScaledDual`` of the chains on the same X and y
    (None: one of the chain's own), whose copies the refits of a DC model or a reweighting
    take as the dual of their first solve (``msvm._dc.chain_dual_problem``; the same values
    as its builder), with the solver's penalty and seed (``msvm._dc.kept_penalty_and_seed``).

    The refits are lean (``BaseMSVM._refit``): the template's parameters are validated once
    for the chain (by the caller, :func:`_task_chains`, once for its group), X and y once
    for the chain or, with ``checked`` (the ``CheckedInput`` of an earlier chain on the same
    X and y), once for the group; each refit is the fit the public ``fit`` makes.

    The chain stops at the level where its fit is settled (:func:`_settled`, with
    ``SETTLED_CHAINS``); the levels below hold that fit itself.

    On explicit features (an approximate kernel's map; the linear kernel, on explicit
    features where :func:`_chain_overrides` says so) a refit starts from the smoothed primal
    where a fit from zero would.  With ``msvm._plan.REFIT_DUAL_FIRST`` (round 9's rule, off
    since round 11) it runs dual coordinate descent from the previous level's dual first,
    for the start's estimated cost (``refit_start='dual first'``,
    msvm._plan.refit_dual_epochs), and goes on from the primal start only if that does not
    converge; from then on the chain's levels start from the primal at once
    (``refit_start='primal'``).

    Returns
    -------
    chain : list of m fitted estimators, t_1 first
    rows : KeptRows or None
        The row source the chain kept (``_kept_rows``), for the next chain on X.
    """
    est = _fresh_copy(template)._start_from(start._warm_start_state())._join_path(keep_rows=True)
    est._share_features(features)._take_rows(rows)
    est._plan_overrides = _chain_overrides(template, X, start)
    # the dual of a DC model's or a reweighting's first solve, kept for the chains of a task
    # (msvm._dc.chain_dual_problem)
    est._kept_dual = ScaledDual() if kept_dual is None else kept_dual
    is_label = np.asarray(y == label)

    def refit(t):
        est._refit(X, y, sample_weight * np.where(is_label, 1.0 / t, 1.0))
        fit = copy.copy(est)                # __getstate__: without the kept row source
        del fit._plan_overrides, fit._kept_dual     # the chain's, not the fitted estimator's
        fit.__dict__.pop("_chain_weights", None)    # AdaptiveWeightedSVM's chain state
        if any(step.late_primal_start for step in est.solver_plan_.steps):
            est._plan_overrides["refit_start"] = "primal"
        return fit

    with est._checked_refits(X, y, checked):    # X and y validated by the first fit only
        chain = _down_the_levels(levels, refit, lambda: _settled(est, is_label))
    rows = est._kept_rows()
    est._leave_path()
    del est._plan_overrides, est._kept_dual
    return chain, rows


def _down_the_levels(levels, fit_at, settled):
    """A chain's fits from the largest level t_m down (``fit_at(t)``: the fit at level t),
    stopping after the first fit that ``settled()`` says is also the fit of every level
    below (:func:`_settled`, with ``SETTLED_CHAINS``): those levels hold it.  Returns the m
    fits, t_1 first."""
    chain = []
    for t in levels[::-1]:
        chain.append(fit_at(t))
        if SETTLED_CHAINS and settled():
            break                           # the levels below have this fit's solution
    chain += [chain[-1]] * (len(levels) - len(chain))
    return chain[::-1]


def _chain_overrides(template, X, start):
    """The plan overrides of a chain's refits: ``refit_start='dual first'`` (see
    :func:`_weighted_chain`) and, on the linear kernel where the smoothed-primal start can run
    on explicit features, those as the row source (``msvm._plan.refit_rows``); a calibration
    fold's chains keep its route (:func:`_fold_template`)."""
    overrides = {**(getattr(template, "_plan_overrides", None) or {}),
                 "refit_start": "dual first"}
    shape = getattr(X, "shape", None)
    rows = None if shape is None or len(shape) != 2 else refit_rows(
        template.kernel, shape[0], shape[1], len(start.classes_))
    if rows is not None:
        overrides["rows"] = rows
    return overrides


def _fold_template(template, parts, runner):
    """The template of a calibration fold's fits with their plan overrides
    (``msvm._plan.fold_overrides``: on an approximate kernel's features, the smoothed-primal
    route where the weights n / n_train blow the box bound up; ``fold_finish_overrides``: on
    kernel rows, the first exact finishing step after ``msvm._plan.FOLD_FINISH_AFTER``
    epochs), or ``template`` itself (no override, or chunked fits).  The fold's own fit, its
    top fits and its chains (through :func:`_chain_overrides`) copy them from it."""
    heaviest = max((float(np.max(part[2])) for part in parts if len(part[2])), default=0.0)
    n = min((len(part[2]) for part in parts), default=0)
    approximation = getattr(template, "kernel_approximation", None)
    overrides = {**fold_overrides(approximation, template.C * heaviest, n,
                                  getattr(template, "n_components", n)),
                 **fold_finish_overrides(template.kernel, approximation, n,
                                         _n_classes(parts))}
    if not overrides or runner.fits is not runner:
        return template
    template = _with_params(template)
    template._plan_overrides = overrides
    return template


def _n_classes(parts):
    """The most classes among the training parts (X, y, sample_weight) of the folds."""
    return max((len(np.unique(part[1])) for part in parts), default=0)


def _with_params(template, **params):
    """``clone(template).set_params(**params)`` for the estimators of the probability fit:
    a :func:`_fresh_copy` given ``params``, without the ``get_params`` of ``clone`` and
    ``set_params`` (``inspect.signature``: 0.1 ms each, three per estimator).  Nothing is
    validated: the parameters are the estimator's own, validated by its fit, and those set
    here (C times a factor, tol, the resolved gamma and cache storage, warm_start, verbose,
    probability, n_threads) are valid by construction."""
    est = _fresh_copy(template)
    for name, value in params.items():
        if name not in template.__dict__:
            raise ValueError(f"{type(template).__name__} has no parameter {name!r}")
        setattr(est, name, value)
    return est


def _fresh_copy(template):
    """An unfitted copy of the unfitted ``template`` for one chain, as ``clone`` gives it:
    the parameters are shared (values no fit changes), except a ``RandomState``, which the
    fits draw their seeds from and is copied, so that every chain starts from the same
    state.  Without ``clone``'s ``get_params`` (``inspect.signature``, twice per clone:
    0.17 ms, 15 chains per probability fit)."""
    est = copy.copy(template)
    if isinstance(template.random_state, np.random.RandomState):
        est.random_state = copy.deepcopy(template.random_state)
    return est


def _task_chains(template, start, X, y, sample_weight, levels, labels, features=None,
                 checked=None):
    """The chains of the classes ``labels`` on one X (:func:`_weighted_chain`), one after
    another on one row source.

    Each chain's first fit reuses the kernel-row cache of the last chain's row source and
    moves its scores to ``start`` (the rows whose dual variables differ), where a chain on
    a row source of its own computed the same kernel rows and the start's scores again.
    The kernel rows are stored as the plan stores them for the chains' start
    (``msvm._plan.resolve_cache_dtype`` at the refits' C, tol and ``sample_weight``), at
    every level: with ``cache_dtype='auto'`` the levels whose weights pass
    ``FLOAT32_MAX_BOUND`` asked for float64 rows and rebuilt the row source in the middle
    of every chain.  At the refits' tolerance (300 times tol) the rounding of a float32
    kernel row (6e-8 of each value, 6e-4 of a score at weight 1/t_1 = 1,000) is orders of
    magnitude below the accuracy asked for.

    Returns
    -------
    chains : list of one chain (list of m fitted estimators, t_1 first) per label
    """
    dtype = resolve_cache_dtype(template.cache_dtype, template.kernel, template.tol,
                                template.C, sample_weight)
    template = _with_params(template, cache_dtype=dtype)
    if level_steps_apply(template, X):
        return _level_chains(template, start, X, y, sample_weight, levels, labels, checked)
    from ._base import CheckedInput

    checked = CheckedInput(X, y) if checked is None else checked
    rows, chains, kept_dual = None, [], ScaledDual()
    for label in labels:
        chain, rows = _weighted_chain(template, start, X, y, sample_weight, levels, label,
                                      features, rows, checked=checked, kept_dual=kept_dual)
        chains.append(chain)
    return chains


def _level_chains(template, start, X, y, sample_weight, levels, labels, checked=None,
                  top=False):
    """:func:`_task_chains` as lean steps on one kept state (msvm/_level_chain.py): the
    dual problem built once for the group's chains, each level's bounds set in place, its
    solve warm-started from the previous level's dual on the kept row source, and of each
    level kept only what the bracketing reads (``LevelState.level_fit``).  The same
    iterates as the refits of :func:`_weighted_chain`, the same settled levels.

    With ``top`` (``start`` is then the own fit, at another C than ``template``'s), the
    unweighted fit at the template's C that the chains start from is the state's first
    lean step (:func:`_lean_top`) instead of a refit of its own (:func:`_top_fit`).

    Returns
    -------
    chains : list of one chain (list of m fits, t_1 first) per label
    top : the top fit (with ``top`` only)
    """
    est = _fresh_copy(template)
    est._plan_overrides = _chain_overrides(template, X, start)
    state = LevelState(est, X, y, sample_weight, checked)
    if top:
        start = _lean_top(state, template, start, y, sample_weight)
    chains = [_level_chain(state, template, start, y, sample_weight, levels, label)
              for label in labels]
    return (chains, start) if top else chains


def _lean_top(state, template, own, y, sample_weight):
    """The unweighted fit at the template's C warm-started from ``own`` (the own fit at
    another C), as :func:`_top_fit` makes it, as the first lean step of ``state``: the same
    start (the own fit's dual rescaled, ``path_start``), seed, plan and solve, so the same
    solution; kept as a level's fit (``LevelState.level_fit``) that later fits start from
    (``_warm_start_state``).  It saves the refit's model step and a second row source on
    the same X (with its kernel rows computed again)."""
    random_state = _fresh_copy(template).random_state
    sol = state.step(sample_weight, own._warm_start_state(), random_state,
                     np.zeros(len(y), dtype=bool))
    start = DualStart(sol.alpha, sol.mu.copy(), state.est.C_, sol.problem.n_samples)
    top = state.level_fit(sol)._start_from(start)
    # the chains' first level forms its scores from scratch, as on the state of their own
    # that they had when the top fit was a refit (the kernel-row cache is kept)
    state.sequence.problem = None
    return top


def _chains_with_top(template, own, X, y, sample_weight, levels, labels, features=None,
                     checked=None):
    """(chains, top): :func:`_task_chains` of a task whose top fit is not the own fit and
    runs as the first lean step of its chains' state (``_ChainRunner._top_inline``)."""
    dtype = resolve_cache_dtype(template.cache_dtype, template.kernel, template.tol,
                                template.C, sample_weight)
    template = _with_params(template, cache_dtype=dtype)
    return _level_chains(template, own, X, y, sample_weight, levels, labels, checked,
                         top=True)


def _level_chain(state, template, start, y, sample_weight, levels, label):
    """The chain of class ``label`` as lean steps on ``state`` (:func:`_level_chains`), each
    level's solve from the previous level's dual."""
    # each chain draws its solves' seeds from a copy of the template's random_state
    random_state = _fresh_copy(template).random_state
    is_label = np.asarray(y == label)
    previous = start._warm_start_state()

    def step(t):
        nonlocal previous
        sol = state.step(sample_weight * np.where(is_label, 1.0 / t, 1.0), previous,
                         random_state, is_label)
        previous = DualStart(sol.alpha, sol.mu.copy(), state.est.C_, sol.problem.n_samples)
        return state.level_fit(sol)

    def settled():
        # the compiled level step's test where it made one (the same rule, its values)
        return _settled(state.est, is_label) if state.settled is None else state.settled

    return _down_the_levels(levels, step, settled)


def _settled(est, is_label):
    """Whether the weighted fit ``est`` is also a fit at every larger weight of the samples
    ``is_label`` (the levels below its own), so that its chain may stop.

    Only for a converged fit.  A fit that is a sequence of convex solves (a DC model's, a
    reweighting's, a targeted grid's) records the samples whose weights its path read
    (``_weight_bound_samples_``): :func:`_path_settled`.  A model fitted by one convex
    solve of its dual: :func:`_one_solve_settled`.  Any other fit (an override of the fit
    that records nothing, a chunked fit on Dask input) is never settled here.
    """
    if not getattr(est, "converged_", False):
        return False
    marks = getattr(est, "_weight_bound_samples_", None)
    if marks is not None:
        return SETTLED_PATHS and _path_settled(marks, is_label)
    return _one_solve_settled(est, is_label)


def _one_solve_settled(est, is_label):
    """The settled rule of a model fitted by one convex solve of its dual.

    The weights enter a dual only through the boxes (and group caps) of their samples'
    variables, which grow with the weight.  When no variable of those samples is at a bound
    that moves (an upper bound, a nonzero lower bound, a nonzero cap), the solution
    satisfies the optimality conditions of every larger weight with the same residual: the
    fits there are this one.  That is so once the up-weighted class is fitted with margin
    everywhere (its hinge terms inactive or at the hinge), which the hinge loss does not
    change by weighting them more.  Its intercepts are the exact ones at its own weights,
    which may differ from those at larger weights where they are not unique.
    """
    from ._base import BaseMSVM

    if (type(est)._fit_dual is not BaseMSVM._fit_dual
            or type(est)._fit_model is not BaseMSVM._fit_model):
        return False
    solved = est._solved_dual()
    if solved is None or solved[0].n_samples != len(is_label):
        return False
    problem, alpha = solved
    return not np.any(problem.at_moving_bounds(alpha)[is_label])


def _path_settled(marks, is_label):
    """The settled rule of a fit that is a sequence of convex solves: no sample of
    ``is_label`` among ``marks``, the samples whose weights some solve of the fit's path
    read (``_weight_bound_samples_``: ``msvm._dc.weighed_samples`` of every solve).

    Claim: then the refit at any larger weight of those samples, warm-started from this fit
    as a chain's next level is, takes the same path and returns this fit (each solve's
    result meets that solve's stopping conditions there with the same residual).  Let S be
    the samples ``is_label``, their weights grown by q > 1, every other weight fixed.

    1. Every bound and group cap of these duals is a multiple of its sample's weight (C w_i,
       times a utility, a reweighting's v_i, a smoothing weight), and so is a DC step's
       shift of it (C w_i beta_ij, or the cap of a truncated group).  A variable off its
       nonzero bounds stays off the q-times larger ones, one at a zero bound stays there,
       and the decision values do not involve the bounds: a point with no S-sample marked
       meets the optimality conditions of the larger weights with the same residual.
    2. A refit starts from the stored start of this fit (a DC fit's untruncated solve, a
       reweighting's first fit, every grid point's solution), which is feasible at the
       larger weights (bounds only grow) and, by 1, already a solution there.
    3. DC models (RobustMSVM, WeightedRobustMSVM with truncation; Wu and Liu 2007, Liu, Wu
       and He 2011).  Each step's linearization is read from the decision values of the
       current solution (``_dc_shift``): the same.  Its start alpha + shift - new_shift
       differs only where a sample's shift does, and the shifts of unmarked samples are
       zero: the same start, the same step problem up to S's bounds, so by 1 the same
       solution.  The loop's decisions compare the model's objective at these solutions,
       which depends on S's weights only through S's loss terms: a truncated term (a
       nonzero shift) or an active hinge (its variable at the upper bound) is marked, and
       an unmarked sample's hinges are inactive or at the hinge, zero up to the residual.
       So the loop accepts, rejects and stops as it did, at this fit (also where a chain's
       refit stops on a decrease within its tol, ``msvm._dc.LEVEL_DC_TOL``: the same
       objectives).  (The same fit is a
       DC fixed point at the larger weights: a truncated variable sits at its zero bound.)
       Where a step takes its start and linearization from the smoothed primal (grouped
       duals on explicit features, ``msvm._dc.SMOOTHED_DC``), both depend on every weight:
       every sample is marked.  Where a chain's refit starts from this fit's last step
       instead (``msvm._dc.CHAIN_DC_START``: WeightedRobustMSVM on kernel rows), that step
       with the same indicators (an unmarked sample's shift is zero) is by 1 the refit's
       first solution, and the loop reads the linearization at it as this fit's loop did
       last: it repeats, or gives the same step, which rises again and is dropped; a fit
       whose loop did not read it marks every sample (``msvm._dc.chain_dc_start``).
    4. AdaptiveWeightedSVM: the weights v of each refit are read from the decision values
       (``next_weights``): the same; each refit starts from the previous solution clipped
       to the new caps C w_i v_i, which moves a sample's variables only where its group
       exceeds that cap; such a sample is marked (at q times the cap it would not move).
       The iterative scheme stops when v repeats: the same.  A one-step chain's level whose
       weights are frozen (``msvm.weighted.FROZEN_WEIGHTS_BELOW``: v taken from the level
       above, decided by the v of the levels above alone) is one solve from the previous
       level's solution clipped to the caps, the clip's moves marked as above; the level
       whose v froze them is the start of the level below it: by 1 and 2 the same fit.
    5. TargetedLocalMSVM: the grid points are independent convex solves (the bandwidth and
       the grid are read from the targeted column alone), each started from this fit's
       solution at that point: 1 and 2 for each.

    The marks are conservative (a sample once at a moving bound anywhere on the path is
    marked); in exact arithmetic the claim holds as stated, with inexact solves it holds
    as for the one-solve rule: the refit may move within its tolerance.
    """
    return len(marks) == len(is_label) and not np.any(marks[is_label])


def _class_groups(classes):
    """The classes in groups of at most ``CHAIN_GROUP_CLASSES``, in order: the chains of
    one group are one unit of work (:func:`_task_chains`, on one row source).  The groups
    depend on the classes alone, so the fits are the same for every ``n_jobs``."""
    n_groups = -(-len(classes) // CHAIN_GROUP_CLASSES)
    return np.array_split(np.asarray(classes), n_groups)


def _n_fits(chain):
    """Number of fits made in a chain (a settled chain repeats its last fit)."""
    return len({id(est) for est in chain})


class _ChainRunner:
    """Runs the fits of the probability estimate, in parallel over joblib when asked.

    Every unit of work (an own fit, a top fit at the refits' C, the chain of one class) is
    computed from its inputs alone, never from another unit's row source, so the results
    do not depend on ``n_jobs`` nor on the order in which the units run.  Warnings of the
    units are counted (``ConvergenceWarning``) or raised again here (see :func:`_caught`).
    """

    # the fits of a unit, the rows of a fold and the ratios at its held-out rows: in memory
    # here, or by ``fits`` (Dask input: msvm._dask_probability.ChunkedFits)
    own_fit, top_fit, task_chains = (staticmethod(_own_fit), staticmethod(_top_fit),
                                     staticmethod(_task_chains))

    def __init__(self, n_jobs, fits=None):
        self.n_jobs = n_jobs
        self.unconverged = 0
        self.fits = self if fits is None else fits
        self._inputs = []

    def rows(self, X):
        """X indexable by rows (lists, array-likes, COO matrices as CSR)."""
        return X.tocsr() if sp.issparse(X) else np.asarray(X)

    def split(self, template, X, y, rows, train=None):
        """(X, y) of ``rows`` (``sklearn``'s ``_safe_split``)."""
        from sklearn.utils.metaestimators import _safe_split
        return _safe_split(template, X, y, rows, train)

    @staticmethod
    def ratios(own_fit, chains, levels, X, n_train=None):
        """:func:`bracketed_ratios` of a fold's held-out samples, the own fit scored in the
        same product as the chains (its j* need not be bit for bit its ``predict``)."""
        return bracketed_ratios(own_fit, chains, levels, X, n_train, own_stacked=True)

    def _run(self, calls):
        """The results of ``calls`` (function, *args), through joblib with ``n_jobs``."""
        from joblib import Parallel, delayed

        if len(calls) <= 1 or (LEAN_LEVELS and effective_n_jobs(self.n_jobs) == 1):
            # one job: the calls in turn, without joblib's sequential dispatch (its
            # Parallel object, batches and callbacks: 0.1 ms a call)
            results = [_caught(*call) for call in calls]
        else:
            results = Parallel(n_jobs=self.n_jobs)(delayed(_caught)(*call) for call in calls)
        out = []
        for result, unconverged, others in results:
            self.unconverged += unconverged
            for category, message in others:
                warnings.warn(message, category, stacklevel=2)
            out.append(result)
        return out

    def own_fits(self, template, parts):
        """Cold fits of ``template`` on each (X, y, sample_weight) of ``parts``."""
        return self._run([(self.fits.own_fit, template, *part, *self._checked(*part[:2]))
                          for part in parts])

    def adopt(self, checked, X, y):
        """Take the ``CheckedInput`` of the estimator's own fit on X and y (None: nothing),
        for the refits on X and y (``y`` as ``column_or_1d`` gave it back: another object
        with the same labels)."""
        served = None if checked is None or self.fits is not self else checked.serving(X, y)
        if served is not None:
            self._inputs.append(served)

    def fold_part(self, template, X, X_rows, y, rows):
        """(X, y) of a calibration fold's training part ``rows`` (``X_rows``: X indexable by
        rows); with the full data's validation adopted (:meth:`adopt`), the rows of its
        validated X, which need no validation of their own (``CheckedInput.serving``)."""
        X_part, y_part = self.split(template, X_rows, y, rows) if self.fits is self else \
            self.fits.split(template, X_rows, y, rows)
        full = next((c for c in self._inputs if c.raw[0] is X and c.raw[1] is y), None)
        served = None if full is None else full.serving(
            None, y_part, rows, pairwise=template.kernel == "precomputed")
        if served is None:
            return X_part, y_part
        self._inputs.append(served)
        return served.raw

    def _checked(self, X, y):
        """() or (checked,): the ``CheckedInput`` of in-memory X and y (the same objects),
        one for every fit on them (a fold's own fit, its top fits and its chains at every
        C factor; the full data's top fit and chains): X and y validated once for all of
        them (each fit in a joblib worker once for its unit of work).  Before, each own
        fit, top fit and task validated them (9 times per probability fit at k = 2, 1 ms
        each on breast cancer, against 4 ms for the estimator's whole fit)."""
        if self.fits is not self:
            return ()
        from ._base import CheckedInput

        for checked in self._inputs:
            if checked.raw[0] is X and checked.raw[1] is y:
                return (checked,)
        self._inputs.append(CheckedInput(X, y))
        return (self._inputs[-1],)

    def chains(self, tasks, levels):
        """For each task (refit template, own fit, X, y, sample_weight), the k chains.

        A chain is the list of the m weighted fits of one class, t_1 first, followed by the
        unweighted fit at the refits' C when it is not the own fit's (the top t = 1 of its
        brackets, the start of every chain of the task).
        """
        tops = [own if refit.C == own.C_ else None for refit, own, *_ in tasks]
        inline = [top is None and self._top_inline(task) for task, top in zip(tasks, tops)]
        need = [i for i, top in enumerate(tops) if top is None and not inline[i]]
        shared = self._shared_features(tasks)
        top_fit = self.fits.top_fit
        for i, top in zip(need, self._run([(top_fit, *tasks[i], *shared[i]) for i in need])):
            tops[i] = top
        calls = [(_chains_with_top if lean else self.fits.task_chains, refit,
                  own if lean else top, X, y, sw, levels, labels, *features)
                 for (refit, own, X, y, sw), top, features, lean in zip(tasks, tops, shared,
                                                                         inline)
                 for labels in _class_groups(own.classes_)]
        results = iter(self._run(calls))
        out = []
        for (_, own, *_), top, lean in zip(tasks, tops, inline):
            chains = []
            for _ in _class_groups(own.classes_):
                found = next(results)
                if lean:
                    found, top = found
                chains += found
            out.append([chain + ([] if top is own else [top]) for chain in chains])
        return out

    def _top_inline(self, task):
        """Whether the top fit of ``task`` (refit template, own fit, X, y, sample_weight)
        runs as the first lean step of its chains (:func:`_chains_with_top`): fits in
        memory, the chains' lean steps apply, and one group of classes (one state; more
        groups would each need the top as their start)."""
        refit, own, X = task[:3]
        return (LEAN_TOP_FITS and self.fits is self and len(_class_groups(own.classes_)) == 1
                and level_steps_apply(refit, X))

    def _shared_features(self, tasks):
        """For each task, () for chunked fits, else (features, checked): the feature map
        and phi(X) of its own fit (``_kept_feature_state``; None off the approximate-kernel
        path) for its top fit and chains on the same X, one state per own fit (the folds'
        own fits serve the chains of both C factors), and the ``CheckedInput`` of its X and
        y (:meth:`_checked`).

        Without it every chain fitted the map again (Nystroem: the landmarks' kernel, its
        eigendecomposition and phi(X)): 1 + k + 2 (2 + 2 k) maps for one fit's worth of
        inputs, 27 of them redundant at k = 5.  The refits are the same either way: the
        map is a function of X and the map's parameters (and the seed), and the key of
        ``BaseMSVM._fit_feature_map`` refuses a state that does not match.
        """
        if self.fits is not self:
            return [()] * len(tasks)
        states = {}
        for _, own, X, *_ in tasks:
            if id(own) not in states:
                states[id(own)] = own._kept_feature_state(X)
        return [(states[id(own)], *self._checked(X, y)) for _, own, X, y, _ in tasks]

    def warn_unconverged(self, name):
        """One ConvergenceWarning for all the unconverged weighted fits."""
        if self.unconverged:
            warnings.warn(f"{name}: {self.unconverged} warnings of non-convergence in the "
                          f"weighted fits of the probability estimate; increase max_iter or "
                          f"tol.", ConvergenceWarning, stacklevel=3)


def _chain_runner(n_jobs, X):
    """The runner of the weighted fits: chunked fits for Dask input (msvm/_dask_probability.py)."""
    if is_dask_collection(X):
        from ._dask_probability import ChunkedFits
        # each fit uses all workers
        return _ChainRunner(1, fits=ChunkedFits(bracketed_ratios, settle=SETTLED_CHAINS))
    return _ChainRunner(n_jobs)


def _chosen_factor(shapes, held_out):
    """The C factor of the weighted fits: the first of ``REFIT_C_FACTORS`` (the estimator's
    own C) unless another lowers the held-out log loss by more than ``FACTOR_SE`` standard
    errors of the paired per-sample differences; then the one of the lowest log loss.

    Parameters
    ----------
    shapes : dict
        For each factor, (exponent, floor, log loss) of :func:`fit_shape`.
    held_out : dict
        For each factor, (ratios, y_enc, sample_weight) of the held-out samples.

    Returns
    -------
    factor : float
    """
    first = REFIT_C_FACTORS[0]
    losses = {f: _sample_log_losses(shapes[f], *held_out[f]) for f in REFIT_C_FACTORS}
    w = held_out[first][2] / held_out[first][2].sum()
    better = []
    for f in REFIT_C_FACTORS[1:]:
        d = losses[first] - losses[f]
        gain = np.sum(w * d)
        se = np.sqrt(np.sum(w * (d - gain) ** 2) / max(len(d) - 1, 1))
        if gain > FACTOR_SE * se and gain > 0:
            better.append(f)
    return min(better, key=lambda f: shapes[f][2]) if better else first


def calibration_splits(y_enc):
    """(train, held_out) rows of the refitted calibration folds, each sorted.

    The first ``REFITTED_FOLDS`` of ``CALIBRATION_FOLDS`` stratified folds (shuffled with
    seed 0).  When their training part (2/3 of the samples) is larger than
    ``CALIBRATION_TRAIN_MAX``, each fold trains on a stratified random part of that size
    (seed: the fold's index) and holds out every other sample: the fold's fits cost about
    n_train^2, and the three numbers the folds choose (C factor, exponent, floor) are set by
    the held-out samples, of which there are then more, not by the size of the fits.
    Otherwise the held-out rows are the fold's test third, as before.

    Parameters
    ----------
    y_enc : ndarray of int, shape (n_samples,)
        Class indices (every class with at least ``CALIBRATION_FOLDS`` samples).

    Returns
    -------
    splits : list of (train, held_out) pairs of int arrays
    """
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(CALIBRATION_FOLDS, shuffle=True, random_state=0)
    splits = list(folds.split(np.zeros(len(y_enc)), y_enc))[:REFITTED_FOLDS]
    if CALIBRATION_TRAIN_MAX is None or len(splits[0][0]) <= CALIBRATION_TRAIN_MAX:
        return splits
    out = []
    for fold, (train, _) in enumerate(splits):
        kept = _stratified_subset(train, y_enc[train], CALIBRATION_TRAIN_MAX,
                                  np.random.RandomState(fold))
        out.append((kept, np.setdiff1d(np.arange(len(y_enc)), kept)))
    return out


def _stratified_subset(rows, labels, size, rng):
    """About ``size`` of ``rows`` drawn by ``rng``, each class in proportion to its count
    (at least ``CALIBRATION_FOLDS`` samples of each, or all it has), sorted."""
    classes, counts = np.unique(labels, return_counts=True)
    take = np.maximum(np.round(counts * size / len(rows)).astype(int), CALIBRATION_FOLDS)
    kept = [rng.choice(rows[labels == c], min(t, n), replace=False)
            for c, t, n in zip(classes, take, counts)]
    return np.sort(np.concatenate(kept))


def _sample_log_losses(shape, ratios, y_enc, sample_weight):
    """The held-out log loss of each sample under the estimate of ``shape`` (a, eps, _)."""
    proba = shaped_probabilities(ratios, shape[0], shape[1])
    return -np.log(proba[np.arange(len(y_enc)), y_enc])


class _HeldOutRatios:
    """The bracketed ratios of the calibration folds' held-out samples, per C factor.

    ``add`` runs the chains of some factors on the training parts of the folds (through the
    runner) and brackets the ratios of their held-out samples; ``of`` returns the ratios,
    classes and weights of the held-out samples, for :func:`fit_shape`, in the order of the
    samples (a sample held out by both of the capped folds of :func:`calibration_splits`
    counts once for each fold's ratios).
    """

    def __init__(self, template, X, y, splits, levels, runner):
        self.template, self.X, self.y = template, X, y
        self.splits, self.levels, self.runner = splits, levels, runner
        self.ratios = {}
        self.n_fits = 0

    def add(self, factors, owns, parts):
        """The chains at each of ``factors`` on the training parts of the folds (own fits,
        parts), all through one call of the runner."""
        tasks = [(_refit_template(self.template, factor), own, *part)
                 for factor in factors for own, part in zip(owns, parts)]
        results = iter(self.runner.chains(tasks, self.levels))
        for index, factor in enumerate(factors):
            ratios = self.ratios.setdefault(factor, [])
            factor_tasks = tasks[index * len(owns):(index + 1) * len(owns)]
            for (train, test), (refit, own, *_), fold_chains in zip(self.splits, factor_tasks,
                                                                    results):
                fits = self.runner.fits
                X_test, _ = fits.split(self.template, self.X, self.y, test, train)
                ratios.append((test, fits.ratios(own, fold_chains, self.levels, X_test,
                                                 n_train=len(train))))
                self.n_fits += sum(map(_n_fits, fold_chains)) - (len(fold_chains) - 1) * (
                    refit.C != own.C_)

    def of(self, factor, y_enc, sample_weight):
        """(ratios, y_enc, sample_weight) of the held-out samples, for :func:`fit_shape`."""
        rows = np.concatenate([test for test, _ in self.ratios[factor]])
        order = np.argsort(rows, kind="stable")
        ratios = np.concatenate([r for _, r in self.ratios[factor]])[order]
        rows = rows[order]
        return ratios, y_enc[rows], sample_weight[rows]


class ProbabilityMixin:
    """``probability=True``: class probabilities from weighted refits of the same model.

    The first base class of every msvm estimator.  With ``probability=True``, ``fit`` (the
    template of :class:`msvm._base.BaseMSVM`, whose probability step is
    ``_fit_probability``) fits the estimator and then, for each class j and each level t of
    :func:`probability_levels` (``probability_grid`` levels), a weighted fit of the same
    estimator with class j's samples at weight 1/t and the others at weight 1 (times the given
    sample weights), warm-started along the levels on one row source per group of
    classes: 1 + k * m fits; before them, the same on the training part of two of 3 folds (at most
    ``CALIBRATION_TRAIN_MAX`` samples each, every other sample held out), at C and at 3 C,
    whose held-out estimates choose the C of the weighted fits, an exponent and a floor of
    the estimate (at most about 5 (1 + k m) fits in all, ``n_probability_fits_``: a chain
    stops where its fit is settled; in parallel over
    ``n_jobs`` joblib workers, with the same result for every ``n_jobs``).
    ``predict_proba`` brackets, for each class, the level at which its weighted fits stop
    predicting it (Wang, Shen and Liu 2008; Wu, Zhang and Liu 2010) and turns these ratios
    into probabilities whose argmax is ``predict`` (see :mod:`msvm._probability`).
    """

    def _probability_requested(self):
        """Whether ``fit`` (the template of :class:`msvm._base.BaseMSVM`) adds the
        weighted fits of the probability estimate."""
        return bool(self.probability)

    def _fit_probability(self, X, y, sample_weight, checked=None):
        """The weighted fits and the cross-validated shape of the estimate.

        ``checked``: the ``CheckedInput`` of the estimator's own fit on X and y (or None),
        whose validated arrays serve every refit on the full data and, row by row, the
        calibration folds' training parts (with ``LEAN_LEVELS``).  Stores
        ``probability_estimators_`` (k chains of m weighted fits), ``probability_C_factor_``,
        ``probability_exponent_`` and ``probability_floor_``.
        """
        y = column_or_1d(np.asarray(y), warn=False)
        base_sw = (np.ones(len(y)) if sample_weight is None
                   else np.asarray(sample_weight, dtype=np.float64))
        levels = probability_levels(int(self.probability_grid))
        # the resolved C and kernel width: C='auto' and a heuristic gamma ('scale',
        # 'median') are not resolved again in every weighted fit, nor on the calibration folds
        width = {} if getattr(self, "gamma_", None) is None else {"gamma": self.gamma_}
        # fits in parallel joblib workers run one solver thread each (no oversubscription)
        threads = {"n_threads": 1} if effective_n_jobs(self.n_jobs) > 1 else {}
        template = clone(self).set_params(probability=False, warm_start=True, verbose=0,
                                          C=self.C_, **width, **threads)
        runner = _chain_runner(self.n_jobs, X)
        if LEAN_LEVELS:
            # its refits' warnings are dropped or counted (``_caught``): none is formed
            template._probability_refit = True
            runner.adopt(checked, X, y)
        # one BLAS thread for the many small products of the refits and the scoring (a
        # second thread spinning on a busy core made a 134 x 265 by 265 x 48 product cost
        # 7 ms of CPU instead of 0.06 ms at a load of 12); process-wide while it runs
        with one_blas_thread():
            factor, exponent, floor, n_cv_fits = self._cross_validated_shape(
                template, X, y, base_sw, levels, runner)
            refit = _refit_template(template, factor)
            [fits] = runner.chains([(refit, self, X, y, base_sw)], levels)
        for est in {id(est): est for chain in fits for est in chain}.values():
            est.__dict__.pop("_probability_refit", None)    # kept fits: as any other fit
        k = len(self.classes_)
        runner.warn_unconverged(type(self).__name__)
        self.probability_grid_ = levels
        self.probability_estimators_ = fits
        self.probability_C_factor_ = factor
        self.probability_exponent_ = exponent
        self.probability_floor_ = floor
        # the top fit at the refits' C (factor != 1) ends every chain but is one fit
        self.n_probability_fits_ = (1 + sum(map(_n_fits, fits)) - (k - 1) * (factor != 1.0)
                                    + n_cv_fits)

    def _cross_validated_shape(self, template, X, y, base_sw, levels, runner):
        """C factor of the weighted fits, exponent a and floor eps, by cross-validated log loss.

        The whole construction (own fit and weighted chains, the chains once for each factor of
        ``REFIT_C_FACTORS``) is repeated on the training part of the first
        ``REFITTED_FOLDS`` of ``CALIBRATION_FOLDS`` stratified folds (at most
        ``CALIBRATION_TRAIN_MAX`` samples: :func:`calibration_splits`), with the sample weights
        scaled by n / n_train so that the balance of loss and penalty is that of the full
        fit; for each factor the bracketed ratios of their held-out samples choose (a, eps)
        (:func:`fit_shape`), and :func:`_chosen_factor` keeps the factor of the smallest
        held-out log loss (with ``FACTOR_SE`` > 0, the estimator's own C unless another
        factor lowers it by more than that many standard errors).  Returns
        (1.0, 1.0, 0.0, 0) when a class has fewer samples than folds.

        Returns
        -------
        factor, exponent, floor : float
        n_fits : int
            Number of fits made.
        """
        classes = self.classes_
        y_enc = np.searchsorted(classes, y)
        if np.bincount(y_enc, minlength=len(classes)).min() < CALIBRATION_FOLDS:
            warnings.warn(f"{type(self).__name__}: a class has fewer than "
                          f"{CALIBRATION_FOLDS} samples; the probability estimate is not "
                          f"cross-validated (C factor 1, exponent 1, floor 0).", UserWarning)
            return 1.0, 1.0, 0.0, 0
        X_rows = runner.fits.rows(X)
        splits = calibration_splits(y_enc)
        parts = []
        for train, _ in splits:
            X_train, y_train = runner.fold_part(template, X, X_rows, y, train)
            parts.append((X_train, y_train, base_sw[train] * (len(y) / len(train))))
        if LEAN_LEVELS:
            # the folds' fits are read through their decision functions alone
            template = _with_params(template)
            template._fold_fit = True
        template = _fold_template(template, parts, runner)
        owns = runner.own_fits(template, parts)
        held = _HeldOutRatios(template, X_rows, y, splits, levels, runner)
        held.add(REFIT_C_FACTORS, owns, parts)
        held_out = {f: held.of(f, y_enc, base_sw) for f in REFIT_C_FACTORS}
        shapes = {f: fit_shape(*held_out[f]) for f in REFIT_C_FACTORS}
        factor = _chosen_factor(shapes, held_out)
        exponent, floor, _ = shapes[factor]
        return float(factor), exponent, floor, len(owns) + held.n_fits

    @probability_method
    @chunkwise
    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, k), in the order of ``classes_``.

        Estimated from the weighted fits made with ``probability=True`` (at
        ``probability_C_factor_`` times C), shaped by the cross-validated
        ``probability_exponent_`` and ``probability_floor_`` (the method is
        in the documentation page "Class probabilities"); the argmax of each row is
        ``predict(X)``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs (the kernel with the training inputs when ``kernel='precomputed'``).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "probability_estimators_")
        fits = self.probability_estimators_
        ratios = bracketed_ratios(self, fits, self.probability_grid_, X, n_train=_support_span(
            [est for chain in fits for est in chain]))
        return shaped_probabilities(ratios, self.probability_exponent_, self.probability_floor_)

    @probability_method
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))

