"""Home — a guided tour of nonnegative sparse PCA and the spannogram method."""

from __future__ import annotations

from math import comb, log10

import streamlit as st

from ui import compute_teach as ct
from ui import state
from ui.sidebar import link_page, page_intro

page_intro(
    "Nonnegative sparse PCA — a guided tour",
    "The problem in one picture, why it is hard, and the method step by step, each step with a "
    "small live figure and a link to the page that goes deeper.",
    "Asteris, Papailiopoulos & Dimakis, *Nonnegative Sparse PCA with Provable Guarantees* "
    "(ICML 2014), §1–4 and Figs. 1–3.",
)
s = state.settings()


def show(key: str) -> None:
    """One of the tour's figures: built by the first visitor, sent as it is to every other
    (``ct.tour_view``, issue 41)."""
    st.plotly_chart(tour["figures"][key], theme=None, key=key)


# ------------------------------------------------------------- the problem
st.header("1 · The problem in one picture")
try:
    from nspca_core.datasets import is_available

    faces = is_available("cbcl")
except Exception:
    faces = False
name = "cbcl" if faces else "digits"
with st.spinner(f"Loading {'CBCL faces' if faces else 'the digits'} and solving…"):
    tour = ct.tour_view(name, int(s.seed))
n, k_pic, lam1 = tour["n"], tour["k_pic"], tour["lam1"]
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
        f"On {tour['title']} the first principal component (left) mixes **all {n}** pixels "
        f"with both signs — hard to read as a part of {'a face' if faces else 'a digit'}."
        "\n\nNonnegative sparse PCA asks for the best **$x \\ge 0$ with at most $k$ "
        f"nonzeros**. With k = {k_pic} (right) the component is a localised, additive part "
        f"and still explains **{tour['variance'] / lam1:.0%}** of the variance of the dense one.")
    st.latex(r"\mathrm{OPT} = \max_{\|x\|_2=1,\ \|x\|_0\le k,\ x\ge 0}\ x^\top A x")
with col_fig:
    show("home_pic")

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
ks = tour["ks"]


def step(title: str, text: str, key: str, link: tuple[str, str, str] | None):
    st.subheader(title)
    a, b = st.columns([1, 1.6], gap="large")
    with a:
        st.markdown(text)
        if link is not None:
            link_page(*link)
    with b:
        show(key)


step("Rank 1: keep the k largest entries",
     "If $A = vv^\\top$ has rank one, $x^\\top A x = (v^\\top x)^2$. The best $x$ keeps the "
     "$k$ largest **nonnegative** entries of $v$ — or of $-v$, whichever gives more — and "
     "sets $x_I = \\pm v_I/\\|v_I\\|$ (paper §3.1). Two candidate supports, no search.",
     "home_rank1", ("pages/spannogram_d2.py", "From rank 1 to rank 2: the spannogram",
                    ":material/show_chart:"))
step("Rank 2: the spannogram",
     "With $A_2 = VV^\\top$ write $c = (\\sin\\varphi, \\cos\\varphi)$ and $v(\\varphi) = Vc$, "
     "a rank-1 problem for each angle. Each feature $i$ traces a curve $v_i(\\varphi)$; the "
     "$k$ highest curves at $\\varphi$ give a candidate support. Sweeping $\\varphi$ visits "
     f"only a few supports — here {tour['n_supports']} instead of all "
     f"{sum(comb(8, j) for j in range(1, ks + 1))} supports of size ≤ {ks} among 8 features.",
     "home_span", ("pages/spannogram_d2.py", "Explore the spannogram (d = 2)", ":material/show_chart:"))
I = tour["opt_support"]
step("For each support: (P₂) on the feasible arc",
     "On a candidate support $I$ the best nonnegative $x$ is $x_I \\propto V_I c$, with $c$ "
     "maximising $c^\\top Q c$, $Q = V_I^\\top V_I$, over the part of the unit circle where "
     "$V_I c \\ge 0$. That part is an arc; the maximum is $\\pm u_1$ of $Q$ if it lies on the "
     "arc, otherwise an arc endpoint (Alg. 4).",
     "home_arc", ("pages/feasible_arc.py", "See the feasible arc in detail", ":material/donut_large:"))
step("Larger d: the ε-net",
     "For $d = 3$ the exact list has $O(n^3)$ supports; for larger $d$ the paper samples "
     "$O(\\varepsilon^{-d}\\log n)$ random unit vectors $c$ instead, solves the rank-1 problem "
     "for each $Vc$ and keeps the best. The answer is within a factor $(1-\\varepsilon)$ of "
     "$\\mathrm{OPT}_d$ with high probability.",
     "home_enet", ("pages/variance_vs_k.py", "Variance vs k for every algorithm", ":material/verified:"))

st.subheader("The certificate: how far from optimal?")
a, b = st.columns([1, 1.6], gap="large")
cert_key = f"home_certified_{name}_{k_pic}"
with a:
    st.markdown(
        "Any answer can be checked without knowing the optimum. Since $A - A_d \\succeq 0$ has "
        "top eigenvalue $\\lambda_{d+1}$, $\\mathrm{OPT} \\le \\min(\\lambda_1, "
        "\\mathrm{OPT}_d + \\lambda_{d+1})$ (paper §4); for the "
        f"{k_pic}-sparse component of step 1 this already shows it reaches at least "
        f"**{tour['variance'] / tour['paper_bound']:.1%}** of the true optimum. A dual "
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
    X = ct.load(name, "center", 0)["X"]
    # keyed by the dataset (as every analysis page): the store of proved bounds gets this certificate,
    # and a bound any page proved at k (or at a larger k) serves here
    dkey = tour["dkey"] or f"tour/{name}/{k_pic}"
    store = bounds_store.shared() if bounds_store.data_key(dkey) is not None else None
    job = work.certify_one_job(X, dkey, k_pic, tour["x"], effort="fast", store=store,
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
                    optimal=bool(c["optimal"] and up == c["upper"]) or bounds_store.closed(tour["variance"], up),
                    ratio=tour["variance"] / up if up > 0 else float("nan"))
with b:
    if cert is None:
        show("home_cert")
    else:
        st.markdown(f"Certified: at least **{cert['ratio']:.1%}** of the optimum"
                    + (" — provably optimal." if cert["optimal"] else "."))
        st.plotly_chart(ct.certificate_bar_figure(tour["variance"], float(cert["upper_bound"]), lam1,
                                                  f"dual certificate ({cert['kind']})"),
                        theme=None, key="home_cert")
