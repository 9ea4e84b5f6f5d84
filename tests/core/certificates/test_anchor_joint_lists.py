"""Issue 39, the twenty-seventh round (helper wide38): the joint anchored test's block from lists kept across its
passes (:mod:`nspca_core.certificates.anchor_joint`).  Properties: at every call of a sequence of ratios (mostly
decreasing, as the test's iterates; some above the lists' ratios, some read only) the block is the one sorted from
every row's whole list, float for float (ties, values over many binades, subnormal and zero ratios, the float32
values of :func:`.anchor_sums.float32_products`, a cap padding); whole joint tests, and a second one started from a
failure's ratios as :func:`.coupled._aimed` starts it, give the same answers and ratios as with the lists off; a
proved joint test is at least the brute-force optimum at every sparsity it asks; and the lists are read at all
(the rule acts)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor_joint as aj
from nspca_core.certificates import anchor_sums as sums
from nspca_core.certificates.anchor import _EPS, AnchorRows, _gaps, _joint_ratio, anchored_joint_test
from nspca_core.certificates.anchor_sums import _prods32, float32_products

from tests.bruteforce import brute_opt


def _psd(n: int, seed: int, ties: bool, spread) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + 3, n)) * rng.uniform(0.2, 3.0, n)
    X[:, : n // 2] += rng.standard_normal((n + 3, 1))  # (a correlated block: many positive entries)
    if spread:  # entries over many binades ("far": sums of float32 products that round in float64)
        X *= np.exp2(rng.uniform(-40, 0, n)) if spread == "far" else np.exp2(rng.uniform(-30, 10, n))
    A = X.T @ X / X.shape[0]
    top = np.abs(A).max()
    return np.round(A / top, 1) * top if ties else A  # (rounded: equal products, ties the lists treat apart)


def _whole_block(rows: AnchorRows, r: np.ndarray, qmax: int) -> np.ndarray:
    """The block as sorted from every row's whole list (the former route of :func:`.anchor_sums._joint_ratio`)."""
    p = _prods32(rows, r)
    p.sort(axis=1)
    return np.maximum(p[:, p.shape[1] - qmax:], rows.cap32[:, None])


def _lists_on(mp, extra: float = aj._EXTRA):
    """The lists for any size of table (the defaults keep them to tables of 192 rows and more)."""
    mp.setattr(aj, "_MIN_ROWS", 0)
    mp.setattr(aj, "_MIN_SPARED", 1)
    mp.setattr(aj, "_EXTRA_MIN", 1)
    mp.setattr(aj, "_EXTRA", extra)


def _reading(monkeypatch) -> list:
    """Counts the passes that read the lists (:meth:`JointLists.prods32`)."""
    seen = []
    real = aj.JointLists.prods32
    monkeypatch.setattr(aj.JointLists, "prods32", lambda self, r: (seen.append(1), real(self, r))[1])
    return seen


@settings(max_examples=60, deadline=None)
@given(n=st.integers(8, 48), k=st.integers(2, 12), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       spread=st.booleans(), f32=st.booleans(), width=st.sampled_from([None, 6, 12]), steps=st.integers(2, 9),
       extra=st.sampled_from([0.0, 0.25, 0.75]), data=st.data())
def test_block_is_the_whole_lists_float_for_float(n, k, seed, ties, spread, f32, width, steps, extra, data):
    with pytest.MonkeyPatch.context() as mp:
        _lists_on(mp, extra)
        _calls(n, k, seed, ties, spread, f32, width, steps, data)


def _calls(n, k, seed, ties, spread, f32, width, steps, data):
    A = _psd(n, seed, ties, spread)
    k = min(k, n)
    rng = np.random.default_rng(seed + 7)
    if f32:
        with float32_products():
            rows = AnchorRows(A, k, width=width)
    else:
        rows = AnchorRows(A, k, width=width)
    L = rows.idx.shape[1]
    r = np.ones(n)
    for _ in range(steps):
        move = data.draw(st.sampled_from(["down", "down", "down", "up", "ones", "zeros", "tiny"]))
        if move == "down":  # (the test's iterates: entrywise no larger)
            r = r * rng.uniform(0.2, 1.0, n) ** rng.uniform(0.0, 3.0)
        elif move == "up":
            r = np.minimum(1.0, r * rng.uniform(1.0, 1.5, n))
        elif move == "ones":
            r = np.ones(n)
        elif move == "zeros":
            r = r.copy()
            r[rng.random(n) < 0.3] = 0.0
        else:
            r = r * 1e-42
        qmax = data.draw(st.integers(1, max(1, min(k - 1, L - 1))))
        if qmax >= L:
            continue
        update = data.draw(st.booleans())
        got = aj.joint_top(rows, r, qmax, update)
        want = _whole_block(rows, r, qmax)
        assert got.dtype == want.dtype and np.array_equal(got, want)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(5, 9), k=st.integers(2, 6), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       scale=st.floats(0.85, 1.6), f32=st.booleans())
def test_joint_tests_are_the_former_and_bound_brute_force(n, k, seed, ties, scale, f32):
    """Two joint tests (the second from the first's ratios, asking fewer sparsities higher: :func:`.coupled._aimed`'s
    order) with the lists give the answers and ratios of the whole lists, bit for bit; a proved one is at least
    OPT at every sparsity it asks (brute force)."""
    A = _psd(n, seed, ties, False)
    k = min(k, n)
    lam = float(np.linalg.eigvalsh(A)[-1])
    ks = np.arange(2, k + 1)
    taus = lam * scale * np.linspace(0.7, 1.0, ks.size)

    def run():
        if f32:
            with float32_products():
                rows = AnchorRows(A, k, width=max(2, k))
        else:
            rows = AnchorRows(A, k, width=max(2, k))
        one = anchored_joint_test(rows, ks, taus, patience=3)
        two = anchored_joint_test(rows, ks[1:], taus[1:] * 1.05, one[1])
        return one, two

    with pytest.MonkeyPatch.context() as mp:
        _lists_on(mp)
        got = run()
        mp.setattr(aj, "_MIN_ROWS", 10**9)  # (the lists off: every row sorted whole)
        want = run()
    for (ok_g, r_g), (ok_w, r_w) in zip(got, want):
        assert ok_g == ok_w and np.array_equal(r_g, r_w)
    for (ok, _), kk, tt in ((got[0], ks, taus), (got[1], ks[1:], taus[1:] * 1.05)):
        if ok:
            for i, t in zip(kk, tt):
                assert t >= brute_opt(A, int(i))[0] * (1 - 1e-9)


def test_lists_act_on_a_wide_table(monkeypatch):
    """With the module's own thresholds, a joint test on a table of 300 rows reads the lists (the rule acts), and
    its ratios are those of the whole lists at every pass."""
    reads = _reading(monkeypatch)
    A = _psd(300, 3, False, False)
    rows = AnchorRows(A, 30)
    ks = np.arange(2, 31)
    lam = float(np.linalg.eigvalsh(A)[-1])
    taus = lam * 0.3 * np.linspace(0.9, 1.0, ks.size)  # (fails after several passes)
    seen = []
    real = sums.joint_top

    def checked(rows, r, qmax, update=True):
        got = real(rows, r, qmax, update)
        seen.append(np.array_equal(got, _whole_block(rows, r, qmax)))
        return got

    monkeypatch.setattr(sums, "joint_top", checked)
    ok, r = anchored_joint_test(rows, ks, taus, max_iter=30)
    assert seen and all(seen)
    assert reads  # (the lists were read)
    gap = np.stack([_gaps(rows, float(t)) for t in taus], axis=1)
    inflate = 1.0 + (rows.k + 4) * _EPS
    a = _joint_ratio(rows, r, ks - 1, np.ascontiguousarray(gap.T), inflate, False)
    monkeypatch.setattr(aj, "_MIN_ROWS", 10**9)
    assert np.array_equal(a, _joint_ratio(rows, r, ks - 1, np.ascontiguousarray(gap.T), inflate, False))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(8, 64), k=st.integers(2, 24), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       spread=st.sampled_from([False, True, "far"]), width=st.sampled_from([None, 6, 12, 30]),
       steps=st.integers(2, 9), extra=st.sampled_from([0.0, 0.25, 0.75]), data=st.data())
def test_plain_sums_are_the_whole_rows_float_for_float(n, k, seed, ties, spread, width, steps, extra, data):
    """The plain test's row sums from the kept lists (:func:`.anchor_joint.plain_kept`) along a sequence of ratios
    (mostly decreasing; some above the lists', some read only): the whole rows' sums bit for bit (sums that round
    over many binades, ties, zeros, subnormal products), and at least the exact sums of the k - 1 largest."""
    with pytest.MonkeyPatch.context() as mp:
        _lists_on(mp, extra)
        A = _psd(n, seed, ties, spread)
        k = min(k, n)
        rows = AnchorRows(A, k, width=width)
        if not aj.plain_eligible(rows):
            return
        rng = np.random.default_rng(seed + 11)
        r = np.ones(n)
        P = np.maximum(A, 0.0)
        np.fill_diagonal(P, 0.0)
        for _ in range(steps):
            move = data.draw(st.sampled_from(["down", "down", "down", "up", "zeros", "tiny"]))
            if move == "down":
                r = r * rng.uniform(0.2, 1.0, n) ** rng.uniform(0.0, 3.0)
            elif move == "up":  # (above the lists' ratios: a new test's start)
                r = np.minimum(1.0, r * rng.uniform(1.0, 4.0, n))
            elif move == "zeros":
                r = r.copy()
                r[rng.random(n) < 0.3] = 0.0
            else:
                r = r * 1e-42
            rows.lists_read_only = data.draw(st.booleans())
            got = sums._plain_sums(rows, r)
            rows.lists_read_only = False
            assert np.array_equal(got, sums._plain_sums(rows, r, whole=True))
            exact = np.sort(P * r[None, :], axis=1)[:, ::-1][:, : rows.m].sum(axis=1)
            assert np.all(got >= exact * (1 - 1e-12))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(5, 9), k=st.integers(2, 6), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       scale=st.floats(0.8, 1.6))
def test_plain_tests_are_the_former_and_bound_brute_force(n, k, seed, ties, scale):
    """A bisection's two plain tests (the second from the first's ratios at a larger tau) with the kept lists give
    the answers and ratios of the whole rows bit for bit; a proved tau is at least OPT (brute force)."""
    from nspca_core.certificates.anchor import anchored_rowsum_test

    A = _psd(n, seed, ties, False)
    k = min(k, n)
    lam = float(np.linalg.eigvalsh(A)[-1])
    tau = lam * scale

    def run():
        rows = AnchorRows(A, k, width=max(2, k))
        one = anchored_rowsum_test(rows, tau * 0.9)
        two = anchored_rowsum_test(rows, tau, one[1])
        return one, two

    with pytest.MonkeyPatch.context() as mp:
        _lists_on(mp)
        got = run()
        mp.setattr(aj, "_MIN_ROWS", 10**9)  # (the kept lists off: the former route)
        want = run()
    for (ok_g, r_g), (ok_w, r_w) in zip(got, want):
        assert ok_g == ok_w and np.array_equal(r_g, r_w)
    for ok, t in ((got[0][0], tau * 0.9), (got[1][0], tau)):
        if ok:
            assert t >= brute_opt(A, k)[0] * (1 - 1e-9)


def test_plain_lists_act_on_a_wide_table(monkeypatch):
    """With the module's own thresholds, a plain test on a table of 300 rows reads its kept lists (the rule acts),
    each pass's sums those of the whole rows."""
    from nspca_core.certificates.anchor import anchored_rowsum_test

    reads = _reading(monkeypatch)
    A = _psd(300, 5, False, False)
    rows = AnchorRows(A, 30)
    assert aj.plain_eligible(rows)
    seen = []
    real = sums.plain_kept

    def checked(rows, r):
        got = real(rows, r)
        seen.append(np.array_equal(got, sums._plain_sums(rows, r, whole=True)))
        return got

    monkeypatch.setattr(sums, "plain_kept", checked)
    lam = float(np.linalg.eigvalsh(A)[-1])
    anchored_rowsum_test(rows, lam * 0.3)
    assert len(seen) >= 3 and all(seen)
    assert reads
