"""The oracle package (oracle/, at the repository root) is independent of msvm."""

import subprocess
import sys
from pathlib import Path

import numpy as np

import oracle

ROOT = Path(__file__).resolve().parents[1]


def test_oracle_does_not_import_msvm():
    code = ("import sys, oracle, oracle.primal, oracle.losses, oracle.kernels, oracle.linalg, "
            "oracle.dual_qp; "
            "sys.exit(int('msvm' in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_square_roots():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((6, 3))
    K = B @ B.T                                      # rank 3
    S = oracle.psd_sqrt(K)
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    np.testing.assert_allclose(S @ S, K, atol=1e-10)
    R, Q, lam = oracle.range_factor(K)
    assert R.shape == (3, 6) and lam.shape == (3,)
    np.testing.assert_allclose(R.T @ R, K, atol=1e-10)


def test_losses_agree_with_each_other():
    rng = np.random.default_rng(1)
    F = rng.standard_normal((20, 4))
    F -= F.mean(axis=1, keepdims=True)
    y = rng.integers(0, 4, 20)
    w = rng.uniform(0.5, 2.0, 20)
    # the reinforced loss through the hinge weights (the dual's bounds) and directly
    via_weights = float(np.sum(oracle.loss_weights(y, 4, w, 1.0, 0.3)
                               * np.maximum(oracle.hinge_margins(F, y), 0.0)))
    assert np.isclose(oracle.reinforced_loss(F, y, w, 0.3), via_weights, rtol=1e-13)
    # k = 2: the Weston-Watkins, the Lee-Lin-Wahba and the generalized-margin hinges are the
    # binary hinge
    G = np.column_stack([-F[:, 0], F[:, 0]])
    t = rng.integers(0, 2, 20)
    binary = np.maximum(1.0 - np.where(t == 1, 1.0, -1.0) * 2 * F[:, 0], 0.0)
    np.testing.assert_allclose(oracle.ww_losses(G, t), binary)
    np.testing.assert_allclose(oracle.weighted_losses(G, t, np.eye(2)), binary)
    # truncation only lowers the loss, and s = None is no truncation
    assert np.all(oracle.robust_losses(F, y, 1.0) <= oracle.robust_losses(F, y, None))
    assert np.all(oracle.weighted_losses(F, y, np.eye(4), -0.5)
                  <= oracle.weighted_losses(F, y, np.eye(4), None))
