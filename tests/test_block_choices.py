"""The local SMO's vectorized block passes (msvm/_core/_block_scan.h) choose what the
running-extreme loops they replace choose: the same positions and values, with ties, zeros of
either sign, infinities and NaNs among the gradients."""

import math

import numpy as np
import pytest

from msvm._core._smo import _block_choices


def _reference(z, U, Ulo, Uhi, li, kd, row, skip, za, kpn2, Kaa, curv_min):
    """The one-loop rules: running extremes and a running best gain, strict comparisons."""
    up_z, up_at, lo_z, lo_at = math.inf, -1, -math.inf, -1
    for x, zx in enumerate(z):
        if zx < up_z and U[x] < Uhi[x]:
            up_z, up_at = zx, x
        if zx > lo_z and U[x] > Ulo[x]:
            lo_z, lo_at = zx, x
    best, best_gain = -1, -1.0
    for x, zx in enumerate(z):
        if x == skip or zx >= za or not U[x] < Uhi[x]:
            continue
        curv = kpn2 * (Kaa + kd[li[x]] - 2.0 * row[li[x]])
        curv = curv_min if curv_min > curv else curv
        gain = (za - zx) * (za - zx) / curv
        if gain > best_gain:
            best_gain, best = gain, x
    return up_at, up_z, lo_at, lo_z, best, best_gain


def _same(a, b):
    return all((x == y and math.copysign(1, x) == math.copysign(1, y)) or
               (isinstance(x, float) and math.isnan(x) and math.isnan(y))
               for x, y in zip(a, b))


def _case(rng, nb, q, special):
    z = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], nb) if special else rng.standard_normal(nb)
    if special:
        spots = rng.integers(0, nb, 4)
        z[spots] = rng.choice([-0.0, math.inf, -math.inf, math.nan], 4)
    Ulo = np.zeros(nb)
    Uhi = np.ones(nb)
    U = rng.choice([0.0, 0.5, 1.0], nb)
    li = rng.integers(0, q, nb).astype(np.int32)
    kd = np.ones(q)
    row = rng.uniform(-1.0, 1.0, q)
    if special:
        row[rng.integers(0, q)] = 1.0           # zero curvature: curv_min takes over
    return z, U, Ulo, Uhi, li, kd, row


@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("nb", [1, 2, 7, 64, 301])
def test_block_choices_match_the_running_extremes(nb, special):
    """Extremes and partner equal the one-loop rules' on random buckets, ties and special
    values included (every compiled version the machine runs)."""
    rng = np.random.default_rng(nb + 1000 * special)
    for trial in range(40):
        z, U, Ulo, Uhi, li, kd, row = _case(rng, nb, 17, special)
        skip = int(rng.integers(-1, nb))
        za = float(rng.choice([0.5, 1.0, 2.0, math.inf]))
        args = (z, U, Ulo, Uhi, li, kd, row, skip, za, 0.7, 1.0, 1e-12)
        got = _block_choices(*args)
        want = _reference(*args)
        assert _same(got, want), (trial, got, want)


def test_block_choices_first_of_tied_zeros():
    """Among tied zeros of either sign the first position is chosen, with its own sign."""
    z = np.array([0.5, 0.0, -0.0, 0.0, -0.0])
    U = np.full(5, 0.5)
    got = _block_choices(z, U, np.zeros(5), np.ones(5), np.zeros(5, np.int32), np.ones(1),
                         np.zeros(1), -1, 1.0, 1.0, 1.0, 1e-12)
    assert got[0] == 1 and math.copysign(1, got[1]) == 1.0
    assert got[2] == 0 and got[3] == 0.5
    assert got[4] == 1 and got[5] == pytest.approx(0.5)
