"""Where one certificate runs (the routing of :func:`certify`): a validated covariance to the low-rank exact
certificate, the dense one (:func:`.single._certify_dense`), the split one (:func:`.single._certify_split`, large
n, data held) or the operator's (:func:`.cheap._certify_operator`); the public :func:`certify` and the exact
mode :func:`certify_exact`.  (Moved out of :mod:`.single`, unchanged.)"""

from __future__ import annotations

import time
from contextlib import contextmanager
from functools import partial

import numpy as np

from .._common.params import check
from .._common.scale import normalized, rescale
from ..operators.cov import Cov
from ..operators.covariance import as_cov
from ..result import Certificate
from . import _settings as S
from ._settings import _EFFORT, exact_time_limit, screened_size
from .anchor import bisection_hints
from .anchor_sums import float32_products
from .budget import BoundReport, Budget, in_scale
from .cheap import _certify_lowrank, _certify_operator
from .coupled import small_screen
from .dual import _kkt_point
from .exact import EXACT_TOLERANCE, _finish_exact, branch_and_bound
from . import grow_cross, thin_contract
from .screens import grow_to, grown, grown_split
from .single import _certify_dense, _certify_split
from .sparse_route import sparse_route
from .thin_anchor import top_last


def _certify_cov(cov: Cov, k, x=None, effort="auto", callback=None, time_limit=None, scale=None,
                 budget: Budget | None = None) -> Certificate:
    """Certificate on a validated :class:`Cov` (``fit`` calls this with its answer x).

    ``k`` and ``x`` are checked here too (cheap) since callers are internal.  ``scale``: maps a
    bound of ``cov`` to the caller's scale (the bounds reported to ``callback``); ``budget``: the
    exact mode's time limit started by the caller (else started here).
    """
    k = check("k", k, n_features=cov.n)
    effort = check("effort", effort)
    time_limit = exact_time_limit(time_limit, effort)
    check("callback", callback)
    if x is not None:
        x = check("x", x, n_features=cov.n, k=k)
    if effort == "exact":
        return certify_exact(cov, k, x, time_limit, callback, scale, budget)
    gram: dict = {}
    # (thin data whose n x n the split route never forms: by cost)
    thin_split = cov.n <= S._DENSE_MAX_N and split_cheaper(cov, k, effort)
    if cov.thin:
        # (gram["eig"] is read only by the split routes: the dense route's data need the Gram's eigenvalues alone)
        cert = _certify_lowrank(cov, k, x, callback, gram=gram, vectors=cov.n > S._DENSE_MAX_N or thin_split)
        if cert is not None:
            return cert
    if cov.n > S._DENSE_MAX_N:
        return _certify_large(cov, k, x, effort, callback, gram=gram or None)
    if thin_split:
        return certify_thin(cov, k, x, effort, callback, gram or None)
    if (cert := sparse_route(cov, k, x, effort, callback, _certify_large)) is not None:  # (sparse data, by cost)
        return cert
    cert, _ = _certify_dense(cov, k, x, effort, callback, top=gram.get("top"), late=True)  # (.lambda1_late)
    return cert


@contextmanager
def _thin_blocks():
    """The blocks a thin certificate computes in (:func:`certify_thin`, :func:`path_grown`): bisection hints (the
    grown screen's bisection tests where the 2 k screen's landed first), float32 products of values and ratios
    rounded up in the anchored row sums, S's eager bound's top test last (only where its bisection proves
    nothing), and the joint anchored tests' contraction proof (:mod:`.thin_contract`)."""
    with bisection_hints(), float32_products(), top_last(), thin_contract.block():
        yield


def _rule_bs(info: dict) -> float:
    """S's bound as the thin route's effort rules read it (:func:`certify_thin`, :func:`eager_grown`,
    :func:`path_grown`): ``info["B_S_rule"]`` where :mod:`.single` records one (S's bound collatz's, read at the former
    search's resolution above it: ``.single._AIM_STEP_CW``), else ``info["B_S"]``, else 0 (no split)."""
    return info.get("B_S_rule", info.get("B_S", 0.0))


def certify_thin(cov: Cov, k: int, x, effort: str, callback, gram=None) -> Certificate:
    """certify(k) where :func:`split_cheaper` holds: the eager split certificate (grown, :func:`eager_grown`), and
    where the rest T still holds its ratio more than :data:`_EAGER_FALLBACK` below S's own (no screen within the
    dense route's cost caught what binds), the dense certificate too, the smaller bound standing (both proved; the
    cost at most the split's plus the dense route's, the split's below the dense one's).  Issue 39: 30 x 500 data
    whose largest variances are noise outside the correlated module: eager 0.70 / 0.58 at k = 10 / 20 on screens
    of 265 / 191 features, the dense route 0.97 / 0.94.  certify_path calls this at each such k (the same floats)."""
    with _thin_blocks():
        d = _certify_large(cov, k, x, effort, callback, gram=gram, eager=True, defer=True)
        bs = _rule_bs(d.info)
        if not bs > 0 or d.lower / d.upper_bound >= d.lower / bs - _EAGER_FALLBACK:
            return d
        held = cov._A
        try:
            e, _ = _certify_dense(cov, k, x, effort, callback)
        finally:
            # (the n x n A formed here is dropped: a path's later k on this cov took other routes with A held than
            # certify(k) on fresh data: unseen 80 x 2,200 genes k = 58 stood 1.05e-3 above certify(k) after the
            # dense route ran at k = 53, issue 39, helper thinpath27)
            cov._A = held
    return e if e.upper_bound < d.upper_bound else d


def route_flops(m: int, n: int, s: int) -> tuple[float, float]:
    """Predicted flops of a one-k certificate's two routes on data of m samples and n features held densely,
    ``(dense, split)``, the split one on a screened set of s features.  Dense (:func:`.single._certify_dense`):
    forming A (``m n^2``) and ordering its rows for the anchored row sums (``n^2 log2 n``); its top eigenpairs
    (a Lanczos, ``n^2`` a step, or an ``n^3`` eigh) are left out, they only add to it.  Split
    (:func:`.single._certify_split`): X's Gram and its eigendecomposition, the rest's spectrum through it
    (``m n min(m, n) + min(m, n)^3``), S's block and the cross of S and the rest (``m s n``) and ordering S's
    rows (``s^2 log2 s``)."""
    r = min(m, n)
    dense = float(m) * n * n + float(n) * n * np.log2(max(n, 2))
    split = float(m) * n * r + float(r) ** 3 + float(m) * s * n + float(s) * s * np.log2(max(s, 2))
    return dense, split


def split_cheaper(cov: Cov, k: int, effort: str) -> bool:
    """Whether a one-k "auto" certificate on n <= ``_DENSE_MAX_N`` features takes the split route (its S bound
    ``eager`` on ``_settings.eager_size``'s screen, :func:`.single._certify_split`) rather than the dense one:
    data held as X (not A), a screen smaller than n, and the split route's predicted flops below the dense
    route's (:func:`route_flops`).  The choice is by cost, no sparsity or size limit: a 60 x 2,500 gene matrix's
    dense route took 1.8-2.0 CPU s at every k (an eigh and the anchored rows of the 2,500 x 2,500), one gene
    more the split route 0.015 s (issue 39); 300 x 400 spectra stay dense (X's 300 x 300 Gram costs about
    what A does).  "full" keeps the dense route (the tighter bound is its point)."""
    if effort != "auto" or cov.X is None or not cov.thin or cov._A is not None:
        return False
    s = S.eager_size(cov.n, k)
    if s >= cov.n:
        return False
    dense, split = route_flops(cov.X.shape[0], cov.n, s)
    return split < dense


def _certify_large(cov: Cov, k: int, x, effort: str, callback, split_cap: int | None = None,
                   branch_seconds: float | None = None, keep: dict | None = None, gram=None,
                   both: bool = False, small_keep: dict | None = None, eager: bool = False,
                   tree: bool = True, whole: dict | None = None, cut_below: float | None = None,
                   defer: bool = False, rest_late: bool = False, per_k: float | None = None) -> Certificate:
    """Large n: the split bound when the data are held densely (``split_cap``: at most that many
    screened features), else (an operator: sparse or distributed data) :func:`_certify_operator`.
    ``gram``: X's Gram and its eigendecomposition when computed already (:func:`.cheap._certify_lowrank`).
    A one-k "auto" certificate tries a smaller screen (:func:`.coupled.small_screen`) where
    ``_settings._SMALL_FIRST`` (see there) and the larger screen's light route falls short (its DNN would
    run: the smaller screen's split bound runs then, and where it stands the larger DNN is not run); a path's
    run (``keep``) takes certify(k)'s own screen only, unless ``both``: then the same route as certify(k)
    (``keep`` from the larger screen, carried; ``small_keep``: the smaller screen's, filled where its split
    bound ran, carried too; where it stands, the larger one's DNN runs all the same, its dual point carried
    and polished: without it the MLL path was up to 1.5% looser at k = 66..183, and the smaller bound of the
    two is the run's).  "auto", not capped: a screen 1.5x larger follows where the rest T holds the bound
    below the aim (:func:`.screens.grown`), a path's run's too.  ``eager``: S's bound by the anchored row sums'
    whole search on every screen (:func:`.single._certify_split`; data :func:`split_cheaper` sends here), the
    screen ``_settings.eager_size``'s (no smaller one tried first; grown where T binds).  ``tree``, ``whole``,
    ``cut_below``:
    :func:`.single._certify_split`'s (sparse data with the covariance held: :mod:`.sparse_route`).  ``defer``
    (``eager``, :func:`certify_thin`): the first screen's aimed refinements deferred where the larger screen
    provably follows and stands (:mod:`.thin_defer`), that screen run whole again where it does not.  ``rest_late``:
    :func:`.single._certify_split`'s (:mod:`.sparse_route`); ``per_k``: its too (the held covariance's screen, the same
    module)."""
    if cov.X is None and cov._A is None:
        return _certify_operator(cov, k, x, callback)
    split = partial(_certify_split, eager=True, size=S.eager_size(cov.n, k, split_cap)) if eager else _certify_split
    if not tree or whole is not None or cut_below is not None or rest_late or per_k is not None:
        split = partial(split, tree=tree, whole=whole, cut_below=cut_below, rest_late=rest_late, per_k=per_k)
    own = screened_size(cov.n, k, _EFFORT[effort], split_cap)
    small = None if eager else small_screen(cov.n, k, own)
    # a one-k "auto" certificate whose screen grown() may grow: skipped before its DNN where T alone holds it below
    # the aim (:func:`.screens.own_hopeless`), the other screen (chosen by the cross term on thin data) run at once
    big = grow_to(cov.n, own, effort) if (effort == "auto" and keep is None and split_cap is None and not eager
                                         and branch_seconds is None and cov.X is not None and cov.thin) else None
    skip = {} if big is not None else None
    if (effort == "auto" and branch_seconds is None and small and cov.X is not None and cov.thin
            and ((keep is None and S._SMALL_FIRST) or both)):
        # (the smaller screen where the larger one's DNN would run)
        stood: list = []  # (the smaller screen's certificate where it stood)

        def small_try(xl, src):  # (only where the larger screen's light route falls short: its DNN would run)
            trial: dict = {}
            c = split(cov, k, xl, effort, callback, small, gram=gram, trial=trial, keep=small_keep)
            if c is not None:
                c.info["lower_source"] = src  # (the larger screen's point: its search not run twice)
            stood.extend([c] if trial.get("ok") else [])
            return c if trial.get("ok") and keep is None else None  # (a path's run: the larger one's DNN too)

        d = split(cov, k, x, effort, callback, split_cap, keep=keep, gram=gram, small_try=small_try, skip_own=skip)
        d = d if d is None or not stood or not stood[0].upper_bound < d.upper_bound else stood[0]
    else:
        late = eager and defer and split_cap is None and branch_seconds is None and keep is None
        d = (partial(split, defer={"slack": _EAGER_SLACK, "grows": partial(_grows, cov)}) if late else split)(
            cov, k, x, effort, callback, split_cap, branch_seconds, keep, gram=gram, skip_own=skip)
    if d is None:  # (T alone held certify(k)'s own screen below the aim: the larger one at once, as grown's)
        d = grown_split(split, cov, k, skip["x"], effort, callback, keep=keep, gram=gram,
                        size=grow_to(cov.n, skip["size"], effort, cross=grow_cross.applies(cov)))
        d.info["lower_source"] = skip["src"]
        return d
    if eager and split_cap is None and branch_seconds is None:
        def whole_again():  # (the first screen without deferral, its bisection hints its own: as it first ran)
            with bisection_hints():
                return split(cov, k, x, effort, callback, split_cap, branch_seconds, keep, gram=gram, skip_own=skip)

        return eager_grown(cov, k, d, effort, callback, keep, gram, whole_again)
    # (a larger screen where T holds this one below the aim: not for a path's capped run nor the exact mode)
    return d if split_cap is not None or branch_seconds is not None else grown(cov, k, d, effort, callback, keep,
                                                                               gram, split)


def _grows(cov: Cov, size: int) -> bool:
    """Whether :func:`eager_grown` tries a larger screen after one of ``size`` features where T binds (the larger
    screen's predicted flops below the dense route's, as there)."""
    m, n = cov.X.shape[0], cov.n
    return size < n and route_flops(m, n, min(n, int(_EAGER_GROW * size)))[1] < route_flops(m, n, size)[0]


def eager_grown(cov: Cov, k: int, d: Certificate, effort: str, callback, keep, gram, again=None) -> Certificate:
    """The eager split certificate ``d`` on screens :data:`_EAGER_GROW` times larger while the rest T holds its ratio
    more than :data:`_EAGER_SLACK` below S's own (``lower / B_S``: what the dense route's test proves on S) and the
    larger screen's predicted flops stay below the dense route's (:func:`route_flops`: no screen costs more than
    the route it replaces); the smallest bound standing.  Valid whatever it picks: every screen's bound is proved.
    Issue 39: 60 x 2,400 genes (bench_drift's gene60) k = 10 certified 0.9765 on 2 k features (T binds), 0.9990 on
    100; k = 50 0.79 on 100, 0.9702 on 300 (the dense route filed 0.9692); 60 x 2,500 genes never grow.
    ``d`` with ``info["deferred_floor"]`` (:mod:`.thin_defer`: its refinements not run, the larger screen certain
    to run): the larger screen stands where its bound is below that floor (below the refined bound too); anywhere
    else ``again()`` (``d`` run whole) first, then as before."""
    m, n = cov.X.shape[0], cov.n
    size = int(d.info.get("split_S", n))
    dense = route_flops(m, n, size)[0]
    while (d.x is not None and "B_S" in d.info and d.info["B_S"] > 0 and size < n
           and d.lower / d.upper_bound < d.lower / _rule_bs(d.info) - _EAGER_SLACK):
        size = min(n, int(_EAGER_GROW * size))
        if not route_flops(m, n, size)[1] < dense:
            break
        kept = {} if keep is not None else None
        e = _certify_split(cov, k, d.x, effort, callback, keep=kept, gram=gram, size=size, eager=True)
        if "deferred_floor" in d.info and not e.upper_bound < d.info["deferred_floor"]:
            d = again()  # (the refined bound the larger screen's must beat: as before)
        if not e.upper_bound < d.upper_bound:
            break
        if keep is not None:
            keep.clear()
            keep.update(kept)
        e.info["lower_source"] = d.info.get("lower_source", e.info.get("lower_source"))
        d = e
    return again() if "deferred_floor" in d.info else d


# certify_thin: the dense route too where T still holds the split's ratio this far below S's own (S's ratio is what
# the dense route's anchored test proves on S; the whole problem's is at most about it): issue 39's 0.005 rule, plus
# the shift of S's own ratio since S's plain anchored tests try the contraction proof (.thin_contract, helper thin35,
# the twenty-fifth round): S's bound ~0.1% lower, so its ratio ~+0.0008 higher on the unseen gene sets, and at 5e-3
# the rules read gaps that had been within them as beyond (60 x 2,500 genes k = 160 / 175 grew: ~5x the CPU).  At
# 6e-3 the thin paths took 0.75-0.8x the CPU with their minima up; a k whose bound stands where the base's grown
# screen or dense route stood is looser by at most ~9e-4 relative (benchmarks/results/issue39_thin35.txt)
_EAGER_FALLBACK = 6e-3
# eager_grown: a screen this many times larger (2 k -> 6 k, the DNN route's screen per k), where T holds the ratio
# more than _EAGER_SLACK below S's own.  Issue 39 (helpers thinpath23, thin25): 2e-3 -> 4e-3, below the fallback, so
# the certificate stays within about the 0.005 rule of S's own ratio by construction.  On 60 x 2,500 genes the grown
# screen ran at k = 130..200 for +0.001..0.004 of ratio: certify_path -23..-29% CPU, 36 k looser by at most
# 0.0025; 72 x 1,000 and 48 x 1,800 never grow.  (6e-3 with the fallback raised to 7e-3 halves that path but lets
# a k lose up to ~7e-3: not taken; benchmarks/results/issue39_thin25.txt)
# Since helper grown32 (the twenty-third round) the slack IS the fallback's 0.005: what the grown screen can add is
# at most the gap to S's own ratio (it stood 0.0006-0.0008 short of it on 60 x 2,500 genes), so a gap within the
# issue's 0.005 rule does not pay for a screen 3x larger (0.17 CPU s a k on top of the 2 k screen's there, 29% of
# certify_path at k = 149..185); beyond it the grown screen runs, then the dense route where the gap is still beyond
# it, as before.  There certify(k) now grows at 18 of those 37 k; at the other 19 it stands 0.0033-0.0043 below the
# grown screen's ratio, and a path carries bounds down from the grown k (path_grown: 0.00037 at most below the
# former path).  benchmarks/results/issue39_grown32.txt
# Since helper thin35 (the twenty-fifth round) the fallback's is 6e-3: the 0.005 rule measured against S's ratio
# before the contraction proof lowered S's bound (the shift ~0.0008 added back; _EAGER_FALLBACK's comment)
_EAGER_GROW = 3.0
_EAGER_SLACK = _EAGER_FALLBACK
# path_grown: a path's thin k grows its screen (certify(k) did not) where the bound carried from the larger k still
# leaves the ratio more than this below S's own.  Issue 39 (helper grown32), 60 x 2,500 genes k = 120..200: the
# grown screen stood 0.0006-0.0008 below S's own ratio, and its bound carried down loses ~7e-5 of ratio per k; 4e-3
# ran none (the carried gap at k = 183..185 was 0.0034), 3e-3 ran 2 (k = 187, 134), 2e-3 5; each ~0.17 CPU s
_PATH_SLACK = 3e-3


def path_grown(cov: Cov, certs: dict, effort: str, gram=None) -> int:
    """certify_path's thin k (``certs``: certify_thin's certificate at each, replaced in place): the grown screen
    (:func:`eager_grown`'s, 3x the first screen, at its point) where the path's CARRIED bound still leaves the ratio
    more than :data:`_PATH_SLACK` below S's own, k from the largest down, each bound proved at k then carried to every
    k below it (``carry_envelope``).  The one-k rule (:data:`_EAGER_SLACK`, the 0.005 rule) skips the grown screen
    wherever the gap is within it; on a path a grown screen at one k lifts the k below it too, so the path pays for
    it where the bound carried from above does not already close the gap (the choice by the carried bound's gap).
    Only where certify(k) grew nothing (its screen the first one, its S bound held), the larger screen's predicted
    flops below the dense route's (:func:`_grows`), and its bound standing where below certify(k)'s: never looser
    than certify(k).  Returns how many grown screens ran."""
    runs, ub = 0, np.inf
    for k in sorted(certs, reverse=True):
        c = certs[k]
        ub = min(ub, c.upper_bound)
        bs, size = _rule_bs(c.info), int(c.info.get("split_S", 0))
        # (certify(k)'s own screen: 2 k by variance plus x's support, below 3 k; a grown one is 3x that)
        if (c.x is None or not bs > 0 or not size < _EAGER_GROW * S.eager_size(cov.n, k) or not _grows(cov, size)
                or not c.lower / ub < c.lower / bs - _PATH_SLACK):
            continue
        with _thin_blocks():
            e = _certify_split(cov, k, c.x, effort, None, gram=gram, size=min(cov.n, int(_EAGER_GROW * size)),
                               eager=True)
        runs += 1
        if e.upper_bound < c.upper_bound:
            e.info["lower_source"] = c.info.get("lower_source", e.info.get("lower_source"))
            certs[k] = e
            ub = min(ub, e.upper_bound)
    return runs


def certify(X=None, *, cov=None, k, x=None, effort="auto", callback=None, time_limit=None,
            center=True) -> Certificate:
    """Upper bound on the optimum of nonnegative sparse PCA, and how close ``x`` is to it.

    Parameters
    ----------
    X : array_like of shape (m, n), optional
        Data, any container of :func:`nspca_core.fit`, centered as there (``center``).
    center : bool, default True
        The covariance of the centered data (False: ``A = X^T X / m``, X as given).
    cov : array_like of shape (n, n), optional
        The covariance (symmetric psd).  Give exactly one of X, cov.
    k : int in [1, n]
    x : array_like of shape (n,), optional
        A feasible point (nonnegative, at most k nonzeros; it is normalized):
        ``lower = x^T A x``.  When omitted the best of the project's
        ``fit(method="auto")`` and a nonnegative truncated-power ascent is used (thin
        data on the eager split route, :func:`split_cheaper`: the ascent only where fit finds none).
    effort : {"auto", "fast", "full", "exact"}, default "auto"
        "fast": d = 1 bounds and a 40-iteration DNN run from its screening
        initialization (interactive use); "auto": d = 1 bounds (d <= 2 for
        n <= 120, where the exact rank-2 spannogram is cheap) and up to 80
        DNN iterations, stopping at a 1e-3 relative gap, when progress
        stalls or (from 64 features) when its estimates head below 0.97, then (only while the
        ratio is below 0.97) one run of up to 44 more with sparsity cuts renewed every 8
        iterations (below 64 features: two rounds of up to 40); for k >= 3 the anchored row sums come
        first (their cost is at most the DNN's, ``_settings.anchor_affordable``) and the DNN (or its cut
        rounds) is skipped when they certify 0.975; a given x is first checked against lambda_1 alone (Lanczos and a
        Cholesky proof, n >= 1000); "full": d <= 3, residual bounds on the split remainder,
        up to 2000 + 2000 DNN iterations aiming at ``OPTIMAL_TOLERANCE``; "exact": branch and
        bound over supports (:mod:`nspca_core.certificates.exact`) after the "auto" certificate,
        until the gap closes to 1e-6 relative (``optimal=True``) or ``time_limit`` runs out
        (then the best bound proved; ``info["nodes"]``, ``info["gap"]``).  n above 2500: the
        split certificate with the branch and bound on its screened set.
    callback : callable(done, total), optional
        Progress (DNN iterations; nodes closed of closed + open for "exact").  With "exact", a
        callback that takes a keyword ``bound`` (``callback(done, total, bound=...)``) also gets
        the best upper bound proved so far each time it improves and as the tree goes (the tree's
        bound: its open nodes', not the root's).
    time_limit : float, optional
        Seconds (wall clock) for ``effort="exact"`` (default 60), for the whole call: every
        step (the "auto" certificate's included) starts only when its predicted time fits in
        what is left (:mod:`nspca_core.certificates.budget`), so a short limit returns the bounds
        proved in time (``info["stopped"] = "time_limit"``); an error with any other effort.

    Returns
    -------
    Certificate
        ``upper_bound >= OPT`` (with probability ``>= 1 - 1/n`` only when
        ``probabilistic``), ``kind`` the winning bound, ``bounds`` all bounds
        tried, ``lower``/``ratio``/``optimal`` (``optimal`` when ``upper -
        lower <= OPTIMAL_TOLERANCE * upper`` = 1e-5 relative).

    Notes
    -----
    See the module docstring for the bounds, each proven in its function's
    docstring.  Forms the n x n covariance only when ``n <= 2500``, and for
    data with fewer samples than features (X given, effort "auto") only where
    that costs less than the split bound (:func:`split_cheaper`); otherwise
    the split bound forms ``|S| x |S|`` (``|S| <= 2500``) and works through
    ``X`` elsewhere.  Seed paper: Asteris, Papailiopoulos & Dimakis, ICML
    2014; the DNN relaxation follows d'Aspremont et al., SIAM Review 2007,
    with nonnegativity.
    """
    clock = time.perf_counter()  # the time limit covers the whole call, validation included
    cov_ = as_cov(X, cov, center=check("center", center))
    # the covariance the answer's fit formed of the same data, when kept (operators.cov.gram)
    if cov_ is not X:  # (an operator the caller built is left as it is)
        cov_.reuse_gram = True
    k = check("k", k, n_features=cov_.n)
    effort = check("effort", effort)
    time_limit = exact_time_limit(time_limit, effort)
    budget = None if time_limit is None else Budget(time_limit, start=clock)
    check("callback", callback)
    if x is not None:
        x = check("x", x, n_features=cov_.n, k=k)
    cov_, factors = normalized(cov_)  # entries far from 1: a power-of-2 copy (scale-free)
    scale = (lambda b: in_scale(b, factors)) if factors else None  # noqa: E731
    return rescale(_certify_cov(cov_, k, x, effort, callback, time_limit, scale, budget), factors)


def certify_exact(cov: Cov, k: int, x, time_limit: float, callback, scale=None,
                  budget: Budget | None = None) -> Certificate:
    """``effort="exact"``: the "auto" certificate (warm-started by ``fit(auto)``'s answer), then
    branch and bound (:func:`.exact.branch_and_bound`) with the rest of ``time_limit`` when it is not
    optimal to :data:`EXACT_TOLERANCE`.  Data too large to hold A densely (n above the dense
    limit) get the split certificate with the branch and bound on its screened set S
    (``info["split_branch"]``; ``info["nodes"]`` its nodes).

    ``time_limit`` bounds the whole call (:class:`.budget.Budget`): every step, the "auto"
    certificate's included, runs only when its predicted time fits in what is left, so a short
    limit returns the bounds proved in time (down to the sum of the k largest variances).
    ``callback(done, total)``; one taking a keyword ``bound`` also gets the best bound proved so
    far, multiplied by ``scale`` (:class:`.budget.BoundReport`)."""
    t0 = time.perf_counter()
    budget = Budget(time_limit) if budget is None else budget
    report = BoundReport(callback, scale)
    if cov.n > S._DENSE_MAX_N:
        # the split bound with the branch and bound on its screened set S for the time limit
        # ("full" runs far past any time limit there); an operator: the "auto" certificate
        if cov.X is None and cov._A is None:
            cert = _certify_cov(cov, k, x, "auto", None)
        else:
            cert = _certify_split(cov, k, x, "auto", None, branch_seconds=time_limit, budget=budget,
                                  report=report)
        out = _finish_exact(cert, None, k, t0, EXACT_TOLERANCE, cov)
        report.progress(1, 1, out.upper_bound)
        return out
    cert, state = _certify_dense(cov, k, x, "auto", None, need_dual=True, budget=budget, report=report)
    bb = None
    if cert.upper_bound - cert.lower > EXACT_TOLERANCE * cert.upper_bound and "stopped" not in cert.info:
        A = cov.dense()
        if state is None and budget.fits("eval", float(cov.n) ** 3):
            with budget.step("eval", float(cov.n) ** 3):
                state = _kkt_point(A, k, cert.x)[1]
        bb = branch_and_bound(A, k, cert.x, cert.lower, state, upper=cert.upper_bound, budget=budget,
                              report=report)
    out = _finish_exact(cert, bb, k, t0, EXACT_TOLERANCE, cov)
    report.progress(1, 1, out.upper_bound)
    return out
