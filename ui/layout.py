"""Shared explanations the analysis pages draw beside their numbers.

:func:`low_certificate_text` (pure) says what a low certified fraction means; :func:`refine_certificate`
draws it with the refinement on offer: the "full" certificate of the same answer (``certify(X, k, x,
effort="full")``: d <= 3 bounds, residual bounds, up to 4000 DNN iterations) as a background job.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui import bounds_store, live, work

LOW_FRACTION = 0.9  # below this certified fraction the page says why and offers the refinement


def low_certificate_text(fraction: float, *, k: int) -> str | None:
    """What a certified fraction below :data:`LOW_FRACTION` means (None when it is not low).

    The fraction is answer / upper bound: the optimum lies between the two, so a low fraction
    says the bound may be loose, not that the answer is poor (issue 27, item 8)."""
    if not np.isfinite(fraction) or fraction >= LOW_FRACTION:
        return None
    return (f"**Why only ≥ {fraction:.1%}?** The certified fraction is the answer's variance divided by an "
            f"*upper bound* on the best possible variance with k = {k}: the optimum lies somewhere between the "
            "two. A low fraction means the bound may be loose, not that the answer is poor — the answer "
            "may well be (near) optimal. Bounds are loose on data without sparse structure (variance spread "
            "thinly over many features, as in noise), where no k features stand out and the bound, built "
            "from the whole spectrum, cannot close the gap. A longer certificate can tighten the bound.")


def refine_running(X: np.ndarray, dkey: str, k: int, x: np.ndarray | None, *, key: str) -> bool:
    """Whether the refinement :func:`refine_certificate` offers under ``key`` was asked and is queued or
    running: a page that draws it outside a live fragment needs this before drawing (to redraw it
    every second while it runs, :func:`ui.live.live`)."""
    if x is None or not st.session_state.get(f"{key}_refine_{dkey}_{k}"):
        return False
    return bool(work.certify_one_job(X, dkey, k, np.asarray(x, float), effort="full", store=bounds_store.shared(),
                                     title=f"full certificate at k = {k}").view().active)


def refine_certificate(X: np.ndarray, dkey: str, k: int, x: np.ndarray | None, fraction: float, *,
                       variance: float, key: str) -> bool:
    """Explain a low certified fraction and offer the "full" certificate of ``x`` at ``k``.

    Draws nothing when the fraction is not low and no refinement was asked (once asked, its
    outcome stays, as the bound it proved may lift the fraction).  The refinement runs as a background job once
    asked (a button); its result is shown as the refined fraction.  Returns True while it runs.
    """
    text = low_certificate_text(fraction, k=k)
    asked = f"{key}_refine_{dkey}_{k}"
    # once asked, the refinement's outcome stays on the page even when the bound it proved (read
    # back from the store of proved bounds) has lifted the fraction out of the low range
    if text is None and (x is None or not st.session_state.get(asked)):
        return False
    if text is not None:
        st.info(text)
    if x is None:
        return False
    if text is not None:
        if st.button(f"Tighten the bound (full certificate at k = {k})", key=f"{key}_refine",
                     help='certify(X, k, x, effort="full"): rank-3 bounds, residual bounds and up to 4000 '
                          "iterations of the doubly nonnegative dual — minutes on large data, in the background."):
            st.session_state[asked] = {"was": float(fraction)}
    if not st.session_state.get(asked):
        return False
    was = st.session_state[asked].get("was", fraction) if isinstance(st.session_state[asked], dict) else fraction
    job = work.certify_one_job(X, dkey, k, np.asarray(x, float), effort="full", store=bounds_store.shared(),
                               title=f"full certificate at k = {k}")
    view = job.view()
    live.status_line(view, what=f"Full certificate at k = {k}", unit_name="values of k", key=f"{key}_refine_job")
    c = view.results.get(int(k))
    if c is not None:
        best = max(float(variance), float(c["lower"])) if np.isfinite(c["lower"]) else float(variance)
        refined = best / c["upper"] if c["upper"] > 0 else float("nan")
        st.success(f"Full certificate at k = {k}: the answer reaches **≥ {refined:.2%}** of the optimum "
                   f"(upper bound {c['upper']:.6g}, {c['kind']}; was ≥ {was:.2%})."
                   + (" Provably optimal." if c.get("optimal") else
                      "" if refined >= LOW_FRACTION else
                      " Still low: on data like this the bound, not the answer, is what stays loose."))
    return bool(view.active)


def refine_outside_live(X: np.ndarray, dkey: str, k: int, x: np.ndarray, fraction: float, *, variance: float,
                        key: str) -> None:
    """:func:`refine_certificate` on a page that draws it outside a live fragment: while the full
    certificate runs, its progress redraws itself (:func:`ui.live.live`); the click that starts it
    reruns the page once so that it does."""

    def draw() -> bool:
        return refine_certificate(X, dkey, k, x, fraction, variance=variance, key=key)

    if refine_running(X, dkey, k, x, key=key):
        live.live(draw, active=True)
    elif draw():  # just asked: draw its progress live from the next run on
        st.rerun()
