"""Page 5 — the first r nonnegative k-sparse components drawn as images (Asteris et al. 2014, Fig. 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core import methods as registry
from ui import compute, cost, downloads, messages, state
from ui.figures import analysis as figs
from ui.sidebar import page_intro

page_intro(
    "Components as images",
    "For image data, the first r nonnegative k-sparse components of each algorithm drawn as images "
    "(features used by earlier components removed), dense PCA for reference, sample images beside "
    "them and the variance under each.",
    "Asteris, Papailiopoulos & Dimakis (ICML 2014), Fig. 3 (CBCL faces, six orthogonal 40-sparse "
    "components, ε-net d = 3 vs EM); bipartite matchings from Asteris et al. (2015).",
)

# Offered in the registry's order: the single-component methods (deflation), the joint ones (a
# strategy of components(), like "bipartite") and the dense reference ("pca"); the registry's
# defaults preselected (its "slow" methods take tens of seconds on CBCL: offered, not default).
KINDS = ("single", "joint", "reference")
ORDER = registry.ordered(KINDS)
DEFAULT = registry.defaults(KINDS)


def main() -> None:
    s = state.settings()
    ds = compute.current_dataset()
    if ds.image_shape is None:
        st.info(f"**{ds.info.title}** is not an image dataset. Choose *digits*, *CBCL faces*, the "
                "synthetic *parts* images, or upload images on the *Your data* page.")
        return
    X = ds.X
    m, n = X.shape
    available = set(compute.available_methods())
    offered = [mth for mth in ORDER if mth in available or registry.spec(mth).kind != "single"]
    c1, c2 = st.columns([3, 1])
    methods = c1.multiselect("Algorithms (one row each)", offered,
                             default=[mth for mth in DEFAULT if mth in offered],
                             format_func=figs.method_label, key="ci_methods")
    r_max = max(1, min(8, n // max(s.k, 1)))
    r = c2.slider("Components r", 1, max(r_max, 2), min(4, max(r_max, 1)), key="ci_r",
                  disabled=r_max < 2,
                  help=f"Disjoint supports: r·k ≤ n = {n} (k = {s.k} from the sidebar).")
    r = min(r, r_max)
    methods = cost.screen_methods(methods, n, s.d, key="ci", eps=s.eps, runs=r)
    st.caption(f"{ds.info.title}: {m} images of {ds.image_shape[0]}×{ds.image_shape[1]} pixels; "
               f"k = {s.k} pixels per component, d = {s.d}, ε = {s.eps}, seed {s.seed}; "
               f"preprocessing {' → '.join(ds.preprocessing) or 'none'}.")

    lam1 = float(compute.eigenvalues(X, 1)[0]) or 1.0
    rows: dict[str, list] = {}
    titles: dict[str, list] = {}
    summary = []
    for method in methods:
        label = figs.method_label(method)
        try:
            kind = registry.spec(method).kind
            if kind == "reference":  # dense PCA
                W, ev = compute.pca(X, r)
                rows[label] = [W[:, j] for j in range(W.shape[1])]
                titles[label] = [f"var {v:.3g} ({v / lam1:.0%} λ₁)" for v in ev]
                summary.append(dict(method=label, total_variance=float(ev.sum()),
                                    explained_by_span=float(ev.sum()), seconds=np.nan,
                                    nonzeros_per_component=n))
                continue
            joint = kind == "joint"  # a strategy of components() (its own method inside)
            strategy = method if joint else registry.REMOVE
            base = "auto" if joint else method
            with compute.progress(f"{label}: {r} components") as cb:
                res = compute.components(X, r, s.k, base, strategy, s.d, s.eps, s.seed,
                                         raw=ds.X_raw if method == "nmf" else None, _callback=cb)
            if res.shortfall:  # fewer components than asked: said with the reason
                st.warning(f"**{label}**: {res.summary}")
            L = np.asarray(res.loadings)
            rows[label] = [L[:, j] for j in range(L.shape[1])]
            titles[label] = [f"var {v:.3g} ({v / lam1:.0%} λ₁)" for v in res.variance]
            summary.append(dict(method=label, total_variance=float(np.sum(res.variance)),
                                explained_by_span=float(res.cumulative_variance[-1]),
                                seconds=float(res.seconds),
                                nonzeros_per_component=int(max(len(sp) for sp in res.supports))))
        except compute.Unavailable as exc:
            st.info(f"**{label}** is not available: {exc}")
        except ValueError as exc:
            st.info(f"**{label}** could not run on this data: {exc}")
    if not rows:
        st.info("Choose at least one algorithm that runs on this data.")
        return

    signed = [figs.method_label("pca")]
    fig = figs.image_grid(rows, image_shape=ds.image_shape, titles=titles, signed=signed,
                          title=f"First {r} components, k = {s.k} (darker blue = larger loading; "
                                "PCA: orange/purple = sign)")
    st.plotly_chart(fig, key="ci_grid")

    st.subheader("Sample images")
    rng = np.random.default_rng(s.seed)
    idx = np.sort(rng.choice(m, size=min(8, m), replace=False))
    samples = {"samples": [ds.X_raw[i] for i in idx]}
    st.plotly_chart(figs.image_grid(samples, image_shape=ds.image_shape,
                                    titles={"samples": [f"#{i}" for i in idx]},
                                    title="Random images of the dataset (raw pixels)", cell_px=90,
                                    colorscale="gray"),
                    key="ci_samples")

    note = messages.bipartite_note({row["method"]: row["total_variance"] for row in summary
                                    if row["method"] != figs.method_label("pca")},
                                   figs.method_label(registry.BIPARTITE))
    if note:
        st.info(note)
    table = pd.DataFrame(summary)
    # dense PCA is the reference, not a timed solver: say so instead of an empty cell ("None")
    table["seconds"] = [f"{v:.2f}" if np.isfinite(v) else "— (reference)" for v in table["seconds"]]
    st.dataframe(table, hide_index=True, column_config={
        "total_variance": st.column_config.NumberColumn("Σ variance", format="%.4g"),
        "explained_by_span": st.column_config.NumberColumn("variance of the span", format="%.4g",
                                                           help="never double counts"),
        "seconds": st.column_config.TextColumn("seconds")})
    png = downloads.image_grid_png(rows, image_shape=ds.image_shape, titles=titles, signed=signed,
                                   title=f"{ds.info.title}: first {r} components, k = {s.k}")
    st.download_button("Download PNG", png, file_name=f"components_{ds.name}_k{s.k}.png",
                       mime="image/png", key="ci_png", on_click="ignore")


compute.guard(main)
