# Greedy SMO for kernel problems whose variables each have one slot, direction sigma_v e_j with
# sigma_v = +-1, and no group caps (the Lee-Lin-Wahba / reinforced / truncated-LLW / angle-based
# layouts and their DC steps).  The equalities P c = 0 say that the class sums
# c_j = sum_{v in slot j} sigma_v alpha_v share one free common value.  Two kinds of move keep
# them exactly:
#
# * a same-slot pair (a, b): sigma_a alpha_a -= t, sigma_b alpha_b += t.  With
#   z_v = sigma_v g_v = kappa (F_ij - S_i / k) - sigma_v a_v, a is the largest z that can
#   decrease, b is chosen by the second-order gain (z_a - z_b)^2 / curvature (Fan, Chen and
#   Lin 2005), curvature = kappa (1 - 1/k) (K_aa + K_bb - 2 K_ab);
# * a transversal move: sigma_v alpha_v += t on the best variable of every slot, the only move
#   that changes the common value (its rate is sum_j u_j, resp. -sum_j l_j).
#
# Per slot j, u_j = min z over variables that can increase sigma alpha and l_j = max z over those
# that can decrease it.  The dual is optimal iff l_j <= u_j for all j and
# sum_j l_j <= 0 <= sum_j u_j; the intercepts are then b_j in [l_j, u_j] with sum_j b_j = 0
# (a one-dimensional water filling).  Scores are kept by slot (F^T, k x n, contiguous per
# slot) with their row sums S; every step touches two kernel rows (k for a transversal move).
# LIBSVM-style shrinking removes variables that cannot take part in a violating move.

cdef inline bint _can_up(double sig, double a, double lo, double hi) noexcept nogil:
    return (a < hi) if sig > 0 else (a > lo)


cdef inline bint _can_down(double sig, double a, double lo, double hi) noexcept nogil:
    return (a > lo) if sig > 0 else (a < hi)


cdef inline double _room_up(double sig, double a, double lo, double hi) noexcept nogil:
    return (hi - a) if sig > 0 else (a - lo)


cdef inline double _room_down(double sig, double a, double lo, double hi) noexcept nogil:
    return (a - lo) if sig > 0 else (hi - a)


cdef inline double _clip_sum(double lam, const double* l, const double* u, int k) noexcept nogil:
    cdef double tot = 0.0
    cdef int j
    for j in range(k):
        if lam < l[j]:
            tot += l[j]
        elif lam > u[j]:
            tot += u[j]
        else:
            tot += lam
    return tot


cdef double _water_fill(const double* l, const double* u, int k) noexcept nogil:
    """lambda with sum_j clip(lambda, l_j, u_j) = 0 (bracket, then bisection)."""
    cdef double lo = INFINITY, hi = -INFINITY, mid, width
    cdef int j, rep
    for j in range(k):
        if l[j] > -INFINITY:
            lo = l[j] if l[j] < lo else lo
            hi = l[j] if l[j] > hi else hi
        if u[j] < INFINITY:
            lo = u[j] if u[j] < lo else lo
            hi = u[j] if u[j] > hi else hi
    if lo > hi:
        lo = 0.0
        hi = 0.0
    width = hi - lo + 1.0
    rep = 0
    while _clip_sum(lo, l, u, k) > 0.0 and rep < 60:
        lo -= width
        width *= 2.0
        rep += 1
    rep = 0
    while _clip_sum(hi, l, u, k) < 0.0 and rep < 60:
        hi += width
        width *= 2.0
        rep += 1
    for rep in range(200):
        mid = 0.5 * (lo + hi)
        if _clip_sum(mid, l, u, k) > 0.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


cdef void _slot_update(double* Ft, double* S, const double* row, int j, double t, int n) noexcept nogil:
    cdef int r
    cdef double* Fj = Ft + <Py_ssize_t> j * n
    for r in range(n):
        Fj[r] += t * row[r]
        S[r] += t * row[r]


cdef int _smo(RowSource src, const Prob* p, double* alpha, double* mu, double tol,
              long long max_steps, bint shrinking, long long* steps_out,
              double* resid_out) noexcept nogil:
    """Greedy SMO (see the note above). Returns 0 if converged, 1 at max_steps, -1 on no memory."""
    cdef int n = p.n, k = p.k, nv = p.nv
    cdef int i, j, v, a, b, idx, jstar, best, status = 0, unshrunk = 0
    cdef long long step = 0, shrink_every
    cdef double kappa = p.kappa, z, za, zb, curv, gain, bestgain, t, room, Kaa, viol
    cdef double pair_gap, tup, tdown, sl, su, sig
    cdef const double* row
    cdef double* Ft = <double*> malloc(<Py_ssize_t> k * n * sizeof(double))
    cdef double* S = <double*> malloc(n * sizeof(double))
    cdef double* l = <double*> malloc(k * sizeof(double))
    cdef double* u = <double*> malloc(k * sizeof(double))
    cdef double* Kt = <double*> malloc(k * k * sizeof(double))
    cdef double* sgn = <double*> malloc(nv * sizeof(double))
    cdef int* la = <int*> malloc(k * sizeof(int))
    cdef int* ua = <int*> malloc(k * sizeof(int))
    cdef int* sample = <int*> malloc(nv * sizeof(int))
    cdef int* lst = <int*> malloc(nv * sizeof(int))       # variables grouped by slot
    cdef int* start = <int*> malloc((k + 1) * sizeof(int))
    cdef int* nact = <int*> malloc(k * sizeof(int))
    cdef int* sel = <int*> malloc(k * sizeof(int))
    if (Ft == NULL or S == NULL or l == NULL or u == NULL or Kt == NULL or sgn == NULL
            or la == NULL or ua == NULL or sample == NULL or lst == NULL or start == NULL
            or nact == NULL or sel == NULL):
        status = -1
    else:
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
        while True:
            # ---- selection: per-slot extremes of z over the active variables
            for j in range(k):
                l[j] = -INFINITY
                u[j] = INFINITY
                la[j] = -1
                ua[j] = -1
                for idx in range(start[j], start[j] + nact[j]):
                    v = lst[idx]
                    i = sample[v]
                    sig = sgn[v]
                    z = kappa * (Ft[<Py_ssize_t> j * n + i] - S[i] / k) - sig * p.lin[v]
                    if _can_up(sig, alpha[v], p.lo[v], p.hi[v]) and z < u[j]:
                        u[j] = z
                        ua[j] = v
                    if _can_down(sig, alpha[v], p.lo[v], p.hi[v]) and z > l[j]:
                        l[j] = z
                        la[j] = v
            pair_gap = 0.0
            jstar = -1
            su = 0.0
            sl = 0.0
            for j in range(k):
                if l[j] - u[j] > pair_gap:
                    pair_gap = l[j] - u[j]
                    jstar = j
                su += u[j]
                sl += l[j]
            tup = -su if p.equality else 0.0        # rate of a transversal increase
            tdown = sl if p.equality else 0.0       # rate of a transversal decrease
            if tup != tup or tup < 0.0:
                tup = 0.0
            if tdown != tdown or tdown < 0.0:
                tdown = 0.0
            viol = pair_gap
            if tup > viol:
                viol = tup
            if tdown > viol:
                viol = tdown
            if viol <= tol:
                if shrinking and not unshrunk:
                    for j in range(k):
                        nact[j] = start[j + 1] - start[j]
                    unshrunk = 1
                    continue
                # with everything active and below tol: done
                break
            if step >= max_steps:
                status = 1
                break
            step += 1
            if shrinking and not unshrunk and viol <= 10.0 * tol:
                for j in range(k):
                    nact[j] = start[j + 1] - start[j]
                unshrunk = 1
                continue
            if pair_gap >= tup and pair_gap >= tdown:
                # ---- same-slot pair in slot jstar
                j = jstar
                a = la[j]
                za = l[j]
                row = src.row(sample[a])
                Kaa = src.diag(sample[a])
                best = -1
                bestgain = -1.0
                for idx in range(start[j], start[j] + nact[j]):
                    v = lst[idx]
                    if v == a or not _can_up(sgn[v], alpha[v], p.lo[v], p.hi[v]):
                        continue
                    i = sample[v]
                    z = kappa * (Ft[<Py_ssize_t> j * n + i] - S[i] / k) - sgn[v] * p.lin[v]
                    if z >= za:
                        continue
                    curv = kappa * (1.0 - 1.0 / k) * (Kaa + src.diag(i) - 2.0 * row[i])
                    if curv <= 1e-12:
                        curv = 1e-12
                    gain = (za - z) * (za - z) / curv
                    if gain > bestgain:
                        bestgain = gain
                        best = v
                        zb = z
                b = best
                curv = kappa * (1.0 - 1.0 / k) * (Kaa + src.diag(sample[b]) - 2.0 * row[sample[b]])
                room = _room_down(sgn[a], alpha[a], p.lo[a], p.hi[a])
                t = _room_up(sgn[b], alpha[b], p.lo[b], p.hi[b])
                if t < room:
                    room = t
                t = room
                if curv > 1e-12 and (za - zb) / curv < room:
                    t = (za - zb) / curv
                alpha[a] -= sgn[a] * t
                alpha[b] += sgn[b] * t
                _slot_update(Ft, S, row, j, -t, n)
                row = src.row(sample[b])
                _slot_update(Ft, S, row, j, t, n)
            else:
                # ---- transversal move: sigma alpha += t*dirn on the best variable of every slot
                sig = 1.0 if tup >= tdown else -1.0
                room = INFINITY
                for j in range(k):
                    sel[j] = ua[j] if sig > 0 else la[j]
                    v = sel[j]
                    t = _room_up(sgn[v], alpha[v], p.lo[v], p.hi[v]) if sig > 0 else \
                        _room_down(sgn[v], alpha[v], p.lo[v], p.hi[v])
                    if t < room:
                        room = t
                for j in range(k):
                    row = src.row(sample[sel[j]])
                    for b in range(k):
                        Kt[j * k + b] = row[sample[sel[b]]]
                curv = 0.0
                for j in range(k):
                    for b in range(k):
                        curv -= Kt[j * k + b] / k
                    curv += Kt[j * k + j]
                curv *= kappa
                gain = tup if sig > 0 else tdown       # first-order decrease per unit t
                t = room
                if curv > 1e-12 and gain / curv < room:
                    t = gain / curv
                for j in range(k):
                    v = sel[j]
                    alpha[v] += sgn[v] * sig * t
                    row = src.row(sample[v])
                    _slot_update(Ft, S, row, j, sig * t, n)
            # ---- shrinking
            if shrinking and not unshrunk and step % shrink_every == 0:
                for j in range(k):
                    idx = start[j]
                    while idx < start[j] + nact[j]:
                        v = lst[idx]
                        i = sample[v]
                        sig = sgn[v]
                        z = kappa * (Ft[<Py_ssize_t> j * n + i] - S[i] / k) - sig * p.lin[v]
                        if ((not _can_down(sig, alpha[v], p.lo[v], p.hi[v]) and
                             (not _can_up(sig, alpha[v], p.lo[v], p.hi[v]) or z > l[j])) or
                                (not _can_up(sig, alpha[v], p.lo[v], p.hi[v]) and z < u[j])):
                            nact[j] -= 1
                            lst[idx] = lst[start[j] + nact[j]]
                            lst[start[j] + nact[j]] = v
                            continue
                        idx += 1
        # ---- intercepts from the KKT intervals: b_j = clip(lambda, l_j, u_j), sum b_j = 0
        t = _water_fill(l, u, k) if p.equality else 0.0
        for j in range(k):
            z = t
            if z < l[j]:
                z = l[j]
            if z > u[j]:
                z = u[j]
            mu[j] = -z if p.equality else 0.0
        for i in range(n):
            for j in range(k):
                src.F[i, j] = Ft[<Py_ssize_t> j * n + i]
        steps_out[0] = step
        resid_out[0] = viol
    free(Ft); free(S); free(l); free(u); free(Kt); free(sgn); free(la); free(ua)
    free(sample); free(lst); free(start); free(nact); free(sel)
    return status
