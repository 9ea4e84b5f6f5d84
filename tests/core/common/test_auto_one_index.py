"""auto's top-k selections on Fortran-ordered columns (issue 39 item 4, session 16, auto18): the k-th
largest from one partition at one index, the starts' k-th largest from the unclipped starts, and the
step's no-tie case without counts by column, against brute force written here (a stable sort)."""

import numpy as np
from hypothesis import given, settings, strategies as st

from nspca_core._common.kth import _KTH_SAMPLE_MIN_N, kth_largest, kth_one, one_index
from nspca_core._common.steps import _select, project, project_compact


def _values(rng, n, q, kind):
    Y = rng.standard_normal((n, q)) + rng.uniform(-0.5, 2.0, q)
    if kind == "coarse":  # ties at the k-th value
        Y = np.round(Y * 2) / 2
    elif kind == "special":
        Y[rng.random(Y.shape) < 0.05] = -np.inf
        Y[rng.random(Y.shape) < 0.02] = np.inf
        Y[rng.random(Y.shape) < 0.02] = np.nan
    elif kind == "zeros":  # a column mostly of zeros (the one-index partition's slow case)
        Y[rng.random(Y.shape) < 0.7] = 0.0
    return Y


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 400), st.integers(1, 6),
       st.sampled_from(["normal", "coarse", "special", "zeros"]), st.booleans(), st.data())
def test_kth_one_is_the_sorted_columns_entry(seed, n, q, kind, fortran, data):
    """kth_one's j-th largest is the sorted column's entry n - j (NaN last) and kth_largest's floats."""
    rng = np.random.default_rng(seed)
    Y = _values(rng, n, q, kind)
    if fortran:
        Y = np.asfortranarray(Y)
    j = data.draw(st.integers(1, n))
    want = np.sort(Y, axis=0)[n - j]
    np.testing.assert_array_equal(kth_one(Y, j), want)
    np.testing.assert_array_equal(kth_one(Y, j), kth_largest(Y, j))


def test_one_index_holds_only_where_measured():
    """Both sides of each condition: several Fortran-ordered float64 columns below _KTH_SAMPLE_MIN_N
    rows, the first mostly nonzero."""
    rng = np.random.default_rng(0)
    n = _KTH_SAMPLE_MIN_N - 1
    Y = np.asfortranarray(rng.standard_normal((n, 4)))
    assert one_index(Y)
    assert not one_index(np.ascontiguousarray(Y))  # C-ordered (float64 products)
    assert not one_index(Y[:, :1])  # one column
    assert not one_index(Y.astype(np.float32))
    assert not one_index(np.asfortranarray(rng.standard_normal((_KTH_SAMPLE_MIN_N, 4))))
    Z = Y.copy(order="F")
    Z[: n // 2 + 1, 0] = 0.0  # more zeros than nonzeros in the first column
    assert not one_index(Z)
    Z[0, 0] = 1.0  # n // 2 zeros of n (odd): more nonzeros
    assert one_index(Z)


def _brute_step(y: np.ndarray, k: int, key: np.ndarray):
    """T_k of y's positive part as (rows increasing, values): the k largest by value, ties by key."""
    order = np.lexsort((key, -y))[:k]
    order = np.sort(order[y[order] > 0])
    return order, y[order]


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(8, 900), st.integers(2, 8), st.sampled_from(["normal", "coarse", "zeros"]),
       st.booleans(), st.data())
def test_select_on_fortran_columns_is_the_brute_force_step(seed, n, q, kind, with_prev, data):
    """The compact step on Fortran-ordered products (one partition at one index, no counts by column
    where no column ties) keeps each column's k largest positive entries, ties by key, rows
    increasing, and equals the step on the same values C-ordered (the candidate selection)."""
    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(1, max(1, n // 3)))
    Y = np.asfortranarray(_values(rng, n, q, kind))
    key = rng.permutation(n)
    prev = np.sort(np.argsort(-(Y + rng.standard_normal(Y.shape)), axis=0, kind="stable")[:k], axis=0)
    one = np.broadcast_to(np.intp(k), (q,))
    idx, vals = _select(Y, one, key, False, k, prev if with_prev else None)
    for j in range(q):
        rows, values = _brute_step(Y[:, j], k, key)
        assert np.array_equal(idx[:rows.size, j], rows) and (idx[rows.size:, j] == n).all()
        assert np.array_equal(vals[:rows.size, j], values) and (vals[rows.size:, j] == 0).all()
    c_idx, c_vals = _select(np.ascontiguousarray(Y), one, key, False, k, prev if with_prev else None)
    assert np.array_equal(idx, c_idx) and np.array_equal(vals, c_vals)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(8, 900), st.integers(2, 8), st.integers(0, 3), st.booleans(),
       st.data())
def test_project_compact_from_unclipped_starts_is_project(seed, n, q, feasible, coarse, data):
    """Starts projected with their k-th largest taken from the unclipped columns (Fortran order) are the
    dense projection's points (the same supports), and float for float those of the C-ordered starts (the
    k-th largest of the clipped columns), with feasible columns (k nonzeros or fewer) among them."""
    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(1, max(1, n // 3)))
    X0 = rng.standard_normal((n, q))
    if coarse:
        X0 = np.round(X0 * 2) / 2
    for j in range(min(feasible, q)):  # a rank-1 or polish start: at most k positive entries
        col = np.zeros(n)
        col[rng.choice(n, size=k, replace=False)] = rng.random(k)
        X0[:, j] = col
    X0 = np.asfortranarray(X0)
    key = rng.permutation(n)
    kc = np.full(q, k)
    idx, vals = project_compact(X0, kc, key, k)
    P = project(np.ascontiguousarray(X0), k, key)
    D = np.zeros((n + 1, q))
    D[idx, np.arange(q)] = vals
    assert np.array_equal(D[:n] != 0, P != 0)  # the supports exactly; the norms to the last bits
    np.testing.assert_allclose(D[:n], P, rtol=1e-14, atol=0)
    c_idx, c_vals = project_compact(np.ascontiguousarray(X0), kc, key, k)
    assert np.array_equal(idx, c_idx) and np.array_equal(vals, c_vals)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.sampled_from(["normal", "special"]))
def test_slow_on_the_asked_columns_is_slow_on_all(seed, q, kind):
    """The ascent asks ``_slow`` (the steps a column's shrinking gains still need) only on the columns
    settled twice and still moving: per column, the entries of ``_slow`` on all columns (as it was asked
    before), with zero, negative, growing, NaN and infinite gains among them."""
    from nspca_core._common.screen import _slow

    rng = np.random.default_rng(seed)
    gain, prev = rng.standard_normal(q) ** 2 * 1e-6, rng.standard_normal(q) ** 2 * 1e-6
    tol = rng.random(q) * 1e-8
    if kind == "special":
        pick = rng.random(q)
        gain[pick < 0.15] = 0.0
        gain[(pick >= 0.15) & (pick < 0.3)] *= -1.0
        prev[(pick >= 0.3) & (pick < 0.4)] = np.nan  # a column's first gain
        gain[(pick >= 0.4) & (pick < 0.45)] = np.inf
        prev[(pick >= 0.45) & (pick < 0.55)] = 0.0
    every = _slow(gain, prev, tol)
    cols = np.flatnonzero(rng.random(q) < 0.5)
    np.testing.assert_array_equal(_slow(gain[cols], prev[cols], tol[cols]), every[cols])


def test_screen_below_its_work_takes_the_whole_product_without_the_union():
    """Thin data whose whole product costs less than the screen's own passes (``min_work``, from n, the
    columns and m alone): ``products`` returns the whole product (every row of every column, A x's
    entries, the values x^T A x) on both sides of that threshold, and counts its skip the same way."""
    from nspca_core._common.ascent import Screen, cov_key
    from nspca_core._common.steps import project_compact
    from nspca_core.operators.cov import Cov

    rng = np.random.default_rng(5)
    m, n, q, k = 12, 400, 6, 5
    X = rng.standard_normal((m, n))
    X -= X.mean(axis=0)
    cov = Cov(X, None)
    V, eig = cov.factor(2)
    ia, va = project_compact(rng.random((n, q)), np.full(q, k), cov_key(cov), k)
    Y = cov.matvec(_dense(ia, va, n))
    work = n * q * m  # q >= 4
    for min_work in (work + 1, work):  # above the whole product's work (the shortcut), at it (the former path)
        screen = Screen(cov, V, eig[0])
        screen.min_work = min_work
        for _ in range(3):
            skip = screen._skip
            v, parts = screen.products(ia, va, np.full(q, k), n)
            if min_work > work:
                assert screen._skip == skip - 1
                assert len(parts) == 1 and parts[0][1] is None and np.array_equal(parts[0][0], np.arange(q))
            else:
                assert screen._sorted  # the former path: the screen's bounds were prepared
            for g, U, Yg in parts:
                want = Y[:, g] if U is None else Y[U][:, g]
                np.testing.assert_allclose(Yg, want, rtol=1e-12, atol=1e-13 * np.abs(Y).max())
            np.testing.assert_allclose(v, np.einsum("ij,ij->j", _dense(ia, va, n), Y), rtol=1e-12)


def _dense(ia, va, n):
    D = np.zeros((n + 1, ia.shape[1]))
    D[ia, np.arange(ia.shape[1])] = va
    return D[:n]


def test_screen_twin_prepares_from_its_screen_only_when_it_screens():
    """``Screen.exact()`` (the polish's float64 twin of auto's float32 screen) no longer sorts the n variances
    when made; where either screens, both read the one set of arrays, the same as a screen of its own."""
    from nspca_core._common.ascent import Screen, cov_key
    from nspca_core._common.screen import SingleProducts
    from nspca_core.operators.cov import Cov

    rng = np.random.default_rng(9)
    X = rng.standard_normal((20, 300))
    X -= X.mean(axis=0)
    cov = Cov(X, None)
    V, eig = cov.factor(2)
    key = cov_key(cov)
    screen = Screen(cov, V, eig[0], SingleProducts(cov), key=key)
    twin = screen.exact()
    assert twin.single is None and not screen._sorted and not twin._sorted
    twin._prepare()
    assert screen._sorted and twin._sorted
    own = Screen(cov, V, eig[0], key=key)
    own._prepare()
    for name in ("delta", "s", "order", "sd", "neg_sd"):
        assert getattr(twin, name) is getattr(screen, name)
        np.testing.assert_array_equal(getattr(twin, name), getattr(own, name))
    late = screen.exact()  # made after the arrays exist: shares them at once
    assert late._sorted and late.order is screen.order
