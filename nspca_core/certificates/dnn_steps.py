"""The DNN optimizer's pieces (:func:`nspca_core.certificates.dnn.dnn_optimize`): the cuts (their
right-hand sides, their directions, their renewal inside a run), projected Adam, the entropy
smoothing and the give-up rule.

Internal module; the proofs are in :mod:`nspca_core.certificates.dnn` (every point these steps
reach is a dual point; the bound is always evaluated there, in float64).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from scipy.linalg.blas import saxpy as _saxpy
from scipy.linalg.blas import sgemm as _sgemm

_EPS = np.finfo(float).eps
_W_STEP = 30.0  # cut weights learn 30x faster than N (measured best on CBCL, k = 50)


def cut_rhs(C: np.ndarray, k: int) -> np.ndarray:
    """``beta_k(c) = max(s_k((c_+)^2), s_k((c_-)^2))`` for each column c of C.

    ``s_k`` is the sum of the k largest entries.  For x in S_k^n with support
    J: ``c^T x = sum_J c_+ x - sum_J c_- x``, a difference of two nonnegative
    numbers, each ``<= sqrt(s_k(c_+^2))`` resp. ``sqrt(s_k(c_-^2))`` by
    Cauchy-Schwarz on J (``||x|| = 1``), hence ``(c^T x)^2 <= beta_k(c)``.
    ``c = 1`` gives ``k``, the ``mu`` term.  Rounded up by a relative 4 n eps.
    """
    n, L = C.shape
    out = np.empty(L)
    kk = min(k, n)
    for sgn, col in ((1.0, 0), (-1.0, 1)):
        P = np.maximum(sgn * C, 0.0) ** 2
        if kk < n:
            P = np.partition(P, n - kk, axis=0)[n - kk:]
        v = P.sum(axis=0)
        out = v if col == 0 else np.maximum(out, v)
    return out * (1.0 + 4 * n * _EPS)


def ksupport_cuts(V: np.ndarray, k: int) -> np.ndarray:
    """Cut directions from vectors: for each column v of V, the c maximizing ``(c^T v)^2 / beta_k(c)``
    among a family containing the maximizer.

    Any c gives a valid cut (:func:`cut_rhs`); this only chooses a good one.  For a rank-one
    relaxed matrix ``Z = v v^T`` the cut ``c^T Z c <= beta_k(c)`` is violated by the factor
    ``max_c (c^T v)^2 / beta_k(c) = ||v||_(k)^2``, the squared k-support norm of v (the norm whose
    dual is ``sqrt(s_k(c^2))``), which is 1 exactly when v is k-sparse.  Its maximizer
    (Argyriou, Foygel & Srebro 2012) keeps the ``h = k - r - 1`` largest ``|v_i|`` and replaces
    the others by their mean over ``r + 1`` slots, ``T = (sum of the rest) / (r + 1)``, for the
    right r in ``0..k-1``; every r is tried here and the best ratio kept.  With ``c = v``
    itself (the raw Ritz vector) the violation is only v's mass outside its top k, which is why
    flattened tails cut far deeper.  Signs follow v.
    """
    n, L = V.shape
    if k >= n:
        return np.array(V, copy=True)
    rs = np.arange(k)[:, None]            # r = 0..k-1 (rows), one column per vector
    heads = k - rs - 1                    # h = number of entries kept as they are
    cols = np.arange(L)
    a = np.abs(V)
    # (sorted along rows of the transpose, then indexed directly: the same values as argsort and
    # take_along_axis down the columns, at about half the call overhead; issue 39, 6 calls a certificate)
    order = np.argsort(-a.T, axis=1, kind="stable").T
    s = a[order, cols]
    cs = np.concatenate((np.zeros((1, L)), np.cumsum(s, axis=0)))
    cs2 = np.concatenate((np.zeros((1, L)), np.cumsum(s * s, axis=0)))
    h_rows = heads[:, 0]
    tail = cs[n] - cs[h_rows]
    T = tail / (rs + 1)
    num = cs2[h_rows] + T * tail  # c^T |v|
    # beta_k of |c| = s_k of {s_0..s_{h-1}, T (n-h times)}: the head entries >= T stay,
    # the rest of the k slots take T^2 or a smaller head entry (all with the same sign as v
    # overestimates beta_k of the signed c, so the ratio below is a safe choice criterion)
    # (s is sorted per column: the count of head entries > ... as searchsorted(-s, -T, "right"))
    above = np.empty((k, L), dtype=int)
    for j in range(L):
        above[:, j] = np.searchsorted(-s[:, j], -T[:, j], side="right")
    big = np.minimum(heads, above)
    beta = cs2[big, cols] + (k - big) * T * T
    ratio = np.where(beta > 0, num * num / np.maximum(beta, 1e-300), 0.0)
    r = np.argmax(ratio, axis=0)
    h = heads[r, 0]
    c = np.where(np.arange(n)[:, None] < h[None, :], s, T[r, cols][None, :])
    out = np.empty_like(c)
    out[order, cols] = c
    return np.where(V < 0, -out, out)


def _smoothed(w: np.ndarray, W: np.ndarray, t: float):
    """Entropy-smoothed lambda_max from Ritz values w (desc); returns (F, weights q, kept vectors).

    The gradient is ``G = W diag(q) W^T``; callers form only what they need of it."""
    z = (w - w[0]) / t
    p = np.exp(z)
    s = float(p.sum())
    F = float(w[0]) + t * np.log(s)
    q = p[: W.shape[1]] / s
    keep = q > 1e-12
    if keep.all():  # (the same values without the copies; W is only read)
        return F, q, W
    return F, q[keep], W[:, keep]


def _float32_flushed(a: np.ndarray) -> np.ndarray:
    """``a`` in float32 with entries below 1e-15 in size set to zero."""
    out = a.astype(np.float32)
    out[np.abs(out) < 1e-15] = 0.0
    return out


def _gradient_into(W: np.ndarray, q: np.ndarray, G: np.ndarray) -> None:
    """``G = W diag(q) W^T`` in float32, written into G.  Entries below 1e-15 of the Ritz vectors
    move nothing (Adam's steps there are ~1e-5 of the learning rate) but their products would be
    float32 subnormals, ~50x slower in every later pass: flushed to zero.  One weight left: an
    outer product, which NumPy's matmul runs without BLAS (~10x slower) and a broadcast multiply
    ~3.5x slower than BLAS's sgemm written into ``G.T`` (``G.T = Wf Wq^T`` is ``G = Wq Wf^T``; each
    entry one product ``0 + a b``: the same values as the multiply, only a zero's sign may differ)."""
    Wq, Wf = _float32_flushed(W * q), _float32_flushed(W)
    if Wf.shape[1] == 1:
        if G.flags.c_contiguous:
            out = _sgemm(1.0, Wf, Wq.T, c=G.T, overwrite_c=1)
            if not np.shares_memory(out, G):  # (never seen: f2py writes a contiguous float32 c in place)
                G[...] = out.T
        else:
            np.multiply(Wq, Wf.T, out=G)
    else:
        np.matmul(Wq, Wf.T, out=G)


def _axpy_into(t: np.ndarray, x: np.ndarray, a: float) -> None:
    """``x += a t`` in place: BLAS's saxpy, one pass instead of NumPy's two (a scaled temporary, then
    the sum; ~13 against ~33 us at n = 361, issue 39) where both are contiguous float32 of one
    shape (the sum may round once, as a fused multiply-add: the optimizer's direction only)."""
    if (x.dtype == t.dtype == np.float32 and x.shape == t.shape and x.flags.c_contiguous
            and t.flags.c_contiguous):
        out = _saxpy(t.ravel(), x.ravel(), a=a)
        if np.shares_memory(out, x):
            return
    x += (a * t).astype(x.dtype, copy=False)


class DnnWork:
    """The n x n scratch arrays of :func:`nspca_core.certificates.dnn.dnn_optimize` and of its
    rigorous evaluations, kept between the runs of one certificate (the plain run and its cut run).

    Why: each fresh n x n array costs its page faults once the allocator has returned the memory
    of the last one (issue 39: ~2,300 minor faults in the DNN of a CBCL certificate at k = 65, ~2 us
    each, the cut run paying again for the plain run's arrays; ~1,300 with one DnnWork, whose arrays
    take 40 n^2 bytes instead of 60 n^2 per run).  Each array has one role (its name); the
    caller writes it fully before reading it (``scratch``) or only reads it (``constant``).  Nothing
    here ever escapes into a result: the points a run returns are copies.

    The roles and their arrays (n x n): ``"N"``, ``"adam_m"``, ``"adam_v"``, the constants and A in
    float32 for the run; ``"M64"`` (the dual matrix of an evaluation, float64); ``"MG"`` (float64):
    in an evaluation the cuts' product, then N in float64 (for the rounding allowance), then the
    Cholesky factor, one after the other; during a run's iteration, its two float32 halves are the
    iteration's matrix M and the gradient G (idle at every evaluation: both are written afresh at
    the next iteration before they are read).  Every other role has an array of its own."""

    def __init__(self):
        self._arrays: dict = {}
        self._a32 = None  # (A, A in float32): the runs' matrix in float32, converted once
        self._norm = None  # (A, ||A||_F): the evaluations' rounding allowance, summed once

    def scratch(self, name: str, shape: tuple, dtype) -> np.ndarray:
        """The array of role ``name`` (contents undefined: the caller overwrites it)."""
        dtype, size = np.dtype(dtype), math.prod(shape)
        a = self._arrays.get(name)
        if a is None or a.dtype != dtype or a.size < size:  # (8 spare entries: see halves)
            a = self._arrays[name] = np.empty(size + 8, dtype=dtype)
        return a[:size].reshape(shape)

    def halves(self, name: str, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
        """Two float32 arrays of ``shape`` in the memory of the float64 array ``scratch(name, shape,
        float64)``, the second from the first 64-byte step after the first's end (its 8 spare
        entries): roles that are idle whenever that array is in use share its pages."""
        size = math.prod(shape)
        self.scratch(name, shape, np.float64)
        a = self._arrays[name].view(np.float32)
        start = -(-size // 16) * 16
        return a[:size].reshape(shape), a[start: start + size].reshape(shape)

    def constant(self, value: float, shape: tuple, dtype) -> np.ndarray:
        """``np.full(shape, value, dtype)``, made once (read only: the operand of a maximum)."""
        key = ("constant", float(value))
        a = self._arrays.get(key)
        if a is None or a.shape != tuple(shape) or a.dtype != np.dtype(dtype):
            a = self._arrays[key] = np.full(shape, value, dtype=dtype)
        return a

    def norm_of(self, A: np.ndarray):
        """``np.linalg.norm(A)``, summed once per matrix (the same object ``A``; the same float)."""
        if self._norm is None or self._norm[0] is not A:
            self._norm = (A, np.linalg.norm(A))
        return self._norm[1]

    def float32_of(self, A: np.ndarray) -> np.ndarray:
        """``A.astype(np.float32)`` in C order, converted once per matrix (the same object ``A``).

        C order whatever A's: the runs only add it to C-ordered arrays entry by entry (the same floats in any
        order), but a Fortran-ordered copy made each flat view of it (``ravel``/``reshape(-1)``, twice an
        iteration) a full n x n copy (issue 39, 14th round: a sparse corpus's covariance is Fortran-ordered;
        1.6 of 4.9 CPU s at 3,000 x 1,600, k = 50)."""
        if self._a32 is None or self._a32[0] is not A:
            self._a32 = (A, A.astype(np.float32, order="C"))
        return self._a32[1]


class _Adam:
    """Adam for one block of nonnegative dual variables (each step ends with the projection).

    Adam moves every coordinate by about the learning rate whatever its gradient's size.  That
    is what the DNN dual needs: its optimal ``N`` has entries of the size of ``A``'s on pairs
    the top eigenvectors barely touch (gradients ~1e-3 of the others), which a plain gradient
    step crosses in thousands of iterations (measured on CBCL at k = 6: accelerated projected
    gradient stalls 1% above the relaxation's value after 1,000 iterations, Adam is within
    0.02% of it after 200)."""

    B1, B2 = 0.9, 0.999
    # gradients are entries of a unit-trace matrix (<= 1); the guard must stay far above
    # single precision's underflow of g^2 (else a 1e-20 gradient would take a huge step)
    EPS = 1e-10
    # g^2 is floored here: sqrt(v) stays ~1e-15 << EPS (steps unchanged to 1e-5) while v, decaying
    # by B2 per step, stays a normal float32 for thousands of steps (subnormals are ~50x slower)
    FLOOR = 1e-30

    def __init__(self, shape, work: DnnWork | None = None):
        # the moments only scale the steps: single precision halves the memory traffic of the
        # n x n updates (the loop is memory-bound); dnn_optimize holds N itself in float32 too
        dt = np.float32 if shape else np.float64
        self.scalar, self._work = not shape, work
        if work is not None and shape:  # (a matrix: its arrays from the certificate's DnnWork)
            self.m, self.v = work.scratch("adam_m", shape, dt), work.scratch("adam_v", shape, dt)
            self.m.fill(0.0)
            self.v.fill(0.0)
        else:
            self.m = np.zeros(shape, dtype=dt)
            self.v = np.zeros(shape, dtype=dt)
        # a scratch array, made when a step first needs one (a step that may spend g needs none)
        self.tmp = None
        # the constants of the two maxima as arrays: NumPy's maximum against a full array is ~3x
        # faster than against a scalar (the same values; issue 39, a third of an iteration's passes)
        full = np.full if work is None or not shape else (lambda sh, c, dtype: work.constant(c, sh, dtype))
        self.zero = full(shape, 0.0, dtype=dt) if shape else None
        self.floor = full(shape, self.FLOOR, dtype=dt) if shape else None
        self.t = 0
        # matrices (dnn_optimize's N) hold m / s1 and v / s2 instead, s1 = B1^j and s2 = B2^j (j steps
        # since the last renormalization): each moment then takes one saxpy pass, not two (see _step2)
        self.s1 = self.s2 = 1.0

    def resized(self, keep: np.ndarray, extra: int) -> "_Adam":
        """A fresh optimizer for the entries ``keep`` of this one's block followed by ``extra`` new
        ones: the kept entries' moments carried over, the new ones' zero (the step counter restarts,
        as at the start of a cut round)."""
        out = _Adam((keep.size + extra,))
        out.m[: keep.size], out.v[: keep.size] = self.m[keep], self.v[keep]
        return out

    def _scratch(self) -> np.ndarray:
        if self.tmp is None:
            self.tmp = (np.zeros(self.m.shape, dtype=self.m.dtype) if self._work is None
                        else self._work.scratch("adam_tmp", self.m.shape, self.m.dtype))
        return self.tmp

    def step(self, x, g, lr, spend_g: bool = False, then=None):
        """``max(x - lr * m_hat / (sqrt(v_hat) + EPS), 0)``: in place for arrays (x is updated
        and returned), a new float for scalars.  ``spend_g``: the array g may be overwritten (a
        matrix's step then works in g's memory: one n x n array fewer; the same values).
        ``then`` (optional ``(B, out)``, arrays of x's shape): also ``out = B + x`` of the new x (the
        next iteration's matrix of :func:`~nspca_core.certificates.dnn.dnn_optimize`), written while x's
        pieces are in cache by the matrix step (:meth:`_step2`), float for float as ``np.add(B, x,
        out=out)`` after the step, which the other array steps do."""
        self.t += 1
        b1, b2 = self.B1, self.B2
        # a Python float: a NumPy float64 scalar would make the float32 passes below float64 ones
        c = float(lr) * math.sqrt(1.0 - b2 ** self.t) / (1.0 - b1 ** self.t)
        if self.scalar:
            self.m = b1 * self.m + (1.0 - b1) * g
            self.v = b2 * self.v + (1.0 - b2) * g * g
            return max(float(x - c * self.m / (math.sqrt(self.v) + self.EPS)), 0.0)
        if self.m.ndim == 2 and _saxpy_ok(x, g, self.m, self.v):
            return self._step2(x, g, c, g if spend_g else self._scratch(), then)
        # arrays hold m / (1 - B1) and v / (1 - B2) (two fewer passes over n x n; the same step:
        # m / (sqrt(v) + EPS) = (1 - B1) / sqrt(1 - B2) * m' / (sqrt(v') + EPS / sqrt(1 - B2)))
        m, v, tmp = self.m, self.v, self._scratch()
        m *= b1
        m += g
        v *= b2
        np.multiply(g, g, out=tmp)
        np.maximum(tmp, self.floor, out=tmp)  # no subnormal g^2 (see FLOOR)
        v += tmp
        np.sqrt(v, out=tmp)
        tmp += self.EPS / math.sqrt(1.0 - b2)
        np.divide(m, tmp, out=tmp)
        _axpy_into(tmp, x, -c * (1.0 - b1) / math.sqrt(1.0 - b2))
        np.maximum(x, self.zero, out=x)
        if then is not None:
            np.add(then[0], x, out=then[1])
        return x


    # a moment's scale s is folded back into the stored moment below this (1/s then stays <= 1e6)
    _RENORM = 1e-6

    def _step2(self, x, g, c, tmp, then=None):
        """:meth:`step` for a matrix, in 9 passes instead of 11: with ``m' = m / (1 - B1)`` and
        ``v' = v / (1 - B2)`` (as in :meth:`step`) held as ``m~ = m' / s1``, ``v~ = v' / s2``,
        the recurrences ``m' <- B1 m' + g``, ``v' <- B2 v' + max(g^2, FLOOR)`` read
        ``m~ <- m~ + g / s1``, ``v~ <- v~ + max(g^2, FLOOR) / s2`` after ``s <- B s`` (one saxpy
        each), and the step ``(1 - B1) / sqrt(1 - B2) m' / (sqrt(v') + EPS / sqrt(1 - B2))`` is
        ``s1 / sqrt(s2)`` times the same with ``m~, v~`` and the guard ``EPS / sqrt((1 - B2) s2)``.
        The same step in exact arithmetic (the roundings differ: the optimizer's direction only;
        any x >= 0 is a dual point).  ``tmp``: scratch of x's shape, which may be g itself (m takes
        g first).  ``then``: see :meth:`step`.

        The passes run over pieces of :data:`_PIECE` entries, all of one piece before the next (its
        arrays stay in cache between the passes; issue 39: at n = 1,200 the 9 passes over 5.8 MB arrays
        read and wrote memory each time).  Every operation is elementwise, so the floats are those of
        whole-array passes (saxpy on a piece is the same kernel: pieces start at multiples of 64 entries).  The two
        maxima's constant operands are every piece's first piece of them (all their entries are equal: the same floats;
        14th round: 2 n^2 fewer entries read per step, 8.4 -> 7.2 ms at n = 1,600)."""
        b1, b2 = self.B1, self.B2
        m, v = self.m, self.v
        if self.s1 < self._RENORM or self.s2 < self._RENORM:
            m *= np.float32(self.s1)
            v *= np.float32(self.s2)
            self.s1 = self.s2 = 1.0
        self.s1 *= b1
        self.s2 *= b2
        s1, s2 = self.s1, self.s2
        a_m, a_v = 1.0 / s1, 1.0 / s2
        guard = self.EPS / math.sqrt((1.0 - b2) * s2)
        a_x = -c * (1.0 - b1) / math.sqrt(1.0 - b2) * s1 / math.sqrt(s2)
        xs, gs, ms, vs, ts = x.ravel(), g.ravel(), m.ravel(), v.ravel(), tmp.ravel()
        floor, zero = self.floor.ravel(), self.zero.ravel()
        B, out = (None, None) if then is None else (then[0].ravel(), then[1].ravel())
        size = xs.size
        for a in range(0, size, _PIECE):
            b = min(a + _PIECE, size)
            gp, tp, mp, vp, xp = gs[a:b], ts[a:b], ms[a:b], vs[a:b], xs[a:b]
            _saxpy(gp, mp, a=a_m)
            np.multiply(gp, gp, out=tp)
            np.maximum(tp, floor[: b - a], out=tp)  # no subnormal g^2 (see FLOOR); v~ >= v' >= FLOOR
            _saxpy(tp, vp, a=a_v)
            np.sqrt(vp, out=tp)
            tp += guard
            np.divide(mp, tp, out=tp)
            _saxpy(tp, xp, a=a_x)
            np.maximum(xp, zero[: b - a], out=xp)
            if B is not None:
                np.add(B[a:b], xp, out=out[a:b])
        return x


# _Adam._step2's pieces (entries): a multiple of 64; 5 float32 pieces of 512 KB stay in cache between the passes.
# Measured (issue 39, ninth round; MLL k = 200, |S| = 1,200, certify in one process, load 9 on 2 cores, best / median
# of 5): whole arrays 1.35 / 1.42 s, pieces of 2^15 1.28 / 1.42, 2^16 1.32 / 1.38, 2^17 1.23 / 1.29 (the fewer
# pieces, the fewer NumPy calls: 10 per piece); at load ~1 the Adam step alone 4.3 -> 3.6 ms at n = 1,200 (2^15)
_PIECE = 1 << 17


def _saxpy_ok(*arrays) -> bool:
    """Whether saxpy can update these arrays in place: float32, C-contiguous, one shape."""
    shape = arrays[0].shape
    return all(a.dtype == np.float32 and a.flags.c_contiguous and a.shape == shape for a in arrays)


def refreshed_cuts(U: np.ndarray, k: int, C: np.ndarray | None, w: np.ndarray | None,
                   max_cuts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut vectors for the next iterations: the k-support directions of the Ritz vectors U
    (:func:`ksupport_cuts`, weight 0: the bound at the current point is unchanged) after the cuts
    of C in use (positive weight, largest first, at most ``max_cuts`` in all).  Returns ``(C, w,
    keep)``, ``keep`` the indices of the old cuts kept (in the order of the new C)."""
    Cn = ksupport_cuts(U, k)
    if C is None or w is None:
        return Cn, np.zeros(Cn.shape[1]), np.zeros(0, dtype=int)
    keep = np.argsort(-w, kind="stable")[: max(max_cuts - Cn.shape[1], 0)]
    keep = keep[w[keep] > 0]
    return np.hstack([C[:, keep], Cn]), np.concatenate([w[keep], np.zeros(Cn.shape[1])]), keep


# the give-up rule (dnn_optimize's ``give_up``) looks at the bound's estimate every this many iterations
_GIVE_UP_EVERY = 5


def _aitken_limit(history: list) -> float | None:
    """Where the last three values of a decreasing bound head: the next gains taken as shrinking geometrically
    at the last two gains' rate (Aitken's extrapolation); None without a verdict (fewer than three values, or
    gains not shrinking)."""
    if len(history) < 3:
        return None
    a, b, c = history[-3:]
    g1, g2 = a - b, b - c
    if not (g1 > 0 and 0 <= g2 < g1):
        return None
    return c - g2 * g2 / (g1 - g2)


def _hopeless(history: list, lower: float, aim: float) -> bool:
    """Whether the bound's estimates ``history`` head (:func:`_aitken_limit`) for a ratio below ``aim``."""
    limit = _aitken_limit(history)
    return limit is not None and lower < aim * limit


def _outlook(history: list, lower: float, value: float) -> float:
    """How much the certified ratio ``lower / value`` can still gain by the bound's free estimates
    ``history`` (:func:`_aitken_limit`); ``inf`` without a verdict."""
    limit = _aitken_limit(history)
    return lower / limit - lower / value if limit is not None and limit > 0 else np.inf


def _climb_rate(history: list, lower: float) -> float:
    """The ratio ``lower / value`` gained per iteration by the bound's free estimates ``history`` (one every
    :data:`_GIVE_UP_EVERY` iterations) over their last two intervals; ``-inf`` with fewer than three."""
    if len(history) < 3:
        return -np.inf
    return (lower / history[-1] - lower / history[-3]) / (2 * _GIVE_UP_EVERY)


# dnn_optimize(flat=): a run whose last three free estimates stand within a band whose width, as ratio per iteration
# (:func:`_still_pace`), times the iterations left is below this stops there (issue 39, 20th round: a stop rule by
# cost).  Only the plain run before a cut run is given the rule (its end is the cut run's start): a 3,000 x 1,600 topic
# corpus's S at k = 50 / 80 / 100 sat at one point for all 40 of its iterations (a stationary point of the cut-free
# dual: every estimate the same to 1e-7; the give-up rule has no verdict without a gain).  Measured: with the brief's
# 1e-3 on the signed climb (a run slowing down, or rising for a while, also stopped) the golub- / dlbcl-shaped paths'
# S runs at k = 18..37 stopped 5-20 iterations sooner and their cut runs, started elsewhere, ended up to -0.0074
# looser (dlbcl k = 28) and +0.0065 tighter: the cut run's end is not smooth in its start.  Only a point that stands
# still gives its cut run the same start.
_FLAT_REACH = 1e-5


def _still_pace(history: list, lower: float) -> float:
    """The width of the band of the last three free estimates ``history`` as ratio ``lower / value``, per iteration
    (one estimate every :data:`_GIVE_UP_EVERY` iterations): >= 0, whichever way they move."""
    h = history[-3:]
    return (lower / min(h) - lower / max(h)) / (2 * _GIVE_UP_EVERY)


def _flat(history: list, lower: float, left: int, below: float) -> bool:
    """Whether a run's free estimates ``history`` (one every :data:`_GIVE_UP_EVERY` iterations, at least three) stand
    below the ratio ``below`` and within a band whose pace (:func:`_still_pace`) times the ``left`` iterations is
    below :data:`_FLAT_REACH`: the run stands still."""
    return (len(history) >= 3 and lower < below * history[-1]
            and _still_pace(history, lower) * max(left, 0) < _FLAT_REACH)


class _Cuts:
    """The cut part of one DNN run: vectors C, weights ``w >= 0``, their right-hand sides
    ``beta_k`` (:func:`cut_rhs`), Adam's state for w, and ``cols = [1, C]`` (the low-rank part's
    columns, the mu term's first).  No cuts: ``C`` None."""

    def __init__(self, C: np.ndarray | None, w: np.ndarray | None, k: int, n: int):
        self.k, self.ones, self.C, self.renewals = k, np.ones((n, 1)), C, 0
        self.w = self.beta = self.opt = self.cols = None
        if C is not None:
            self.w = w.copy() if w is not None else np.zeros(C.shape[1])
            self.beta, self.opt, self.cols = cut_rhs(C, k), _Adam(self.w.shape), np.hstack([self.ones, C])

    def renew(self, U: np.ndarray, max_cuts: int) -> None:
        """:func:`refreshed_cuts` of the Ritz vectors U (the kept cuts' Adam moments carried)."""
        beta = self.beta
        self.C, self.w, keep = refreshed_cuts(U, self.k, self.C, self.w, max_cuts)
        extra = self.C.shape[1] - keep.size
        # the kept cuts' right-hand sides as computed before (cut_rhs works column by column)
        old = beta[keep] if beta is not None else np.zeros(0)
        self.cols = np.hstack([self.ones, self.C])
        self.beta = np.concatenate([old, cut_rhs(self.C[:, keep.size:], self.k)])
        self.opt = self.opt.resized(keep, extra) if self.opt is not None else _Adam(self.w.shape)
        self.renewals += 1

    def low_rank(self, mu: float) -> tuple[np.ndarray, np.ndarray]:
        """``(L, lw)`` with ``mu 1 1^T + sum_l w_l c_l c_l^T = L diag(lw) L^T`` (cuts of weight 0
        left out while every weight is 0)."""
        if self.C is not None and np.any(self.w > 0):
            return self.cols, np.concatenate(([mu], self.w))
        return self.ones, np.array([mu])

    def rhs(self) -> float:
        """``sum_l w_l beta_k(c_l)`` (0 without cuts)."""
        return 0.0 if self.C is None else float(self.w @ self.beta)

    def step(self, W: np.ndarray, q: np.ndarray, lr: float) -> None:
        """One Adam step on w along ``beta - diag(C^T G C)`` (``G = W diag(q) W^T``)."""
        if self.C is not None:
            B = W.T @ self.C
            self.w = self.opt.step(self.w, self.beta - q @ (B * B), _W_STEP * lr)

    def weights(self) -> np.ndarray | None:
        return None if self.w is None else self.w.copy()


_DSYEVD = scipy.linalg.lapack.get_lapack_funcs("syevd", (np.zeros(1),))


def _small_eigh(H: np.ndarray):
    """``numpy.linalg.eigh`` of a small symmetric H (the Ritz step's 2r x 2r) by LAPACK's dsyevd
    called directly (the routine NumPy calls, at a third of its call overhead: ~13 against ~17 us at
    12 x 12, a few hundred calls per certificate)."""
    w, V, info = _DSYEVD(H, compute_v=1, lower=1)
    if info != 0:
        return np.linalg.eigh(H)
    return w, V
