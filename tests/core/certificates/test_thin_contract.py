"""Issue 39, twenty-fifth round (helper thin34): the joint anchored test's contraction proof in the thin route's
blocks (:mod:`nspca_core.certificates.thin_contract`).

- Every joint test it proves is a bound: proved only where every ``tau_t >= OPT_{k_t}`` (brute force), on psd,
  rank-deficient and indefinite A, whole rows and narrow lists padded with their caps, float64 and float32 products,
  cold and warm starts (a failure's ratios start the next test, as :func:`.coupled._aimed` does).
- It only proves more: where the former iteration proves, so does it; where it fails, the former iteration fails
  too and with the same ratios.
- The schedule (:func:`~nspca_core.certificates.thin_contract.due`) on both sides of its iterations, only inside its
  block; the block entered by the thin route (``certify_thin``) and not by the dense route; the nodes and the
  anchored branches never try it.
- Since helper thin35 the plain tests (S's own bound, :func:`.anchor.anchored_rowsum_test`) try it too: proved only
  at ``tau >= OPT`` (brute force) cold and warm started, the scaling to at most 1 needed there as well; the map it
  reads is the iteration's own (:func:`~nspca_core.certificates.thin_contract.plain`), the rows' narrowed lists left
  as they were.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core.certificates import anchor, thin_contract
from nspca_core.certificates.anchor import AnchorRows, anchored_joint_test
from nspca_core.certificates.anchor_sums import float32_products

from tests.bruteforce import brute_opt


def _matrix(n: int, seed: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "indefinite":  # (the theorem needs only symmetry: negative entries and eigenvalues)
        B = rng.standard_normal((n, n))
        A = (B + B.T) / 2 + np.diag(rng.uniform(0.0, 3.0, n))
        return A
    X = rng.standard_normal((n + 2, n)) * rng.uniform(0.3, 2.0, n)
    X[:, : n // 2] += rng.standard_normal((n + 2, 1)) * rng.uniform(0.5, 2.0)
    if kind == "thin":
        X = X[:3]
    return X.T @ X / X.shape[0]


def _rows(A: np.ndarray, k: int, width, f32: bool) -> AnchorRows:
    if f32:
        with float32_products():
            return AnchorRows(A, k, width=width)
    return AnchorRows(A, k, width=width)


def _joint(rows, ks, taus, r=None, on=True):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(thin_contract, "due", (lambda it: True) if on else (lambda it: False))
        return anchored_joint_test(rows, ks, taus, r)


def _plain(rows, tau, r=None, on=True):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(thin_contract, "due", (lambda it: True) if on else (lambda it: False))
        return anchor.anchored_rowsum_test(rows, tau, r)


def _one(which, rows, k, tau, r=None, on=True):
    return _joint(rows, [k], [tau], r, on) if which == "joint" else _plain(rows, tau, r, on)


@pytest.mark.parametrize("which", ["joint", "plain"])
@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 9), k=st.integers(2, 6), seed=st.integers(0, 2**31 - 1),
       kind=st.sampled_from(["psd", "thin", "indefinite"]), width=st.sampled_from([None, 1, 2]),
       f32=st.booleans(), fracs=st.lists(st.floats(0.85, 1.1), min_size=1, max_size=6))
@example(n=6, k=3, seed=1, kind="psd", width=1, f32=True, fracs=[0.99, 1.0, 1.01])
# (hypothesis' find: ratios above 1 left unscaled, a kept list's cap no longer bounds the products it stands for; the
# same case in the plain test)
@example(n=5, k=2, seed=480, kind="indefinite", width=1, f32=False, fracs=[0.9375])
def test_contraction_proves_only_above_opt(which, n, k, seed, kind, width, f32, fracs):
    """A joint test of one hypothesis (sparsity k at tau), or the plain test (S's own anchored test, thin35), with the
    contraction tried at every iteration, cold and warm started (each failure's ratios start the test above it, as a
    bisection does): proved only at ``tau >= OPT`` (brute force); never proving less than the former iteration from
    the same start, its failures the former ones with the same ratios."""
    A = _matrix(n, seed, kind)
    k = min(k, n)
    opt, _ = brute_opt(A, k)
    rows = _rows(A, k, width, f32)
    r_fail = None
    for tau in sorted(opt * f for f in fracs):
        ok, r = _one(which, rows, k, tau, r_fail)
        ok0, r0 = _one(which, rows, k, tau, r_fail, on=False)  # (the former iteration from the same start)
        if ok:
            assert tau >= opt * (1 - 1e-12), (tau, opt)
        assert ok or not ok0  # (the former iteration proves: so does this one)
        if not ok:
            assert np.array_equal(r, r0)  # (the same iterates: the same ratios handed on)
            r_fail = r


@settings(max_examples=40, deadline=None)
@given(n=st.integers(4, 8), k=st.integers(3, 6), seed=st.integers(0, 2**31 - 1),
       kind=st.sampled_from(["psd", "thin", "indefinite"]), width=st.sampled_from([None, 2]),
       f32=st.booleans(), frac=st.floats(0.95, 1.08), spread=st.floats(0.0, 0.05))
def test_joint_contraction_proves_only_above_each_opt(n, k, seed, kind, width, f32, frac, spread):
    """The joint test with the contraction: proved only where every hypothesis ``tau_t >= OPT_{k_t}`` (brute force)."""
    A = _matrix(n, seed, kind)
    k = min(k, n)
    ks = np.arange(2, k + 1)
    opts = np.array([brute_opt(A, int(i))[0] for i in ks])
    taus = opts * frac * (1 + spread * np.linspace(-1, 1, ks.size))
    rows = _rows(A, k, width, f32)
    ok, r = _joint(rows, ks, taus)
    ok0, r0 = _joint(rows, ks, taus, on=False)
    if ok:
        assert np.all(taus >= opts * (1 - 1e-12)), (taus, opts)
    assert ok or not ok0
    if not ok:
        assert np.array_equal(r, r0)


def test_contraction_proves_near_the_optimum_where_the_iteration_gives_up():
    """Its point: a tau just above OPT that the former iteration gives up on (its iterates fall too slowly below 1),
    proved by the contraction; one just below OPT proved by neither."""
    A = _matrix(9, 5, "psd")
    opt, _ = brute_opt(A, 5)
    rows = AnchorRows(A, 5)
    lo, hi = opt, opt * 1.2  # (the smallest tau the contraction proves: bisected; the former test fails there)
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _joint(rows, [5], [mid])[0] else (mid, hi)
    assert hi >= opt and _joint(rows, [5], [hi])[0] and not _joint(rows, [5], [hi], on=False)[0]
    assert not _joint(rows, [5], [opt * (1 - 1e-9)])[0]


def test_contracts_reads_the_scaled_ratios():
    """:func:`~nspca_core.certificates.thin_contract.contracts`: the ratios scaled to a largest entry of at most 1
    (never above: the lists' caps bound the products of ratios up to 1 only), G read there once, strictly below u
    wherever u > 0 (rows where u = 0 free); no proof from zero or non-finite ratios."""
    seen = []

    def G(u):
        seen.append(u.copy())
        return u * 0.5

    assert thin_contract.contracts(np.array([4.0, 2.0, 0.0]), G)
    assert np.array_equal(seen[-1], [1.0, 0.5, 0.0])
    assert thin_contract.contracts(np.array([0.5, 0.25]), G) and np.array_equal(seen[-1], [0.5, 0.25])
    assert not thin_contract.contracts(np.array([0.5, 0.25]), lambda u: u)  # (equal: not a contraction)
    assert not thin_contract.contracts(np.array([0.5, 0.25]), lambda u: np.array([0.4, 0.25]))
    assert thin_contract.contracts(np.array([0.5, 0.0]), lambda u: np.array([0.4, 7.0]))  # (u = 0: free)
    calls = len(seen)
    assert not thin_contract.contracts(np.zeros(3), G) and not thin_contract.contracts(np.array([np.inf, 1.0]), G)
    assert len(seen) == calls  # (not read)


def test_due_on_both_sides_and_only_inside_its_block():
    """Tried at iterations 0, 1, 3, 7, 15 (not 2, 4, 5, 6, 8..14) inside :func:`block`, never outside it."""
    its = range(20)
    assert not any(thin_contract.due(i) for i in its)
    with thin_contract.block():
        assert [i for i in its if thin_contract.due(i)] == [0, 1, 3, 7, 15]
    assert not any(thin_contract.due(i) for i in its)


def test_block_entered_by_the_thin_route_only(monkeypatch):
    """``certify`` on thin data the split route takes by cost (60 x 2,400 genes) tries the contraction; the dense
    route's certificate (300 x 40 data) never does (the floats of every other route are the former ones)."""
    calls = {"n": 0}
    real = thin_contract.contracts

    def counted(v, G):
        calls["n"] += 1
        return real(v, G)

    monkeypatch.setattr(thin_contract, "contracts", counted)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2400)) + rng.standard_normal((60, 1)) * (np.arange(2400) < 300)
    c = nc.certify(X, k=20)
    assert calls["n"] > 0 and c.upper_bound >= c.lower
    calls["n"] = 0
    nc.certify(rng.standard_normal((300, 40)), k=5)
    assert calls["n"] == 0


def test_anchor_row_fixpoint_calls_it_for_joint_and_plain_tests_only(monkeypatch):
    """A node test (members fixed, the exact mode's) and a test with an anchor fixed (the anchored branches) never
    try it; the plain test (S's own bound, since helper thin35) and the joint test do."""
    asked = []
    monkeypatch.setattr(thin_contract, "due", lambda it: True)
    monkeypatch.setattr(thin_contract, "contracts", lambda v, G: asked.append(1) or False)
    A = _matrix(8, 2, "psd")
    rows = AnchorRows(A, 4)
    gap = anchor._gaps(rows, float(np.linalg.eigvalsh(A)[-1]) * 0.9)
    inc = np.zeros(8, dtype=bool)
    inc[0] = True
    anchor.row_fixpoint(rows, gap, np.ones(8), inc=inc, exc=np.zeros(8, dtype=bool), max_iter=5)
    anchor.row_fixpoint(rows, gap, np.ones(8), anchor=0, max_iter=5)
    assert not asked
    anchor.row_fixpoint(rows, gap, np.ones(8), max_iter=5)
    assert len(asked) == 5
    anchor.row_fixpoint(rows, gap[:, None], np.ones(8), max_iter=5, qs=np.array([3]))
    assert len(asked) == 10




def test_plain_contraction_proves_near_the_optimum_where_the_iteration_gives_up():
    """A tau just above OPT that the former plain iteration gives up on, proved by the contraction; one just below
    OPT proved by neither."""
    A = _matrix(9, 5, "psd")
    opt, _ = brute_opt(A, 5)
    rows = AnchorRows(A, 5)
    lo, hi = opt, opt * 1.2
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _plain(rows, mid)[0] else (mid, hi)
    assert hi >= opt and _plain(rows, hi)[0] and not _plain(rows, hi, on=False)[0]
    assert not _plain(rows, opt * (1 - 1e-9))[0]


def test_plain_map_is_the_iterations_and_keeps_the_narrowed_lists():
    """:func:`~nspca_core.certificates.thin_contract.plain`: the iteration's floats ``s(u) inflate / gap`` (the
    sums of :func:`.anchor_sums._plain_sums` at u), the rows' narrowed lists and last ratios as they were."""
    from nspca_core.certificates.anchor_sums import _plain_sums
    A = _matrix(60, 3, "psd")
    rows = _rows(A, 4, None, True)  # (float32 products, 48 kept of 59: the narrowed sums' rows)
    gap = anchor._gaps(rows, float(np.linalg.eigvalsh(A)[-1]) * 0.9)
    u = np.linspace(0.2, 1.0, 60)
    last = np.full(60, 0.5)
    rows.narrowed, rows.narrow_last = None, last
    g = thin_contract.plain(rows, gap, 1.5)(u)
    assert rows.narrowed is None and rows.narrow_last is last
    assert np.array_equal(g, _plain_sums(rows, u) * 1.5 / gap)
