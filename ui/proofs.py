"""The "Variance vs k" page's proofs: the "Prove optimality" action at the sidebar's k, its outcome,
and the status of the band's background tightening (each with Stop / Continue).

Drawing only: the jobs are :mod:`ui.work`'s, the numbers :mod:`ui.variance_k`'s, the proved bounds
:mod:`ui.bounds_store`'s.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui import bounds_store, live, work
from ui.variance_k import tighten_status, variance_of

__all__ = ["PROOF_SECONDS", "TIGHTEN_REDRAW_S", "draw_proof", "draw_tighten", "proof_time_limit",
           "prove_optimality"]

PROOF_SECONDS = 60  # the branch and bound's default time limit (nspca_core.certify's default for "exact")
TIGHTEN_REDRAW_S = 2.0  # redraw period while only the band's tightening runs


def proof_time_limit() -> float:
    """The time limit of a proof of optimality (seconds): the "Prove optimality" action and the
    exact proofs of the band's tightening."""
    return float(st.number_input(
        "Time limit of a proof of optimality (s)", min_value=1, max_value=3600, value=PROOF_SECONDS, step=10,
        key="vk_time_limit",
        help="Branch and bound over supports stops when the gap closes to the tolerance (provably optimal) or "
             "after this many seconds with its best bound. Used by **Prove optimality** and by the band's "
             "background tightening at small k."))


def _known(store, dkey: str, k: int) -> dict | None:
    data = bounds_store.data_key(dkey)
    return store.at(data, k) if store is not None and data is not None else None


def prove_optimality(X: np.ndarray, dkey: str, k: int, paths: dict, store=None, limit: float = PROOF_SECONDS):
    """The "Prove optimality" action at the sidebar's k: ``certify(X, k, x, effort="exact",
    time_limit=limit)`` (branch and bound over supports) on the best answer known at k, as a
    background job; None until asked (or while no answer exists at k).  A k the store already
    knows to be optimal needs no proof: the page says so (:func:`draw_proof`)."""
    known = _known(store, dkey, k)
    x0 = work.best_x(list(paths.values()), k)
    if known is not None and known["x"] is not None and (x0 is None or known["lower"] > variance_of(X, x0)):
        x0 = known["x"]
    proved = known is not None and bool(known["optimal"])
    asked = f"vk_prove_{dkey}_{k}_{limit:g}"
    if st.button(f"Prove optimality at k = {k}", key="vk_prove", disabled=x0 is None or proved,
                 help="Already proved optimal." if proved else
                 f"Branch and bound over supports, warm-started by the best answer at k; stops when the gap "
                 f"closes to the tolerance (provably optimal) or after {limit:g} s with its best bound."):
        st.session_state[asked] = True
    if not st.session_state.get(asked) or x0 is None:
        return None
    return work.certify_one_job(X, dkey, k, x0, effort="exact", time_limit=limit, store=store,
                                title=f"proof of optimality at k = {k}")


def draw_proof(proof, k: int, limit: float = PROOF_SECONDS, store=None, dkey: str = "") -> bool:
    """The proof's progress (with Stop) and its answer — or the proof the store already holds at
    k (from the band's tightening, an earlier visit or another session); True while it runs."""
    known = _known(store, dkey, k)
    view = proof.view() if proof is not None else None
    if view is not None:
        live.status_line(view, what=f"Proof of optimality at k = {k}", unit_name="values of k", key="vk_proof")
    c = view.results.get(int(k)) if view is not None else None
    if c is None and known is not None and known["optimal"]:
        c = dict(upper=known["upper"], lower=known["lower"], optimal=True, kind=known["kind"])
    if c is not None:
        gap = (c["upper"] - c["lower"]) / c["upper"] if c["upper"] > 0 else 0.0
        # how long this proof took, as it happened (it said "within 60 s" of a proof that ended after
        # 3-7 s, issue 41); a proof held by the store from earlier says so instead
        ran = view is not None and view.results.get(int(k)) is not None
        took = (f" after {view.seconds:.1f} s" if ran and view.seconds else "") if ran else " (proved earlier)"
        if c["optimal"]:
            st.success(f"✓ Provably optimal at k = {k}{took}: variance {c['lower']:.6g}, upper bound "
                       f"{c['upper']:.6g} (relative gap {gap:.1e}, {c['kind']}).")
        else:
            why = (f"the time limit of {limit:g} s was reached" if ran and view.seconds >= 0.95 * limit else
                   "the branch and bound ended with its best bound") if ran else "an earlier proof"
            st.info(f"Not proved optimal at k = {k}{took} ({why}): the answer is at least "
                    f"{c['lower'] / c['upper']:.3%} of the optimum (gap {gap:.2e}, bound {c['kind']}).")
    return view is not None and live.any_active([view])


def draw_tighten(tighten, ks, ratio_now: np.ndarray) -> bool:
    """Status of the band's background tightening, with Stop (Continue once stopped); True while active."""
    if tighten is None:
        return False
    view = tighten.view()
    text = tighten_status(view.results, getattr(tighten, "start_ratio", {}), ks, ratio_now)
    steps = f"{len(view.results)} of {len(view.units)} steps"
    if view.active:
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        wait = " — waiting while another certificate computes" if view.status == "queued" else ""
        c1.progress(view.fraction, text=f"Tightening the band in the background: {text} ({steps}, "
                                        f"{view.seconds:.0f} s{wait}). Effort \"full\" at every k, the cheapest "
                                        "first, proofs of optimality where cheap, then longer steps where "
                                        "the first were cut short.")
        c2.button("Stop", key="vk_tighten_stop", on_click=live.stop_job, args=(view.key,),
                  help="Stop tightening; the bounds proved so far are kept (for every page and visit).")
    elif view.status in ("stopped", "cancelled", "failed"):
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        why = {"stopped": "stopped", "cancelled": "cancelled", "failed": f"failed ({view.message})"}[view.status]
        c1.info(f"Tightening the band {why}: {text} ({steps}). The bounds proved so far are kept.")
        c2.button("Continue", key="vk_tighten_resume", on_click=live.resume_job, args=(view.key,),
                  help="Go on tightening from where it stopped.")
    else:
        st.caption(f"Band tightened in the background: {text} ({steps}).")
    return view.active
