"""The split certificate's screen grown where the rest T alone holds it below the aim
(:func:`.single._certify_large`)."""

from __future__ import annotations

import numpy as np

from ..result import Certificate
from ._settings import _EFFORT
from .bounds import _rest_curve, _rest_spectrum
from .coupled import _COUPLED_AIM, _SMALL_SHORT, _lambda_S, small_verdict, t_ceiling
from .cross import cross_table

# an "auto" split certificate (one k, or a path's run at k) that would not stand by the rule that lets a
# smaller screen stand (:func:`.coupled.small_verdict`: its ratio more than coupled._SMALL_SHORT below the aim
# while the rest T adds more than coupled._SMALL_T_SHARE to S's own bound) takes a screen this many times
# larger too, the smaller of the two bounds standing.  Issue 39: dlbcl-shaped k = 120 / 150 / 200 certified
# 0.9605 / 0.9581 / 0.9557 with 6 k features, 0.9742 / 0.9704 / 0.9704 grown (the filing tree, 12 k
# features: 0.9697 / 0.9680 / 0.9650); golub-shaped and MLL k = 100..200 stand on 6 k
_GROW = 1.5
# ... when that is at least this many more features (a screen barely larger moves T's bound little)
_GROW_MIN = 1.2


def grown_size(n: int, k: int, cert: Certificate, effort: str) -> int | None:
    """The larger screen's size for the split certificate ``cert`` at sparsity k, or None where it is not
    grown: not "auto", ``cert`` within the aim (:func:`.coupled.small_verdict`, the rule that lets a smaller
    screen stand) or S's own bound binding (the coupled bound within ``_SMALL_T_SHARE`` of it: a larger
    screen only adds features to S's bound), or no room (the effort's ``split_size``, n).  Chooses a screen
    only: either screen's bound is proved."""
    info = cert.info
    size = info.get("split_S")
    if effort != "auto" or size is None or "coupled" not in info:
        return None
    if small_verdict(cert.lower, info["coupled"], info["B_S"]):
        return None
    return grow_to(n, size, effort)


def grow_to(n: int, size: int, effort: str) -> int | None:
    """The larger screen's size for a split certificate on ``size`` features (``_GROW`` times, at most the
    effort's ``split_size`` and n), or None where that is less than ``_GROW_MIN`` times ``size``."""
    big = min(int(n), int(_EFFORT[effort]["split_size"]), int(_GROW * size))
    return big if big >= _GROW_MIN * size else None


def own_hopeless(pre: dict, cov, S, T, covS, xS, k: int, kS: int, lower: float, G=None, lam=None) -> bool:
    """Whether the rest T alone keeps a one-k split certificate on the screen S (its light route fell short,
    its DNN would run) more than ``_SMALL_SHORT`` below the aim, so that :func:`grown` would take the larger
    screen all the same (issue 39, fourteenth round: dlbcl-shaped k = 150 / 200, the own screen's whole
    certificate, DNN and refinements, 33 / 41 % of the time, computed and then replaced).

    The ceiling (:func:`.coupled.t_ceiling`): every term of the coupled bound with part of the support in T
    (``j >= 1``) is nondecreasing in ``B_S(i)``, and any bound of S is at least ``OPT_S(i)``, at least the
    value of x's i largest entries on S; so no bound of S brings the coupled bound below the largest such term
    (with this cross table, or the plain sums, which are never below it).  The table: its column part first
    (:func:`.cross.cross_table`, ``part="cols"``, each part a valid table, their elementwise minimum the whole one,
    float for float, whatever ``lam``, S's lambda_max bound, which only screens), the row part only where the
    columns' ceiling does not already meet ``lower``.  ``lower`` below ``(aim - short)``
    times it: the certificate's ratio is below what :func:`.coupled.small_verdict`'s first clause asks.  First the
    plain sums' ceiling (no table: it is at least the table's, so where ``lower`` meets it the answer is no, at
    the cost of the rest's spectrum alone), then the cross table's.  Chooses a screen only: the larger screen's
    bound is proved either way.  ``pre`` gets the rest's spectrum (``specT``) and the table's parts computed
    (``cols``, ``rows``), reused where the answer is no (:func:`.single._certify_split`)."""
    pre["specT"] = _rest_spectrum(cov, T, G, S)
    BT, AS = _rest_curve(cov, T, k, spec=pre["specT"]), covS.dense()
    goal = _COUPLED_AIM - _SMALL_SHORT
    if not lower < goal * t_ceiling(AS, xS, BT, k, kS, None):
        return False  # (the plain sums' ceiling is at least the table's: no table needed)
    lam = lam if lam is not None else _lambda_S(cov, S)  # (the screen's cost only: the table is the same)
    pre["cols"] = cross_table(cov, S, T, kS, k, lam, part="cols")
    if pre["cols"] is None or not lower < goal * t_ceiling(AS, xS, BT, k, kS, pre["cols"]):
        return False  # (the column part alone is at least the whole table: the rows not needed)
    pre["rows"] = cross_table(cov, S, T, kS, k, lam, part="rows")
    return lower < goal * t_ceiling(AS, xS, BT, k, kS, np.minimum(pre["cols"], pre["rows"]))


def grown(cov, k: int, d: Certificate, effort: str, callback, keep: dict | None, gram, split) -> Certificate:
    """``d`` (a split certificate), or the one on a larger screen (:func:`grown_size`) where its bound is
    smaller: ``split`` (:func:`.single._certify_split`) at d's point.  ``keep`` (a path's run) then gets the
    larger screen's, which the path carries to other k.  Valid either way: both bounds are proved."""
    big = grown_size(cov.n, k, d, effort)
    if big is None or d.x is None:
        return d
    kept = {} if keep is not None else None
    e = split(cov, k, d.x, effort, callback, keep=kept, gram=gram, size=big)
    if not e.upper_bound < d.upper_bound:
        return d
    if keep is not None:
        keep.clear()
        keep.update(kept)
    e.info["lower_source"] = d.info.get("lower_source", e.info.get("lower_source"))
    return e


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
