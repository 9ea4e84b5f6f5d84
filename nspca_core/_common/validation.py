"""The rules the parameter table is made of (:data:`nspca_core._common.params.PARAMETERS`):
numbers in an interval, matrices, vectors, covariances.  Public functions check through the
table once (``check("k", k, n_features=n)``, ``check("matrix", X, "X")``); the algorithm
modules behind them assume clean input.

A rule is an object with ``check(value, name, context) -> value`` (normalized); every error is
an :class:`InputError` (a ``ValueError``) whose message names the argument, what is allowed
and what was given.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from nspca_core._common.said import Remedy, said

__all__ = [
    "InputError",
    "Interval",
    "SPARSITY",
    "Matrix",
    "Vector",
    "Psd",
    "DataOrCov",
    "pow2_scale",
    "covariance_from_data",
    "as_rng",
    "SparseStructure",
    "sparse_structure_problem",
]


class InputError(ValueError):
    """Bad input: the message says what is wrong and what is allowed.

    ``argument``: the name of the argument at fault (as the function spells it, e.g.
    ``"label_column"``), None when no single one is; ``value``: what was given for it; ``allowed``:
    the values it may take when they are a list (a ``range`` in it: any int of the range).  A front
    (the app, the CLI) maps ``argument`` to its own control without reading the message.

    ``plain``, ``remedy``, ``source``: the message in parts (:mod:`nspca_core._common.said`): what is
    wrong with no argument named, what to do as a :class:`~nspca_core._common.said.Remedy`, and the
    file it is about.  Given ``plain`` and no message, the message is composed from them.

    ``predicate``: for a message about ``argument`` alone, what it says of it after its name (the
    message is ``"`<argument>` <predicate>"``, e.g. ``"must be an int in [1, n_features=4]; got 0"``),
    so that a front names its own control or option instead.
    """

    def __init__(self, *args, argument: str | None = None, value=None, allowed=None,
                 plain: str | None = None, remedy: Remedy | None = None, source: str | None = None,
                 predicate: str | None = None):
        if not args and plain is not None:
            args = (said(plain, source=source, remedy=remedy),)
        elif not args and predicate is not None and argument is not None:
            args = (f"`{argument}` {predicate}",)
        super().__init__(*args)
        self.argument = argument
        self.value = value
        self.allowed = allowed
        self.plain = plain
        self.remedy = remedy
        self.source = source
        self.predicate = predicate

    def name_source(self, name: str | None) -> None:
        """Record ``name`` as the file the message is about when the message leads with it
        (``"<name>: ..."``, the readers' convention) and no source is recorded yet."""
        if self.source is None and name and str(self).startswith(f"{name}: "):
            self.source = name

    def unsourced(self) -> str:
        """The message without its leading ``"<source>: "``, for a front that names the file itself."""
        text, lead = str(self), f"{self.source}: "
        return text[len(lead):] if self.source and text.startswith(lead) else text


def _bound(value, context: dict, kind: str):
    """A bound's number and how the message shows it (as written in the rule: ``0`` or ``0.0``;
    ``:g`` for the "number" kind)."""
    if isinstance(value, str):
        number = context[value]
        return number, f"{value}={number}"
    return value, f"{value:g}" if kind == "number" else str(value)


@dataclass(frozen=True)
class Interval:
    """A number in an interval. ``kind``: "int" (an integral number, returned as int), "float"
    (a real number, returned as float; message "a float") or "number" (the same, "a number")."""

    kind: str
    low: object = -math.inf
    high: object = math.inf
    low_open: bool = False
    high_open: bool = False

    def allowed(self, context: dict) -> str:
        (_, lo), (_, hi) = _bound(self.low, context, self.kind), _bound(self.high, context, self.kind)
        if self.kind == "int" and self.high == math.inf:
            return f"an int >= {lo}"
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"{'an int' if self.kind == 'int' else 'a ' + self.kind} in {left}{lo}, {hi}{right}"

    def contains(self, value, context: dict) -> bool:
        try:
            self.check(value, "", context)
        except InputError:
            return False
        return True

    def check(self, value, name: str, context: dict):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral if self.kind == "int" else numbers.Real) \
                or (self.kind != "int" and not np.isfinite(value)):
            raise InputError(argument=name, value=value, predicate=f"must be {self.allowed(context)}; got {value!r}")
        v = int(value) if self.kind == "int" else float(value)
        low = context[self.low] if isinstance(self.low, str) else self.low  # (the message's numbers: _bound)
        high = context[self.high] if isinstance(self.high, str) else self.high
        if v < low or v > high or (self.low_open and v == low) or (self.high_open and v == high):
            shown = v if self.kind == "int" else (f"{v:g}" if self.kind == "number" else repr(value))
            raise InputError(argument=name, value=value, predicate=f"must be {self.allowed(context)}; got {shown}")
        return v


#: ``k`` and ``d``: an int in [1, n_features] (``PARAMETERS["k"]`` / ``["d"]`` of
#: :mod:`nspca_core._common.params`)
SPARSITY = Interval("int", 1, "n_features")


def _as_float(a, name: str, what: str) -> np.ndarray:
    """``a`` as a float64 array; complex numbers, text and dates are refused, never converted.

    ``np.asarray(a, dtype=float)`` alone would drop imaginary parts (with only a
    NumPy warning), parse numeric strings and turn dates into day counts.
    """
    try:
        raw = np.asarray(a)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise InputError(argument=name,
                         predicate=f"must be a numeric {what}; got {type(a).__name__} "
                                   f"that numpy cannot read as an array ({exc})") from None
    kind = raw.dtype.kind
    if kind == "O" and raw.size:
        kind = _object_kind(raw)
    if kind == "c":
        raise InputError(argument=name,
                         predicate=f"must be real; got complex values (dtype {raw.dtype}): the "
                                   f"imaginary part would be lost. Pass `{name}.real` (or `abs({name})`) "
                                   "if that is what you mean")
    if kind in "USa":
        first = _first_text(raw)
        raise InputError(argument=name,
                         predicate=f"must be numeric; got text (dtype {raw.dtype}), e.g. {first!r}. "
                                   "Numbers written as text are not converted here: convert them yourself "
                                   f"(`np.asarray({name}, dtype=float)`) or read the file with "
                                   "`nspca_core.load_file`, which parses numbers and reports what it did")
    if kind in "mMV":
        raise InputError(argument=name,
                         predicate=f"must be numeric; got dtype {raw.dtype} (dates, durations or "
                                   "records are not features: convert them to numbers first)")
    try:
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(argument=name,
                         predicate=f"must be a numeric {what}; got {type(a).__name__} "
                                   f"that cannot be converted to float ({exc})") from None


def _object_kind(raw: np.ndarray) -> str:
    """The dtype kind an object array's elements call for: "c" if any is complex, "U" if
    any is text, else "f" (one pass over the elements, only for object arrays)."""
    kinds = {"c" if isinstance(e, (complex, np.complexfloating)) else
             "U" if isinstance(e, (str, bytes)) else "f" for e in raw.flat}
    return "c" if "c" in kinds else "U" if "U" in kinds else "f"


def _first_text(raw: np.ndarray):
    for e in raw.flat:
        if isinstance(e, (str, bytes)):
            return e.item() if isinstance(e, (np.str_, np.bytes_)) else e
    return raw.flat[0]


@dataclass(frozen=True)
class Matrix:
    """A finite 2-D float64 array (the rule ``"matrix"``); the context may ask for ``square``,
    ``symmetric``, ``min_rows``, ``min_cols``.

    Complex values, text (numeric strings included) and dates are refused,
    never converted.  ``symmetric``: ``|a - a^T| <= 1e-8 max|a|`` entrywise
    (a relative test, so the same for every scale of ``a``), then
    symmetrized.
    """

    def check(self, value, name: str, context: dict) -> np.ndarray:
        return _matrix(value, name, **context)


def _matrix(a, name: str, *, square: bool = False, symmetric: bool = False,
            min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    arr = _as_float(a, name, "2-D array")
    if arr.ndim != 2:
        raise InputError(argument=name,
                         predicate=f"must be a 2-D array; got {arr.ndim}-D with shape {arr.shape}")
    if arr.shape[0] < min_rows or arr.shape[1] < min_cols:
        raise InputError(argument=name,
                         predicate=f"must have at least {min_rows} row(s) and {min_cols} column(s); "
                                   f"got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"`{name}` must be finite; got {int(bad.sum())} NaN/inf value(s), "
                         f"the first at row {i}, column {j}", argument=name,
                         plain=f"the data must be finite; they hold {int(bad.sum())} NaN/inf value(s), the "
                               f"first at row {i + 1}, column {j + 1} (counted from 1)")
    if square and arr.shape[0] != arr.shape[1]:
        raise InputError(argument=name,
                         predicate=f"must be square; got shape {arr.shape}")
    if symmetric:
        scale = max(float(arr.max()), -float(arr.min()))
        gap = _max_asymmetry(arr)
        if gap > 1e-8 * scale:
            raise InputError(argument=name,
                             predicate=f"must be symmetric; got max |{name} - {name}.T| = "
                                       f"{gap:.3g} (allowed: 1e-8 max|{name}| = {1e-8 * scale:.3g})")
        arr = arr + arr.T  # one new n x n array (the caller's is never modified)
        arr *= 0.5
    return arr


def _max_asymmetry(a: np.ndarray, block: int = 256) -> float:
    """``max |a - a^T|`` by blocks of rows (temporaries of ``block x n``, not ``n x n``)."""
    n = a.shape[0]
    worst = 0.0
    for i in range(0, n, block):
        worst = max(worst, float(np.abs(a[i:i + block] - a[:, i:i + block].T).max()))
    return worst


@dataclass(frozen=True)
class Vector:
    """A finite non-empty 1-D float64 array (the rule ``"vector"``; complex values, text and
    dates are refused as by :class:`Matrix`)."""

    def check(self, value, name: str, context: dict) -> np.ndarray:
        return _vector(value, name)


def _vector(v, name: str) -> np.ndarray:
    arr = _as_float(v, name, "1-D array")
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(argument=name,
                         predicate=f"must be a non-empty 1-D array; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(argument=name,
                         predicate=f"must be finite; got {int((~np.isfinite(arr)).sum())} NaN/inf value(s)")
    return arr


@dataclass(frozen=True)
class DataOrCov:
    """The pair ``(X, cov)`` with exactly one given (the rule ``"data_or_cov"``): ``X`` (samples x
    features) or ``cov`` (features x features); returned validated, the missing one None.

    ``X`` is used as given (the covariance is ``X.T @ X / m``): center it first
    (:func:`nspca_core.preprocess`) — nothing here alters data silently.
    ``cov`` must be symmetric and, when the context's ``psd`` (default True), positive
    semidefinite to the tolerance of :class:`Psd`.
    """

    def check(self, value, name: str, context: dict) -> tuple:
        X, cov = value
        return _data_or_cov(X, cov, **context)


def _data_or_cov(X=None, cov=None, *, psd: bool = True) -> tuple[np.ndarray | None, np.ndarray | None]:
    if (X is None) == (cov is None):
        raise InputError("give exactly one of `X` (samples x features data) and `cov` "
                         f"(features x features covariance); got X={'None' if X is None else 'array'}, "
                         f"cov={'None' if cov is None else 'array'}")
    if X is not None:
        return _matrix(X, "X"), None
    A = _matrix(cov, "cov", square=True, symmetric=True)
    if psd:
        _psd(A, "cov")
    return None, A


# A covariance is accepted when lambda_min >= -PSD_RTOL * n * max|A_ij|: rounding in a
# computed X^T X / m moves eigenvalues by about n * 1.1e-16 * ||A||, far below this.
PSD_RTOL = 1e-10
# up to this n the test is a Cholesky factorization (n^3 / 3 flops, exact to rounding);
# above it a Lanczos run that can only prove indefiniteness (see _psd)
PSD_CHOLESKY_MAX_N = 4000


def pow2_scale(a: np.ndarray) -> float:
    """The power of two ``s`` with ``max|a| / s`` in ``[1, 2)`` (1.0 for ``a = 0``).

    Dividing by it is exact (only the exponents change), so solvers that
    normalize their input with it return bit-identical answers for ``a`` and
    ``2^j a``, and answers equal up to the input's own rounding for ``c a``.
    """
    top = max(float(a.max()), -float(a.min())) if a.size else 0.0  # no |a| temporary
    if top == 0.0 or not np.isfinite(top):
        return 1.0
    # top = f 2^e with f in [0.5, 1): 2^(e - 1) is finite for every finite top, subnormals too
    return float(np.ldexp(1.0, int(np.frexp(top)[1]) - 1))


@dataclass(frozen=True)
class Psd:
    """A symmetric array that is positive semidefinite (the rule ``"psd"``), returned as given;
    the test and its tolerance: :func:`_psd`."""

    def check(self, value, name: str, context: dict) -> np.ndarray:
        _psd(value, name)
        return value


def _psd(A: np.ndarray, name: str = "cov") -> None:
    """Raise :class:`InputError` unless the symmetric ``A`` is positive semidefinite.

    Accepted: ``lambda_min(A) >= -tol`` with ``tol = PSD_RTOL * n * max|A_ij|``
    (``PSD_RTOL = 1e-10``), a tolerance that scales with the matrix.  The
    message of a refusal gives the offending eigenvalue (or diagonal entry)
    and ``tol``.

    Notes
    -----
    Cheapest test first: a diagonal entry below ``-tol`` is free to find
    (``A_ii >= lambda_min``).  For ``n <= PSD_CHOLESKY_MAX_N`` (4000) a Cholesky
    factorization of ``A + tol I`` decides (``n^3/3`` flops, about a third of
    the cost of the tridiagonal reduction behind any dense ``eigh``; measured
    0.4 s at n = 2000 on one core); only when it fails is the smallest
    eigenvalue computed (``scipy.linalg.eigh(subset_by_index=[0, 0])``) for the
    message.  For larger n a 30-step Lanczos run (30 matrix-vector products)
    finds a unit vector of Rayleigh quotient below ``-tol`` whenever its
    Krylov space holds one: a refusal is then a proof, but an eigenvalue
    below ``-tol`` that 30 steps do not resolve (one tiny relative to the
    spread of the spectrum) is not caught.  The test
    runs on ``A / pow2_scale(A)`` (exact) when that scale is beyond
    ``2^±100``, so it gives the same verdict at every scale.
    """
    n = A.shape[0]
    s = pow2_scale(A)
    if 2.0 ** -100 <= s <= 2.0 ** 100:  # no under- or overflow ahead: spare the n x n copy
        s, As = 1.0, A
    else:
        As = A / s
    tol = PSD_RTOL * n * max(float(As.max()), -float(As.min()))
    diag = np.diag(As)
    i = int(np.argmin(diag))
    if diag[i] < -tol:
        raise InputError(argument=name,
                         predicate=f"must be positive semidefinite (a covariance); its diagonal entry "
                                   f"{name}[{i}, {i}] = {diag[i] * s:.6g} is negative (a variance is >= 0; "
                                   f"allowed down to -{tol * s:.3g} = -{PSD_RTOL:g} * n * max|{name}|)")
    if n <= PSD_CHOLESKY_MAX_N:
        import scipy.linalg  # here, not at import: `import nspca_core` stays cheap

        try:
            shifted = As.copy()  # A + tol I, factored in place: one n x n copy
            shifted.flat[:: n + 1] += tol
            # shifted.T: the same symmetric matrix in Fortran order, factored without a copy
            scipy.linalg.cholesky(shifted.T, lower=True, overwrite_a=True, check_finite=False)
            return
        except np.linalg.LinAlgError:
            lam = float(scipy.linalg.eigh(As, subset_by_index=[0, 0], eigvals_only=True,
                                          check_finite=False)[0])
            if lam >= -tol:  # rounding at the edge of the tolerance: accept
                return
            what = f"its smallest eigenvalue is {lam * s:.6g}"
    else:
        lam = _lanczos_min(As)
        if lam >= -tol:
            return
        what = f"it has an eigenvalue <= {lam * s:.6g} (Lanczos)"
    raise InputError(argument=name,
                     predicate=f"must be positive semidefinite (a covariance); {what}, below the "
                               f"tolerance -{tol * s:.3g} (= -{PSD_RTOL:g} * n * max|{name}|, n = {n}). "
                               f"To use it anyway, clip its negative eigenvalues first: w, U = "
                               f"np.linalg.eigh({name}); {name} = (U * w.clip(0)) @ U.T")


def _lanczos_min(A: np.ndarray, steps: int = 30) -> float:
    """An upper bound on ``lambda_min(A)``: the least Ritz value of a ``steps``-step Krylov
    space (``steps`` products with A, full reorthogonalization, a deterministic start).

    A Ritz value is the Rayleigh quotient of a unit vector of the space, so it
    is never below ``lambda_min``; it reaches it quickly when the negative part
    of the spectrum stands out of the rest.
    """
    n = A.shape[0]
    steps = min(steps, n)
    Q = np.zeros((n, steps))
    H = np.zeros((steps, steps))
    q = np.random.default_rng(0).standard_normal(n)
    q /= np.linalg.norm(q)
    size = steps
    for j in range(steps):
        Q[:, j] = q
        w = A @ q
        for _ in range(2):  # twice is enough (Kahan): Q stays orthonormal to rounding
            c = Q[:, :j + 1].T @ w
            w -= Q[:, :j + 1] @ c
            H[:j + 1, j] += c
        beta = float(np.linalg.norm(w))
        if j + 1 == steps or beta <= 1e-12 * max(float(np.abs(H[:j + 1, j]).max()), 1e-300):
            size = j + 1  # last step, or an invariant subspace (its Ritz values are eigenvalues)
            break
        H[j + 1, j] = beta
        q = w / beta
    T = H[:size, :size]
    return float(np.linalg.eigvalsh(0.5 * (T + T.T))[0])


def covariance_from_data(X: np.ndarray) -> np.ndarray:
    """``A = X^T X / m`` (forms the n x n matrix: only call when that is affordable)."""
    return (X.T @ X) / X.shape[0]


def as_rng(seed, name: str = "seed") -> np.random.Generator:
    """A Generator from an int seed >= 0, None, or a Generator (never global state).

    ``name`` is the argument named in the message (``random_state`` for the estimators).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):  # scikit-learn's kind: a Generator seeded from it
        return np.random.default_rng(int(seed.randint(np.iinfo(np.int32).max)))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise InputError(argument=name, value=seed,
                         predicate=f"must be None, an int >= 0, a numpy RandomState or Generator; got {seed!r}")
    if seed is not None and int(seed) < 0:  # numpy's own message does not name the argument
        raise InputError(argument=name, value=seed,
                         predicate=f"must be None, an int >= 0, a numpy RandomState or Generator; got {int(seed)}")
    return np.random.default_rng(None if seed is None else int(seed))


def sparse_structure_problem(X, rows: str = "rows", cols: str = "columns") -> str | None:
    """What is wrong with the index arrays of a CSR/CSC/COO matrix ``X``, or None.

    SciPy lets a compressed matrix hold a column index past the last column or an ``indptr``
    that decreases (built from arrays without a full check, or its arrays changed afterwards);
    its compiled kernels then read and write out of bounds (a crash, or wrong numbers).  Checked
    in O(nnz), without a copy: ``indptr`` has one entry per row (column for CSC) plus one, starts
    at 0, never decreases and ends at the number of stored values; there is one index per
    stored value, every index an integer in ``[0, size)``.  ``rows``/``cols`` name the two
    dimensions in the text (plural words: ``"cells"``, ``"genes"``).
    """
    m, n = X.shape
    fmt = X.format
    if fmt == "coo":
        data = np.asarray(X.data)
        for arr, size, what in ((np.asarray(X.row), m, rows), (np.asarray(X.col), n, cols)):
            if arr.ndim != 1 or arr.size != data.size or arr.dtype.kind not in "iu":
                return (f"its {what[:-1]} indices are {arr.size:,} {arr.dtype} values for "
                        f"{data.size:,} stored values (one integer index each)")
            if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= size):
                bad = (arr < 0) | (arr >= size)
                i = int(np.argmax(bad))
                return (f"stored entry {i + 1} has the {what[:-1]} index {int(arr[i])}, outside "
                        f"[0, {size:,}) ({int(bad.sum()):,} such entr{'y' if bad.sum() == 1 else 'ies'})")
        return None
    if fmt not in ("csr", "csc"):
        return None
    major, minor = (m, n) if fmt == "csr" else (n, m)
    major_word, minor_word = (rows, cols) if fmt == "csr" else (cols, rows)
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    nnz = int(np.asarray(X.data).size)
    if indptr.ndim != 1 or indptr.size != major + 1:
        return (f"its indptr holds {indptr.size:,} entries, not one per {major_word[:-1]} plus one "
                f"({major + 1:,})")
    if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        return f"its indptr ({indptr.dtype}) and indices ({indices.dtype}) must hold integers"
    if indices.ndim != 1 or indices.size != nnz:
        return f"{indices.size:,} indices for {nnz:,} stored values"
    if int(indptr[0]) != 0 or int(indptr[-1]) != nnz:
        return (f"its indptr runs from {int(indptr[0]):,} to {int(indptr[-1]):,}, not from 0 to the "
                f"{nnz:,} stored values")
    steps = np.diff(indptr)
    if (steps < 0).any():
        k = int(np.argmax(steps < 0))
        return (f"its indptr decreases at {major_word[:-1]} {k + 1} ({int(indptr[k]):,} then "
                f"{int(indptr[k + 1]):,}); it must never decrease")
    if nnz and (int(indices.min()) < 0 or int(indices.max()) >= minor):
        bad = (indices < 0) | (indices >= minor)
        i = int(np.argmax(bad))
        at = int(np.searchsorted(indptr, i, side="right")) - 1
        return (f"{major_word[:-1]} {at + 1} holds the {minor_word[:-1]} index {int(indices[i])}, "
                f"outside [0, {minor:,}) (there are {minor:,} {minor_word}; {int(bad.sum()):,} such "
                f"ind{'ex' if bad.sum() == 1 else 'ices'})")
    return None


class SparseStructure:
    """A sparse matrix whose index arrays describe its shape (the rule ``"sparse_structure"``):
    refused (:func:`sparse_structure_problem`) before any kernel reads them; any other value
    passes as it is."""

    def check(self, value, name: str, context: dict):
        return _sparse_structure(value, name)


def _sparse_structure(X, name: str = "X"):
    import scipy.sparse as sp

    if not sp.issparse(X):
        return X
    problem = sparse_structure_problem(X)
    if problem is not None:
        m, n = X.shape
        raise InputError(f"`{name}` is a {X.format.upper()} matrix ({m:,} x {n:,}) whose index arrays "
                         f"are inconsistent: {problem}. Build it from valid (data, indices, indptr) "
                         "arrays (scipy's `X.check_format()` says what is wrong); refused rather "
                         "than read out of bounds", argument=name, value=f"{X.format} matrix")
    return X
