"""Home — a guided tour of nonnegative sparse PCA and the spannogram method."""

from __future__ import annotations

from math import comb, log10

import streamlit as st

from ui import compute_teach as ct
from ui import state
from ui.figures import teach as fig
from ui.sidebar import link_page, page_intro

page_intro(
    "Nonnegative sparse PCA — a guided tour",
    "The problem in one picture, why it is hard, and the method step by step, each step with a "
    "small live figure and a link to the page that goes deeper.",
    "Asteris, Papailiopoulos & Dimakis, *Nonnegative Sparse PCA with Provable Guarantees* "
    "(ICML 2014), §1–4 and Figs. 1–3.",
)
s = state.settings()
SMALL = dict(height=300, margin=dict(l=50, r=10, t=50, b=40))


def small(figure) -> None:
    """Shrink a figure for the tour without letting its parts run into each other (issue 21,
    item 5): the title starts under the figure's toolbar with room for all its lines above the
    plot, and a legend below the plot keeps a fixed distance in pixels under the axis title
    (placed as a fraction of the full-size figure, it rose onto the axis title of the smaller one)."""
    figure.update_layout(**SMALL)
    fig.below_toolbar(figure)
    if figure.layout.showlegend is not False and figure.layout.legend.orientation == "h":
        fig.legend_below(figure)


# ------------------------------------------------------------- the problem
st.header("1 · The problem in one picture")
try:
    from nspca_core.datasets import is_available

    faces = is_available("cbcl")
except Exception:
    faces = False
name = "cbcl" if faces else "digits"
with st.spinner(f"Loading {'CBCL faces' if faces else 'the digits'} and solving…"):
    ds = ct.load(name, "center", 0)
    X = ds["X"]
    n = X.shape[1]
    k_pic = 40 if n >= 160 else max(2, n // 4)
    pic = ct.dense_vs_sparse(X, k_pic)
lam1 = pic["lam1"]
col_txt, col_fig = st.columns([1, 1.6], gap="large")
TOUR_DATA_NOTE = (  # README's quick start says the same (issue 27, item 10)
    "This picture uses the CBCL faces (a local copy was found); the other pages use the "
    "sidebar's dataset." if faces else
    "This picture uses the handwritten digits (no local copy of the CBCL faces was found in "
    "NSPCA_DATA_DIR); the other pages use the sidebar's dataset.")
with col_txt:
    st.caption(TOUR_DATA_NOTE)
    st.markdown(
        "Principal component analysis finds the direction $x$ (unit length) in which the "
        "data vary most: it maximises $x^\\top A x$, $A$ the covariance. "
        f"On {ds['title']} the first principal component (left) mixes **all {n}** pixels "
        f"with both signs — hard to read as a part of {'a face' if faces else 'a digit'}."
        "\n\nNonnegative sparse PCA asks for the best **$x \\ge 0$ with at most $k$ "
        f"nonzeros**. With k = {k_pic} (right) the component is a localised, additive part "
        f"and still explains **{pic['variance'] / lam1:.0%}** of the variance of the dense one.")
    st.latex(r"\mathrm{OPT} = \max_{\|x\|_2=1,\ \|x\|_0\le k,\ x\ge 0}\ x^\top A x")
with col_fig:
    f = fig.loading_images([pic["dense"], pic["sparse"]],
                           ["dense PC<br>(signed, all pixels)",
                            f"nonnegative,<br>{k_pic}-sparse"],
                           image_shape=ds["image_shape"],
                           main_title="First component of " + ds["title"])
    st.plotly_chart(f, theme=None, key="home_pic")

# ---------------------------------------------------------- why it is hard
st.header("2 · Why it is hard")
total = comb(n, k_pic)
st.markdown(
    f"Once the support (which k features are used) is known the rest is easy. But there are "
    f"C({n}, {k_pic}) ≈ 10^{log10(total):.0f} supports, and the problem is NP-hard in general. "
    "The trick of the paper: replace $A$ by its best rank-$d$ approximation $A_d = VV^\\top$ "
    "($d$ = 2 or 3). Then only $O(n^d)$ supports can ever be optimal, they can be listed "
    "exactly, and the error of the approximation is bounded by $\\lambda_{d+1}$.")

# ----------------------------------------------------- the method, by step
st.header("3 · The method, step by step")
Vs = ct.small_V(8, 2, s.seed)
ks = 3


def step(title: str, text: str, figure, link: tuple[str, str, str] | None, key: str,
         legend: bool = True):
    st.subheader(title)
    a, b = st.columns([1, 1.6], gap="large")
    with a:
        st.markdown(text)
        if link is not None:
            link_page(*link)
    with b:
        if not legend:  # small figure: the paragraph explains the marks
            figure.update_layout(showlegend=False)
        small(figure)
        st.plotly_chart(figure, theme=None, key=key)


v = Vs[:, 1]
step("Rank 1: keep the k largest entries",
     "If $A = vv^\\top$ has rank one, $x^\\top A x = (v^\\top x)^2$. The best $x$ keeps the "
     "$k$ largest **nonnegative** entries of $v$ — or of $-v$, whichever gives more — and "
     "sets $x_I = \\pm v_I/\\|v_I\\|$ (paper §3.1). Two candidate supports, no search.",
     fig.rank1_bars(v, ks, title=f"Rank 1, k = {ks}: the two candidates"),
     ("pages/spannogram_d2.py", "From rank 1 to rank 2: the spannogram",
      ":material/show_chart:"), "home_rank1")

with st.spinner("Spannogram…"):
    cur = ct.curves_d2(Vs, ks, num=361)
    tab = ct.support_table(Vs, ks)
step("Rank 2: the spannogram",
     "With $A_2 = VV^\\top$ write $c = (\\sin\\varphi, \\cos\\varphi)$ and $v(\\varphi) = Vc$, "
     "a rank-1 problem for each angle. Each feature $i$ traces a curve $v_i(\\varphi)$; the "
     "$k$ highest curves at $\\varphi$ give a candidate support. Sweeping $\\varphi$ visits "
     f"only a few supports — here {len(tab['supports'])} instead of all "
     f"{sum(comb(8, j) for j in range(1, ks + 1))} supports of size ≤ {ks} among 8 features.",
     fig.spannogram_d2(cur["phis"], cur["values"], ks, phi=0.3, envelope=cur["envelope"],
                       changes=cur["changes"], title="Spannogram of an 8×2 example"),
     ("pages/spannogram_d2.py", "Explore the spannogram (d = 2)", ":material/show_chart:"),
     "home_span", legend=False)

I = [int(i) for i in tab["opt_support"]]
R = Vs[I]
arc = ct.pd2(R.T @ R, R)
step("For each support: (P₂) on the feasible arc",
     "On a candidate support $I$ the best nonnegative $x$ is $x_I \\propto V_I c$, with $c$ "
     "maximising $c^\\top Q c$, $Q = V_I^\\top V_I$, over the part of the unit circle where "
     "$V_I c \\ge 0$. That part is an arc; the maximum is $\\pm u_1$ of $Q$ if it lies on the "
     "arc, otherwise an arc endpoint (Alg. 4).",
     fig.feasible_arc(R.T @ R, R, arcs=arc["arcs"], u1=arc["u1"], c_star=arc["c"],
                      title=f"(P₂) for the optimal support {I}"),
     ("pages/feasible_arc.py", "See the feasible arc in detail", ":material/donut_large:"),
     "home_arc", legend=False)

with st.spinner("ε-net samples…"):
    net = ct.enet_demo(Vs, ks, 25, s.seed)
step("Larger d: the ε-net",
     "For $d = 3$ the exact list has $O(n^3)$ supports; for larger $d$ the paper samples "
     "$O(\\varepsilon^{-d}\\log n)$ random unit vectors $c$ instead, solves the rank-1 problem "
     "for each $Vc$ and keeps the best. The answer is within a factor $(1-\\varepsilon)$ of "
     "$\\mathrm{OPT}_d$ with high probability.",
     fig.enet_circle(net["phis"], net["values"], net["best"], exact=tab["opt"],
                     title="25 random samples vs the exact OPT_d"),
     ("pages/variance_vs_k.py", "Variance vs k for every algorithm", ":material/verified:"),
     "home_enet")

st.subheader("The certificate: how far from optimal?")
a, b = st.columns([1, 1.6], gap="large")
cert_key = f"home_certified_{name}_{k_pic}"
with a:
    st.markdown(
        "Any answer can be checked without knowing the optimum. Since $A - A_d \\succeq 0$ has "
        "top eigenvalue $\\lambda_{d+1}$, $\\mathrm{OPT} \\le \\min(\\lambda_1, "
        "\\mathrm{OPT}_d + \\lambda_{d+1})$ (paper §4); for the "
        f"{k_pic}-sparse component of step 1 this already shows it reaches at least "
        f"**{pic['variance'] / pic['paper_bound']:.1%}** of the true optimum. A dual "
        "(DNN) certificate tightens the bound further.")
    if st.button("Tighten with the dual certificate", key="home_certify",
                 help="Runs nspca_core.certify (effort 'fast'); cached afterwards."):
        st.session_state[cert_key] = True
    link_page("pages/variance_vs_k.py", "Certified variance for every k", ":material/verified:")
cert = None
if st.session_state.get(cert_key):
    # in the background (ui/jobs.py): the tour stays usable, Stop works, leaving keeps it
    from ui import bounds_store, jobs, live, work

    jobs.REGISTRY.warm()
    # keyed by the dataset (as every analysis page): the store of proved bounds gets this certificate,
    # and a bound any page proved at k (or at a larger k) serves here
    dkey = ds.get("dkey") or f"tour/{name}/{k_pic}"
    store = bounds_store.shared() if bounds_store.data_key(dkey) is not None else None
    job = work.certify_one_job(X, dkey, k_pic, pic["sparse"], effort="fast", store=store,
                               title=f"Certificate of the tour's {k_pic}-sparse component")
    job.wait(timeout=2.0)
    view = job.view()

    def progress_line() -> bool:
        v = job.view()
        live.status_line(v, what="Dual certificate", unit_name="certificates", key="home_cert_job")
        return v.active

    with b:
        live.live(progress_line, active=view.active)  # redraws until done, then the page shows it
    if view.status == "failed":
        with b:
            st.warning(f"Certificate unavailable: {view.message}")
    c = view.results.get(k_pic)
    if c is not None:
        best = work.best_certificate(dkey, k_pic, view.results, store)  # the tighter of it and the store's
        up = min(c["upper"], best["upper"]) if best is not None else c["upper"]
        kind = c["kind"] if up == c["upper"] else best["kind"]
        cert = dict(upper_bound=up, kind=kind,
                    optimal=bool(c["optimal"] and up == c["upper"]) or bounds_store.closed(pic["variance"], up),
                    ratio=pic["variance"] / up if up > 0 else float("nan"))
with b:
    if cert is None:
        f = fig.certificate_bar(pic["variance"], pic["paper_bound"], lam1,
                                bound_label="paper bound min(λ₁, OPT₂+λ₃)")
    else:
        f = fig.certificate_bar(pic["variance"], cert["upper_bound"], lam1,
                                bound_label=f"dual certificate ({cert['kind']})")
        st.markdown(f"Certified: at least **{cert['ratio']:.1%}** of the optimum"
                    + (" — provably optimal." if cert["optimal"] else "."))
    small(f)
    st.plotly_chart(f, theme=None, key="home_cert")
