"""Regenerate the seed papers' figures and tables, headless.

``python -m tools.reproduce [--quick] [--standin] [--out DIR] [--report FILE]`` (from the
repository root; ``make reproduce`` runs it into ``reproduction/`` with a copy of the
report in ``REPRODUCTION.md``)

Every number in the report comes from this run (or, for the benchmark
section, from the latest ``benchmarks/results/*.txt`` written by ``make
bench``); nothing is typed in except the papers' own published figures, which
are quoted beside ours and labelled as such.

Sections (each writes CSV + PNG into ``--out`` and a part of ``--out``/REPRODUCTION.md;
figures are drawn with Matplotlib in the app's Okabe–Ito palette):

* seed 002 (Asteris et al., ICML 2014): Fig. 3, Figs. 4–6 with the paper's
  bound and our certificate, the quoted guarantees, Fig. 9;
* seed 003 (Sigg & Buhmann, ICML 2008): Fig. 3 left, Fig. 4;
* seed 004 (Asteris et al., 2015): Table 1 (CBCL, MLL), Fig. 2;
* seed 001 (Bajorski, Hall & Rubinstein): Tables 1–2, Fig. 7.

When a real dataset is absent (``NSPCA_DATA_DIR``), ``--quick`` falls back to a
small synthetic stand-in and says so in the report; ``--standin`` forces it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nspca_core.io.imagegrid import image_grid_png
from tools import charts as P

#: the repository root (the reproduction runs from a checkout, not from the installed package)
ROOT = Path(__file__).resolve().parents[1]
#: placeholder for the folder of the figures and tables, relative to the report that links them
_LINK = "\x00out\x00/"

# The papers' own published figures, quoted beside ours (not computed here).
PAPER = {
    "guarantees": {("cbcl", 180): 0.58, ("mll", 50): 0.446, ("lrs", 20): 0.86, ("lrs", 90): 0.93},
    "table1_004": {"cbcl": {"TPower": 5.06, "EM": 5.18, "SpanSPCA": 5.23, "SPCABiPart": 5.29}},
    "table1_001_D": {"NSPCA": (0.236, 0.055, 0.086), "PCA": (0.771, 0.672, 0.663)},
    "rate_001": {100: 0.20, 1000: 0.06, 10000: 0.02},
}


@dataclass
class Data:
    name: str
    X: np.ndarray  # centered
    image_shape: tuple | None
    labels: np.ndarray | None
    standin: bool
    note: str


class Report:
    """Collects markdown, figures and tables; figures and tables are written to ``out`` at once."""

    def __init__(self, out: Path):
        self.out = out
        self.link = _LINK
        self.lines: list[str] = []
        self.errors: list[str] = []

    def h(self, text, level=2):
        self.lines += ["", "#" * level + " " + text, ""]

    def p(self, text):
        self.lines += [text, ""]

    def table(self, df: pd.DataFrame, name: str, floatfmt="{:.4g}"):
        df.to_csv(self.out / f"{name}.csv", index=False)
        cols = list(df.columns)
        self.lines.append("| " + " | ".join(map(str, cols)) + " |")
        self.lines.append("|" + "---|" * len(cols))
        for _, row in df.iterrows():
            cells = [floatfmt.format(v) if isinstance(v, (float, np.floating)) and np.isfinite(v)
                     else ("—" if isinstance(v, (float, np.floating)) else str(v)) for v in row]
            self.lines.append("| " + " | ".join(cells) + " |")
        self.lines += ["", f"(CSV: `{self.link}{name}.csv`)", ""]

    def image(self, img, name: str, caption: str):
        """``img`` is a Matplotlib Figure or PNG bytes."""
        path = self.out / f"{name}.png"
        if isinstance(img, bytes):
            path.write_bytes(img)
        else:
            P.save_png(img, path)
        self.lines += [f"![{caption}]({self.link}{name}.png)", "", f"*{caption}*", ""]

    def error(self, section, exc):
        msg = f"{section}: {type(exc).__name__}: {exc}"
        self.errors.append(msg)
        self.lines += [f"> **Section failed** — {msg}", ""]

    def write(self, path: Path) -> None:
        """The markdown at ``path``, its links relative to ``path``'s folder."""
        prefix = os.path.relpath(self.out.resolve(), path.resolve().parent)
        prefix = "" if prefix == "." else Path(prefix).as_posix() + "/"
        path.write_text(("\n".join(self.lines) + "\n").replace(_LINK, prefix))


def _progress(msg):
    print(f"[reproduce {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _load(name: str, *, quick: bool, standin: bool) -> Data | None:
    from nspca_core import load_dataset
    from nspca_core.datasets import is_available

    if not standin and is_available(name):
        ds = load_dataset(name, preprocessing="center")
        return Data(name, ds.X, ds.image_shape, ds.labels, False,
                    f"{ds.info.title}, {ds.X.shape[0]} × {ds.X.shape[1]}, centered")
    if not (quick or standin):
        return None
    # synthetic stand-ins with the same roles (images / many genes few samples / spectra)
    if name == "cbcl":
        ds = load_dataset("synthetic-parts", preprocessing="center", random_state=0)
    else:
        ds = load_dataset("synthetic-planted", preprocessing="center", random_state=0)
    labels = None
    if name == "mll":
        labels = np.repeat(np.array(["ALL", "AML", "MLL"]), -(-ds.X.shape[0] // 3))[: ds.X.shape[0]]
    return Data(name, ds.X, ds.image_shape, labels, True,
                f"STAND-IN for {name}: synthetic `{ds.name}` {ds.X.shape[0]} × {ds.X.shape[1]} "
                "(real data absent)")


def _ks(n, quick, full_grid):
    ks = [k for k in full_grid if k <= n]
    if quick:
        ks = ks[:: max(1, len(ks) // 5)][:5]
    return ks


# ---------------------------------------------------------------- seed 002 --
def seed002(rep: Report, data: dict, quick: bool):
    from nspca_core import certify_path, components, enet_path, fit, lowrank_factor, paper_bound

    rep.h("Seed 002 — Asteris, Papailiopoulos & Dimakis, ICML 2014")
    d, eps = 3, 0.1
    cb = data.get("cbcl")
    if cb is not None and cb.image_shape is not None:
        try:
            _progress("seed 002 Fig. 3")
            r, k = (3, 10) if quick else (6, 40)
            rows, recs = {}, []
            for method in ("enet", "em"):
                res = components(cb.X, n_components=r, k=k, method=method, strategy="deflation-remove",
                                 d=d, eps=eps, random_state=0, certify=False)
                rows[method] = [res.loadings[:, j] for j in range(r)]
                for j in range(r):
                    recs.append({"method": method, "component": j + 1, "variance": res.variance[j],
                                 "cumulative": res.cumulative_variance[j]})
            rep.p(f"Fig. 3 — {r} orthogonal nonnegative {k}-sparse components of {cb.note} "
                  "(features of earlier components removed). Paper: the ε-net components explain more "
                  "variance than EM's; ours below.")
            titles = {m: [f"component {j + 1}" for j in range(r)] for m in rows}
            rep.image(image_grid_png(rows, image_shape=cb.image_shape, titles=titles, scale=4,
                                     title=f"{cb.name.upper()}: first {r} components, {k}-sparse"),
                      "s002_fig3_components", f"Seed 002 Fig. 3: first {r} components, rows = method")
            df3 = pd.DataFrame(recs)
            rep.table(df3, "s002_fig3_variance")
            tot = df3.groupby("method")["variance"].sum()
            rep.p(f"Difference: in this run the ε-net components explain {tot['enet']:.4g} in total and "
                  f"EM's {tot['em']:.4g} (ratio {tot['enet'] / tot['em']:.3f}); "
                  + ("the paper's ordering holds." if tot["enet"] >= tot["em"] else
                     "EM comes out ahead here, unlike the paper: our EM implementation restarts and "
                     "renormalizes on the support (Sigg & Buhmann's variational renormalization)."))
        except Exception as exc:  # noqa: BLE001 - record and go on
            rep.error("seed 002 Fig. 3", exc)

    guarantees = []
    for name, fig in (("cbcl", 4), ("mll", 5), ("lrs", 6)):
        ds = data.get(name)
        if ds is None:
            rep.p(f"Fig. {fig} ({name}): data absent, skipped.")
            continue
        try:
            _progress(f"seed 002 Fig. {fig} ({name})")
            n = ds.X.shape[1]
            grid = [1, 2, 5, 10, 20, 30, 50, 70, 90, 120, 150, 180, 250, 361, 500, 1000, 2000]
            ks = _ks(n, quick, grid)
            for kk in (180, 50, 20, 90):
                if kk <= n and (name, kk) in PAPER["guarantees"] and kk not in ks:
                    ks.append(kk)
            ks = sorted(set(ks))
            V, eig = lowrank_factor(ds.X, d=d)
            lam1 = eig[0]
            t = time.perf_counter()
            en = enet_path(V, ks, eps=eps, random_state=0)
            t_enet = time.perf_counter() - t
            m = ds.X.shape[0]
            var_enet = np.array([float(np.sum((ds.X @ r.x) ** 2) / m) for r in en])
            var_em = np.array([fit(ds.X, k=k, method="em", random_state=0, certify=False).variance for k in ks])
            best = [fit(ds.X, k=k, method="auto", d=d, eps=eps, random_state=0, certify=False) for k in ks]
            var_best = np.array([b.variance for b in best])
            certs = certify_path(ds.X, ks=ks, xs=[b.x for b in best])
            ub = np.array([c.upper_bound for c in certs])
            pb = np.array([paper_bound(r.variance_lowrank, eig, d, eps=eps) for r in en])
            df = pd.DataFrame({"k": ks, "enet/λ1": var_enet / lam1, "EM/λ1": var_em / lam1,
                               "best/λ1": var_best / lam1, "certified UB/λ1": ub / lam1,
                               "paper UB/λ1": pb / lam1, "certified ratio": var_best / ub,
                               "paper ratio (enet)": var_enet / pb})
            series = [P.Series(ks, var_enet / lam1, "ε-net d=3 ε=0.1", color=P.method_color("enet"),
                               markers=True),
                      P.Series(ks, var_em / lam1, "EM (Sigg–Buhmann)", color=P.method_color("em"), dashed=True,
                               markers=True),
                      P.Series(ks, ub / lam1, "certified upper bound (ours)", color=P.OKABE_ITO["black"]),
                      P.Series(ks, pb / lam1, "paper's upper bound", color=P.GREY, dashed=True)]
            bands = [P.Band(ks, var_best / lam1, ub / lam1, "certified band (ours)", color=P.OKABE_ITO["sky"]),
                     P.Band(ks, var_enet / lam1, pb / lam1, "paper's band", color=P.OKABE_ITO["orange"],
                            alpha=0.15)]
            if name == "cbcl":
                var_z = []
                for k in ks:
                    try:
                        var_z.append(fit(ds.X, k=k, method="zass", random_state=0, certify=False).variance)
                    except Exception:  # noqa: BLE001 - no β gives a k-sparse answer
                        var_z.append(np.nan)
                var_z = np.array(var_z)
                df["NSPCA (Zass–Shashua)/λ1"] = var_z / lam1
                series.append(P.Series(ks, var_z / lam1, "NSPCA (Zass–Shashua)", color=P.method_color("zass"),
                                       dashed=True, markers=True))
            rep.p(f"Fig. {fig} — normalized variance vs k on {ds.note}; ε-net path took "
                  f"{t_enet:.2f} s for {len(ks)} values of k.")
            rep.image(P.line_chart(series, bands=bands, title=f"{name.upper()}: variance / λ1 vs k",
                                   xlabel="k (nonzero loadings)", ylabel="explained variance / λ1"),
                      f"s002_fig{fig}_{name}", f"Seed 002 Fig. {fig} ({name})")
            rep.table(df, f"s002_fig{fig}_{name}")
            for (dn, kk), quoted in PAPER["guarantees"].items():
                if dn == name and kk in ks:
                    i = ks.index(kk)
                    guarantees.append({"dataset": name, "k": kk, "paper's guarantee": quoted,
                                       "paper's bound, our run": var_enet[i] / pb[i],
                                       "our certificate": var_best[i] / ub[i],
                                       "certificate kind": certs[i].kind})
        except Exception as exc:  # noqa: BLE001
            rep.error(f"seed 002 Fig. {fig}", exc)
    if guarantees:
        rep.p("Quoted guarantees (fraction of the unknown optimum provably reached). The paper's column "
              "is quoted from the paper; the others are computed in this run.")
        rep.table(pd.DataFrame(guarantees), "s002_guarantees")
        for g in guarantees:
            quoted, ours = g["paper's guarantee"], g["paper's bound, our run"]
            diff = ours - quoted
            rep.p(f"Difference ({g['dataset'].upper()}, k = {g['k']}): the paper states ≥ "
                  f"{quoted:.1%}; the same bound computed here gives {ours:.1%} "
                  f"({'+' if diff >= 0 else ''}{100 * diff:.1f} points: the bound depends on the "
                  "ε-net's random sample, the answer it finds and the preprocessing — we center the "
                  "features, d = 3, ε = 0.1); our certificate proves "
                  f"{g['our certificate']:.1%} ({g['certificate kind']}).")

    try:
        _progress("seed 002 Fig. 9")
        series, recs = [], []
        for name, ds in data.items():
            if ds is None:
                continue
            _, eig = lowrank_factor(ds.X, d=min(19, ds.X.shape[1] - 1, ds.X.shape[0] - 1))
            sp = eig / eig[0]
            series.append(P.Series(np.arange(1, sp.size + 1), sp, name, markers=True))
            recs += [{"dataset": name, "i": i + 1, "λi/λ1": v} for i, v in enumerate(sp)]
        if series:
            rep.p("Fig. 9 — normalized spectra λi/λ1 (the paper's bound OPT_d + λ_{d+1} is tight when "
                  "the spectrum decays fast).")
            rep.image(P.line_chart(series, title="Normalized spectra", xlabel="i", ylabel="λi / λ1",
                                   legend="upper right"), "s002_fig9_spectra", "Seed 002 Fig. 9")
            rep.table(pd.DataFrame(recs), "s002_fig9_spectra")
    except Exception as exc:  # noqa: BLE001
        rep.error("seed 002 Fig. 9", exc)


# ---------------------------------------------------------------- seed 003 --
def _pair_jaccard(a, b):
    """Pair-counting Jaccard score of two labelings (pairs together in both / in either)."""
    a, b = np.asarray(a), np.asarray(b)
    same_a = a[:, None] == a[None, :]
    same_b = b[:, None] == b[None, :]
    iu = np.triu_indices(a.size, 1)
    sa, sb = same_a[iu], same_b[iu]
    either = np.count_nonzero(sa | sb)
    return float(np.count_nonzero(sa & sb) / either) if either else 1.0


def seed003(rep: Report, data: dict, quick: bool):
    from nspca_core import fit

    rep.h("Seed 003 — Sigg & Buhmann, ICML 2008")
    cb = data.get("cbcl")
    if cb is not None:
        try:
            _progress("seed 003 Fig. 3")
            # the paper projects the faces off their first principal component
            u = np.linalg.svd(cb.X, full_matrices=False)[2][0]
            Xp = cb.X - np.outer(cb.X @ u, u)
            ks = [5, 20, 50] if quick else [5, 10, 20, 30, 50, 75, 100, 150, 200]
            ks = [k for k in ks if k <= Xp.shape[1]]
            em = [fit(Xp, k=k, method="em", random_state=0, certify=False).variance for k in ks]
            zs = []
            for k in ks:
                try:
                    zs.append(fit(Xp, k=k, method="zass", random_state=0, certify=False).variance)
                except Exception:  # noqa: BLE001
                    zs.append(np.nan)
            df = pd.DataFrame({"k": ks, "EM": em, "NSPCA (Zass–Shashua)": zs})
            rep.p(f"Fig. 3 left — variance vs cardinality, {cb.note}, projected off its first PC. "
                  "Paper's claim: EM ≥ NSPCA at equal cardinality.")
            rep.image(P.line_chart([P.Series(ks, np.array(em), "EM", color=P.method_color("em"), markers=True),
                                    P.Series(ks, np.array(zs), "NSPCA", color=P.method_color("zass"), dashed=True,
                                             markers=True)],
                                   title="CBCL off PC1: variance vs cardinality", xlabel="cardinality",
                                   ylabel="variance"), "s003_fig3", "Seed 003 Fig. 3 left")
            rep.table(df, "s003_fig3")
            z = np.asarray(zs, float)
            ok = np.isfinite(z)
            wins = int(np.sum(np.asarray(em)[ok] >= z[ok] - 1e-9))
            rep.p(f"Difference: EM ≥ NSPCA at {wins} of {int(ok.sum())} cardinalities where NSPCA "
                  "reached the cardinality" + (" — the paper's claim holds." if wins == ok.sum() else
                                                "; the paper's claim fails at the others.")
                  + ("" if ok.all() else f" At {int((~ok).sum())} cardinalities no β gave a "
                     "k-sparse NSPCA answer (its sparsity is not a count)."))
        except Exception as exc:  # noqa: BLE001
            rep.error("seed 003 Fig. 3", exc)
    ml = data.get("mll")
    if ml is not None and ml.labels is not None:
        try:
            _progress("seed 003 Fig. 4")
            from sklearn.cluster import KMeans

            ks = [10, 50, 200] if quick else [5, 10, 20, 50, 100, 200, 500, 1000]
            ks = [k for k in ks if k <= ml.X.shape[1]]
            rng = np.random.default_rng(0)
            recs = []
            for k in ks:
                row = {"genes": k}
                for method in ("em", "auto"):
                    x = fit(ml.X, k=k, method=method, random_state=0, certify=False).x
                    sel = np.flatnonzero(x)
                    km = KMeans(3, n_init=10, random_state=0).fit(ml.X[:, sel])
                    row[f"Jaccard ({method})"] = _pair_jaccard(km.labels_, ml.labels)
                rand = [_pair_jaccard(KMeans(3, n_init=10, random_state=0).fit(
                    ml.X[:, rng.choice(ml.X.shape[1], k, replace=False)]).labels_, ml.labels)
                    for _ in range(3 if quick else 10)]
                row["Jaccard (random genes, mean)"] = float(np.mean(rand))
                recs.append(row)
            df = pd.DataFrame(recs)
            rep.p(f"Fig. 4 — Jaccard score (pair counting) of k-means (3 clusters) on the selected genes "
                  f"against the ALL/AML/MLL labels, {ml.note}.")
            colors = [P.method_color("em"), P.method_color("auto"), P.GREY]
            rep.image(P.line_chart([P.Series(df["genes"], df[c], c, color=col, markers=True)
                                    for c, col in zip(df.columns[1:], colors)],
                                   title="MLL: k-means on selected genes", xlabel="selected genes",
                                   ylabel="Jaccard score"), "s003_fig4", "Seed 003 Fig. 4")
            rep.table(df, "s003_fig4")
        except Exception as exc:  # noqa: BLE001
            rep.error("seed 003 Fig. 4", exc)


# ---------------------------------------------------------------- seed 004 --
def seed004(rep: Report, data: dict, quick: bool, standin: bool = False):
    from nspca_core import components

    rep.h("Seed 004 — Asteris, Kyrillidis, Papailiopoulos & Dimakis, 2015 (bipartite matchings)")
    r, s = (3, 10) if quick else (5, 40)
    recs = []
    for name in ("cbcl", "mll"):
        ds = data.get(name)
        if ds is None:
            continue
        try:
            _progress(f"seed 004 Table 1 ({name})")
            row = {"dataset": name}
            total = float(np.einsum("ij,ij->", ds.X, ds.X) / ds.X.shape[0])
            for label, method, strategy in (("TPower", "tpower", "deflation-project"),
                                            ("EM", "em", "deflation-project"),
                                            ("SpanSPCA", "enet", "deflation-project"),
                                            ("SPCABiPart", "auto", "bipartite")):
                res = components(ds.X, n_components=r, k=s, method=method, strategy=strategy, d=3,
                                 eps=0.1, random_state=0, certify=False)
                row[label] = res.total_variance
            row["trace(A)"] = total
            recs.append(row)
        except Exception as exc:  # noqa: BLE001
            rep.error(f"seed 004 Table 1 ({name})", exc)
    if recs:
        rep.p(f"Table 1 — total variance Σ xⱼᵀAxⱼ of {r} components, {s}-sparse each, on centered data "
              "(our preprocessing; the paper's normalization is not stated, so compare the ordering, not "
              f"the scale). Paper, CBCL: {PAPER['table1_004']['cbcl']}.")
        t1 = pd.DataFrame(recs)
        rep.table(t1, "s004_table1")
        methods4 = ["TPower", "EM", "SpanSPCA", "SPCABiPart"]
        for _, row in t1.iterrows():
            order = sorted(methods4, key=lambda m: row[m])
            best = order[-1]
            rep.p(f"Difference ({row['dataset']}): our ordering, lowest to highest, is "
                  f"{' < '.join(order)}; the paper's is TPower < EM < SpanSPCA < SPCABiPart. "
                  + ("The joint method wins, as in the paper." if best == "SPCABiPart" else
                     f"{best} wins here: the deflation totals count Σ xⱼᵀAxⱼ on the original A, which "
                     "rewards overlapping (non-disjoint) supports that the joint method excludes."))
    ml = data.get("mll")
    if ml is not None:
        try:
            _progress("seed 004 Fig. 2")
            s2 = 50
            ks = [2, 4] if quick else list(range(2, 9))
            recs = []
            for kcomp in ks:
                row = {"components": kcomp}
                for label, method, strategy in (("deflation (ε-net)", "enet", "deflation-project"),
                                                ("bipartite", "auto", "bipartite")):
                    res = components(ml.X, n_components=kcomp, k=min(s2, ml.X.shape[1] // kcomp),
                                     method=method, strategy=strategy, random_state=0, certify=False)
                    row[label] = res.total_variance
                recs.append(row)
            df = pd.DataFrame(recs)
            rep.p(f"Fig. 2 — total variance of k components, each {s2}-sparse, {ml.note}.")
            colors = [P.method_color("enet"), P.method_color("bipartite")]
            rep.image(P.line_chart([P.Series(df["components"], df[c], c, color=col, markers=True)
                                    for c, col in zip(df.columns[1:], colors)],
                                   title="MLL: total variance vs components",
                                   xlabel="components", ylabel="total variance"), "s004_fig2",
                      "Seed 004 Fig. 2")
            rep.table(df, "s004_fig2")
        except Exception as exc:  # noqa: BLE001
            rep.error("seed 004 Fig. 2", exc)
    _bag_of_words_tables(rep, quick, standin)


def _bag_of_words_tables(rep: Report, quick: bool, standin: bool):
    """Table 2 (and, on the full grid, Table 3) of the bipartite paper on the UCI corpora or their
    synthetic stand-ins (tools.bipartite_tables)."""
    from tools.bipartite_tables import N_COMPONENTS, RANK, S_TABLE2, table2, table3

    names = ("kos",) if quick else ("nips", "kos", "enron", "nytimes")
    try:
        _progress("seed 004 Table 2 (" + ", ".join(names) + ")")
        t2 = table2(names, scale=0.25 if quick else None, standin=standin, log=_progress)
        rep.p(f"Table 2 — total variance of {N_COMPONENTS} components, s = {S_TABLE2} nonzeros each, "
              f"rank-{RANK} sketch, centered raw counts: deflation with TPower, EM and the spannogram "
              "against the joint bipartite method, beside the paper's printed numbers. On a synthetic "
              "stand-in only the ordering and the joint method's gain compare, not the scale.")
        rep.table(t2.drop(columns=["nnz"]), "s004_table2")
    except Exception as exc:  # noqa: BLE001
        rep.error("seed 004 Table 2", exc)
        return
    if quick:
        return
    try:
        _progress("seed 004 Table 3 (nytimes)")
        t3 = table3(standin=standin, log=_progress)
        rep.p(f"Table 3 — the s = 10 words of {N_COMPONENTS} components on NYTimes ({t3.attrs['data']}).")
        rep.table(t3, "s004_table3")
    except Exception as exc:  # noqa: BLE001
        rep.error("seed 004 Table 3", exc)


# ---------------------------------------------------------------- seed 001 --
def seed001(rep: Report, quick: bool):
    from nspca_core.scores import compare as sc

    rep.h("Seed 001 — Bajorski, Hall & Rubinstein (nonnegative-score PCA)")
    try:
        _progress("seed 001 Tables 1–2")
        n = 300 if quick else 1000
        # quick: EM with quasi-orthogonality (the slowest row, ~100 s per case) is left out
        methods = tuple(m for m in sc.METHODS if not (quick and m == "em"))
        tables = sc.reproduce_tables(n=n, seed=0, methods=methods)
        rep.p(f"Tables 1–2 — D_diff and W_diff after the best permutation, p = 10, n = {n}, Beta(2,4) "
              f"sources{' (quick run: EM row left out)' if quick else ''}. Paper, D_diff: NSPCA "
              f"{PAPER['table1_001_D']['NSPCA']}, PCA {PAPER['table1_001_D']['PCA']}. The paper's "
              "mixing matrices are not restated, so ours are constructed to match the first NSPC "
              "variance shares (96%, 77%, 57%; see `nspca_core.scores.compare.simulate_case`).")
        rep.table(tables, "s001_tables")
        for case in sorted(tables["case"].unique()):
            t = tables[tables["case"] == case].set_index("method")
            parts = []
            for m, label in (("nspca", "NSPCA"), ("pca", "PCA")):
                if m in t.index and np.isfinite(t.loc[m, "paper_D_diff"]):
                    parts.append(f"{label} D_diff {t.loc[m, 'D_diff']:.3f} vs the paper's "
                                 f"{t.loc[m, 'paper_D_diff']:.3f}")
            better = ("nspca" in t.index and "pca" in t.index
                      and t.loc["nspca", "D_diff"] < t.loc["pca", "D_diff"])
            rep.p(f"Difference (Case {case}): " + "; ".join(parts) + ". The paper's mixing matrices are "
                  "not restated, so ours differ and so do the absolute errors; "
                  + ("NSPCA beats PCA, as in the paper." if better else "NSPCA does not beat PCA here."))
    except Exception as exc:  # noqa: BLE001
        rep.error("seed 001 Tables 1–2", exc)
    try:
        _progress("seed 001 Fig. 7")
        ns = (100, 1000) if quick else (100, 1000, 10000)
        rate = sc.rate_study(ns=ns, reps=10 if quick else 100, seed=0)
        rep.p(f"Fig. 7 — 95th percentile of ‖ÂU−A‖/‖A‖ (p = 3, c = 1). Paper: ≈ {PAPER['rate_001']}.")
        rep.table(rate, "s001_fig7")
        for _, row in rate.iterrows():
            paper = PAPER["rate_001"].get(int(row["n"]))
            if paper is not None:
                rep.p(f"Difference (n = {int(row['n'])}): 95th percentile {row['p95']:.3f} here vs about "
                      f"{paper:.2f} read off the paper's Fig. 7 (our A is a fixed well-conditioned 3×3 "
                      f"matrix; {int(row['reps'])} repetitions).")
    except Exception as exc:  # noqa: BLE001
        rep.error("seed 001 Fig. 7", exc)


def _benchmarks(rep: Report, res: Path):
    rep.h("Benchmarks (latest `make bench` output)")
    files = sorted(res.glob("*.txt")) if res.exists() else []
    if not files:
        rep.p("No benchmark output found; run `make bench`.")
    for f in files:
        rep.lines += [f"### {f.stem}", "", "```", f.read_text().rstrip(), "```", ""]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tools.reproduce", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="reduced grid (under 3 minutes)")
    ap.add_argument("--out", default="reproduction",
                    help="folder for CSV/PNG and REPRODUCTION.md (created if missing; default: reproduction)")
    ap.add_argument("--report", default=None,
                    help="also write the report here, its links pointing into --out (make reproduce: "
                         "REPRODUCTION.md)")
    ap.add_argument("--benchmarks", default=str(ROOT / "benchmarks" / "results"),
                    help="folder of the `make bench` outputs quoted at the end (default: benchmarks/results)")
    ap.add_argument("--standin", action="store_true", help="use synthetic stand-ins for every dataset")
    ap.add_argument("--skip", default="", help="comma-separated sections to skip: 001,002,003,004")
    return ap


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rep = Report(out)
    start = time.perf_counter()
    skip = set(filter(None, args.skip.split(",")))
    data = {name: _load(name, quick=args.quick, standin=args.standin) for name in ("cbcl", "mll", "lrs")}
    rep.lines += ["# Reproduction report", "",
                  f"Generated by `python -m tools.reproduce{' --quick' if args.quick else ''}"
                  f"{' --standin' if args.standin else ''}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
                  f"Machine: {platform.platform()}, Python {platform.python_version()}, "
                  f"{os.cpu_count()} CPUs, numpy {np.__version__}.", "",
                  "Data: " + "; ".join(d.note if d else f"{n}: absent" for n, d in data.items()) + ".", ""]
    if "002" not in skip:
        seed002(rep, data, args.quick)
    if "003" not in skip:
        seed003(rep, data, args.quick)
    if "004" not in skip:
        seed004(rep, data, args.quick, args.standin)
    if "001" not in skip:
        seed001(rep, args.quick)
    _benchmarks(rep, Path(args.benchmarks))
    rep.p(f"Total time: {time.perf_counter() - start:.1f} s.")
    rep.write(out / "REPRODUCTION.md")
    if args.report:
        rep.write(Path(args.report))
    _progress(f"wrote {out / 'REPRODUCTION.md'}" + (f" and {args.report}" if args.report else "")
              + (f" with {len(rep.errors)} failed section(s)" if rep.errors else ""))
    return 1 if rep.errors else 0


if __name__ == "__main__":
    sys.exit(main())
