"""Page 4 — explained variance vs k, inside a certified band (seed 002, Figs. 4–6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from ui import compute, state
from ui.figures import analysis as figs
from ui.sidebar import page_intro

page_intro(
    "Variance vs k, certified",
    "the variance (÷ λ₁) of the nonnegative k-sparse component each algorithm finds, for every k, "
    "inside a shaded band that provably contains the unknown optimum; a star where the answer is "
    "provably optimal.",
    "Asteris, Papailiopoulos & Dimakis, *Nonnegative Sparse PCA with Provable Guarantees* "
    "(ICML 2014), Figs. 4–6 (CBCL, MLL, LRS), with our certificate in place of the paper's bound.",
)


def k_grid(n: int, points: int, current: int | None = None) -> tuple[int, ...]:
    """``points`` values of k spread over 1..n (denser at small k), plus ``current`` if given.

    The page does not add the sidebar's k: moving k must not invalidate the
    cached path (the numbers are read at the nearest k of the axis instead).
    """
    if points >= n:
        ks = np.arange(1, n + 1)
    else:
        # half linear, half geometric: small k (where curves bend) gets its share
        lin = np.linspace(1, n, points // 2 + 1)
        geo = np.geomspace(1, n, points - points // 2)
        ks = np.unique(np.clip(np.round(np.concatenate([lin, geo])), 1, n).astype(int))
    if current is not None and 1 <= current <= n:
        ks = np.union1d(ks, [current])
    return tuple(int(k) for k in ks)


def main() -> None:
    s = state.settings()
    ds = compute.current_dataset()
    X = ds.X
    m, n = X.shape
    offered = list(dict.fromkeys(["enet", *compute.available_methods()]))
    if "auto" in offered:  # auto = the best of exact/ε-net, already covered by the band
        offered.remove("auto")
        offered.append("auto")
    # EM runs once per k: a default only where that is quick (the paper's LRS-sized data)
    default = [mth for mth in (("enet", "em") if n <= 100 else ("enet",)) if mth in offered]

    c1, c2, c3 = st.columns([3, 2, 2])
    methods = c1.multiselect("Algorithms", offered, default=default, format_func=figs.method_label,
                             key="vk_methods",
                             help="ε-net uses the warm-started path (one set of samples for all k); "
                                  "the others run once per k.")
    if n > 3:
        points = c2.slider("Values of k on the axis", 3, n, min(n, 15), key="vk_points",
                           help=f"The certificate is computed at each; {n} = every k.")
    else:
        points = n
    with c3:
        show_band = st.toggle("Certified band", value=True, key="vk_band",
                              help="Our upper bound on the optimum (nspca_core.certify_path).")
        show_paper = st.toggle("Paper's bound for comparison", value=False, key="vk_paper",
                               help="OPT_d/(1−ε) + λ_{d+1} from the ε-net, as in the paper's figures.")
    if not methods:
        st.info("Choose at least one algorithm.")
        return
    ks = k_grid(n, points)
    st.caption(f"{ds.info.title}: {m} samples × {n} features, preprocessing "
               f"{' → '.join(ds.preprocessing) or 'none'}; d = {s.d}, ε = {s.eps}, seed {s.seed}; "
               f"{len(ks)} values of k.")

    lam1 = float(compute.eigenvalues(X, 1)[0])
    if lam1 <= 0:
        st.error("The covariance is zero (every feature constant after preprocessing): nothing to show.")
        return
    paths: dict[str, dict] = {}
    notes = []
    for method in methods:
        label = figs.method_label(method)
        try:
            with compute.progress(f"{label} over {len(ks)} values of k") as cb:
                paths[method] = compute.method_path(X, ks, method, s.d, s.eps, s.seed,
                                                    raw=ds.X_raw if method == "nmf" else None,
                                                    _callback=cb)
        except compute.Unavailable as exc:
            notes.append(f"**{label}** is not available: {exc}")
        except ValueError as exc:  # a method that cannot run on this data says why
            notes.append(f"**{label}** could not run: {exc}")
    for note in notes:
        st.info(note)
    if not paths:
        return

    names = list(paths)
    V = np.column_stack([paths[mth]["variance"] for mth in names])  # (K, methods)
    best_idx = np.nanargmax(np.where(np.isfinite(V), V, -np.inf), axis=1)
    best = V[np.arange(len(ks)), best_idx]
    best_xs = np.column_stack([paths[names[b]]["xs"][:, j] for j, b in enumerate(best_idx)])

    band = None
    upper = np.full(len(ks), np.nan)
    optimal = np.zeros(len(ks), bool)
    kinds: list[str] = []
    probabilistic = False
    if show_band:
        try:
            with compute.progress(f"Certifying {len(ks)} values of k (warm-started path)") as cb:
                certs = compute.certify_path(X, ks, best_xs, _callback=cb)
            upper = np.array([c.upper_bound for c in certs], float)
            optimal = np.array([bool(c.optimal) for c in certs])
            lower_c = np.array([c.lower for c in certs], float)
            best = np.fmax(best, lower_c)  # the certificate may have found a better x
            kinds = [c.kind for c in certs]
            probabilistic = any(bool(c.probabilistic) for c in certs)
            bad = upper < best * (1 - 1e-9)  # a bound below a feasible value cannot hold
            if bad.any():
                st.warning(f"The certificate returned a bound below a feasible answer at k = "
                           f"{', '.join(str(ks[i]) for i in np.flatnonzero(bad)[:5])}; those bounds "
                           "are not shown (please report this).")
                upper = np.where(bad, np.nan, upper)
                optimal = optimal & ~bad
            band = pd.DataFrame(dict(k=ks, lower=best / lam1, upper=upper / lam1,
                                     ratio=best / upper, optimal=optimal))
        except compute.Unavailable as exc:
            st.info(f"The certified band needs the certificates module: {exc}")

    paper = None
    paper_vals = np.full(len(ks), np.nan)
    if show_paper:
        try:
            enet = paths.get("enet")
            if enet is None:
                with compute.progress("ε-net path for the paper's bound") as cb:
                    enet = compute.method_path(X, ks, "enet", s.d, s.eps, s.seed, _callback=cb)
            paper_vals = compute.paper_bounds(X, ks, enet["lowrank"], s.d, s.eps)
            paper = pd.DataFrame(dict(k=ks, upper=paper_vals / lam1))
        except compute.Unavailable as exc:
            st.info(f"The paper's bound needs `paper_bound`: {exc}")

    curves = pd.concat([pd.DataFrame(dict(method=mth, k=ks, value=paths[mth]["variance"] / lam1))
                        .assign(**({"ratio": paths[mth]["variance"] / upper} if band is not None else {}))
                        for mth in names], ignore_index=True)
    fig = figs.variance_vs_k(curves, band=band, paper=paper, current_k=s.k,
                             title=f"{ds.info.title}: variance / λ₁ vs k",
                             ylabel="variance / λ₁")
    st.plotly_chart(fig, key="vk_chart")

    # the sidebar's k in numbers, read at the nearest k of the axis (no recomputation)
    j = int(np.argmin(np.abs(np.asarray(ks) - s.k)))
    kj = ks[j]
    where = f"k = {kj}" if kj == s.k else f"k = {kj} (the value on the axis nearest to k = {s.k})"
    cols = st.columns(4)
    cols[0].metric(f"best variance at k = {kj}", f"{best[j]:.4g}",
                   help=f"{where}; by {figs.method_label(names[best_idx[j]])}; λ₁ = {lam1:.4g}")
    cols[1].metric("÷ λ₁", f"{best[j] / lam1:.1%}")
    if np.isfinite(upper[j]):
        cols[2].metric("certified fraction of the optimum", f"≥ {best[j] / upper[j]:.2%}",
                       help=f"upper bound {upper[j]:.6g} ({kinds[j]})")
        cols[3].metric("provably optimal?", "yes" if optimal[j] else "not proven")
    if kj != s.k:
        st.caption(f"Numbers at {where}; set *Values of k on the axis* to {n} for every k.")
    if np.isfinite(paper_vals[j]):
        st.caption(f"The paper's bound at k = {kj} certifies {best[j] / paper_vals[j]:.1%} "
                   f"(upper bound {paper_vals[j]:.4g}).")
    if band is not None:
        st.caption(f"Band: best answer of any selected algorithm (lower edge) to the certified upper "
                   f"bound on the optimum (upper edge); bounds used: "
                   f"{', '.join(sorted(set(kinds)))}. "
                   + ("Some bounds are probabilistic (ε-net: hold with probability ≥ 1 − 1/n). "
                      if probabilistic else "All bounds are deterministic. ")
                   + f"Provably optimal at {int(optimal.sum())} of {len(ks)} values of k.")

    table = pd.DataFrame({"k": ks})
    for mth in names:
        table[f"variance_{mth}"] = paths[mth]["variance"]
        table[f"seconds_{mth}"] = paths[mth]["seconds"]
    table["best_variance"] = best
    table["lambda1"] = lam1
    if show_band:
        table["upper_bound"] = upper
        table["bound_kind"] = kinds if kinds else ""
        table["certified_ratio"] = best / upper
        table["provably_optimal"] = optimal
    if show_paper:
        table["paper_bound"] = paper_vals
    with st.expander("Table"):
        st.dataframe(table, hide_index=True)
    st.download_button("Download CSV", table.to_csv(index=False).encode(),
                       file_name=f"variance_vs_k_{ds.name}.csv", mime="text/csv", key="vk_csv",
                       on_click="ignore")


compute.guard(main)
