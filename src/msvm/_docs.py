"""Docstring pieces shared by the estimators (filled in by :func:`fill_doc`)."""

import inspect

KERNEL_PARAMETERS = """\
    kernel : {'linear', 'poly', 'rbf', 'precomputed'} or callable, default='rbf'
        Kernel. A callable ``kernel(A, B)`` returns the Gram matrix between the rows of A and B.
    degree : int, default=3
        Degree of the 'poly' kernel ``(gamma <x, x'> + coef0) ** degree``.
    gamma : {'scale', 'auto', 'median'} or float, default='scale'
        Kernel coefficient of 'rbf' (``exp(-gamma ||x - x'||^2)``) and 'poly'. 'scale' is
        ``1 / (n_features * X.var())``, 'auto' is ``1 / n_features``, 'median' is
        ``1 / (2 sigma^2)`` with sigma the median between-class pairwise distance (the papers'
        heuristic).  The resolved value is ``gamma_``.
    coef0 : float, default=0.0
        Independent term of the 'poly' kernel.  The dual is convex only for a positive
        semidefinite kernel: 'poly' with a negative coef0 (and any precomputed or callable
        kernel) is tested on the training Gram matrix (on 2000 random samples above 5000)
        and refused, naming its smallest eigenvalue, when it is indefinite.
    tol : float, default=1e-3
        Stop when the scaled KKT residual of the dual (see ``kkt_residual_``) is below tol
        and the relative duality gap (``duality_gap_`` over the objective) is below
        ``max(tol, 1e-8)``, so that ``objective_`` is within that relative distance of the
        optimum of the (convex) problem solved.  Where the rounding of the scores exceeds
        tol (a very large C on a kernel with large entries), a sample's violation counts
        within its rounding floor instead and the duality gap decides; ``solver_plan_``
        then names the floor and ``kkt_residual_`` may exceed tol.
    max_iter : int, default=10000
        Maximum number of solver epochs (coordinate descent) or of steps / n_samples
        (kernel SMO), counting every augmented-Lagrangian round; it bounds the whole
        solve.  Reaching it raises a ``ConvergenceWarning``.
    cache_size : float, default=200
        Kernel row cache size in MB: fitting never holds more kernel rows than this.
    cache_dtype : {'auto', 'float64', 'float32'}, default='auto'
        Storage of the cached kernel rows.  'float32' halves the cache memory per row,
        doubling how many kernel rows ``cache_size`` MB holds (as libsvm's cache does);
        scores and sums stay in float64.  The kernel values are then rounded to single
        precision (a relative change of at most 6e-8), so the problem solved is that of the
        rounded kernel.  'auto' is 'float32' for the RBF kernel when ``tol >= 1e-4`` (the
        default tol) and C times the largest sample weight is at most 100, and 'float64'
        otherwise: for tighter tols the solution should be that of the exact kernel, and
        large dual variables (large C or weights) multiply the rounding of the kernel.
    shrinking : bool, default=True
        Whether to shrink samples whose dual variables sit firmly at their bounds.  The
        coordinate-descent path (the linear kernel above 2000 samples) leaves them out of
        its epochs; the kernel SMO path, which works on a working set of the most violating
        samples (at most 256, or 512 when the row cache holds under half the kernel rows or
        the samples times the classes reach 200,000; never more than the row cache holds),
        leaves them out of its scans for the working set (libsvm's rule; a sample with a
        group at its cap is never left out).  Both look at every sample again before they
        declare convergence, so shrinking changes the path, not the solution.
    warm_start : bool, default=False
        Start the next ``fit`` from the previous fit's dual solution, rescaled by
        ``C / C_previous`` (every box is proportional to C, so it stays feasible): a path
        over C (as in ``msvm.model_selection.TuningSetSearch``) solves each fit from the
        last one.  Used when the training data keep their shape; a fit that raises discards
        it with the other fitted attributes.
    random_state : int, RandomState instance or None, default=None
        Seed of the coordinate order of the coordinate-descent path (the kernel SMO path is
        deterministic) and of the feature map of ``kernel_approximation`` (its landmarks or
        random frequencies).
    verbose : bool or int, default=False
        0 (False) prints nothing.  1 (True) prints one line per convex solve of the fit (the
        single solve, each DC step, each reweighting, each grid point) with its objective,
        KKT residual and the time elapsed since the fit's solves started, and, during a long
        solve, a line every 10 s (the elapsed time, the epochs of the running solve, its
        current violation and its dual objective, an estimate of the objective, from the
        solver's periodic signal check).  2 also prints the solver's internals (its rounds
        and residuals).
    class_weight : dict, 'balanced' or None, default=None
        Class weights, multiplied into the sample weights of ``fit``: sample i weighs
        ``sample_weight[i] * class_weight[y_i]``, so that a fit with class_weight equals the fit
        with those sample weights.  A dict maps labels of y to finite, nonnegative weights (a
        class it omits keeps weight 1; a label that is not a class of y is refused).
        'balanced' is ``n_samples / (n_classes * np.bincount(y))`` (scikit-learn's
        ``compute_class_weight``; it counts samples, not sample weights).  None weighs every
        class 1.
    intercept_solver : {'exact', 'linprog'}, default='exact'
        How the intercepts of the fitted function are computed once the functions h are
        fixed (they minimize the loss part of the objective).  'exact': a breakpoint search
        over the piecewise-linear loss, O(n k log(n k)), where every loss term involves one
        class and the intercepts sum to zero, and the solver's KKT multipliers otherwise.
        'linprog': the same minimization written as a linear program from the model's dual
        description and solved by ``scipy.optimize.linprog(method='highs')``, for every
        model with free intercepts (the intercept step of the papers; TargetedLocalMSVM's
        intercept is a penalized constant feature, which this option does not change).  It
        reaches the same objective (to rounding) where the exact search applies and may pick
        other intercepts where the optimum is not unique, at a much larger cost (the linear
        program has n k variables: about a minute of CPU at n = 20000, k = 3, where the
        search takes milliseconds).
    n_threads : int, default=1
        Threads of the kernel solver (the working-set SMO path): the kernel rows of a
        working set, the update of every sample's scores after it and the scan for the next
        working set are split between them by samples.  The fit is the same to the last bit
        for every n_threads (each value is computed by one thread with the same operations
        in the same order).  -1 uses every processor, -2 all but one, and so on.  One
        thread by default, like scikit-learn's estimators (whose ``n_jobs`` defaults to
        one); ``n_jobs`` is separate: the probability fits (and ``TuningSetSearch``'s paths)
        in parallel joblib workers, each of which then runs its fits on one thread.  The
        rest of a fit (the working set's own SMO steps, the coordinate-descent path of
        explicit features, prediction) runs on one thread, so the speed-up is below
        n_threads (benchmarks/results/threads.md).  Without POSIX threads (Windows) the
        solver runs one thread, with a warning when more are asked.
"""

DC_PARAMETERS = """\
    dc_tol : float, default=1e-6
        The DC algorithm stops when one step lowers the objective by less than
        ``dc_tol * max(1, |objective|)`` (or when the linearization repeats).
    max_dc_iter : int, default=100
        Maximum number of DC steps; reaching it raises a ``ConvergenceWarning``.
"""

DC_NOTES = """\
    Degenerate fits at small C: a truncated loss is bounded, and with free intercepts a
    constant classifier costs no penalty (predicting one class everywhere costs only the
    loss's bound on each sample of the other classes).  When C is small and the classes
    overlap, that is lower than the objective of any nonconstant fit, so the DC algorithm
    (correctly) ends at the constant classifier, every sample of all but one class truncated
    and no support samples.  This is the model at that C, not a solver failure; ``fit`` then
    raises a :class:`~msvm.exceptions.DegenerateFitWarning`.  Remedies: a larger C, less
    truncation, or C tuned on held-out data with
    :class:`msvm.model_selection.TuningSetSearch` (as the papers choose lambda = 1 / (n C) on
    a tuning set).
"""

PROBABILITY_PARAMETERS = """\
    probability : bool, default=False
        Also estimate class probabilities (``predict_proba``, ``predict_log_proba``) from
        weighted refits of this model (Wang, Shen and Liu 2008; Wu, Zhang and Liu 2010): for
        each class j and each of ``probability_grid`` weight levels t, a fit with class j's
        samples weighted by 1/t, warm-started along the levels; the same on the training part
        of two of 3 folds (2/3 of the samples, at most 1,000), at C and at 3 C, chooses by
        held-out log loss the C of these fits, an exponent and a floor of the estimate.
        ``fit`` makes at most ``5 * (1 + n_classes * probability_grid)`` fits
        (``n_probability_fits_``), each weighted fit warm-started on the previous one; on
        exact kernels a class's chain stops at the level where its fit no longer changes
        (ReinforcedMSVM at C = 10 on pendigits: about 8 times the CPU time of one fit on
        7,694 samples, 12 times on 2,000; ``n_jobs`` runs the fits in parallel).  The
        argmax of the probabilities is ``predict``.  The method and its cost are in the
        documentation page "Class probabilities".
    probability_grid : int, default=8
        Number m of weight levels per class (geometric from 1e-3 to 1); the cost of the
        probability fits is about proportional to m.
    n_jobs : int, default=None
        Number of joblib workers for the fits of the probability estimate (the calibration
        folds' fits, then one chain of weighted fits per class, fold and C factor);
        ``None`` is 1 unless in a ``joblib.parallel_backend`` context, -1 all processors.
        The probabilities are the same for every ``n_jobs`` and backend; a
        ``joblib.parallel_backend('dask')`` context runs the fits on a Dask cluster.  Only
        used with ``probability=True``.
"""

PROBABILITY_ATTRIBUTES = """\
    probability_grid_ : ndarray of shape (probability_grid,)
        The weight levels t of the probability fits (``probability=True`` only).
    probability_C_factor_ : float
        C of the weighted fits divided by C, 1 or 3, chosen by the log loss of two held-out
        thirds of the samples (``probability=True`` only).
    probability_exponent_ : float
        Exponent a of the ratios in the probability estimate, in [0.25, 4], chosen by the
        log loss of two held-out thirds of the samples (``probability=True`` only).
    probability_floor_ : float
        Weight eps of the uniform distribution mixed into the estimate, in [0, 0.5], chosen
        with ``probability_exponent_`` (``probability=True`` only).
    n_probability_fits_ : int
        Number of fits made by ``fit``: at most ``1 + k m + 2 (2 + 2 k m)`` with
        k = n_classes and m = ``probability_grid``, plus one when ``probability_C_factor_``
        is 3 (``probability=True`` only; at most ``1 + k m`` when a class has fewer than 3
        samples and the cross-validation is skipped).  Fewer where a chain of weighted fits
        stopped at a settled level, whose fit then serves the levels below.
"""

APPROXIMATION_PARAMETERS = """\
    kernel_approximation : {'nystroem', 'rff'} or None, default=None
        None solves the exact kernel problem.  'nystroem' and 'rff' replace the kernel by the
        inner products of ``n_components`` explicit features phi(x) (Nystroem landmarks; random
        Fourier features, 'rbf' only) and fit the linear model on them, so that a fit scales to
        millions of samples and prediction costs O(n_components) per sample.  The map is
        fitted on the training inputs (seeded by ``random_state``), stored in
        ``feature_map_`` and applied to new inputs in chunks of rows.  The problem solved,
        hence ``objective_``, is the model's objective for the approximate kernel
        ``phi(x)^T phi(x')``.  Not with kernel='precomputed'; 'rff' with any kernel other than
        'rbf' is refused.
    n_components : int, default=1000
        Number of features of the approximation: landmarks of 'nystroem' (at most n_samples:
        a larger value is clipped to n_samples with a UserWarning; landmark eigenvalues below
        1e-12 of the largest are dropped, so ``n_components_`` can be smaller) or random
        frequencies of 'rff'.
    landmarks : {'uniform', 'kmeans++'}, default='uniform'
        How 'nystroem' picks its landmarks among the training inputs: a uniform sample without
        replacement, or k-means++ seeding (each next landmark drawn with probability
        proportional to its squared distance to those chosen, on at most 50,000 training
        rows; no Lloyd iterations).
"""

APPROXIMATION_ATTRIBUTES = """\
    feature_map_ : object
        The fitted feature map phi (``kernel_approximation`` only): a ``NystroemMap``
        (``landmarks``, ``normalization``) or a ``FourierMap`` (``weights``, ``offsets``) of
        ``msvm._approx``, with ``transform(X)``.
    n_components_ : int
        Number of features of ``feature_map_`` (``kernel_approximation`` only).
    feature_coef_ : ndarray of shape (n_outputs, n_components_)
        ``h(x) = feature_coef_ @ phi(x)`` (``kernel_approximation`` only; ``coef_`` is not
        set).  ``dual_coef_`` then describes h through the approximate kernel
        ``phi(x)^T phi(x')`` and the support samples ``X[support_]`` (no
        ``support_vectors_`` is kept: a copy of X at a large n).
"""

PLAN_ATTRIBUTES = """\
    solver_plan_ : msvm._plan.SolvePlan
        Which algorithm solved the fit (its ``str`` says it in one line): the row source
        (``rows``: 'linear rows', 'explicit features', 'kernel cache' or 'precomputed'), the
        storage of cached kernel rows (``cache_dtype``), the rules for the inner solver and
        the smoothed-primal start, and in ``steps`` what each convex solve ran (inner solver
        'smo' or 'cd', the SMO working-set bound, whether it started from the smoothed
        primal).  ``clusters``: the number of k-means clusters on which the fit's dual was
        solved for the start of its first solve (the divide-and-conquer start of Hsieh, Si
        and Dhillon 2014, made for computed-kernel fits of the per-class-hinge models from
        60,000 samples; 0: none).  ``verbose >= 1`` prints it once per fit.
"""

FUNCTION_ATTRIBUTES = """\
    classes_ : ndarray of shape (k,)
        Class labels; slot j of every matrix below is ``classes_[j]``.
    C_ : float
        The C of the fit: ``C`` as given, or its value for ``C='auto'``.
    n_features_in_ : int
        Number of input features (training samples for 'precomputed').
    coef_ : ndarray of shape (k, n_features)
        ``h_j(x) = <coef_[j], x>`` (linear kernel only).
    intercept_ : ndarray of shape (k,)
        The intercepts b (they sum to zero).
    dual_coef_ : ndarray of shape (k, n_SV)
        ``h_j(x) = sum_s dual_coef_[j, s] K(x, x_s)`` over the support samples
        ``x_s = X[support_][s]`` (``support_vectors_[s]`` where it is kept).
    support_ : ndarray of shape (n_SV,)
        Indices of training samples with a nonzero dual variable.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Those samples, for the kernel expansions only ('rbf', 'poly', a callable; without
        ``kernel_approximation``).  Absent for 'precomputed' and for the fits given by
        explicit weights, ``kernel='linear'`` (``coef_``) and ``kernel_approximation``
        (``feature_coef_``): at a small C nearly every sample is a support sample, so it
        would be a copy of the training data; ``X[support_]`` gives them.
    n_support_ : ndarray of shape (k,)
        Number of support samples of each class.
    objective_ : float
        The objective above evaluated at the fitted function.
    kkt_residual_ : float
        Final scaled KKT residual of the (last) dual solve: the largest projected-gradient
        violation (in margin units) or equality violation (relative to the largest box bound),
        also where the rounding floor let the stopping rule pass over it (see ``tol``).
    duality_gap_ : float
        Duality-gap certificate of the (last) convex solve at the fitted intercepts: its
        primal objective minus the dual's Lagrangian, plus a bound on what the equality
        residual contributes.  For a convex model ``objective_ - duality_gap_`` is a lower
        bound of the optimum (up to that residual bound), so ``duality_gap_ / objective_``
        bounds the relative error of ``objective_``; for the DC models it certifies the last
        convex step.
    gamma_ : float or None
        Resolved kernel coefficient.
    converged_ : bool
        Whether the fit converged: ``stop_reason_ == 'tol'``.  A fit that did not raised a
        ``ConvergenceWarning``.
    stop_reason_ : str
        How the fit stopped: 'tol' (converged), 'max_iter' (a solve reached ``max_iter``),
        'gap_floor' (the duality gap stayed above tol at the limit of double precision),
        'max_dc_iter' (the DC algorithm reached ``max_dc_iter`` steps), 'dc_objective_rose'
        (an inexact DC step raised the objective; the fit keeps the previous step) or
        'max_reweight' (the iterative weights still changed after ``max_reweight`` refits).
        A loop around the solver that stopped early names the stop; otherwise the last
        solve that did.
""" + PLAN_ATTRIBUTES

DC_ATTRIBUTES = """\
    dc_objectives_ : ndarray of shape (n_iter_,)
        The objective after each convex solve: the first entry is that of the untruncated
        solution the DC algorithm starts from, the others follow its steps.  The start (of
        a fit from zero; a ``warm_start`` refit's start is solved to ``tol``) and the early
        steps are solved loosely (tol 1e-2: they only place the linearization), the later
        ones and the returned function to ``tol``.
    truncated_ : ndarray of bool, shape (n_samples,)
        Training points with a loss term on the flat (truncated) part at the solution.
    n_iter_ : int
        Number of convex solves: 1 (the untruncated start) plus the DC steps taken.
    n_solver_iter_ : int
        Solver epochs summed over all the convex solves.
"""


# the C of the sum-to-zero per-class-hinge models (ReinforcedMSVM, RobustMSVM)
C_SUM_TO_ZERO = """\
    C : float or 'auto', default='auto'
        Weight of the loss (``C = 1 / (n lambda)`` in the paper's scaling); a number is used
        as given.  ``'auto'`` means ``C = k``, the number of classes, resolved at fit into
        ``C_`` (``objective_`` is the objective at ``C_``).  Why k: the sum-to-zero coding
        asks for the gap f_y - f_j = k (targets f_y = k - 1, f_j = -1), and a sample whose
        variables sit at their bounds moves that gap by C K(x, x_i), so C = k asks of each
        unit of kernel weight what ``SVC(C=1)`` asks (a gap of 2 for 2 C K(x, x_i)); for
        k = 2 the (untruncated) fit is exactly ``SVC(C=1)``'s.  See the guide's section on
        the defaults.
"""

# the C of the losses asking for a gap of 1 (the weighted margin models)
C_GAP_ONE = """\
    C : float or 'auto', default='auto'
        Weight of the loss (``C = 1 / (n lambda)`` in the paper's scaling); a number is used
        as given.  ``'auto'`` means ``C = 1`` for every k, resolved at fit into ``C_``: this
        loss asks for a gap of 1 between the classes' functions, and a sample whose
        variables sit at their bounds moves it by at least C K(x, x_i), so C = 1 already
        asks of each unit of kernel weight no more than ``SVC(C=1)`` does.  (The
        per-class-hinge models use C = k or k - 1.)
"""


def fill_doc(cls):
    """Replace the ``{kernel_parameters}``-style fields of a class docstring with the pieces
    above."""
    pieces = {"{kernel_parameters}": KERNEL_PARAMETERS, "{dc_parameters}": DC_PARAMETERS,
              "{function_attributes}": FUNCTION_ATTRIBUTES,
              "{plan_attributes}": PLAN_ATTRIBUTES, "{dc_attributes}": DC_ATTRIBUTES,
              "{dc_notes}": DC_NOTES,
              "{probability_parameters}": PROBABILITY_PARAMETERS,
              "{probability_attributes}": PROBABILITY_ATTRIBUTES,
              "{approximation_parameters}": APPROXIMATION_PARAMETERS,
              "{approximation_attributes}": APPROXIMATION_ATTRIBUTES,
              "{c_sum_to_zero}": C_SUM_TO_ZERO, "{c_gap_one}": C_GAP_ONE}
    doc = cls.__doc__
    for field, text in pieces.items():
        doc = doc.replace("    " + field + "\n", text)
    # the shared kernel entry states default='rbf'; say the class's own default
    kernel = inspect.signature(cls.__init__).parameters.get("kernel")
    if kernel is not None and kernel.default != "rbf":
        doc = doc.replace("callable, default='rbf'", f"callable, default={kernel.default!r}")
    cls.__doc__ = doc
    return cls
