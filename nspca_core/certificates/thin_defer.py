"""The thin route's 2 k screen: its aimed refinements deferred where the grown screen provably replaces it.

In :func:`.route.certify_thin` the eager split certificate on ``_settings.eager_size``'s screen (2 k features) runs
its whole S search and its coupled refinements (:func:`.coupled._coupled_refined`: the cross table, then
:func:`.coupled._aimed`'s joint anchored tests), and :func:`.route.eager_grown` then runs a 3x larger screen where
the rest T holds the ratio more than ``_EAGER_SLACK`` below S's own; the larger screen's certificate stands where
its bound is below the first one's.  Issue 39 (60 x 2,500 genes, k = 133..200): the larger screen ran and stood at
every k, and the first screen's joint tests (20-34 ms of a 0.17-0.32 CPU s certificate) decided nothing.

Here, after the first screen's cross table, a proved floor of its refined coupled bound is computed
(:func:`.coupled.t_ceiling`: every ``B_S(i)`` at least the feasible value of x's i largest entries on S, every
coupled term nondecreasing in it; the same cross table; the first screen's other bounds, which no refinement
changes).  Where even that floor leaves the ratio below S's own less the slack (the larger screen runs whatever
the joint tests prove) and the coupled value before them is at or above ``_COUPLED_AIM - _LIGHT_LOSS`` (the DNN's
route would not follow, its rule read with that value as an upper bound of the refined one), the joint tests are
deferred: the first screen's certificate carries its floor (``info["deferred_floor"]``).  Where the larger
screen's bound is below the floor it stands exactly as before (it was below the refined bound too); anywhere
else the first screen runs again whole, as before (:func:`.route.eager_grown`).  The same certificate either way.
Where that floor does not decide, the joint tests run and stop at the first failed value that does
(:func:`.coupled._aimed`'s ``give_up``: the aimed search never returns below a value it failed at).
"""

from __future__ import annotations

import numpy as np

from .coupled import _COUPLED_AIM, _LIGHT_LOSS, _coupled, _cross_cols_first, t_ceiling

# the floor's margin (relative): the feasible values on S are rounded sums (~1e-13 relative), as
# coupled._FLOOR_REL
_DEFER_REL = 1e-9


def floor_or_none(covS, certS, stS, kS: int, BT: np.ndarray, k: int, pair, make, rows, lower: float, stop: float,
                  others: float, B_S: float, slack: float):
    """For :func:`.single._certify_split` (the thin route's first eager screen, ``defer``): ``None`` where the
    refinements run as before from nothing computed here (the plain coupling meets ``stop``, S's own bound binds),
    else ``(make, rows, value, floor, rule)``: ``make()`` returns the cross table computed here (the same table the
    refinements read: ``rows`` None, its row part merged already); where the conditions of the module's docstring
    hold, ``value`` (the coupled bound with that table and no joint test: a valid bound) and ``floor`` (below which
    no refinement brings this certificate's bound; ``others``: the minimum of its other bounds); where all but the
    floor's hold, ``rule`` (:func:`floor_rule`: :func:`.coupled._aimed`'s ``give_up``, its failed values floors too);
    the others None.  ``slack``: :data:`.route._EAGER_SLACK`."""
    dS = covS.diag()
    val, i = _coupled(certS, stS, dS, kS, BT, k, pair, argmax=True)
    if lower >= stop * val or certS.x is None or BT.size <= 1 or i >= k or make is None:
        return None  # (_coupled_refined's own early return: nothing computed here)
    cross = make()
    if rows is not None:
        cross = _cross_cols_first(certS, stS, dS, kS, BT, k, pair, cross, rows)
    made = lambda: cross  # noqa: E731
    if cross is None:
        return made, None, None, None, None
    value = _coupled(certS, stS, dS, kS, BT, k, pair, cross=cross)
    if not lower / value >= _COUPLED_AIM - _LIGHT_LOSS:
        return made, None, None, None, None
    rule = floor_rule(lower, others, B_S, slack)
    floor = rule(max(lower, t_ceiling(covS.dense(), np.asarray(certS.x, dtype=float), BT, k, kS, cross)))
    return (made, None, value, floor, None) if floor is not None else (made, None, None, None, rule)


def floor_rule(lower: float, others: float, B_S: float, slack: float):
    """``rule(lo)``: the floor ``min(others, lo (1 - _DEFER_REL))`` of a first screen's bound proved to be at least
    lo (its other bounds' minimum ``others``), where it makes :func:`.route.eager_grown` grow (``lower / floor <
    lower / B_S - slack``), else None."""
    def rule(lo: float):
        floor = min(others, lo * (1 - _DEFER_REL))
        return floor if floor > 0 and lower / floor < lower / B_S - slack else None

    return rule
