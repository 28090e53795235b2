# Working-set SMO for kernel problems whose variables each have one slot, direction
# sigma_v e_j with sigma_v = +-1, and no group caps (the Lee-Lin-Wahba / reinforced /
# truncated-LLW layouts and their DC steps).
#
# The equalities P c = 0 (class sums c_j = sum_{v in slot j} sigma_v alpha_v share one common
# value) are handled by the same augmented Lagrangian as the coordinate-descent path:
# multiplier mu, penalty rho, shift s = mu + rho P c.  Each inner problem has box constraints
# only and is solved by a decomposition in the manner of SVMlight / ThunderSVM:
#
# 1. a global scan of every variable (O(n k), no kernel rows) computes the violation of the
#    inner KKT conditions, with z_v = sigma_v g_v = kappa (F_ij - S_i / k) - sigma_v a_v + s_j:
#    z >= 0 where sigma alpha can only increase, z <= 0 where it can only decrease, z = 0 for
#    free variables;
# 2. the (at most q) samples with the largest violation form the working set B; their kernel
#    block K_BB (q x q), scores and variables are copied out;
# 3. a local greedy SMO solves the subproblem on B (all other variables fixed) to a relative
#    accuracy, each step costing O(q k) instead of O(n k):
#    * same-slot pairs (a, b): sigma_a alpha_a -= t, sigma_b alpha_b += t, which leave c and s
#      unchanged; a has the largest z that can decrease, b maximizes the second-order gain
#      (z_a - z_b)^2 / curvature (Fan, Chen and Lin 2005), curvature
#      kappa (1 - 1/k) (K_aa + K_bb - 2 K_ab).  These are the directions along which a kernel
#      dual is ill conditioned, where single-variable steps crawl;
#    * single-variable Newton steps (curvature (kappa K_ii + rho)(1 - 1/k)), which move c;
#    taking whichever of the best pair and the best single step promises the larger decrease;
# 4. the scores of all n samples are updated once with the kernel rows of the samples whose
#    variables changed: F += K[:, B] dU_B (O(n) per changed (sample, slot)).
#
# The kernel rows of B come from the row source (Gram matrix or LRU cache); q never exceeds
# the cache capacity, so the rows fetched in step 2 are still cached in step 4.  Scores are
# kept by slot (F^T, k x n, contiguous per slot) with their row sums S.


cdef inline bint _can_up(double sig, double a, double lo, double hi) noexcept nogil:
    return (a < hi) if sig > 0 else (a > lo)


cdef inline bint _can_down(double sig, double a, double lo, double hi) noexcept nogil:
    return (a > lo) if sig > 0 else (a < hi)


cdef inline double _room_up(double sig, double a, double lo, double hi) noexcept nogil:
    return (hi - a) if sig > 0 else (a - lo)


cdef inline double _room_down(double sig, double a, double lo, double hi) noexcept nogil:
    return (a - lo) if sig > 0 else (hi - a)


cdef inline void _axpy2(double* Fj, double* S, const double* row, double t, int n) noexcept nogil:
    """Fj += t row and S += t row."""
    cdef int r
    for r in range(n):
        Fj[r] += t * row[r]
        S[r] += t * row[r]


# Local accuracy of a working-set solve, as a fraction of the global violation (0: solve the
# block to the inner tolerance), and the inner tolerance of the first augmented-Lagrangian round.
cdef double LOCAL_FRACTION = 0.0
cdef double EPS_START = 0.1


cdef struct Block:
    int q              # samples in the working set
    int nb             # variables in the working set
    double* K          # q x q kernel block, row-major
    double* kd         # q: kernel diagonal
    double* Ft         # k x q: scores F of the block, slot-major
    double* S          # q: row sums of F
    int* loc           # n: local index of a global sample (-1 outside the block)
    int* start         # k + 1: the block's variables are bucketed by slot
    # per block variable, in bucket order: U-space value sigma alpha, its bounds, the offset
    # -sigma a, the local sample and the global variable
    double* U
    double* Ulo
    double* Uhi
    double* off
    int* li
    int* gv


cdef inline double _zb(const Block* B, const double* s, int j, int idx, double kappa,
                       double invk) noexcept nogil:
    cdef int r = B.li[idx]
    return kappa * (B.Ft[j * B.q + r] - B.S[r] * invk) + B.off[idx] + s[j]


cdef long long _block_smo(const Prob* p, State* st, Block* B, double eps, long long max_steps,
                          double* l, double* u, int* la, int* ua) noexcept nogil:
    """Pair / single SMO on the working set until its violation is <= eps.

    Each round scans the block once (per-slot extremes l_j, u_j of z) and then takes one step
    in every violating slot, re-evaluating the candidates' z first.
    """
    cdef int q = B.q, k = p.k, j, jj, idx, a, b, best, vs, ia, ib
    cdef long long steps = 0
    cdef double kappa = p.kappa, invk = 1.0 / p.k, pn = 1.0 - 1.0 / p.k, z, za, zu, zb = 0.0
    cdef double curv, gain, bestgain, t, room, Kaa, single, gain_pair, gain_single, viol
    cdef const double* row
    while True:
        viol = 0.0
        for j in range(k):
            l[j] = -INFINITY
            u[j] = INFINITY
            la[j] = -1
            ua[j] = -1
            for idx in range(B.start[j], B.start[j + 1]):
                z = _zb(B, st.s, j, idx, kappa, invk)
                if z < u[j] and B.U[idx] < B.Uhi[idx]:
                    u[j] = z
                    ua[j] = idx
                if z > l[j] and B.U[idx] > B.Ulo[idx]:
                    l[j] = z
                    la[j] = idx
            if -u[j] > viol:
                viol = -u[j]
            if l[j] > viol:
                viol = l[j]
        if viol <= eps or steps >= max_steps:
            break
        for jj in range(k):
            j = jj
            if (l[j] <= eps and u[j] >= -eps) or steps >= max_steps:
                continue
            # fresh values of the slot's extreme candidates
            za = _zb(B, st.s, j, la[j], kappa, invk) if la[j] >= 0 else -INFINITY
            zu = _zb(B, st.s, j, ua[j], kappa, invk) if ua[j] >= 0 else INFINITY
            single = 0.0
            vs = -1
            if za > single:
                single = za
                vs = la[j]
            if -zu > single:
                single = -zu
                vs = ua[j]
            best = -1
            gain_pair = 0.0
            Kaa = 0.0
            row = NULL
            if la[j] >= 0 and za - zu > 0.0:
                a = la[j]
                ia = B.li[a]
                row = B.K + <Py_ssize_t> ia * q
                Kaa = B.kd[ia]
                bestgain = -1.0
                for idx in range(B.start[j], B.start[j + 1]):
                    if idx == a or B.U[idx] >= B.Uhi[idx]:
                        continue
                    z = _zb(B, st.s, j, idx, kappa, invk)
                    if z >= za:
                        continue
                    ib = B.li[idx]
                    curv = kappa * pn * (Kaa + B.kd[ib] - 2.0 * row[ib])
                    if curv <= 1e-12:
                        curv = 1e-12
                    gain = (za - z) * (za - z) / curv
                    if gain > bestgain:
                        bestgain = gain
                        best = idx
                        zb = z
                gain_pair = 0.5 * bestgain
            gain_single = 0.0
            if vs >= 0:
                curv = (kappa * B.kd[B.li[vs]] + st.rho) * pn
                gain_single = 0.5 * single * single / (curv if curv > 1e-12 else 1e-12)
            if best < 0 and vs < 0:
                continue
            steps += 1
            if best >= 0 and gain_pair >= gain_single:
                a = la[j]
                b = best
                ib = B.li[b]
                curv = kappa * pn * (Kaa + B.kd[ib] - 2.0 * row[ib])
                room = B.U[a] - B.Ulo[a]
                if B.Uhi[b] - B.U[b] < room:
                    room = B.Uhi[b] - B.U[b]
                t = room
                if curv > 1e-12 and (za - zb) / curv < room:
                    t = (za - zb) / curv
                B.U[a] -= t
                B.U[b] += t
                _axpy2(B.Ft + j * q, B.S, row, -t, q)
                _axpy2(B.Ft + j * q, B.S, B.K + <Py_ssize_t> ib * q, t, q)
            else:
                # single Newton step on the slot's most violating variable (moves c and s)
                ia = B.li[vs]
                curv = (kappa * B.kd[ia] + st.rho) * pn
                z = za if vs == la[j] else zu
                if z < 0.0:
                    room = B.Uhi[vs] - B.U[vs]
                    t = room if curv <= 1e-12 or -z / curv > room else -z / curv
                else:
                    room = B.U[vs] - B.Ulo[vs]
                    t = -room if curv <= 1e-12 or z / curv > room else -z / curv
                B.U[vs] += t
                _axpy2(B.Ft + j * q, B.S, B.K + <Py_ssize_t> ia * q, t, q)
                if p.equality:
                    st.c[j] += t
                    for b in range(k):
                        st.s[b] += st.rho * t * ((1.0 if b == j else 0.0) - invk)
    return steps


cdef void _top_q(double* score, int* idx, int m, int q) noexcept nogil:
    """Partially reorder (score, idx)[0:m] so that the q largest scores come first."""
    cdef int lo = 0, hi = m - 1, i, j, ti
    cdef double pivot, ts
    while lo < hi:
        pivot = score[(lo + hi) // 2]
        i = lo
        j = hi
        while i <= j:
            while score[i] > pivot:
                i += 1
            while score[j] < pivot:
                j -= 1
            if i <= j:
                ts = score[i]; score[i] = score[j]; score[j] = ts
                ti = idx[i]; idx[i] = idx[j]; idx[j] = ti
                i += 1
                j -= 1
        if q - 1 <= j:
            hi = j
        elif q - 1 >= i:
            lo = i
        else:
            break


cdef int _smo(RowSource src, const Prob* p, State* st, double tol, long long max_steps,
              int qmax, double scale, int verbose, long long* steps_out,
              double* resid_out, int* outer_out) noexcept nogil:
    """ALM + working-set SMO (see the note above). 0: converged, 1: max_steps, -1: no memory."""
    cdef int n = p.n, k = p.k, nv = p.nv
    cdef int i, j, v, a, b, m, qb, status = 0, outer = 0, done_inner, nb, maxper = 0, pos
    cdef long long steps = 0, blocks = 0, budget
    cdef double kappa = p.kappa, z, sc, sig, d, tot, viol = INFINITY
    cdef double feas, feas_prev = INFINITY, eps_in, eps_loc, mean_c, resid = INFINITY
    cdef const double* row
    cdef Block B
    for i in range(n):
        if p.ptr[i + 1] - p.ptr[i] > maxper:
            maxper = p.ptr[i + 1] - p.ptr[i]
    if qmax > n:
        qmax = n
    if qmax < 1:
        qmax = 1
    cdef double* Ft = <double*> malloc(<Py_ssize_t> k * n * sizeof(double))
    cdef double* S = <double*> malloc(n * sizeof(double))
    cdef double* sgn = <double*> malloc(nv * sizeof(double))
    cdef int* sample = <int*> malloc(nv * sizeof(int))
    cdef double* score = <double*> malloc(n * sizeof(double))
    cdef int* cand = <int*> malloc(n * sizeof(int))
    cdef int* prev = <int*> malloc(qmax * sizeof(int))
    cdef int nprev = 0
    cdef double* l = <double*> malloc(k * sizeof(double))
    cdef double* u = <double*> malloc(k * sizeof(double))
    cdef int* la = <int*> malloc(k * sizeof(int))
    cdef int* ua = <int*> malloc(k * sizeof(int))
    cdef Py_ssize_t nbmax = <Py_ssize_t> qmax * maxper + 1
    cdef int* bv = <int*> malloc(nbmax * sizeof(int))
    cdef double* dU = <double*> malloc(<Py_ssize_t> qmax * k * sizeof(double))
    B.K = <double*> malloc(<Py_ssize_t> qmax * qmax * sizeof(double))
    B.kd = <double*> malloc(qmax * sizeof(double))
    B.Ft = <double*> malloc(<Py_ssize_t> k * qmax * sizeof(double))
    B.S = <double*> malloc(qmax * sizeof(double))
    B.loc = <int*> malloc(n * sizeof(int))
    B.start = <int*> malloc((k + 1) * sizeof(int))
    B.U = <double*> malloc(nbmax * sizeof(double))
    B.Ulo = <double*> malloc(nbmax * sizeof(double))
    B.Uhi = <double*> malloc(nbmax * sizeof(double))
    B.off = <double*> malloc(nbmax * sizeof(double))
    B.li = <int*> malloc(nbmax * sizeof(int))
    B.gv = <int*> malloc(nbmax * sizeof(int))
    if (Ft == NULL or S == NULL or sgn == NULL or sample == NULL or score == NULL
            or cand == NULL or prev == NULL or l == NULL or u == NULL or la == NULL
            or ua == NULL or bv == NULL or dU == NULL or B.K == NULL or B.kd == NULL
            or B.Ft == NULL or B.S == NULL or B.loc == NULL or B.start == NULL or B.U == NULL
            or B.Ulo == NULL or B.Uhi == NULL or B.off == NULL or B.li == NULL
            or B.gv == NULL):
        status = -1
    else:
        for i in range(n):
            S[i] = 0.0
            B.loc[i] = -1
            for j in range(k):
                Ft[<Py_ssize_t> j * n + i] = src.F[i, j]
                S[i] += src.F[i, j]
            for v in range(p.ptr[i], p.ptr[i + 1]):
                sample[v] = i
        for v in range(nv):
            sgn[v] = 1.0 if p.c1[v] > 0 else -1.0
        for a in range(qmax * k):
            dU[a] = 0.0
        eps_in = EPS_START if p.equality else tol
        if eps_in < tol:
            eps_in = tol
    while status == 0:
        # ---------------- inner problem for fixed mu
        mean_c = 0.0
        for j in range(k):
            mean_c += st.c[j] / k
        for j in range(k):
            st.s[j] = (st.mu[j] + st.rho * (st.c[j] - mean_c)) if p.equality else 0.0
        done_inner = 0
        while True:
            # 1. global scan: violation of every sample
            viol = 0.0
            m = 0
            for i in range(n):
                sc = 0.0
                for v in range(p.ptr[i], p.ptr[i + 1]):
                    if p.hi[v] <= p.lo[v]:
                        continue
                    j = p.s1[v]
                    sig = sgn[v]
                    z = kappa * (Ft[<Py_ssize_t> j * n + i] - S[i] / k) - sig * p.lin[v] + st.s[j]
                    if z < -sc and _can_up(sig, st.alpha[v], p.lo[v], p.hi[v]):
                        sc = -z
                    elif z > sc and _can_down(sig, st.alpha[v], p.lo[v], p.hi[v]):
                        sc = z
                if sc > viol:
                    viol = sc
                if sc > eps_in:
                    score[m] = sc
                    cand[m] = i
                    m += 1
            if viol <= eps_in:
                done_inner = 1
                break
            if steps >= max_steps:
                break
            # 2. working set: the qmax most violating samples, topped up with the previous
            #    working set (its free variables are the partners pair steps need)
            if m > qmax - nprev // 2:
                _top_q(score, cand, m, qmax - nprev // 2)
                m = qmax - nprev // 2
            for a in range(m):
                B.loc[cand[a]] = a
            for a in range(nprev):
                if m >= qmax:
                    break
                i = prev[a]
                if B.loc[i] < 0:
                    B.loc[i] = m
                    cand[m] = i
                    m += 1
            qb = m
            B.q = qb
            for a in range(qb):
                i = cand[a]
                row = src.row(i)
                B.kd[a] = src.diag(i)
                for b in range(qb):
                    B.K[<Py_ssize_t> a * qb + b] = row[cand[b]]
                for j in range(k):
                    B.Ft[j * qb + a] = Ft[<Py_ssize_t> j * n + i]
                B.S[a] = S[i]
            for j in range(k + 1):
                B.start[j] = 0
            nb = 0
            for a in range(qb):
                for v in range(p.ptr[cand[a]], p.ptr[cand[a] + 1]):
                    if p.hi[v] > p.lo[v]:
                        bv[nb] = v
                        nb += 1
                        B.start[p.s1[v] + 1] += 1
            for j in range(k):
                B.start[j + 1] += B.start[j]
            for pos in range(nb):
                v = bv[pos]
                j = p.s1[v]
                b = B.start[j]
                B.start[j] += 1
                sig = sgn[v]
                B.gv[b] = v
                B.li[b] = B.loc[sample[v]]
                B.U[b] = sig * st.alpha[v]
                B.Ulo[b] = p.lo[v] if sig > 0 else -p.hi[v]
                B.Uhi[b] = p.hi[v] if sig > 0 else -p.lo[v]
                B.off[b] = -sig * p.lin[v]
            for j in range(k, 0, -1):
                B.start[j] = B.start[j - 1]
            B.start[0] = 0
            # 3. local solve to a fraction of the current violation
            eps_loc = LOCAL_FRACTION * viol
            if eps_loc < eps_in:
                eps_loc = eps_in
            budget = max_steps - steps
            if budget > 50 * <long long> qb + 100:
                budget = 50 * <long long> qb + 100
            B.q = qb
            B.nb = nb
            steps += _block_smo(p, st, &B, eps_loc, budget, l, u, la, ua)
            blocks += 1
            # 4. write the block back; global score update with the rows of changed samples
            for b in range(nb):
                v = B.gv[b]
                d = B.U[b] - sgn[v] * st.alpha[v]
                if d != 0.0:
                    dU[B.li[b] * k + p.s1[v]] += d
                    st.alpha[v] = sgn[v] * B.U[b]
            nprev = qb
            for a in range(qb):
                i = cand[a]
                prev[a] = i
                B.loc[i] = -1
                tot = 0.0
                row = NULL
                for j in range(k):
                    d = dU[a * k + j]
                    if d == 0.0:
                        continue
                    if row == NULL:
                        row = src.row(i)
                    tot += d
                    _axpy_slot(Ft + <Py_ssize_t> j * n, row, d, n)
                    dU[a * k + j] = 0.0
                if row != NULL and tot != 0.0:
                    _axpy_slot(S, row, tot, n)
        outer += 1
        # ---------------- multiplier update
        feas = 0.0
        if p.equality:
            mean_c = 0.0
            for j in range(k):
                mean_c += st.c[j] / k
            for j in range(k):
                z = st.c[j] - mean_c
                if fabs(z) > feas:
                    feas = fabs(z)
                st.mu[j] += st.rho * z
            feas /= scale
        resid = viol if viol > feas else feas
        if verbose:
            with gil:
                print(f"[msvm] outer {outer}: steps {steps}, blocks {blocks}, violation "
                      f"{viol:.3e}, equality {feas:.3e}, rho {st.rho:.3g}")
        if not done_inner:
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
        if feas > 0.25 * feas_prev and st.rho < 1e6:
            st.rho *= 4.0
        feas_prev = feas
    if status >= 0:
        for i in range(n):
            for j in range(k):
                src.F[i, j] = Ft[<Py_ssize_t> j * n + i]
    steps_out[0] = steps
    resid_out[0] = resid
    outer_out[0] = outer
    free(Ft); free(S); free(sgn); free(sample); free(score); free(cand); free(prev); free(l); free(u)
    free(la); free(ua); free(bv); free(dU); free(B.K); free(B.kd); free(B.Ft)
    free(B.S); free(B.loc); free(B.start); free(B.U); free(B.Ulo); free(B.Uhi); free(B.off)
    free(B.li); free(B.gv)
    return status


cdef inline void _axpy_slot(double* y, const double* x, double t, int n) noexcept nogil:
    cdef int r
    for r in range(n):
        y[r] += t * x[r]
