"""Cached computations of the teaching pages (home tour, spannograms, (P₂)).

Each function is pure in its arguments and wrapped in ``st.cache_data`` so that
moving a slider back is instant.  They call ``nspca_core`` and return plain
arrays / dicts that the figure functions in ``ui/figures/teach.py`` draw.

A class on one server (issue 41): what a teaching page shows for given inputs is the same for
every student, so the finished figures are built once per server too — the ``*_view`` /
``*_figure`` functions below keep them in ``st.cache_resource`` (shared, not copied) as
:class:`ui.figures.ship.Shipped` figures, and a student's run only sends them.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import streamlit as st

from ui import state

__all__ = [
    "load",
    "current_dataset",
    "small_V",
    "subset_factor",
    "curves_d2",
    "cells_d3",
    "support_table",
    "brute_force",
    "pd2",
    "dense_vs_sparse",
    "enet_demo",
    "certificate",
    "tour_view",
    "spannogram_d2_figure",
    "d3_cells_figure",
    "d3_surfaces_figure",
    "d3_count_figure",
    "arc_figures",
    "sphere_figure",
]


# ------------------------------------------------------------------ data
def _as_dict(ds) -> dict:
    """The tour's view of a dataset; ``dkey`` is its job data key (:func:`ui.live.data_key`, the one
    every analysis page uses), so the tour's certificate reads and feeds the store of proved bounds."""
    from ui import live

    return dict(X=np.asarray(ds.X, dtype=float), feature_names=list(ds.feature_names),
                image_shape=ds.image_shape, title=ds.info.title, steps=tuple(ds.preprocessing),
                dkey=live.data_key(ds))


def load(name: str, preprocessing: str, seed: int) -> dict:
    """A registry dataset, preprocessed: dict(X, feature_names, image_shape, title, steps, dkey).

    Loading and caching live in :func:`ui.compute.load_dataset`, shared with
    the analysis pages.
    """
    from ui import compute

    return _as_dict(compute.load_dataset(name, preprocessing, seed))


def current_dataset() -> dict:
    """The dataset of the sidebar (registry entry or the upload), preprocessed.

    Same source as :func:`ui.compute.current_dataset`; when it cannot be
    loaded (offline, nothing uploaded yet, a preprocessing the data does not
    allow) the reason is shown and the digits are used instead.
    """
    from ui import compute

    try:
        return _as_dict(compute.current_dataset())
    except (ValueError, OSError) as exc:
        st.error(f"Could not load the selected dataset: {exc} Showing the digits instead.")
        return load("digits", "center", state.settings().seed)


# ---------------------------------------------------------- small factors
@st.cache_data(show_spinner=False)
def small_V(n: int, d: int, seed: int) -> np.ndarray:
    """A random n×d factor (Gaussian rows, columns scaled like decaying eigenvalues)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.sqrt(np.linspace(1.0, 0.5, d))


@st.cache_data(show_spinner=False, max_entries=16)
def subset_factor(X: np.ndarray, features: tuple[int, ...], d: int):
    """Top-d factor V (and eigenvalues) of the covariance of ``X[:, features]``."""
    from nspca_core import lowrank_factor

    return lowrank_factor(X[:, list(features)], d=d)


# ------------------------------------------------------------ spannogram
@st.cache_data(show_spinner=False, max_entries=32)
def curves_d2(V: np.ndarray, k: int, num: int = 721) -> dict:
    """``spannogram_curves_d2`` as plain arrays for ``ui.figures.teach.spannogram_d2``.

    ``values`` are the n row curves (the zero curve is drawn separately),
    ``envelope`` the k-th largest of v(φ) and the k-th smallest (the negated
    k-th largest of −v(φ)), ``intersections`` / ``changes`` (φ, value) pairs.
    """
    from nspca_core import spannogram_curves_d2

    res = spannogram_curves_d2(V, k, num=num)
    pts = np.column_stack([res.intersections_phi, res.intersections_value])
    ch = np.asarray(res.changes, dtype=bool)
    return dict(
        phis=np.asarray(res.phi, dtype=float),
        values=np.asarray(res.curves, dtype=float)[: res.n],
        envelope=np.vstack([res.envelope_pos, -np.asarray(res.envelope_neg)]),
        intersections=pts[~ch],
        changes=pts[ch],
        n_intersections=int(pts.shape[0]),
        n_changes=int(ch.sum()),
        supports=[np.asarray(s, dtype=int) for s in res.supports],
        support_values=np.asarray(res.support_values, dtype=float),
        optimum_id=int(res.optimum_id),
        optimum_value=float(res.optimum_value),
    )


@st.cache_data(show_spinner=False, max_entries=16)
def cells_d3(V: np.ndarray, k: int, grid: int = 121) -> dict:
    """``spannogram_cells_d3`` as plain arrays; maps indexed ``[i2, i1]`` (rows = φ2)."""
    from nspca_core import spannogram_cells_d3

    res = spannogram_cells_d3(V, k, grid=grid)
    return dict(
        phi1=np.asarray(res.phi1, dtype=float), phi2=np.asarray(res.phi2, dtype=float),
        cells_pos=np.asarray(res.cells_pos).T, cells_neg=np.asarray(res.cells_neg).T,
        supports=[np.asarray(s, dtype=int) for s in res.supports],
        values=np.asarray(res.support_values, dtype=float),
        vertices=np.column_stack([res.vertices_phi1, res.vertices_phi2]),
        vertices_changes=np.asarray(res.vertices_changes, dtype=bool),
        vertices_complete=bool(res.vertices_complete),
        optimum_id=int(res.optimum_id), optimum_value=float(res.optimum_value),
    )


def _support_value(V: np.ndarray, idx) -> tuple[float, np.ndarray | None]:
    """max ‖V_Iᵀ x_I‖² over unit x_I ≥ 0 on support I, via (P_d) (paper Alg. 1)."""
    from nspca_core import solve_pd

    VI = V[np.asarray(idx, dtype=int)]
    if VI.shape[0] == 0:
        return 0.0, None
    c = solve_pd(VI.T @ VI, VI)
    if c is None:
        return 0.0, None
    # Alg. 1's point x_I = V_I c / ||V_I c|| and its value ||V_I^T x_I||^2
    y = np.clip(VI @ np.asarray(c, dtype=float), 0.0, None)
    ny = float(np.linalg.norm(y))
    if ny == 0:  # V_I c = 0: the best single row of I
        return float(np.max(np.einsum("ij,ij->i", VI, VI))), c
    z = VI.T @ (y / ny)
    return float(z @ z), c


@st.cache_data(show_spinner=False, max_entries=32)
def support_table(V: np.ndarray, k: int) -> dict:
    """S_d of ``candidate_supports`` with each candidate's value; the best marked."""
    from nspca_core import candidate_supports, lowrank_nspca

    sups = [np.asarray(s, dtype=int) for s in candidate_supports(V, k)]
    vals = np.array([_support_value(V, s)[0] for s in sups])
    res = lowrank_nspca(V, k)
    best = int(np.argmax(vals)) if len(vals) else -1
    return dict(supports=sups, values=vals, best=best, x=np.asarray(res.x),
                opt=float(res.variance_lowrank if np.isfinite(res.variance_lowrank)
                          else res.variance),
                opt_support=np.asarray(res.support, dtype=int))


@st.cache_data(show_spinner=False, max_entries=16)
def brute_force(V: np.ndarray, k: int, max_n: int = 14) -> dict | None:
    """OPT_d by enumerating every support |J| ≤ k and the sign-consistent
    eigenvectors of A_JJ (A = VVᵀ); None when n > max_n.

    At an optimum with minimal support J, x_J is a positive eigenvector of
    A_JJ, so checking every eigenvector of every principal submatrix is exact.
    """
    n = V.shape[0]
    if n > max_n:
        return None
    A = V @ V.T
    best, best_J = -np.inf, ()
    count = 0
    for size in range(1, min(k, n) + 1):
        for J in combinations(range(n), size):
            count += 1
            sub = A[np.ix_(J, J)]
            w, U = np.linalg.eigh(sub)
            U = U * np.where(U.max(axis=0) > 1e-12, 1.0, -1.0)  # try the positive sign
            ok = U.min(axis=0) >= -1e-9
            if ok.any():
                val = float(w[ok].max())
                if val > best:
                    best, best_J = val, J
    return dict(opt=best, support=np.array(best_J, dtype=int), checked=count,
                total=sum(comb(n, s) for s in range(1, min(k, n) + 1)))


# ------------------------------------------------------------------ (P_2)
@st.cache_data(show_spinner=False, max_entries=32)
def pd2(Q: np.ndarray, R: np.ndarray) -> dict:
    """``solve_pd`` and ``pd2_geometry`` for one (Q, R), as plain values.

    Returns dict(c, value, arcs, u1, u1_feasible, active, feasible).  Arcs are
    converted to the spannogram's angle, ``c(φ) = (sin φ, cos φ)``, used by every
    teaching figure: the core reports ``c = (cos ψ, sin ψ)``, so ``φ = π/2 − ψ``
    and an arc ``[ψ1, ψ2]`` becomes ``[π/2 − ψ2, π/2 − ψ1]``.
    """
    from nspca_core import pd2_geometry, solve_pd

    c = solve_pd(Q, R)
    geo = pd2_geometry(Q, R)
    arcs = [(float(np.pi / 2 - b), float(np.pi / 2 - a)) for a, b in geo.feasible_arcs]
    return dict(c=None if c is None else np.asarray(c, dtype=float),
                value=float(geo.value), arcs=arcs, u1=np.asarray(geo.u1, dtype=float),
                u1_feasible=bool(geo.u1_feasible),
                active=[int(i) for i in np.flatnonzero(geo.active)],
                feasible=bool(geo.feasible))


@st.cache_data(show_spinner=False, max_entries=16)
def solve_p3(Q: np.ndarray, R: np.ndarray) -> np.ndarray | None:
    """``solve_pd`` for a d = 3 problem (Alg. 5), cached."""
    from nspca_core import solve_pd

    c = solve_pd(Q, R)
    return None if c is None else np.asarray(c, dtype=float)


# ------------------------------------------------------------- home tour
@st.cache_data(show_spinner=False, max_entries=8)
def dense_vs_sparse(X: np.ndarray, k: int) -> dict:
    """Dense first PC, the exact nonnegative k-sparse component on A_2, and the
    paper's bound OPT ≤ min(λ₁, OPT_2 + λ₃) (cheap: no dual certificate)."""
    from nspca_core import lowrank_factor, lowrank_nspca, paper_bound

    V, eig = lowrank_factor(X, d=2)
    dense = V[:, 0] / (np.linalg.norm(V[:, 0]) or 1.0)
    res = lowrank_nspca(V, k)
    x = np.asarray(res.x)
    var = float(np.sum((X @ x) ** 2) / X.shape[0])
    return dict(dense=dense, sparse=x, lam1=float(eig[0]), variance=var, support=res.support,
                opt_d=float(res.variance_lowrank), eigenvalues=np.asarray(eig, dtype=float),
                paper_bound=float(paper_bound(float(res.variance_lowrank), eig, 2)))


@st.cache_data(show_spinner=False, max_entries=16)
def enet_demo(V: np.ndarray, k: int, samples: int, seed: int) -> dict:
    """The ε-net idea for d = 2: random angles, rank-1 answer of each, the best."""
    from nspca_core import rank1_nspca

    rng = np.random.default_rng(seed)
    phis = np.sort(rng.uniform(-np.pi / 2, np.pi / 2, samples))
    C = np.vstack([np.sin(phis), np.cos(phis)])
    # one rank-1 solve per sample: a handful of samples for the picture only
    vals = np.empty(samples)
    for j in range(samples):
        x = rank1_nspca(V @ C[:, j], k)
        vals[j] = float(np.sum((V.T @ x) ** 2))
    return dict(phis=phis, values=vals, best=float(vals.max()))


@st.cache_data(show_spinner=False, max_entries=8)
def certificate(X: np.ndarray, k: int, x: np.ndarray, effort: str = "fast", _callback=None) -> dict:
    """``certify`` the component ``x`` on the data (dual bound); plain numbers out."""
    from nspca_core import certify

    cert = certify(X, k=k, x=x, effort=effort, callback=_callback, center=False)
    return dict(upper_bound=float(cert.upper_bound), lower=float(cert.lower),
                ratio=float(cert.ratio), kind=str(cert.kind), optimal=bool(cert.optimal))


def c_grid_d3(phi1: np.ndarray, phi2: np.ndarray) -> np.ndarray:
    """Unit vectors c(φ₁, φ₂) on a grid, shape (3, len(phi2), len(phi1)).

    Same parametrisation as ``spannogram_cells_d3``:
    c = (sin φ₁, cos φ₁ sin φ₂, cos φ₁ cos φ₂) (paper App. B).
    """
    P1, P2 = np.meshgrid(np.asarray(phi1, float), np.asarray(phi2, float))
    return np.stack([np.sin(P1), np.cos(P1) * np.sin(P2), np.cos(P1) * np.cos(P2)])


@st.cache_data(show_spinner=False, max_entries=16)
def s3_counts(V: np.ndarray, k: int) -> tuple[list[int], list[int]]:
    """|S_3| of ``candidate_supports`` on the first m rows of V, m = max(4, k)..n."""
    from nspca_core import candidate_supports

    ns, counts = [], []
    for m in range(max(4, k), V.shape[0] + 1):
        ns.append(m)
        counts.append(len({tuple(map(int, s)) for s in candidate_supports(V[:m], k)}))
    return ns, counts


@st.cache_resource(show_spinner=False, max_entries=32)
def spannogram_d2_figure(V: np.ndarray, k: int, phi: float, labels: tuple, frames: int = 60,
                         lecture: bool = False):
    """The d = 2 spannogram figure (with its animation frames), built once per server and frozen
    (:class:`ui.figures.ship.Shipped`): building dozens of plotly frames costs about a second,
    and every student of a class is sent the same figure.  ``lecture``: the bigger figure of
    lecture mode."""
    from ui.figures.ship import ship
    from ui.figures.teach import spannogram_d2

    cur = curves_d2(V, k)
    return ship(spannogram_d2(cur["phis"], cur["values"], k, phi=phi, envelope=cur["envelope"],
                              intersections=cur["intersections"], changes=cur["changes"],
                              labels=list(labels), frames=frames, lecture=lecture))


def why_support(V: np.ndarray, k: int, phi: float, change_phis: np.ndarray, labels) -> str:
    """Lecture mode: the candidate supports at ``phi`` and why they are what they are.

    The k largest nonnegative entries of v(φ) = V c(φ) (and of −v(φ)) with
    their values, and, at the last support change before ``phi``, which rows
    entered and which left — the curves that crossed there.
    """
    from nspca_core import topk_nonneg

    def supports(p: float):
        v = V @ np.array([np.sin(p), np.cos(p)])
        return v, set(topk_nonneg(v, k).tolist()), set(topk_nonneg(-v, k).tolist())

    def names(rows) -> str:
        return ", ".join(str(labels[i]) for i in sorted(rows)) or "none"

    v, plus, minus = supports(phi)
    top = sorted(plus, key=lambda i: -v[i])
    lines = [f"**Why this support.** At φ = {phi:+.2f} the {k} largest entries of v(φ) = V c(φ) are "
             + (", ".join(f"{labels[i]} ({v[i]:+.3f})" for i in top) or "none (all ≤ 0)")
             + f": that is $I_k^+(v)$; the {k} most negative give $I_k^+(-v)$ = {names(minus)}."]
    before = np.sort(np.asarray(change_phis, float))
    before = before[before <= phi]
    if before.size == 0:
        lines.append("No support change yet since φ = −π/2: the supports are those of the start "
                     "of the sweep.")
        return "  \n".join(lines)
    pc = float(before[-1])
    _, plus0, minus0 = supports(pc - 1e-4)
    _, plus1, minus1 = supports(pc + 1e-4)
    moves = []
    for name, a, b in (("I_k^+(v)", plus0, plus1), ("I_k^+(-v)", minus0, minus1)):
        if a != b:
            moves.append(f"{names(b - a)} entered ${name}$ and {names(a - b)} left")
    lines.append(f"The last change was at φ ≈ {pc:+.3f} (a black diamond): "
                 + ("; ".join(moves) if moves else "the two curves swapped order")
                 + " — their curves cross there, so the k-th order envelope switched curves.")
    return "  \n".join(lines)


def _met_along(row_labels: np.ndarray) -> list[int]:
    """Cell ids met along one row of the d = 3 cell map, in order of φ1 (each once)."""
    seq = [int(c) for c in row_labels if c >= 0]
    return list(dict.fromkeys(seq))


def d3_line_changes(labels: np.ndarray) -> np.ndarray:
    """Lecture mode, d = 3: the rows of the cell map (φ2 grid) where the set of cells met by
    the line φ2 = const differs from the row below — the steps of the "next change" buttons.

    ``labels``: cell ids ``[i2, i1]`` (rows = φ2).  Returns the row indices, increasing.
    """
    sets = [frozenset(_met_along(r)) for r in np.asarray(labels)]
    return np.array([r for r in range(1, len(sets)) if sets[r] != sets[r - 1]], dtype=int)


def step_row(changes: np.ndarray, row: int, direction: int) -> int:
    """The next (direction > 0) or previous change row from ``row``; ``row`` when none."""
    changes = np.asarray(changes, dtype=int)
    if direction > 0:
        after = changes[changes > row]
        return int(after[0]) if after.size else int(row)
    before = changes[changes < row]
    return int(before[-1]) if before.size else 0 if row > 0 else int(row)


def why_line(labels: np.ndarray, supports, phi2: np.ndarray, row: int, name) -> str:
    """Lecture mode, d = 3: the supports the line φ2 = const meets and what changed since the
    row below (the line crossed a vertex where three surfaces meet, or a cell's edge).

    ``name(support) -> str`` formats a support with the user's feature names.
    """
    labels = np.asarray(labels)
    met = _met_along(labels[row])
    lines = [f"**Why these supports.** The line φ₂ = {phi2[row]:+.2f} is a circle of directions "
             f"c: along it the problem is a d = 2 spannogram, and its k largest curves give the "
             f"{len(met)} support(s) it meets — "
             + (", ".join(name(supports[c]) for c in met) or "none") + "."]
    if row == 0:
        lines.append("This is the bottom of the map; step up to the next change.")
        return "  \n".join(lines)
    below = set(_met_along(labels[row - 1]))
    came, went = [c for c in met if c not in below], [c for c in below if c not in met]
    if came or went:
        parts = []
        if came:
            parts.append("entered: " + ", ".join(name(supports[c]) for c in came))
        if went:
            parts.append("left: " + ", ".join(name(supports[c]) for c in sorted(went)))
        lines.append(f"Since the line just below (φ₂ = {phi2[row - 1]:+.2f}) "
                     + "; ".join(parts) + " — the line crossed a vertex where three surfaces "
                     "meet, so it now passes through other cells.")
    else:
        lines.append(f"The line just below (φ₂ = {phi2[row - 1]:+.2f}) meets the same supports.")
    return "  \n".join(lines)


# --------------------------------------------------- shared, finished views (issue 41, item 1)
def _small(figure):
    """The tour's small figure (``pages/home.py`` draws them in a narrow column): its height, the
    title under the toolbar, a horizontal legend a fixed distance under the axis title."""
    from ui.figures import teach as fig

    figure.update_layout(height=300, margin=dict(l=50, r=10, t=50, b=40))
    fig.below_toolbar(figure)
    if figure.layout.showlegend is not False and figure.layout.legend.orientation == "h":
        fig.legend_below(figure)
    return figure


@st.cache_resource(show_spinner=False, max_entries=8)
def tour_view(name: str, seed: int) -> dict:
    """Everything the guided tour shows for the dataset ``name`` and the sidebar's seed, with its
    figures finished and frozen (:func:`ui.figures.ship.ship`): built by the first visitor, sent
    as they are to every other.  Numbers for the text; ``x`` (the k-sparse component) and ``dkey``
    for the certificate the tour can start."""
    from ui.figures import teach as fig
    from ui.figures.ship import ship

    ds = load(name, "center", 0)
    X = ds["X"]
    n = X.shape[1]
    k_pic = 40 if n >= 160 else max(2, n // 4)
    pic = dense_vs_sparse(X, k_pic)
    faces = name == "cbcl"
    pic_fig = fig.loading_images([pic["dense"], pic["sparse"]],
                                 ["dense PC<br>(signed, all pixels)", f"nonnegative,<br>{k_pic}-sparse"],
                                 image_shape=ds["image_shape"], main_title="First component of " + ds["title"])
    Vs = small_V(8, 2, seed)
    ks = 3
    cur = curves_d2(Vs, ks, num=361)
    tab = support_table(Vs, ks)
    I = [int(i) for i in tab["opt_support"]]
    R = Vs[I]
    arc = pd2(R.T @ R, R)
    net = enet_demo(Vs, ks, 25, seed)
    rank1 = fig.rank1_bars(Vs[:, 1], ks, title=f"Rank 1, k = {ks}: the two candidates")
    span = fig.spannogram_d2(cur["phis"], cur["values"], ks, phi=0.3, envelope=cur["envelope"],
                             changes=cur["changes"], title="Spannogram of an 8×2 example")
    span.update_layout(showlegend=False)
    arc_fig = fig.feasible_arc(R.T @ R, R, arcs=arc["arcs"], u1=arc["u1"], c_star=arc["c"],
                               title=f"(P₂) for the optimal support {I}")
    arc_fig.update_layout(showlegend=False)
    enet_fig = fig.enet_circle(net["phis"], net["values"], net["best"], exact=tab["opt"],
                               title="25 random samples vs the exact OPT_d")
    bar = fig.certificate_bar(pic["variance"], pic["paper_bound"], pic["lam1"],
                              bound_label="paper bound min(λ₁, OPT₂+λ₃)")
    return dict(
        name=name, faces=faces, title=ds["title"], n=n, k_pic=k_pic, dkey=ds.get("dkey"),
        lam1=pic["lam1"], variance=pic["variance"], paper_bound=pic["paper_bound"], x=pic["sparse"],
        n_supports=len(tab["supports"]), ks=ks, opt_support=I,
        figures=dict(home_pic=ship(pic_fig), home_rank1=ship(_small(rank1)), home_span=ship(_small(span)),
                     home_arc=ship(_small(arc_fig)), home_enet=ship(_small(enet_fig)),
                     home_cert=ship(_small(bar))))


@st.cache_resource(show_spinner=False, max_entries=16)
def certificate_bar_figure(variance: float, upper: float, lam1: float, label: str):
    """The tour's certificate bar for a proved bound, small and frozen (shared)."""
    from ui.figures import teach as fig
    from ui.figures.ship import ship

    return ship(_small(fig.certificate_bar(variance, upper, lam1, bound_label=label)))


@st.cache_resource(show_spinner=False, max_entries=16)
def d3_cells_figure(V: np.ndarray, k: int, grid: int, negative: bool, lecture: bool, row: int | None):
    """The d = 3 cell map (with its sweep frames unless in lecture mode), frozen and shared."""
    from ui.figures import teach as fig
    from ui.figures.ship import ship

    cells = cells_d3(V, k, grid=grid)
    table = support_table(V, k)
    sups = [tuple(int(i) for i in s) for s in cells["supports"]]
    labels_map = cells["cells_neg"] if negative else cells["cells_pos"]
    best = tuple(int(i) for i in table["opt_support"])
    return ship(fig.spannogram_d3_cells(cells["phi1"], cells["phi2"], labels_map, sups, cells["values"],
                                        vertices=cells["vertices"], changes=cells["vertices_changes"],
                                        best=sups.index(best) if best in sups else None,
                                        frames=0 if lecture else 30, line_row=row, lecture=lecture))


@st.cache_resource(show_spinner=False, max_entries=16)
def d3_surfaces_figure(V: np.ndarray, k: int, grid: int, rows: tuple[int, ...], labels: tuple):
    """A few rows' surfaces over (φ₁, φ₂) in 3D, frozen and shared."""
    from ui.figures import teach as fig
    from ui.figures.ship import ship

    cells = cells_d3(V, k, grid=grid)
    phi1, phi2 = cells["phi1"], cells["phi2"]
    step = max(1, len(phi1) // 60)
    p1, p2 = phi1[::step], phi2[::step]
    C = c_grid_d3(p1, p2)
    rows = list(rows)
    surfaces = np.einsum("id,dyx->iyx", V[rows], C) if rows else np.zeros((0, len(p2), len(p1)))
    return ship(fig.spannogram_d3_surfaces(p1, p2, surfaces, labels=[labels[i] for i in rows]))


@st.cache_resource(show_spinner=False, max_entries=16)
def d3_count_figure(V: np.ndarray, k: int):
    """|S₃| for the first n rows of V against the bound 2³·C(n+1, 3), frozen and shared."""
    from ui.figures import teach as fig
    from ui.figures.ship import ship

    ns, counts = s3_counts(V, k)
    n = V.shape[0]
    return ship(fig.candidate_count(ns, counts, [2 ** 3 * comb(m + 1, 3) for m in ns],
                                    current=(n, len(support_table(V, k)["supports"])),
                                    title="|S₃| for the first n rows of V vs the bound"))


@st.cache_resource(show_spinner=False, max_entries=16)
def sphere_figure(Q: np.ndarray, R: np.ndarray):
    """(P₃) on the sphere for (Q, R) with the answer of ``solve_pd``, frozen and shared."""
    from ui.figures import teach as fig
    from ui.figures.ship import ship

    c3 = solve_p3(Q, R)
    u3 = np.linalg.eigh(Q)[1][:, -1]
    return ship(fig.sphere_pd3(Q, R, c_star=c3, u1=u3))


def rotated(Q: np.ndarray, degrees: float) -> np.ndarray:
    """Q_θ = G(θ) Q G(θ)ᵀ, G the rotation by θ degrees: u₁ turns, the constraints stay."""
    t = np.deg2rad(degrees)
    G = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    return G @ Q @ G.T


def _pd2_step(Q: np.ndarray, R: np.ndarray) -> dict:
    """``pd2`` for (Q, R); with no row yet the whole circle, the answer ±u₁."""
    if R.shape[0]:
        return pd2(Q, R)
    u1 = np.linalg.eigh(Q)[1][:, -1]
    return dict(c=u1, arcs=[(-np.pi, np.pi)], u1=u1, active=[], u1_feasible=True,
                value=float(u1 @ Q @ u1), feasible=True)


ARC_ROTATIONS = tuple(range(-180, 181, 15))  # degrees: the steps of "rotate u₁"


@st.cache_resource(show_spinner=False, max_entries=16)
def arc_figures(Q: np.ndarray, R: np.ndarray, adding: bool) -> dict:
    """The feasible-arc page for one (Q, R), built once per server and shared (issue 41): the
    circle with its animation (``adding``: the rows added one by one; else Q turned in steps of
    15°), which plays in the browser, the objective along the circle, and the answer of
    ``solve_pd`` for (Q, R) as given."""
    from ui.figures import teach as fig
    from ui.figures.ship import ship

    kk = R.shape[0]
    steps = []
    plan = [(j, 0.0) for j in range(kk + 1)] if adding else [(kk, float(t)) for t in ARC_ROTATIONS]
    for no, (j, t) in enumerate(plan):
        Qt = rotated(Q, t) if t else Q
        out = _pd2_step(Qt, R[:j])
        head = f"Step {no + 1} of {len(plan)}: "
        title = (head + (f"{j} of {kk} constraints" if j else f"no constraint yet (0 of {kk})")
                 if adding else head + f"Q turned by {t:+.0f}°")
        steps.append(dict(Q=Qt, shown=j, arcs=out["arcs"], u1=out["u1"], c=out["c"], active=out["active"],
                          u1_feasible=out["u1_feasible"], title=title,
                          name=(str(j) if adding else f"{t:+.0f}°")))
    start = kk if adding else ARC_ROTATIONS.index(0)
    answer = _pd2_step(Q, R)
    circle = fig.feasible_arc_steps(steps, R, start=start,
                                    label="constraints shown" if adding else "Q turned by")
    objective = fig.objective_on_circle(Q, R, c_star=answer["c"])
    return dict(circle=ship(circle), objective=ship(objective), answer=answer)
