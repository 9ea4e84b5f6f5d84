"""The one registry of methods: every consumer (api, app, figures, CLI, benchmarks) derives
its method lists, labels, colours and defaults from :data:`REGISTRY`.

Adding a method is one module (a function ``f(cov, k, *, seed=0, callback=None,
**options) -> Result``) and one :class:`MethodSpec` here; see CONTRIBUTING.md.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MethodSpec", "REGISTRY", "SINGLE", "JOINT", "PEERS", "PAPERS", "OKABE_ITO", "spec", "ordered",
           "defaults", "with_cost", "contrast_on_white"]

# Okabe & Ito (2008) colour-blind-safe palette, plus Paul Tol's "wine" and a neutral grey
OKABE_ITO = {"black": "#000000", "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73",
             "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7"}

#: papers by short key -> citation (authors, year, venue)
PAPERS = {
    "asteris2014": "Asteris, Papailiopoulos & Dimakis, Nonnegative Sparse PCA with Provable Guarantees, ICML 2014",
    "sigg2008": "Sigg & Buhmann, Expectation-Maximization for Sparse and Non-Negative PCA, ICML 2008",
    "asteris2015": "Asteris, Papailiopoulos, Kyrillidis & Dimakis, Sparse PCA via Bipartite Matchings, NIPS 2015",
    "bajorski2011": "Bajorski, Hall & Rubinstein, nonnegative-score principal components, 2011",
    "yuan2013": "Yuan & Zhang, Truncated Power Method for Sparse Eigenvalue Problems, JMLR 2013",
    "zass2006": "Zass & Shashua, Nonnegative Sparse PCA, NIPS 2006",
    "mairal2009": "Mairal et al., Online dictionary learning (scikit-learn SparsePCA), 2009",
    "lee1999": "Lee & Seung, Learning the parts of objects by NMF, Nature 1999",
}


@dataclass(frozen=True)
class MethodSpec:
    """What every consumer needs to know about a method.

    Attributes
    ----------
    name : str -- the ``method=`` / ``strategy=`` value
    label, short : str -- legend and tick names
    kind : str -- "single" (one component: ``fit(method=name)``), "joint" (several at once:
        ``components(strategy=name)``) or "reference" (dense PCA, drawn for comparison)
    paper : str -- key of :data:`PAPERS`
    color : str -- hex colour, the same on every page
    cost : str -- "fast", "slow" (tens of seconds on real data: offered, not preselected, run as a
        heavy background job in the app) or "exponential" (in d; the app estimates it and asks first)
    default : bool -- preselected on the pages that draw a few methods side by side (variance vs
        k, components as images; the first one is the default of a one-method choice)
    function : str -- "module:function" implementing it (lazy), or "" for the front's own
    symbol : str -- Plotly marker symbol, the same on every page
    dash : str -- Plotly line dash, the same on every page: with colour and marker, every method
        stays distinct beyond the eight colours a colour-blind-safe palette has
    deflation_baseline : bool -- one of the deflation baselines of Asteris et al. 2015, Table 2
        (:func:`nspca_core.peers.bipartite.deflation_components`)
    dask : str -- how it runs on Dask data (:class:`nspca_core.distributed.array.DaskCov`): "" not offered,
        "operator" (``function`` runs unchanged on the operator: products and its factor)
    """

    name: str
    label: str
    short: str
    kind: str
    paper: str
    color: str
    cost: str = "fast"
    default: bool = False
    function: str = ""
    symbol: str = "circle"
    dash: str = "solid"
    deflation_baseline: bool = False
    dask: str = ""


REGISTRY: dict[str, MethodSpec] = {s.name: s for s in (
    MethodSpec("auto", "auto (many starts, polished)", "auto", "single", "asteris2014",
               OKABE_ITO["black"], symbol="circle", dask="operator"),
    MethodSpec("spannogram", "spannogram (exact on A_d)", "spannogram", "single", "asteris2014",
               OKABE_ITO["blue"], cost="exponential", function="nspca_core.spannogram:lowrank_nspca",
               symbol="diamond", dash="dash", deflation_baseline=True, dask="operator"),
    # the light Okabe–Ito hues (sky, orange, yellow) darkened to >= 3:1 contrast on white
    MethodSpec("enet", "ε-net spannogram", "ε-net", "single", "asteris2014", "#2A8BC4",
               default=True, function="nspca_core.enet:enet_nspca", symbol="square", dash="dot",
               dask="operator"),
    MethodSpec("em", "EM (Sigg–Buhmann)", "EM", "single", "sigg2008", "#B86E00",
               default=True, function="nspca_core.peers.em:em_pca", symbol="triangle-up",
               deflation_baseline=True, dask="operator"),
    MethodSpec("tpower", "TPower (Yuan–Zhang)", "TPower", "single", "yuan2013", OKABE_ITO["green"],
               default=True, function="nspca_core.peers.tpower:tpower_pca", symbol="cross", dash="dashdot",
               deflation_baseline=True, dask="operator"),
    MethodSpec("zass", "Zass–Shashua", "Zass–Shashua", "single", "zass2006", OKABE_ITO["purple"],
               cost="slow", function="nspca_core.peers.zass:zass_pca", symbol="x", dash="longdash"),
    MethodSpec("sklearn-spca", "scikit-learn SparsePCA", "SparsePCA", "single", "mairal2009",
               OKABE_ITO["vermillion"], cost="slow", function="nspca_core.peers.sklearn_peers:sklearn_spca",
               symbol="star", dash="longdashdot"),
    MethodSpec("nmf", "NMF (scikit-learn)", "NMF", "single", "lee1999", "#857500", cost="slow",
               function="nspca_core.peers.sklearn_peers:nmf_pca", symbol="pentagon", dash="dash"),
    # Paul Tol's colour-blind-safe "wine"
    MethodSpec("bipartite", "bipartite matchings (joint)", "bipartite", "joint", "asteris2015", "#882255",
               default=True, function="nspca_core.peers.bipartite:bipartite_components", symbol="hexagon"),
    # a neutral grey: PCA is a reference, not a competitor
    MethodSpec("pca", "PCA (dense, signed)", "PCA", "reference", "", "#767676", default=True,
               symbol="circle-open", dash="dot"),
)}

#: single-component methods, in the order of ``fit(method=...)``
SINGLE = tuple(n for n, s in REGISTRY.items() if s.kind == "single")
#: methods that find several components jointly (``components(strategy=...)``)
JOINT = tuple(n for n, s in REGISTRY.items() if s.kind == "joint")
#: the single-component peers (methods of other papers)
PEERS = tuple(n for n in SINGLE if REGISTRY[n].paper != "asteris2014")


def spec(name: str) -> MethodSpec:
    """The :class:`MethodSpec` of ``name`` (KeyError names the known ones)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown method {name!r}; known: {', '.join(REGISTRY)}") from None


def ordered(kinds: tuple[str, ...] = ("single",)) -> tuple[str, ...]:
    """Names of the methods of the given kinds, in registry order (the display order)."""
    return tuple(n for n, s in REGISTRY.items() if s.kind in kinds)


def defaults(kinds: tuple[str, ...] = ("single",)) -> tuple[str, ...]:
    """The preselected methods (``default=True``) of the given kinds, in registry order."""
    return tuple(n for n in ordered(kinds) if REGISTRY[n].default)


def contrast_on_white(color: str) -> float:
    """WCAG 2 contrast ratio of ``#rrggbb`` against white (lines and markers need >= 3)."""
    rgb = [int(color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 1.05 / (0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] + 0.05)


def with_cost(*costs: str, kinds: tuple[str, ...] = ("single", "joint", "reference")) -> tuple[str, ...]:
    """The methods of the given kinds whose ``cost`` is one of ``costs``, in registry order."""
    return tuple(n for n in ordered(kinds) if REGISTRY[n].cost in costs)
