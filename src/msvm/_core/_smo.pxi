# Working-set SMO for kernel problems whose variables have directions d_v = sigma_v e_v with
# sigma_v = +-1 and e_v a canonical direction: one slot e_p (the Lee-Lin-Wahba / reinforced /
# truncated layouts) or two slots e_p + r e_q with r = +-1 (e_j' - e_j: Weston-Watkins and the
# generalized-margin hinges), with or without group caps sum_{v in g} alpha_v <= cap_g.
#
# The equalities P c = 0 (class sums c = sum_v alpha_v d_v with one common value) are handled by
# the same augmented Lagrangian as the coordinate-descent path: multiplier mu, penalty rho,
# shift s = mu + rho P c.  Write U_v = sigma_v alpha_v; its gradient is
#     z_v = kappa (F_ip + r F_iq - (1 + r) S_i / k) + s_p + r s_q - sigma_v a_v
# (F = K U in slot space, S its row sums).  Each inner problem (boxes and caps only) is solved
# by a decomposition in the manner of SVMlight / ThunderSVM:
#
# 1. a global scan of every variable (O(n k), no kernel rows) measures the violation of the
#    inner KKT conditions per sample: z >= 0 where U can only increase, z <= 0 where it can
#    only decrease, z = 0 for free variables (room counted with the group caps), and, in a
#    full group, max g <= min g over the members that can decrease / increase (g = sigma z);
# 2. the (at most q) samples with the largest violation, topped up with the previous working
#    set, form the working set B; their kernel block K_BB (q x q), scores and variables are
#    copied out;
# 3. a local SMO solves the subproblem on B (everything else fixed), each step O(q):
#    * same-bucket pairs (a, b) of one canonical direction: U_a -= t, U_b += t, which leave c
#      and s unchanged; a has the largest z that can decrease, b maximizes the second-order
#      gain (z_a - z_b)^2 / curvature (Fan, Chen and Lin 2005), curvature
#      kappa ||P e||^2 (K_aa + K_bb - 2 K_ab).  These are the directions along which a kernel
#      dual is ill conditioned, where single-variable steps crawl;
#    * single-variable Newton steps (curvature (kappa K_ii + rho) ||P e||^2), which move c;
#    * in a full group, pair steps alpha_a -= t, alpha_b += t inside the group;
#    each round scans the block once and then takes one step per violating bucket and group;
# 4. the scores of all n samples are updated once with the kernel rows of the samples whose
#    variables changed: F += K[:, B] dU_B (O(n) per changed (sample, slot)).
#
# The kernel rows of B come from the row source (Gram matrix or LRU cache); q never exceeds
# the cache capacity, so the rows fetched in step 2 are still cached in step 4.  Scores are
# kept by slot (F^T, k x n, contiguous per slot) with their row sums S.

cdef struct Canon:
    # per variable: canonical direction e = e_p + r e_q (q = -1, r = 0 for one slot),
    # orientation sigma (d = sigma e), ||P e||^2 and the bucket of its canonical direction
    int* p
    int* q
    double* r
    double* sg
    double* pn2
    int* bucket
    int nbuckets


cdef struct Block:
    int q              # samples in the working set
    int nb             # variables in the working set
    double* K          # q x q kernel block, row-major
    double* kd         # q: kernel diagonal
    double* Ft         # k x q: scores F of the block, slot-major
    double* S          # q: row sums of F
    int* loc           # n: local index of a global sample (-1 outside the block)
    int* start         # nbuckets + 1: the block's variables are sorted by bucket
    # per block variable, in bucket order
    double* U          # sigma alpha
    double* Ulo
    double* Uhi
    double* off        # -sigma a
    int* li            # local sample
    int* gv            # global variable
    int* pos           # nb: block variables in the problem's own order (sample, group)


cdef inline bint _capped(const Prob* p, const State* st, int g) noexcept nogil:
    return g >= 0 and st.gsum[g] >= p.cap[g] - 1e-12 * (1.0 + fabs(p.cap[g]))


cdef inline double _room_up(const Prob* p, const State* st, const Canon* cn, int v, double U,
                            double Uhi) noexcept nogil:
    """How far U_v can increase (box and, when alpha grows, the group cap)."""
    cdef double room = Uhi - U, g_room
    cdef int g = p.grp[v]
    if g >= 0 and cn.sg[v] > 0:
        g_room = p.cap[g] - st.gsum[g]
        if g_room < room:
            room = g_room
    return room if room > 0.0 else 0.0


cdef inline double _room_down(const Prob* p, const State* st, const Canon* cn, int v, double U,
                              double Ulo) noexcept nogil:
    """How far U_v can decrease (box and, when alpha grows, the group cap)."""
    cdef double room = U - Ulo, g_room
    cdef int g = p.grp[v]
    if g >= 0 and cn.sg[v] < 0:
        g_room = p.cap[g] - st.gsum[g]
        if g_room < room:
            room = g_room
    return room if room > 0.0 else 0.0


cdef inline double _zval(const Prob* p, const State* st, const Canon* cn, int v,
                         const double* Ft, const double* S, int ld, int i, double off) noexcept nogil:
    """U-space gradient z_v of variable v of sample i (scores F^T with leading dimension ld)."""
    cdef int a = cn.p[v], b = cn.q[v]
    cdef double r = cn.r[v], Si = S[i] / p.k
    if b >= 0:
        return p.kappa * (Ft[<Py_ssize_t> a * ld + i] + r * Ft[<Py_ssize_t> b * ld + i]
                          - (1.0 + r) * Si) + st.s[a] + r * st.s[b] + off
    return p.kappa * (Ft[<Py_ssize_t> a * ld + i] - Si) + st.s[a] + off


cdef inline void _axpy(double* y, const double* x, double t, int n) noexcept nogil:
    cdef int r
    for r in range(n):
        y[r] += t * x[r]


cdef void _apply_u(const Prob* p, State* st, const Canon* cn, int v, double t, double* Ft,
                   double* S, const double* row, int ld) noexcept nogil:
    """U_v += t: scores (one kernel row, leading dimension ld), class sums c, shift s, group."""
    cdef int a = cn.p[v], b = cn.q[v], j
    cdef double r = cn.r[v], tot
    _axpy(Ft + <Py_ssize_t> a * ld, row, t, ld)
    tot = t
    if b >= 0:
        _axpy(Ft + <Py_ssize_t> b * ld, row, r * t, ld)
        tot += r * t
    if tot != 0.0:
        _axpy(S, row, tot, ld)
    st.c[a] += t
    if b >= 0:
        st.c[b] += r * t
    if p.equality:
        st.s[a] += st.rho * t
        if b >= 0:
            st.s[b] += st.rho * r * t
        if tot != 0.0:
            for j in range(p.k):
                st.s[j] -= st.rho * tot / p.k
    if p.grp[v] >= 0:
        st.gsum[p.grp[v]] += cn.sg[v] * t


cdef double _pair_pn2(const Canon* cn, int a, int b, int k) noexcept nogil:
    """||P (d_b - d_a)||^2 for two variables (directions d = sigma e)."""
    cdef double e[64]
    cdef double tot = 0.0, sq = 0.0
    cdef int j
    for j in range(k):
        e[j] = 0.0
    e[cn.p[b]] += cn.sg[b]
    if cn.q[b] >= 0:
        e[cn.q[b]] += cn.sg[b] * cn.r[b]
    e[cn.p[a]] -= cn.sg[a]
    if cn.q[a] >= 0:
        e[cn.q[a]] -= cn.sg[a] * cn.r[a]
    for j in range(k):
        tot += e[j]
        sq += e[j] * e[j]
    return sq - tot * tot / k


cdef double _group_pair(const Prob* p, const Canon* cn, const int* vars, int m,
                        const double* z, const double* alpha, int* va, int* vb) noexcept nogil:
    """Violation of a full group's pair condition; members vars[0:m], U-gradients z, alphas.

    Sets va (position of the largest g = sigma z among members that can decrease alpha) and
    vb (of the smallest g among those that can increase it); returns g_a - g_b (<= 0: fine).
    """
    cdef int x, v
    cdef double ga = -INFINITY, gb = INFINITY, g
    va[0] = -1
    vb[0] = -1
    for x in range(m):
        v = vars[x]
        g = cn.sg[v] * z[x]
        if alpha[x] > p.lo[v] and g > ga:
            ga = g
            va[0] = x
        if alpha[x] < p.hi[v] and g < gb:
            gb = g
            vb[0] = x
    if va[0] < 0 or vb[0] < 0 or va[0] == vb[0]:
        return 0.0
    return ga - gb


cdef void _group_values(const Prob* p, const State* st, const Canon* cn, const Block* B,
                        int x0, int x1, double* zg, double* ag, int* gvars) noexcept nogil:
    """Members (global indices), U-gradients and alphas of the block group at B.pos[x0:x1]."""
    cdef int x, b
    for x in range(x0, x1):
        b = B.pos[x]
        gvars[x - x0] = B.gv[b]
        zg[x - x0] = _zval(p, st, cn, B.gv[b], B.Ft, B.S, B.q, B.li[b], B.off[b])
        ag[x - x0] = cn.sg[B.gv[b]] * B.U[b]


cdef inline void _bucket_terms(const Prob* p, const State* st, const Canon* cn, const Block* B,
                               int j, const double** Fp, const double** Fq, double* br,
                               double* cs, double* sconst) noexcept nogil:
    """Shared parts of z for bucket j: z = kappa (Fp + br Fq - cs S) + sconst + off."""
    cdef int v = B.gv[B.start[j]], a = cn.p[v], b = cn.q[v]
    Fp[0] = B.Ft + <Py_ssize_t> a * B.q
    br[0] = cn.r[v]
    sconst[0] = st.s[a]
    if b >= 0:
        Fq[0] = B.Ft + <Py_ssize_t> b * B.q
        sconst[0] += br[0] * st.s[b]
    else:
        Fq[0] = NULL
    cs[0] = (1.0 + br[0]) / p.k


cdef bint _transversal(const Prob* p, State* st, const Canon* cn, Block* B, const int* cand,
                       double sign, double eps) noexcept nogil:
    """One exact step along "U_v += sign t for one variable v of every class slot".

    For single-slot problems (one bucket per slot): moving one variable of every slot by the
    same t changes the class sums c by t 1, so P c and the equality penalty stay put; it is the
    move that changes the common value of c (the intercepts' level).  On near-duplicate
    samples it has almost no curvature while each single step sees the penalty rho, so the
    single steps of the k buckets cancel and crawl; this step goes straight to the minimum
    along the joint direction.  cand[j] is bucket j's most violating candidate that can move
    in the direction ``sign`` (-1 if none).  Returns whether a step was taken.
    """
    cdef int j, a, b, ia, ib, k = p.k
    cdef double grad = 0.0, curv = 0.0, room, t = INFINITY, cross = 0.0
    for j in range(cn.nbuckets):
        a = cand[j]
        if a < 0:
            return False
        grad += _zval(p, st, cn, B.gv[a], B.Ft, B.S, B.q, B.li[a], B.off[a])
        room = (_room_up(p, st, cn, B.gv[a], B.U[a], B.Uhi[a]) if sign > 0 else
                _room_down(p, st, cn, B.gv[a], B.U[a], B.Ulo[a]))
        if room < t:
            t = room
    if sign * grad >= -eps or t <= 0.0:
        return False
    for j in range(cn.nbuckets):
        ia = B.li[cand[j]]
        curv += B.kd[ia]
        for b in range(cn.nbuckets):
            ib = B.li[cand[b]]
            cross += B.K[<Py_ssize_t> ia * B.q + ib]
    curv = p.kappa * (curv - cross / k)
    if curv > 1e-12 and -sign * grad / curv < t:
        t = -sign * grad / curv
    for j in range(cn.nbuckets):
        a = cand[j]
        B.U[a] += sign * t
        _apply_u(p, st, cn, B.gv[a], sign * t, B.Ft, B.S, B.K + <Py_ssize_t> B.li[a] * B.q, B.q)
    return True


cdef long long _block_smo(const Prob* p, State* st, const Canon* cn, Block* B, double eps,
                          long long max_steps, double* l, double* u, int* la, int* ua,
                          double* zg, double* ag, int* gvars, bint grouped) noexcept nogil:
    """Pair / single / group-pair SMO on the working set until its violation is <= eps."""
    cdef int q = B.q, k = p.k, nbk = cn.nbuckets, j, idx, a, b, best, vs, ia, ib, g
    cdef int va, vb, x0, x1, pa, pb
    cdef long long steps = 0, round_start
    cdef double kappa = p.kappa, z, za, zu, zb = 0.0, curv, gain, bestgain, t, room, Kaa
    cdef double single, gain_pair, gain_single, viol, gv_, pn2, br, cs, sconst
    cdef const double* row
    cdef const double* Fp
    cdef const double* Fq
    # transversal steps: every variable on one slot and every slot a bucket of its own
    cdef bint transversal = nbk == k and not grouped
    for j in range(nbk):
        if not transversal:
            break
        if B.start[j] == B.start[j + 1] or cn.q[B.gv[B.start[j]]] >= 0:
            transversal = False
    while True:
        viol = 0.0
        for j in range(nbk):
            l[j] = -INFINITY
            u[j] = INFINITY
            la[j] = -1
            ua[j] = -1
            if B.start[j] == B.start[j + 1]:
                continue
            _bucket_terms(p, st, cn, B, j, &Fp, &Fq, &br, &cs, &sconst)
            for idx in range(B.start[j], B.start[j + 1]):
                ib = B.li[idx]
                z = kappa * (Fp[ib] - cs * B.S[ib]) + sconst + B.off[idx]
                if Fq != NULL:
                    z += kappa * br * Fq[ib]
                if z < u[j] and (B.U[idx] < B.Uhi[idx] if not grouped else
                                 _room_up(p, st, cn, B.gv[idx], B.U[idx], B.Uhi[idx]) > 0.0):
                    u[j] = z
                    ua[j] = idx
                if z > l[j] and (B.U[idx] > B.Ulo[idx] if not grouped else
                                 _room_down(p, st, cn, B.gv[idx], B.U[idx], B.Ulo[idx]) > 0.0):
                    l[j] = z
                    la[j] = idx
            if -u[j] > viol:
                viol = -u[j]
            if l[j] > viol:
                viol = l[j]
        # full groups: pair conditions (B.pos runs through the block in the problem's order)
        if grouped:
            x0 = 0
            while x0 < B.nb:
                g = p.grp[B.gv[B.pos[x0]]]
                x1 = x0 + 1
                while x1 < B.nb and g >= 0 and p.grp[B.gv[B.pos[x1]]] == g:
                    x1 += 1
                if _capped(p, st, g):
                    _group_values(p, st, cn, B, x0, x1, zg, ag, gvars)
                    gv_ = _group_pair(p, cn, gvars, x1 - x0, zg, ag, &va, &vb)
                    if gv_ > viol:
                        viol = gv_
                x0 = x1
        if viol <= eps or steps >= max_steps:
            break
        round_start = steps
        for j in range(nbk):
            if (l[j] <= eps and u[j] >= -eps) or steps >= max_steps:
                continue
            # fresh values of the bucket's extreme candidates
            za = -INFINITY
            zu = INFINITY
            if la[j] >= 0:
                za = _zval(p, st, cn, B.gv[la[j]], B.Ft, B.S, q, B.li[la[j]], B.off[la[j]])
            if ua[j] >= 0:
                zu = _zval(p, st, cn, B.gv[ua[j]], B.Ft, B.S, q, B.li[ua[j]], B.off[ua[j]])
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
            pn2 = cn.pn2[B.gv[la[j] if la[j] >= 0 else ua[j]]]
            if la[j] >= 0 and za - zu > 0.0:
                a = la[j]
                ia = B.li[a]
                row = B.K + <Py_ssize_t> ia * q
                Kaa = B.kd[ia]
                bestgain = -1.0
                _bucket_terms(p, st, cn, B, j, &Fp, &Fq, &br, &cs, &sconst)
                for idx in range(B.start[j], B.start[j + 1]):
                    if idx == a or not (B.U[idx] < B.Uhi[idx] if not grouped else _room_up(
                            p, st, cn, B.gv[idx], B.U[idx], B.Uhi[idx]) > 0.0):
                        continue
                    ib = B.li[idx]
                    z = kappa * (Fp[ib] - cs * B.S[ib]) + sconst + B.off[idx]
                    if Fq != NULL:
                        z += kappa * br * Fq[ib]
                    if z >= za:
                        continue
                    curv = kappa * pn2 * (Kaa + B.kd[ib] - 2.0 * row[ib])
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
                curv = (kappa * B.kd[B.li[vs]] + st.rho * p.equality) * pn2
                gain_single = 0.5 * single * single / (curv if curv > 1e-12 else 1e-12)
            if best < 0 and vs < 0:
                continue
            steps += 1
            if best >= 0 and gain_pair >= gain_single:
                a = la[j]
                b = best
                ib = B.li[b]
                curv = kappa * pn2 * (Kaa + B.kd[ib] - 2.0 * row[ib])
                room = _room_down(p, st, cn, B.gv[a], B.U[a], B.Ulo[a])
                t = _room_up(p, st, cn, B.gv[b], B.U[b], B.Uhi[b])
                if t < room:
                    room = t
                t = room
                if curv > 1e-12 and (za - zb) / curv < room:
                    t = (za - zb) / curv
                B.U[a] -= t
                B.U[b] += t
                _apply_u(p, st, cn, B.gv[a], -t, B.Ft, B.S, row, q)
                _apply_u(p, st, cn, B.gv[b], t, B.Ft, B.S, B.K + <Py_ssize_t> ib * q, q)
            else:
                # single Newton step on the bucket's most violating variable (moves c and s)
                ia = B.li[vs]
                curv = (kappa * B.kd[ia] + st.rho * p.equality) * pn2
                z = za if vs == la[j] else zu
                if z < 0.0:
                    room = _room_up(p, st, cn, B.gv[vs], B.U[vs], B.Uhi[vs])
                    t = room if curv <= 1e-12 or -z / curv > room else -z / curv
                else:
                    room = _room_down(p, st, cn, B.gv[vs], B.U[vs], B.Ulo[vs])
                    t = -room if curv <= 1e-12 or z / curv > room else -z / curv
                B.U[vs] += t
                _apply_u(p, st, cn, B.gv[vs], t, B.Ft, B.S, B.K + <Py_ssize_t> ia * q, q)
        if transversal and steps < max_steps:
            if _transversal(p, st, cn, B, ua, 1.0, eps):
                steps += 1
            if _transversal(p, st, cn, B, la, -1.0, eps):
                steps += 1
        # one pair step inside every violating full group
        if grouped:
            x0 = 0
            while x0 < B.nb and steps < max_steps:
                g = p.grp[B.gv[B.pos[x0]]]
                x1 = x0 + 1
                while x1 < B.nb and g >= 0 and p.grp[B.gv[B.pos[x1]]] == g:
                    x1 += 1
                if _capped(p, st, g):
                    _group_values(p, st, cn, B, x0, x1, zg, ag, gvars)
                    gv_ = _group_pair(p, cn, gvars, x1 - x0, zg, ag, &va, &vb)
                    if gv_ > eps:
                        steps += 1
                        pa = B.pos[x0 + va]
                        pb = B.pos[x0 + vb]
                        a = gvars[va]
                        b = gvars[vb]
                        ia = B.li[pa]
                        curv = (kappa * B.kd[ia] + st.rho * p.equality) * _pair_pn2(cn, a, b, k)
                        room = ag[va] - p.lo[a]
                        if p.hi[b] - ag[vb] < room:
                            room = p.hi[b] - ag[vb]
                        t = room
                        if curv > 1e-12 and gv_ / curv < room:
                            t = gv_ / curv
                        if t > 0.0:
                            # alpha_a -= t, alpha_b += t (U = sigma alpha)
                            B.U[pa] -= cn.sg[a] * t
                            B.U[pb] += cn.sg[b] * t
                            row = B.K + <Py_ssize_t> ia * q
                            _apply_u(p, st, cn, a, -cn.sg[a] * t, B.Ft, B.S, row, q)
                            _apply_u(p, st, cn, b, cn.sg[b] * t, B.Ft, B.S, row, q)
                x0 = x1
        if steps == round_start:
            break                  # no move possible (e.g. non-finite values): let the caller see it
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


cdef double _sample_violation(const Prob* p, const State* st, const Canon* cn, int i,
                              const double* Ft, const double* S, int n, double* zg,
                              double* ag, int* gvars, bint grouped) noexcept nogil:
    """Largest violation of the inner KKT conditions among sample i's variables and groups."""
    cdef int v, v0 = p.ptr[i], v1 = p.ptr[i + 1], g, w, va, vb
    cdef double sc = 0.0, z, U, sig, gv_
    for v in range(v0, v1):
        if p.hi[v] <= p.lo[v]:
            continue
        sig = cn.sg[v]
        z = _zval(p, st, cn, v, Ft, S, n, i, -sig * p.lin[v])
        if not grouped:
            # alpha can move towards its bound in the direction that lowers the objective
            if (z < -sc and (st.alpha[v] < p.hi[v] if sig > 0 else st.alpha[v] > p.lo[v])) or \
                    (z > sc and (st.alpha[v] > p.lo[v] if sig > 0 else st.alpha[v] < p.hi[v])):
                sc = fabs(z)
            continue
        U = sig * st.alpha[v]
        if z < -sc and _room_up(p, st, cn, v, U, p.hi[v] if sig > 0 else -p.lo[v]) > 0.0:
            sc = -z
        elif z > sc and _room_down(p, st, cn, v, U, p.lo[v] if sig > 0 else -p.hi[v]) > 0.0:
            sc = z
    if not grouped:
        return sc
    v = v0
    while v < v1:
        g = p.grp[v]
        w = v + 1
        while w < v1 and g >= 0 and p.grp[w] == g:
            w += 1
        if _capped(p, st, g):
            for va in range(v, w):
                gvars[va - v] = va
                zg[va - v] = _zval(p, st, cn, va, Ft, S, n, i, -cn.sg[va] * p.lin[va])
                ag[va - v] = st.alpha[va]
            gv_ = _group_pair(p, cn, gvars, w - v, zg, ag, &va, &vb)
            if gv_ > sc:
                sc = gv_
        v = w
    return sc


cdef int _canonical(const Prob* p, Canon* cn) noexcept nogil:
    """Canonical directions and buckets of every variable; -1 if a coefficient is not +-1."""
    cdef int v, a, b, key, nkeys = p.k * (p.k + 1) * 3
    cdef double c1, c2, r
    cdef int* ids = <int*> malloc(nkeys * sizeof(int))
    if ids == NULL:
        return -1
    for key in range(nkeys):
        ids[key] = -1
    cn.nbuckets = 0
    for v in range(p.nv):
        c1 = p.c1[v]
        a = p.s1[v]
        b = p.s2[v]
        if b < 0:
            cn.p[v] = a
            cn.q[v] = -1
            cn.r[v] = 0.0
            cn.sg[v] = c1
        else:
            c2 = p.c2[v]
            if a < b:
                cn.p[v] = a
                cn.q[v] = b
                cn.sg[v] = c1
                cn.r[v] = c2 / c1
            else:
                cn.p[v] = b
                cn.q[v] = a
                cn.sg[v] = c2
                cn.r[v] = c1 / c2
        r = cn.r[v]
        cn.pn2[v] = 1.0 + r * r - (1.0 + r) * (1.0 + r) / p.k
        key = (cn.p[v] * (p.k + 1) + cn.q[v] + 1) * 3 + <int> (r + 1.0)
        if ids[key] < 0:
            ids[key] = cn.nbuckets
            cn.nbuckets += 1
        cn.bucket[v] = ids[key]
    free(ids)
    return 0


cdef double _smo_gap(const Prob* p, const State* st, const double* Ft, int n, double* Fi,
                     double* zbuf, char* used) noexcept nogil:
    """Relative duality gap of the current point, scores held slot-major in Ft (k x n)."""
    cdef double acc[GAP_SUMS]
    cdef double primal, size, gap
    cdef int i, j
    _zero_sums(acc)
    for i in range(n):
        for j in range(p.k):
            Fi[j] = Ft[<Py_ssize_t> j * n + i]
        _sample_gap(p, st, i, Fi, acc, zbuf, used)
    gap = _gap_from_sums(p, st, acc, &primal, &size)
    return _relative(gap, size)


cdef int _smo(RowSource src, const Prob* p, State* st, Schedule* sched, long long max_steps,
              int qmax, int verbose, long long* steps_out) noexcept nogil:
    """ALM + working-set SMO (see the note above); returns a STATUS_* code."""
    cdef int n = p.n, k = p.k, nv = p.nv
    cdef int i, j, v, a, b, m, qb, status = STATUS_CONVERGED, outer = 0, done_inner, nb, x
    cdef int nprev = 0, nbk, maxper = p.maxper
    cdef bint grouped = 0
    cdef long long steps = 0, blocks = 0, budget, taken, work = 0
    cdef double z, sc, sig, d, tot, viol = INFINITY, feas, gap, Ssum
    cdef const double* row
    cdef Block B
    cdef Canon cn
    if qmax > n:
        qmax = n
    if qmax < 1:
        qmax = 1
    cdef Py_ssize_t nbmax = <Py_ssize_t> qmax * maxper + 1
    cdef int nkeys = k * (k + 1) * 3
    cdef double* Ft = <double*> malloc(<Py_ssize_t> k * n * sizeof(double))
    cdef double* S = <double*> malloc(n * sizeof(double))
    cdef double* score = <double*> malloc(n * sizeof(double))
    cdef int* cand = <int*> malloc(n * sizeof(int))
    cdef int* prev = <int*> malloc(qmax * sizeof(int))
    cdef double* l = <double*> malloc(nkeys * sizeof(double))
    cdef double* u = <double*> malloc(nkeys * sizeof(double))
    cdef int* la = <int*> malloc(nkeys * sizeof(int))
    cdef int* ua = <int*> malloc(nkeys * sizeof(int))
    cdef double* zg = <double*> malloc((maxper + 1) * sizeof(double))
    cdef double* ag = <double*> malloc((maxper + 1) * sizeof(double))
    cdef int* gvars = <int*> malloc((maxper + 1) * sizeof(int))
    cdef char* used = <char*> malloc(maxper + 1)
    cdef double* Fi = <double*> malloc(k * sizeof(double))
    cdef int* sample = <int*> malloc(nv * sizeof(int) + sizeof(int))
    cdef int* bv = <int*> malloc(nbmax * sizeof(int))
    cdef double* dU = <double*> malloc(<Py_ssize_t> qmax * k * sizeof(double))
    cn.p = <int*> malloc(nv * sizeof(int) + sizeof(int))
    cn.q = <int*> malloc(nv * sizeof(int) + sizeof(int))
    cn.r = <double*> malloc(nv * sizeof(double) + sizeof(double))
    cn.sg = <double*> malloc(nv * sizeof(double) + sizeof(double))
    cn.pn2 = <double*> malloc(nv * sizeof(double) + sizeof(double))
    cn.bucket = <int*> malloc(nv * sizeof(int) + sizeof(int))
    B.K = <double*> malloc(<Py_ssize_t> qmax * qmax * sizeof(double))
    B.kd = <double*> malloc(qmax * sizeof(double))
    B.Ft = <double*> malloc(<Py_ssize_t> k * qmax * sizeof(double))
    B.S = <double*> malloc(qmax * sizeof(double))
    B.loc = <int*> malloc(n * sizeof(int))
    B.start = <int*> malloc((nkeys + 1) * sizeof(int))
    B.U = <double*> malloc(nbmax * sizeof(double))
    B.Ulo = <double*> malloc(nbmax * sizeof(double))
    B.Uhi = <double*> malloc(nbmax * sizeof(double))
    B.off = <double*> malloc(nbmax * sizeof(double))
    B.li = <int*> malloc(nbmax * sizeof(int))
    B.gv = <int*> malloc(nbmax * sizeof(int))
    B.pos = <int*> malloc(nbmax * sizeof(int))
    if (Ft == NULL or S == NULL or score == NULL or cand == NULL or prev == NULL or l == NULL
            or u == NULL or la == NULL or ua == NULL or zg == NULL or ag == NULL or bv == NULL
            or gvars == NULL or sample == NULL or used == NULL or Fi == NULL
            or dU == NULL or cn.p == NULL or cn.q == NULL or cn.r == NULL or cn.sg == NULL
            or cn.pn2 == NULL or cn.bucket == NULL or B.K == NULL or B.kd == NULL
            or B.Ft == NULL or B.S == NULL or B.loc == NULL or B.start == NULL or B.U == NULL
            or B.Ulo == NULL or B.Uhi == NULL or B.off == NULL or B.li == NULL or B.gv == NULL
            or B.pos == NULL or _canonical(p, &cn) < 0):
        status = STATUS_NO_MEMORY
    else:
        nbk = cn.nbuckets
        for v in range(nv):
            if p.grp[v] >= 0:
                grouped = 1
        for i in range(n):
            S[i] = 0.0
            B.loc[i] = -1
            for v in range(p.ptr[i], p.ptr[i + 1]):
                sample[v] = i
            for j in range(k):
                Ft[<Py_ssize_t> j * n + i] = src.F[i, j]
                S[i] += src.F[i, j]
        for a in range(qmax * k):
            dU[a] = 0.0
    while status == STATUS_CONVERGED:
        # ---------------- inner problem for fixed mu
        _start_round(p, st)
        done_inner = 0
        while True:
            # 1. global scan: violation of every sample
            viol = 0.0
            Ssum = 0.0
            m = 0
            for i in range(n):
                sc = _sample_violation(p, st, &cn, i, Ft, S, n, zg, ag, gvars, grouped)
                Ssum += S[i]
                if sc > viol:
                    viol = sc
                if sc > sched.eps_in:
                    score[m] = sc
                    cand[m] = i
                    m += 1
            if not _finite(p, st, viol) or Ssum - Ssum != 0.0:
                status = STATUS_NONFINITE
                break
            if _tick(&work, nv + n):
                status = STATUS_INTERRUPTED
                break
            if viol <= sched.eps_in:
                done_inner = 1
                break
            if steps >= max_steps:
                break
            # 2. working set: the most violating samples, topped up with the previous working
            #    set (its free variables are the partners pair steps need)
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
            for a in range(qb):
                i = cand[a]
                row = src.row(i)
                if _tick(&work, src.row_cost):
                    status = STATUS_INTERRUPTED
                    break
                B.kd[a] = src.diag(i)
                for b in range(qb):
                    B.K[<Py_ssize_t> a * qb + b] = row[cand[b]]
                for j in range(k):
                    B.Ft[j * qb + a] = Ft[<Py_ssize_t> j * n + i]
                B.S[a] = S[i]
            if status != STATUS_CONVERGED:
                break
            for j in range(nbk + 1):
                B.start[j] = 0
            nb = 0
            for a in range(qb):
                for v in range(p.ptr[cand[a]], p.ptr[cand[a] + 1]):
                    if p.hi[v] > p.lo[v]:
                        bv[nb] = v
                        nb += 1
                        B.start[cn.bucket[v] + 1] += 1
            for j in range(nbk):
                B.start[j + 1] += B.start[j]
            for x in range(nb):
                v = bv[x]
                j = cn.bucket[v]
                b = B.start[j]
                B.start[j] += 1
                sig = cn.sg[v]
                B.gv[b] = v
                B.pos[x] = b
                B.li[b] = B.loc[sample[v]]
                B.U[b] = sig * st.alpha[v]
                B.Ulo[b] = p.lo[v] if sig > 0 else -p.hi[v]
                B.Uhi[b] = p.hi[v] if sig > 0 else -p.lo[v]
                B.off[b] = -sig * p.lin[v]
            for j in range(nbk, 0, -1):
                B.start[j] = B.start[j - 1]
            B.start[0] = 0
            B.q = qb
            B.nb = nb
            # 3. local solve (every round counts at least one step of work)
            budget = max_steps - steps
            if budget > 50 * <long long> qb + 100:
                budget = 50 * <long long> qb + 100
            taken = _block_smo(p, st, &cn, &B, sched.eps_in, budget, l, u, la, ua, zg, ag,
                               gvars, grouped)
            steps += taken if taken > 0 else 1
            blocks += 1
            if _tick(&work, (taken + 1) * qb):
                status = STATUS_INTERRUPTED
                break
            # 4. write the block back; global score update with the rows of changed samples
            for b in range(nb):
                v = B.gv[b]
                d = B.U[b] - cn.sg[v] * st.alpha[v]
                if d != 0.0:
                    st.alpha[v] = cn.sg[v] * B.U[b]
                    dU[B.li[b] * k + cn.p[v]] += d
                    if cn.q[v] >= 0:
                        dU[B.li[b] * k + cn.q[v]] += cn.r[v] * d
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
                    _axpy(Ft + <Py_ssize_t> j * n, row, d, n)
                    dU[a * k + j] = 0.0
                if row != NULL and tot != 0.0:
                    _axpy(S, row, tot, n)
                if row != NULL and _tick(&work, src.row_cost):
                    status = STATUS_INTERRUPTED
            if status != STATUS_CONVERGED:
                break
        if status != STATUS_CONVERGED:
            break
        outer += 1
        steps += 1                 # an augmented-Lagrangian round is work too
        # ---------------- multiplier update
        feas = _multiplier_step(p, st, sched.scale)
        sched.resid = viol if viol > feas else feas
        if verbose:
            with gil:
                print(f"[msvm] outer {outer}: steps {steps}, blocks {blocks}, violation "
                      f"{viol:.3e}, equality {feas:.3e}, rho {st.rho:.3g}")
        if feas != feas:
            status = STATUS_NONFINITE
            break
        if not done_inner:
            status = STATUS_MAX_ITER
            break
        if _kkt_met(sched, viol, feas):
            gap = _smo_gap(p, st, Ft, n, Fi, zg, used)
            status = _gap_verdict(sched, gap)
            if status >= 0:
                break
            status = STATUS_CONVERGED
            if steps >= max_steps:
                status = STATUS_MAX_ITER
                break
            continue
        if steps >= max_steps:
            status = STATUS_MAX_ITER
            break
        _next_round(sched, st, feas)
    if status == STATUS_CONVERGED or status == STATUS_MAX_ITER or status == STATUS_GAP_FLOOR:
        for i in range(n):
            for j in range(k):
                src.F[i, j] = Ft[<Py_ssize_t> j * n + i]
    steps_out[0] = steps
    free(Ft); free(S); free(score); free(cand); free(prev); free(l); free(u); free(la)
    free(ua); free(zg); free(ag); free(gvars); free(used); free(Fi); free(sample); free(bv)
    free(dU); free(cn.p); free(cn.q); free(cn.r)
    free(cn.sg); free(cn.pn2); free(cn.bucket); free(B.K); free(B.kd); free(B.Ft); free(B.S)
    free(B.loc); free(B.start); free(B.U); free(B.Ulo); free(B.Uhi); free(B.off); free(B.li)
    free(B.gv); free(B.pos)
    return status
