# Greedy SMO for kernel problems whose variables each have one slot, direction sigma_v e_j with
# sigma_v = +-1, and no group caps (the Lee-Lin-Wahba / reinforced / truncated-LLW / angle-based
# layouts and their DC steps).  The equalities P c = 0 (class sums
# c_j = sum_{v in slot j} sigma_v alpha_v share one common value) are handled by the same
# augmented Lagrangian as the coordinate-descent path: multiplier mu, penalty rho, shift
# s = mu + rho P c.  Each inner problem (box constraints only) is solved greedily with
#
# * same-slot pairs (a, b): sigma_a alpha_a -= t, sigma_b alpha_b += t, which leave c and s
#   unchanged.  With z_v = sigma_v g_v = kappa (F_ij - S_i / k) - sigma_v a_v + s_j, a is the
#   largest z that can decrease and b maximizes the second-order gain (z_a - z_b)^2 / curvature
#   (Fan, Chen and Lin 2005), curvature = kappa (1 - 1/k) (K_aa + K_bb - 2 K_ab).  These are the
#   directions along which a kernel dual is ill conditioned, where plain coordinate descent
#   crawls;
# * single-variable Newton steps (curvature (kappa K_ii + rho)(1 - 1/k)), which move c;
#
# taking whichever of the best pair and the best single step promises the larger decrease.
# Per slot, u_j = min z over variables that can increase sigma alpha and l_j = max z over those
# that can decrease it; the inner problem is solved when u_j >= -eps and l_j <= eps.  Scores are
# kept by slot (F^T, k x n, contiguous per slot) with their row sums S; a step touches one or
# two kernel rows.  LIBSVM-style shrinking removes variables that cannot take part in a move
# (every 1000 steps); everything is reactivated once near 10 eps and again for the final check.

cdef inline bint _can_up(double sig, double a, double lo, double hi) noexcept nogil:
    return (a < hi) if sig > 0 else (a > lo)


cdef inline bint _can_down(double sig, double a, double lo, double hi) noexcept nogil:
    return (a > lo) if sig > 0 else (a < hi)


cdef inline double _room_up(double sig, double a, double lo, double hi) noexcept nogil:
    return (hi - a) if sig > 0 else (a - lo)


cdef inline double _room_down(double sig, double a, double lo, double hi) noexcept nogil:
    return (a - lo) if sig > 0 else (hi - a)


cdef void _slot_update(double* Ft, double* S, const double* row, int j, double t, int n) noexcept nogil:
    cdef int r
    cdef double* Fj = Ft + <Py_ssize_t> j * n
    for r in range(n):
        Fj[r] += t * row[r]
        S[r] += t * row[r]


cdef int _smo(RowSource src, const Prob* p, State* st, double tol, long long max_steps,
              bint shrinking, double scale, int verbose, long long* steps_out,
              double* resid_out, int* outer_out) noexcept nogil:
    """ALM + greedy SMO (see the note above). 0: converged, 1: max_steps reached, -1: no memory."""
    cdef int n = p.n, k = p.k, nv = p.nv
    cdef int i, j, v, a, b, idx, jstar, best, vs, status = 0, unshrunk, outer = 0, done_inner
    cdef long long step = 0, shrink_every
    cdef double kappa = p.kappa, pn = 1.0 - 1.0 / p.k, z, za, zb = 0.0, curv, gain, bestgain
    cdef double t, room, Kaa, viol = INFINITY, single, gain_single, gain_pair, sig
    cdef double feas, feas_prev = INFINITY, eps_in, mean_c, resid = INFINITY
    cdef const double* row
    cdef double* Ft = <double*> malloc(<Py_ssize_t> k * n * sizeof(double))
    cdef double* S = <double*> malloc(n * sizeof(double))
    cdef double* l = <double*> malloc(k * sizeof(double))
    cdef double* u = <double*> malloc(k * sizeof(double))
    cdef double* sgn = <double*> malloc(nv * sizeof(double))
    cdef int* la = <int*> malloc(k * sizeof(int))
    cdef int* ua = <int*> malloc(k * sizeof(int))
    cdef int* sample = <int*> malloc(nv * sizeof(int))
    cdef int* lst = <int*> malloc(nv * sizeof(int))       # variables grouped by slot
    cdef int* start = <int*> malloc((k + 1) * sizeof(int))
    cdef int* nact = <int*> malloc(k * sizeof(int))
    if (Ft == NULL or S == NULL or l == NULL or u == NULL or sgn == NULL or la == NULL
            or ua == NULL or sample == NULL or lst == NULL or start == NULL or nact == NULL):
        free(Ft); free(S); free(l); free(u); free(sgn); free(la); free(ua)
        free(sample); free(lst); free(start); free(nact)
        return -1
    for i in range(n):
        S[i] = 0.0
        for j in range(k):
            Ft[<Py_ssize_t> j * n + i] = src.F[i, j]
            S[i] += src.F[i, j]
        for v in range(p.ptr[i], p.ptr[i + 1]):
            sample[v] = i
    for v in range(nv):
        sgn[v] = 1.0 if p.c1[v] > 0 else -1.0
    # bucket the variables by slot (stable, so each slot's list runs in sample order)
    for j in range(k + 1):
        start[j] = 0
    for v in range(nv):
        start[p.s1[v] + 1] += 1
    for j in range(k):
        start[j + 1] += start[j]
        nact[j] = 0
    for v in range(nv):
        j = p.s1[v]
        lst[start[j] + nact[j]] = v
        nact[j] += 1
    shrink_every = n if n < 1000 else 1000
    eps_in = 0.1 if p.equality else tol
    if eps_in < tol:
        eps_in = tol
    while True:
        # ---------------- inner problem for fixed mu
        mean_c = 0.0
        for j in range(k):
            mean_c += st.c[j] / k
        for j in range(k):
            st.s[j] = (st.mu[j] + st.rho * (st.c[j] - mean_c)) if p.equality else 0.0
        for j in range(k):
            nact[j] = start[j + 1] - start[j]
        unshrunk = 0
        done_inner = 0
        while True:
            # selection: per-slot extremes of z over the active variables
            single = 0.0
            vs = -1
            for j in range(k):
                l[j] = -INFINITY
                u[j] = INFINITY
                la[j] = -1
                ua[j] = -1
                for idx in range(start[j], start[j] + nact[j]):
                    v = lst[idx]
                    i = sample[v]
                    sig = sgn[v]
                    z = kappa * (Ft[<Py_ssize_t> j * n + i] - S[i] / k) - sig * p.lin[v] + st.s[j]
                    if _can_up(sig, alpha_at(st, v), p.lo[v], p.hi[v]) and z < u[j]:
                        u[j] = z
                        ua[j] = v
                    if _can_down(sig, alpha_at(st, v), p.lo[v], p.hi[v]) and z > l[j]:
                        l[j] = z
                        la[j] = v
                if -u[j] > single:
                    single = -u[j]
                    vs = ua[j]
                if l[j] > single:
                    single = l[j]
                    vs = la[j]
            viol = single
            if viol <= eps_in:
                if nact_total(nact, k) < nv:
                    for j in range(k):
                        nact[j] = start[j + 1] - start[j]
                    unshrunk = 1
                    continue
                done_inner = 1
                break
            if step >= max_steps:
                break
            step += 1
            if shrinking and not unshrunk and viol <= 10.0 * eps_in:
                for j in range(k):
                    nact[j] = start[j + 1] - start[j]
                unshrunk = 1
                continue
            # best pair: the slot with the largest gap, partner by second-order gain
            jstar = -1
            t = 0.0
            for j in range(k):
                if l[j] - u[j] > t:
                    t = l[j] - u[j]
                    jstar = j
            gain_pair = 0.0
            best = -1
            if jstar >= 0:
                j = jstar
                a = la[j]
                za = l[j]
                row = src.row(sample[a])
                Kaa = src.diag(sample[a])
                bestgain = -1.0
                for idx in range(start[j], start[j] + nact[j]):
                    v = lst[idx]
                    if v == a or not _can_up(sgn[v], alpha_at(st, v), p.lo[v], p.hi[v]):
                        continue
                    i = sample[v]
                    z = kappa * (Ft[<Py_ssize_t> j * n + i] - S[i] / k) - sgn[v] * p.lin[v] + st.s[j]
                    if z >= za:
                        continue
                    curv = kappa * pn * (Kaa + src.diag(i) - 2.0 * row[i])
                    if curv <= 1e-12:
                        curv = 1e-12
                    gain = (za - z) * (za - z) / curv
                    if gain > bestgain:
                        bestgain = gain
                        best = v
                        zb = z
                gain_pair = 0.5 * bestgain
            i = sample[vs]
            curv = (kappa * src.diag(i) + st.rho) * pn
            gain_single = 0.5 * single * single / (curv if curv > 1e-12 else 1e-12)
            if best >= 0 and gain_pair >= gain_single:
                a = la[jstar]
                b = best
                curv = kappa * pn * (Kaa + src.diag(sample[b]) - 2.0 * row[sample[b]])
                room = _room_down(sgn[a], alpha_at(st, a), p.lo[a], p.hi[a])
                t = _room_up(sgn[b], alpha_at(st, b), p.lo[b], p.hi[b])
                if t < room:
                    room = t
                t = room
                if curv > 1e-12 and (za - zb) / curv < room:
                    t = (za - zb) / curv
                st.alpha[a] -= sgn[a] * t
                st.alpha[b] += sgn[b] * t
                _slot_update(Ft, S, row, jstar, -t, n)
                row = src.row(sample[b])
                _slot_update(Ft, S, row, jstar, t, n)
            else:
                # single Newton step on the most violating variable (moves c and s)
                v = vs
                j = p.s1[v]
                i = sample[v]
                z = kappa * (Ft[<Py_ssize_t> j * n + i] - S[i] / k) - sgn[v] * p.lin[v] + st.s[j]
                if z < 0.0:
                    room = _room_up(sgn[v], alpha_at(st, v), p.lo[v], p.hi[v])
                    t = room if curv <= 1e-12 or -z / curv > room else -z / curv
                else:
                    room = _room_down(sgn[v], alpha_at(st, v), p.lo[v], p.hi[v])
                    t = -room if curv <= 1e-12 or z / curv > room else -z / curv
                st.alpha[v] += sgn[v] * t
                row = src.row(i)
                _slot_update(Ft, S, row, j, t, n)
                if p.equality:
                    st.c[j] += t
                    for b in range(k):
                        st.s[b] += st.rho * t * ((1.0 if b == j else 0.0) - 1.0 / k)
            # shrinking: drop variables that can only move where no violation is
            if shrinking and step % shrink_every == 0:
                for j in range(k):
                    idx = start[j]
                    while idx < start[j] + nact[j]:
                        v = lst[idx]
                        i = sample[v]
                        sig = sgn[v]
                        z = kappa * (Ft[<Py_ssize_t> j * n + i] - S[i] / k) - sig * p.lin[v] + st.s[j]
                        if ((not _can_down(sig, alpha_at(st, v), p.lo[v], p.hi[v])
                             and (not _can_up(sig, alpha_at(st, v), p.lo[v], p.hi[v])
                                  or (z > l[j] and z > 0.0)))
                                or (not _can_up(sig, alpha_at(st, v), p.lo[v], p.hi[v])
                                    and z < u[j] and z < 0.0)):
                            nact[j] -= 1
                            lst[idx] = lst[start[j] + nact[j]]
                            lst[start[j] + nact[j]] = v
                            continue
                        idx += 1
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
                print(f"[msvm] outer {outer}: steps {step}, violation {viol:.3e}, "
                      f"equality {feas:.3e}, rho {st.rho:.3g}")
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
    for i in range(n):
        for j in range(k):
            src.F[i, j] = Ft[<Py_ssize_t> j * n + i]
    steps_out[0] = step
    resid_out[0] = resid
    outer_out[0] = outer
    free(Ft); free(S); free(l); free(u); free(sgn); free(la); free(ua)
    free(sample); free(lst); free(start); free(nact)
    return status


cdef inline double alpha_at(State* st, int v) noexcept nogil:
    return st.alpha[v]


cdef inline int nact_total(const int* nact, int k) noexcept nogil:
    cdef int j, tot = 0
    for j in range(k):
        tot += nact[j]
    return tot
