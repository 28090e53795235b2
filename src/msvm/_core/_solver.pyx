# Design
# ======
# One dual solver for every model of msvm.  A model is data: a `DualProblem` (see
# msvm/_problem.py) lists, per dual variable v, the sample i(v) it belongs to, its direction
# d_v in class-slot space (at most two nonzero slots: +-e_j for the per-class hinges of the
# Lee-Lin-Wahba / reinforced / truncated losses, e_j - e_l for the generalized-margin hinges),
# its linear term a_v, its box [lo_v, hi_v] and optionally a group (a contiguous run of one
# sample's variables) with a cap sum_{v in g} alpha_v <= cap_g.  The problem solved is
#
#     minimize   D(alpha) = 1/2 || sum_v alpha_v (M^{1/2} d_v) K(x_{i(v)}, .) ||^2 - sum_v a_v alpha_v
#     subject to lo <= alpha <= hi,  group caps,  and (if `equality`) P c(alpha) = 0,
#
# with c(alpha) = sum_v alpha_v d_v, P = I - 11^T/k and the slot metric M = kappa P
# (kappa = 1 for sum-to-zero models, k/(k-1) for the angle-based simplex geometry).  It is the
# dual of   min 1/2 ||h||^2 + sum_v [a_v + <d_v, b + h(x_i)>]_+ -type problems whose unpenalized
# intercepts b (sum-to-zero) create the k-1 equalities P c = 0.
#
# Method: augmented Lagrangian on the equalities (multiplier mu, in range(P), penalty rho); the
# inner problems (box/group constraints only) are solved on one of two paths:
#
# * kernel problems whose directions have coefficients +-1 on one or two slots (the
#   Lee-Lin-Wahba / reinforced / truncated, Weston-Watkins and generalized-margin layouts, their
#   DC steps, with or without group caps): working-set SMO (_smo.pxi).  An O(n k) scan picks
#   the q most violating samples; a pair/single/group-pair SMO solves the subproblem on their
#   q x q kernel block; the scores of all samples are then updated once with the rows of the
#   samples that changed.  The working set plays the part of shrinking: kernel rows and
#   steps are spent on violating samples only;
# * everything else (the linear kernel with explicit weights above 2000 samples, directions
#   with other coefficients): randomized dual coordinate descent over samples (all variables
#   of one sample share one kernel row or one x_i), LIBLINEAR-style shrinking with a final
#   unshrunk pass, and exact pair steps inside groups whose cap is active.
#
# The current scores F = K U are held by a RowSource (_rows.pxi): explicit weights for the
# linear kernel (O(d k) per sample update) or explicit F with kernel rows from a Gram matrix or
# an LRU row cache.  At the end b = -mu (the KKT multiplier of the equalities) is the intercept
# up to tol; the Python layer makes it exact for the fitted h (msvm/_intercept.py).
#
# The residual reported is max(largest projected-gradient violation (margin units), largest
# equality violation |P c|_inf divided by the largest box bound).  Everything below the Python
# entry point runs without the GIL.

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport malloc, free

import numpy as np

include "_rows.pxi"

# Largest working set (samples) of the kernel SMO path; never more than the row cache holds.
WORKING_SET = 256


cdef inline unsigned long long _rng_next(unsigned long long* state) noexcept nogil:
    # xorshift64*
    cdef unsigned long long x = state[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    state[0] = x
    return x * 2685821657736338717ULL


cdef struct Prob:
    int n, k, nv
    const int* ptr
    const int* s1
    const double* c1
    const int* s2
    const double* c2
    const double* lin
    const double* lo
    const double* hi
    const int* grp
    const double* cap
    double kappa
    int equality


cdef struct State:
    double* alpha
    double* gsum      # per group: sum of alpha
    double* c         # k: sum_v alpha_v d_v
    double* s         # k: mu + rho * P c  (the intercept estimate is -s)
    double* mu        # k
    double rho


include "_smo.pxi"


cdef inline double _grad(const Prob* p, State* st, int v, const double* Fi, double sumF) noexcept nogil:
    cdef int j1 = p.s1[v], j2 = p.s2[v]
    cdef double c1 = p.c1[v], c2 = 0.0, dF, ds
    dF = c1 * Fi[j1]
    ds = c1 * st.s[j1]
    if j2 >= 0:
        c2 = p.c2[v]
        dF += c2 * Fi[j2]
        ds += c2 * st.s[j2]
    return p.kappa * (dF - (c1 + c2) * sumF / p.k) - p.lin[v] + ds


cdef inline double _upper(const Prob* p, State* st, int v) noexcept nogil:
    cdef double ub = p.hi[v]
    cdef int g = p.grp[v]
    cdef double room
    if g >= 0:
        room = p.cap[g] - st.gsum[g] + st.alpha[v]
        if room < ub:
            ub = room
    return ub


cdef inline void _move(const Prob* p, State* st, int v, double delta, double Kii,
                       double* Fi, double* sumF, double* du) noexcept nogil:
    """alpha_v += delta and every quantity derived from it (local scores, c, s, group sums)."""
    cdef int j1 = p.s1[v], j2 = p.s2[v], j
    cdef double c1 = p.c1[v], c2 = 0.0, sd
    st.alpha[v] += delta
    du[j1] += delta * c1
    Fi[j1] += Kii * delta * c1
    st.c[j1] += delta * c1
    if j2 >= 0:
        c2 = p.c2[v]
        du[j2] += delta * c2
        Fi[j2] += Kii * delta * c2
        st.c[j2] += delta * c2
    sd = c1 + c2
    sumF[0] += Kii * delta * sd
    if p.equality:
        st.s[j1] += st.rho * delta * c1
        if j2 >= 0:
            st.s[j2] += st.rho * delta * c2
        if sd != 0.0:
            for j in range(p.k):
                st.s[j] -= st.rho * delta * sd / p.k
    if p.grp[v] >= 0:
        st.gsum[p.grp[v]] += delta


cdef inline double _pnorm2(const Prob* p, int v) noexcept nogil:
    """||P d_v||^2."""
    cdef double c1 = p.c1[v], c2 = 0.0
    if p.s2[v] >= 0:
        c2 = p.c2[v]
    return c1 * c1 + c2 * c2 - (c1 + c2) * (c1 + c2) / p.k


cdef inline double _pair_pnorm2(const Prob* p, int a, int b) noexcept nogil:
    """||P (d_b - d_a)||^2 for two variables of one sample."""
    cdef double e[64]
    cdef int j
    cdef double tot = 0.0, sq = 0.0
    for j in range(p.k):
        e[j] = 0.0
    e[p.s1[b]] += p.c1[b]
    if p.s2[b] >= 0:
        e[p.s2[b]] += p.c2[b]
    e[p.s1[a]] -= p.c1[a]
    if p.s2[a] >= 0:
        e[p.s2[a]] -= p.c2[a]
    for j in range(p.k):
        tot += e[j]
        sq += e[j] * e[j]
    return sq - tot * tot / p.k


cdef double _visit(const Prob* p, State* st, RowSource src, int i, double* Fi, double* du,
                   double PGmax_old, double PGmin_old, double* PGmax_new, double* PGmin_new,
                   int* shrinkable) noexcept nogil:
    """One coordinate-descent visit of sample i. Returns the largest |projected gradient|."""
    cdef int v, j, a0 = p.ptr[i], a1 = p.ptr[i + 1], g, va, vb, w
    cdef double sumF = 0.0, Kii = src.diag(i), gr, pg, ub, lo, av, H, new, viol = 0.0
    cdef double ga, gb, t, curv, lim
    cdef int changed = 0, all_shrink = 1
    src.get_scores(i, Fi)
    for j in range(p.k):
        sumF += Fi[j]
        du[j] = 0.0
    for v in range(a0, a1):
        lo = p.lo[v]
        if p.hi[v] <= lo:
            continue
        gr = _grad(p, st, v, Fi, sumF)
        ub = _upper(p, st, v)
        av = st.alpha[v]
        pg = 0.0
        if ub <= lo:
            # a full group leaves this variable no room of its own: only the pair steps
            # inside the group below can move it, and they measure its violation
            all_shrink = 0
            continue
        if av <= lo:
            if gr > PGmax_old:
                continue
            all_shrink = 0
            if gr < 0.0:
                pg = gr
        elif av >= ub:
            if gr < PGmin_old and p.grp[v] < 0:
                continue
            all_shrink = 0
            if gr > 0.0:
                pg = gr
        else:
            pg = gr
            all_shrink = 0
        if pg > PGmax_new[0]:
            PGmax_new[0] = pg
        if pg < PGmin_new[0]:
            PGmin_new[0] = pg
        if fabs(pg) > viol:
            viol = fabs(pg)
        if pg == 0.0:
            continue
        H = (p.kappa * Kii + st.rho * p.equality) * _pnorm2(p, v)
        if H > 1e-12:
            new = av - gr / H
            if new < lo:
                new = lo
            elif new > ub:
                new = ub
        else:
            new = ub if gr < 0.0 else lo
        if new != av:
            _move(p, st, v, new - av, Kii, Fi, &sumF, du)
            changed = 1
    # exact pair steps inside groups whose cap is active
    v = a0
    while v < a1:
        g = p.grp[v]
        if g < 0:
            v += 1
            continue
        w = v
        while w < a1 and p.grp[w] == g:
            w += 1
        if st.gsum[g] >= p.cap[g] - 1e-12 * (1.0 + fabs(p.cap[g])):
            va = -1
            vb = -1
            ga = -INFINITY
            gb = INFINITY
            for j in range(v, w):
                gr = _grad(p, st, j, Fi, sumF)
                if st.alpha[j] > p.lo[j] and gr > ga:
                    ga = gr
                    va = j
                if st.alpha[j] < p.hi[j] and gr < gb:
                    gb = gr
                    vb = j
            if va >= 0 and vb >= 0 and va != vb and ga - gb > 0.0:
                all_shrink = 0
                if ga - gb > viol:
                    viol = ga - gb
                curv = (p.kappa * Kii + st.rho * p.equality) * _pair_pnorm2(p, va, vb)
                lim = st.alpha[va] - p.lo[va]
                if p.hi[vb] - st.alpha[vb] < lim:
                    lim = p.hi[vb] - st.alpha[vb]
                t = lim
                if curv > 1e-12 and (ga - gb) / curv < lim:
                    t = (ga - gb) / curv
                if t > 0.0:
                    _move(p, st, va, -t, Kii, Fi, &sumF, du)
                    _move(p, st, vb, t, Kii, Fi, &sumF, du)
                    changed = 1
        v = w
    if changed:
        src.apply(i, du)
    shrinkable[0] = all_shrink
    return viol


def solve(RowSource src, problem, double[::1] alpha, double[::1] mu, double tol=1e-3,
          long max_iter=10000, bint shrinking=True, unsigned long long seed=0, double rho=1.0,
          int verbose=0, int working_set=WORKING_SET):
    """Solve the dual QP described by `problem` (a msvm._problem.DualProblem).

    `alpha` (warm start, feasible for the box and group caps) and `mu` (k, sums to zero) are
    updated in place; `src` must hold scores consistent with alpha (see `init_scores`).

    Returns (n_iter, residual, status, n_outer, rho) with status 0 when the residual fell
    below tol and 1 when max_iter epochs were reached.
    """
    cdef const int[::1] ptr = problem.var_ptr
    cdef const int[::1] s1 = problem.slot1
    cdef const double[::1] c1 = problem.coef1
    cdef const int[::1] s2 = problem.slot2
    cdef const double[::1] c2 = problem.coef2
    cdef const double[::1] lin = problem.lin
    cdef const double[::1] lo = problem.lo
    cdef const double[::1] hi = problem.hi
    cdef const int[::1] grp = problem.group
    cdef const double[::1] cap = problem.cap
    cdef Prob p
    cdef State st
    cdef int n = ptr.shape[0] - 1, k = src.k, nv = alpha.shape[0], ngroups = cap.shape[0]
    cdef int v, j, i, idx, n_active, tmp, shr, outer = 0, status = 0, inner_done, full_pass
    cdef long it = 0
    cdef double viol, feas = 0.0, feas_prev = INFINITY, eps_in, scale = 0.0, resid = INFINITY
    cdef double PGmax_old, PGmin_old, PGmax_new, PGmin_new, mean_c, vs
    cdef unsigned long long rng = seed * 2654435761ULL + 88172645463325252ULL
    cdef long long steps = 0
    cdef bint use_smo
    cdef int qmax
    cdef int* active
    cdef double* Fi
    cdef double* du
    cdef double* buf_c
    if k > 64:
        raise ValueError("the compiled solver supports at most 64 classes")
    if lin.shape[0] != nv or s1.shape[0] != nv or hi.shape[0] != nv or grp.shape[0] != nv:
        raise ValueError("problem arrays and alpha disagree in length")
    if mu.shape[0] != k:
        raise ValueError("mu must have one entry per class slot")
    p.n = n; p.k = k; p.nv = nv
    p.ptr = &ptr[0]; p.s1 = &s1[0]; p.c1 = &c1[0]; p.s2 = &s2[0]; p.c2 = &c2[0]
    p.lin = &lin[0]; p.lo = &lo[0]; p.hi = &hi[0]; p.grp = &grp[0]
    p.cap = &cap[0] if ngroups > 0 else NULL
    p.kappa = float(problem.kappa)
    p.equality = 1 if problem.equality else 0
    active = <int*> malloc(n * sizeof(int))
    Fi = <double*> malloc(k * sizeof(double))
    du = <double*> malloc(k * sizeof(double))
    buf_c = <double*> malloc((3 * k + ngroups + 1) * sizeof(double))
    if active == NULL or Fi == NULL or du == NULL or buf_c == NULL:
        free(active); free(Fi); free(du); free(buf_c)
        raise MemoryError()
    st.alpha = &alpha[0]
    st.c = buf_c
    st.s = buf_c + k
    st.mu = &mu[0]
    st.gsum = buf_c + 2 * k
    st.rho = rho if p.equality else 0.0
    with nogil:
        for j in range(k):
            st.c[j] = 0.0
        for j in range(ngroups):
            st.gsum[j] = 0.0
        for v in range(nv):
            vs = st.alpha[v]
            if fabs(p.hi[v]) > scale:
                scale = fabs(p.hi[v])
            if fabs(p.lo[v]) > scale:
                scale = fabs(p.lo[v])
            if vs == 0.0:
                continue
            st.c[p.s1[v]] += vs * p.c1[v]
            if p.s2[v] >= 0:
                st.c[p.s2[v]] += vs * p.c2[v]
            if p.grp[v] >= 0:
                st.gsum[p.grp[v]] += vs
        if scale <= 0.0:
            scale = 1.0
    s2a = np.asarray(s2)
    use_smo = (src.kind != SRC_LINEAR and k <= 64
               and bool(np.all(np.abs(np.asarray(c1)) == 1.0))
               and bool(np.all((s2a < 0) | (np.abs(np.asarray(c2)) == 1.0))))
    if use_smo:
        qmax = working_set
        if src.capacity > 0 and qmax > src.capacity:
            qmax = <int> src.capacity
        with nogil:
            status = _smo(src, &p, &st, tol, max_iter * <long long> max(n, 1), qmax,
                          scale, verbose, &steps, &resid, &outer)
        free(active); free(Fi); free(du); free(buf_c)
        if status < 0:
            raise MemoryError("cannot allocate the SMO work arrays")
        it = (steps + n - 1) // max(n, 1)
        if verbose:
            print(f"[msvm] smo: {steps} steps ({it} epochs), residual {resid:.3e}, "
                  f"kernel rows computed {src.n_computed} of {src.n_requests} requested")
        return it, resid, status, outer, st.rho
    with nogil:
        eps_in = 0.1 if p.equality else tol
        if eps_in < tol:
            eps_in = tol
        while True:
            # ---- inner problem: box/group constrained, multiplier mu fixed
            mean_c = 0.0
            for j in range(k):
                mean_c += st.c[j]
            mean_c /= k
            for j in range(k):
                st.s[j] = (st.mu[j] + st.rho * (st.c[j] - mean_c)) if p.equality else 0.0
            n_active = n
            for i in range(n):
                active[i] = i
            PGmax_old = INFINITY
            PGmin_old = -INFINITY
            inner_done = 0
            full_pass = 0
            viol = INFINITY
            while it < max_iter:
                it += 1
                for idx in range(n_active - 1, 0, -1):
                    j = <int> (_rng_next(&rng) % <unsigned long long> (idx + 1))
                    tmp = active[idx]; active[idx] = active[j]; active[j] = tmp
                viol = 0.0
                PGmax_new = -INFINITY
                PGmin_new = INFINITY
                idx = 0
                while idx < n_active:
                    i = active[idx]
                    vs = _visit(&p, &st, src, i, Fi, du, PGmax_old, PGmin_old,
                                &PGmax_new, &PGmin_new, &shr)
                    if vs > viol:
                        viol = vs
                    if shrinking and shr and n_active > 1 and not full_pass:
                        n_active -= 1
                        active[idx] = active[n_active]
                        active[n_active] = i
                        continue
                    idx += 1
                if viol <= eps_in:
                    if n_active < n and not full_pass:
                        # one more pass over every sample, without shrinking, to confirm
                        n_active = n
                        PGmax_old = INFINITY
                        PGmin_old = -INFINITY
                        full_pass = 1
                        continue
                    inner_done = 1
                    break
                full_pass = 0
                PGmax_old = PGmax_new if PGmax_new > 0.0 else INFINITY
                PGmin_old = PGmin_new if PGmin_new < 0.0 else -INFINITY
                if not shrinking:
                    PGmax_old = INFINITY
                    PGmin_old = -INFINITY
            outer += 1
            # ---- multiplier update
            feas = 0.0
            if p.equality:
                mean_c = 0.0
                for j in range(k):
                    mean_c += st.c[j]
                mean_c /= k
                for j in range(k):
                    vs = st.c[j] - mean_c
                    if fabs(vs) > feas:
                        feas = fabs(vs)
                    st.mu[j] += st.rho * vs
                feas /= scale
            resid = viol if viol > feas else feas
            if verbose:
                with gil:
                    print(f"[msvm] outer {outer}: epochs {it}, violation {viol:.3e}, "
                          f"equality {feas:.3e}, rho {st.rho:.3g}, active {n_active}/{n}")
            if not inner_done:
                status = 1
                break
            if resid <= tol:
                break
            if eps_in > tol:
                eps_in *= 0.1
                if feas < eps_in:
                    eps_in = feas if feas > tol else tol
                if eps_in < tol:
                    eps_in = tol
            if feas > 0.25 * feas_prev and st.rho < _rho_max(scale):
                st.rho *= 4.0
            feas_prev = feas
    free(active); free(Fi); free(du); free(buf_c)
    return it, resid, status, outer, st.rho


def init_scores(RowSource src, const double[:, ::1] U):
    """Set the source's scores to K U (kernel) or W = X^T U (linear), U the n x k slot sums."""
    cdef int i, j, n = U.shape[0], k = U.shape[1]
    cdef double* du
    if k != src.k or n != src.n:
        raise ValueError("U must be n x k")
    du = <double*> malloc(k * sizeof(double))
    with nogil:
        src.reset_scores()
        for i in range(n):
            for j in range(k):
                du[j] = U[i, j]
            src.apply(i, du)
    free(du)


def add_scores(RowSource src, const int[::1] rows, const double[:, ::1] dU):
    """Scores += K[:, rows] dU (kernel) or W += X[rows]^T dU (linear): a warm start's change."""
    cdef Py_ssize_t r, m = rows.shape[0]
    if dU.shape[0] != m or dU.shape[1] != src.k:
        raise ValueError("dU must be len(rows) x k")
    for r in range(m):
        if rows[r] < 0 or rows[r] >= src.n:
            raise ValueError("row index out of range")
    with nogil:
        for r in range(m):
            src.apply(rows[r], &dU[r, 0])


def cache_stats(RowSource src):
    """(rows computed, rows requested, capacity in rows)."""
    return src.n_computed, src.n_requests, src.capacity
