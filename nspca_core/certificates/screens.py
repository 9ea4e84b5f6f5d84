"""The split certificate's screen grown where the rest T alone holds it below the aim
(:func:`.single._certify_large`)."""

from __future__ import annotations

import numpy as np

from ..result import Certificate
from ._settings import _EFFORT, screened_size
from . import grow_cross
from .grow_cross import cross_growth
from .bounds import _rest_curve, _rest_spectrum
from .aim_terms import _ascended, _terms_at, _truncated_all
from .coupled import _COUPLED_AIM, _SMALL_SHORT, _lambda_S, small_verdict, t_ceiling
from .cross import cross_table

# an "auto" split certificate (one k, or a path's run at k) that would not stand by the rule that lets a
# smaller screen stand (:func:`.coupled.small_verdict`: its ratio more than coupled._SMALL_SHORT below the aim
# while the rest T adds more than coupled._SMALL_T_SHARE to S's own bound) takes a screen this many times
# larger too, the smaller of the two bounds standing.  Issue 39: dlbcl-shaped k = 120 / 150 / 200 certified
# 0.9605 / 0.9581 / 0.9557 with 6 k features, 0.9742 / 0.9704 / 0.9704 grown 1.5x by variance (the filing
# tree, 12 k features: 0.9697 / 0.9680 / 0.9650); golub-shaped and MLL k = 100..200 stand on 6 k.  Since helper
# wide23 the larger screen takes T's columns most covariant with S (:mod:`.grow_cross`, on thin data held):
# 1.2x so grown, dlbcl-shaped k = 120 / 150 / 200 certify 0.9735 / 0.9795 / 0.9794 at 0.46 / 0.51 / 0.83 of the
# CPU (S's DNN costs |S|^2 an iteration; benchmarks/results/issue39_wide23.txt).  _GROW now serves the screen by
# variance (data :func:`.grow_cross.applies` does not hold for)
_GROW = 1.2
# ... on thin data held, the other screen is CHOSEN by the cross term instead (:mod:`.grow_cross`): this many times
# the own screen's size, half of it by variance.  Issue 39 (helper wide26; sweep of size x rule): dlbcl-shaped
# k = 120 / 150 / 200 0.97351 / 0.97951 / 0.97937 on 1.2x (886 / 1,097 / 1,451 features) -> 0.97335 / 0.98020 /
# 0.98000 on 0.9x (665 / 823 / 1,089) at 0.7-0.95 of the CPU; 0.8x: 0.97380 / 0.97360 / 0.97814 (k = 150 -0.006).
# A path's run takes it too (the run at k does what certify(k) does: never looser there); the dlbcl-shaped path
# moves by -0.0015 .. +0.0018 (benchmarks/results/issue39_wide26.txt)
_CROSS = 0.9
# ... and a path's run where certify(k) grows no screen (its own route stands, ``info["one_k_stands"]``, set by
# :func:`.single._certify_split`): the former larger screen, 1.5x by variance (:func:`grown`)
_GROW_VARIANCE = 1.5
# ... when that is at least this many more features (a screen barely larger moves T's bound little)
_GROW_MIN = 1.2
# own_hopeless: where a ceiling leaves ``lower`` short of the goal by less than this (relative to the ceiling), S's
# floors under its _FLOOR_TOP largest terms are raised by _FLOOR_STEPS truncated power steps on A_SS from x's
# truncations (:func:`.aim_terms._ascended`) and the rule asked again.  Issue 39 (helper widek15): dlbcl-shaped
# k = 200, own screen 1,209 features, lower / ceiling 0.9787 with x's truncations (the rule asks < 0.974), 0.9735
# with the floors raised 0.5 %: the own screen's DNN and refinements (~1 CPU s, replaced by the grown screen's
# every time) skipped, 0.03 s of steps; MLL k = 200 (0.9995, S binds alone) and golub never within reach
_FLOOR_REACH = 0.01
_FLOOR_TOP = 8
_FLOOR_STEPS = 10
# own_hopeless: its questions (the cross table's ceiling) first asked with tables on this many of T's columns of
# largest variance (or _ROWS_PER_K times k where more) (:class:`_First`: True there implies True with the whole
# table), with ``lower`` raised by this much (relative: a float32 product may round apart in another block of
# columns, as cross._SCREEN_REL allows for); both parts there first only where ``lower`` is below _FIRST_PLAIN of
# the plain sums' threshold (else the column part on all of T first, as before: where it answers no, nothing is
# computed in vain).  Issue 39 (helper wide28): own_hopeless's lower / plain threshold at dlbcl-shaped k = 130..200
# (answers True) 0.87-0.90, MLL k = 160..200 (answers False) 0.998-1.004
_ROWS_FIRST = 1024
_ROWS_PER_K = 8
_FIRST_MARGIN = 1e-6
_FIRST_PLAIN = 0.95


def grown_size(n: int, k: int, cert: Certificate, effort: str, cross: bool = False) -> int | None:
    """The larger screen's size for the split certificate ``cert`` at sparsity k, or None where it is not
    grown: not "auto", ``cert`` within the aim (:func:`.coupled.small_verdict`, the rule that lets a smaller
    screen stand) or S's own bound binding (the coupled bound within ``_SMALL_T_SHARE`` of it: a larger
    screen only adds features to S's bound), or no room (the effort's ``split_size``, n).  ``cross``: the
    screen chosen by the cross term (:func:`grow_to`).  Chooses a screen only: either screen's bound is proved."""
    info = cert.info
    size = info.get("split_S")
    if effort != "auto" or size is None or "coupled" not in info:
        return None
    if small_verdict(cert.lower, info["coupled"], info["B_S"]):
        return None
    return grow_to(n, size, effort, cross=cross)


def grow_to(n: int, size: int, effort: str, grow: float | None = None, cross: bool = False) -> int | None:
    """The larger screen's size for a split certificate on ``size`` features (``_GROW`` times rounded up, at most the
    effort's ``split_size`` and n), or None where that is less than ``_GROW_MIN`` times ``size``.  ``grow``: the
    former screen by variance (:data:`_GROW_VARIANCE` times rounded down, as it was).  ``cross`` (data
    :func:`.grow_cross.applies` holds for, no ``grow``): the screen chosen by the cross term, :data:`_CROSS` times
    ``size`` rounded up, where the screen by variance would grow (smaller than ``size``: another screen, not a
    larger one; where the larger one has no room, neither, as before)."""
    grown_to = int(np.ceil(_GROW * size)) if grow is None else int(grow * size)
    big = min(int(n), int(_EFFORT[effort]["split_size"]), grown_to)
    if not big >= _GROW_MIN * size:
        return None
    return int(np.ceil(_CROSS * size)) if cross and grow is None else big


def own_hopeless(pre: dict, cov, S, T, covS, xS, k: int, kS: int, lower: float, G=None, lam=None) -> bool:
    """Whether the rest T alone keeps a one-k split certificate on the screen S (its light route fell short, its DNN
    would run) more than ``_SMALL_SHORT`` below the aim, so that :func:`grown` would take the larger screen all the
    same (issue 39, fourteenth round: dlbcl-shaped k = 150 / 200, the own screen's whole certificate, DNN and
    refinements, 33 / 41 % of the time, computed and then replaced).

    The ceiling (:func:`.coupled.t_ceiling`): every term of the coupled bound with part of the support in T (``j >=
    1``) is nondecreasing in ``B_S(i)``, and any bound of S is at least ``OPT_S(i)``, at least the value of x's i
    largest entries on S; so no bound of S brings the coupled bound below the largest such term (with this cross
    table, or the plain sums, which are never below it).  The table: its column part first
    (:func:`.cross.cross_table`, ``part="cols"``, each part a valid table, their elementwise minimum the whole one,
    float for float, whatever ``lam``, S's lambda_max bound, which only screens), the row part only where the
    columns' ceiling does not already meet ``lower``.  ``lower`` below ``(aim - short)`` times it: the certificate's
    ratio is below what :func:`.coupled.small_verdict`'s first clause asks.  First the plain sums' ceiling (no
    table: it is at least the table's, so where ``lower`` meets it the answer is no, at the cost of the rest's
    spectrum alone), then the cross table's; where ``lower`` falls short of a ceiling's rule by less than
    :data:`_FLOOR_REACH`, the same ceiling with S's floors raised at its largest terms (:class:`_Floors`: feasible
    values of truncated power steps, still at most ``OPT_S(i)``).  Chooses a screen only: the larger screen's bound
    is proved either way.  Each table question is asked first on T's first columns by variance (:class:`_First`:
    a True there is the whole table's; where ``lower`` is far below the plain sums' threshold, before the column part
    on all of T).  ``pre`` gets the rest's spectrum (``specT``) and the table's parts computed on all of T (``cols``,
    ``rows``), reused where the answer is no (:func:`.single._certify_split`)."""
    pre["specT"] = _rest_spectrum(cov, T, G, S)
    BT, AS = _rest_curve(cov, T, k, spec=pre["specT"]), covS.dense()
    goal = _COUPLED_AIM - _SMALL_SHORT
    floors = _Floors(AS, xS, BT, k, kS)
    plain = t_ceiling(AS, xS, BT, k, kS, None)
    if not floors.below(lower, goal, plain, None):
        return False  # (the plain sums' ceiling is at least the table's: no table needed)
    lam = lam if lam is not None else _lambda_S(cov, S)  # (the screen's cost only: the table is the same)
    first = _First(cov, S, T, k, kS, lam, (AS, xS, BT), lower, goal, floors)
    if lower < _FIRST_PLAIN * goal * plain and first.hopeless(None):
        return True  # (the whole table's ceiling is at least that one's: the same answer, no table on all of T)
    pre["cols"] = cross_table(cov, S, T, kS, k, lam, part="cols")
    if pre["cols"] is None or not floors.below(lower, goal, t_ceiling(AS, xS, BT, k, kS, pre["cols"]), pre["cols"]):
        return False  # (the column part alone is at least the whole table: the rows not needed)
    if first.hopeless(pre["cols"]):
        return True  # (as above: no row part on all of T)
    pre["rows"] = cross_table(cov, S, T, kS, k, lam, part="rows")
    whole = np.minimum(pre["cols"], pre["rows"])
    return floors.below(lower, goal, t_ceiling(AS, xS, BT, k, kS, whole), whole)


class _First:
    """:func:`own_hopeless`'s question asked first with tables on T's :data:`_ROWS_FIRST` columns of largest variance
    only (where T has more): True only where the whole table's answer is True too.

    Why.  The row part's entry (i, j) sums, over S's i rows of largest such sums, each row's j largest squares
    ``max(A_st + delta, 0)^2``; the column part's, over T's j columns of largest such sums, each column's i largest
    squares (:func:`.cross.cross_table`).  On a subset T' of T (the same squares: the same allowance ``delta``, T'
    holding T's largest variance) each part is at most the one on T entrywise, so their minimum (or the row part's
    with the column part on T) is at most the whole table; every coupled term is nondecreasing in the cross term
    (:func:`.cross.pair_bound`), so the ceiling (:func:`.coupled.t_ceiling`) with it is at most the whole table's,
    and ``lower`` below the goal times the smaller ceiling is below it times the larger.  Asked with ``lower``
    raised by :data:`_FIRST_MARGIN` (a float32 product may round apart in another block of columns) and S's floors
    as they stood (:class:`_Floors` raises them where it looks: restored where the answer is no, so that the
    questions after it are asked as without it).  Chooses a screen only.

    Issue 39 (helper wide28): dlbcl-shaped k = 130 / 150 / 170 / 200 (own screen 798..1,209 features, T ~6,000),
    own_hopeless 0.075 / 0.088 / 0.109 / 0.165 -> 0.036 / 0.045 / 0.063 / 0.114 CPU s, True either way; the first
    1,024 columns' ceiling is at 0.988-0.994 of the goal's (the whole table's 0.988-0.991); at k = 200 1,024 fell
    short (1.0058 against the whole table's 1.0048, True there by the raised floors), 1,600 (8k) did not."""

    def __init__(self, cov, S, T, k: int, kS: int, lam, terms: tuple, lower: float, goal: float, floors):
        self.args, self.terms, self.lower, self.goal, self.floors = (cov, S, k, kS, lam), terms, lower, goal, floors
        self.rest, self.rows, self._T = T, None, False

    @property
    def T(self):
        """T's first ``max(_ROWS_FIRST, _ROWS_PER_K k)`` columns by variance (sorted), None where T has no more
        (chosen when first asked: nothing where own_hopeless never asks)."""
        if self._T is False:
            cov, k, T = self.args[0], self.args[2], self.rest
            size = max(_ROWS_FIRST, _ROWS_PER_K * k)
            self._T = None if T.size <= size else np.sort(T[np.argsort(-cov.diag()[T], kind="stable")[:size]])
        return self._T

    def _part(self, part: str):
        cov, S, k, kS, lam = self.args
        return cross_table(cov, S, self.T, kS, k, lam, part=part)

    def hopeless(self, cols) -> bool:
        """The question with the row part on the first columns and ``cols`` (the column part on all of T), or
        (``cols`` None) the column part on the first columns too; the row part made once."""
        if self.T is None:
            return False  # (the first columns are all of T: the questions as they stand)
        if self.rows is None:
            self.rows = self._part("rows")
        cols = self._part("cols") if cols is None else cols
        if self.rows is None or cols is None:
            return False
        kept = self.floors.raised_at.copy()
        low = np.minimum(cols, self.rows)
        AS, xS, BT = self.terms
        k, kS = self.args[2:4]
        if self.floors.below(self.lower * (1 + _FIRST_MARGIN), self.goal, t_ceiling(AS, xS, BT, k, kS, low), low):
            return True
        self.floors.raised_at = kept
        return False


class _Floors:
    """S's floors for :func:`own_hopeless`'s ceilings: x's truncations (:func:`.aim_terms._truncated_all`, as
    :func:`.coupled.t_ceiling`), raised at the sparsities of a ceiling's largest terms by truncated power steps
    (:func:`.aim_terms._ascended`: feasible values, each at most ``OPT_S(i)``), each sparsity's steps run once.
    A ceiling with raised floors is still one no bound of S brings the coupled bound below (every term is
    nondecreasing in ``B_S(i) >= OPT_S(i)``).  Chooses a screen only."""

    def __init__(self, AS, xS, BT, k: int, kS: int):
        self.AS, self.xS, self.BT = AS, xS, BT
        j = np.arange(1, BT.size)
        ok = (k - j >= 0) & (k - j <= kS)
        self.j, self.i = j[ok], k - j[ok]
        self.raised_at = np.full(self.i.size, -np.inf)  # (per term: the steps' floor where run)
        self.a = None

    def below(self, lower: float, goal: float, ceiling: float, cross) -> bool:
        """``lower < goal * ceiling`` (``ceiling``: :func:`.coupled.t_ceiling`'s with ``cross``), else, where
        ``lower`` is within :data:`_FLOOR_REACH` of it, the same with the floors raised at its largest terms."""
        if lower < goal * ceiling:
            return True
        if self.i.size == 0 or not lower < (goal + _FLOOR_REACH) * ceiling:
            return False
        return lower < goal * self.raised(cross)

    def raised(self, cross) -> float:
        """The ceiling with ``cross`` (:func:`.coupled.t_ceiling`'s terms) with the floors raised at the sparsities
        of its :data:`_FLOOR_TOP` largest terms (the steps run once per sparsity); -inf without terms."""
        if self.i.size == 0:
            return -np.inf
        if self.a is None:
            self.a = np.where(self.i > 0, _truncated_all(self.AS, self.xS, np.maximum(self.i, 1)), 0.0)
        c = None if cross is None else cross[np.minimum(self.i, cross.shape[0] - 1),
                                             np.minimum(self.j, cross.shape[1] - 1)]
        top = np.argsort(-_terms_at(np.maximum(self.a, self.raised_at), self.BT[self.j], c),
                         kind="stable")[:_FLOOR_TOP]
        top = top[(self.i[top] > 0) & ~np.isfinite(self.raised_at[top])]
        if top.size:
            self.raised_at[top] = _ascended(self.AS, self.xS, self.i[top], _FLOOR_STEPS)
        return float(np.max(_terms_at(np.maximum(self.a, self.raised_at), self.BT[self.j], c)))


def grown(cov, k: int, d: Certificate, effort: str, callback, keep: dict | None, gram, split) -> Certificate:
    """``d`` (a split certificate), or the one on a larger screen (:func:`grown_size`) where its bound is
    smaller: ``split`` (:func:`.single._certify_split`) at d's point.  ``keep`` (a path's run) then gets the
    larger screen's, which the path carries to other k.  Valid either way: both bounds are proved.

    One other screen: on thin data held, chosen by the cross term (:func:`grown_split`, ``_CROSS`` times the size,
    smaller; helper wide26), for certify(k) and for a path's run wherever certify(k) may take it (the run at k
    does what certify(k) does); a path's run where certify(k)'s own route stands (``d.info["one_k_stands"]``:
    certify(k) grows nothing there; the run's own S bound, deeper, lets T bind) grows the former screen,
    ``_GROW_VARIANCE`` times by variance, for the k between runs only.  Issue 39 (helper widepath25): with the
    cross screen there too the golub-shaped path's runs at k = 133 / 200 moved the path's gap run from 93 to 101 and
    left k = 77..95 up to 0.0068 below the base's path; paying for both screens (helper wide24) cost the
    dlbcl-shaped path x2.1 in SVD units (benchmarks/results/issue39_widepath25.txt)."""
    big = grown_size(cov.n, k, d, effort, cross=grow_cross.applies(cov))  # (through the module: tests pin it)
    if big is None or d.x is None:
        return d
    kept = {} if keep is not None else None
    if keep is not None and d.info.get("one_k_stands"):  # (certify(k) grows nothing here: the former screen)
        big = grow_to(cov.n, d.info["split_S"], effort, _GROW_VARIANCE)
        if big is None:
            return d
        e = split(cov, k, d.x, effort, callback, keep=kept, gram=gram, size=big)
    else:
        e = grown_split(split, cov, k, d.x, effort, callback, keep=kept, gram=gram, size=big)
    if not e.upper_bound < d.upper_bound:
        return d
    if keep is not None:
        rule = {"kkt_rule": True} if keep.get("kkt_rule") else {}  # (d's: .path_large runs certify(k) too)
        keep.clear()
        keep.update(kept, **rule)
    e.info["lower_source"] = d.info.get("lower_source", e.info.get("lower_source"))
    return e


def grown_split(split, cov, k: int, x, effort: str, callback, **kw) -> Certificate:
    """``split(cov, k, x, effort, callback, **kw)`` (:func:`.single._certify_split` on another screen,
    ``kw["size"]``) with that screen chosen by the cross term (:mod:`.grow_cross`): x's support and the first half
    of the own screen by variance (``_settings.screened_size``'s at k) plus the columns of T most covariant with
    them.  A choice of S only: the split bound is proved on any screen."""
    with cross_growth(cov, screened_size(cov.n, k, _EFFORT[effort]), kw["size"]):
        return split(cov, k, x, effort, callback, **kw)


def reuse_parts(pre: dict, make, rows):
    """``split_cross``'s ``(make, rows)`` with the cross table's parts :func:`own_hopeless` computed (``pre``)
    given back instead of computed again, float for float (the same table whatever S's lambda_max bound):
    the column part where the table is taken columns first (``rows`` given), the whole table (the parts'
    minimum) where both parts were computed; ``make``'s ``one_k`` flag kept."""
    cols, part = pre.get("cols"), pre.get("rows")
    if cols is None or (rows is None and part is None):
        return make, rows
    made = (lambda: cols) if rows is not None else (lambda: np.minimum(cols, part))
    if hasattr(make, "one_k"):
        made.one_k = make.one_k
    return made, rows if part is None or rows is None else (lambda: part)
