""""As in the paper": one click sets the app to a figure or table of the papers.

Each :class:`Preset` is data: the page, the dataset, k, d, ε, the algorithms
and the number of components of a published figure, with its caption and the
matching figure of the reproduction report (``REPRODUCTION.md``, regenerated
by ``make reproduce``).  :func:`apply` writes a preset into a session-state
mapping — the sidebar's permanent keys (:mod:`ui.state`) and the page's own
widget keys.  :func:`draw` is the sidebar block: one link per preset (the
page, with ``?preset=<key>`` in its address), the active preset's caption
and the reproduction's figure; :func:`consume_query`, called by the sidebar
before its widgets, applies the preset of the address.

Papers are cited by authors and year:

- Asteris, Papailiopoulos & Dimakis, *Nonnegative Sparse PCA with Provable
  Guarantees*, ICML 2014 — Fig. 3 (CBCL components), Figs. 4–6 (variance vs k
  on CBCL, MLL, LRS).
- Asteris, Kyrillidis, Papailiopoulos & Dimakis, *Sparse PCA via Bipartite
  Matchings*, NIPS 2015 — Table 1 (5 components, s = 40, rank-4 sketch).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from nspca_core.methods import BIPARTITE, PROJECT
from ui import state

__all__ = ["Preset", "PRESETS", "ACTIVE", "QUERY", "by_key", "apply", "matches", "active",
           "reproduction_image", "consume_query", "draw"]

ROOT = Path(__file__).resolve().parents[1]
ACTIVE = "nspca_preset"              # key of the preset applied last
UNKNOWN = "nspca_preset_unknown"     # a preset named in the address that does not exist
QUERY = "preset"                     # the address parameter of the preset links

AKD_2014 = "Asteris, Papailiopoulos & Dimakis (ICML 2014)"
AKPD_2015 = "Asteris, Kyrillidis, Papailiopoulos & Dimakis (NIPS 2015)"
AKD_2014_SHORT = "Asteris, Papailiopoulos & Dimakis 2014"
AKPD_2015_SHORT = "Asteris, Kyrillidis, Papailiopoulos & Dimakis 2015"


@dataclass(frozen=True)
class Preset:
    """The settings of one figure or table of a paper.

    Attributes
    ----------
    key : str
        Identifier (session state, widget keys).
    label : str
        Link text (short: the sidebar is narrow).
    paper : str
        "Authors year", the heading the link is listed under.
    source : str
        "Authors (venue year), Fig. N".
    caption : str
        What the figure shows, in the paper's terms.
    page : str
        The page that draws it (``pages/*.py``).
    dataset, preprocessing : str
        Sidebar choices (:mod:`ui.state`).
    k, d : int
    eps : float
    algorithms : tuple of str
        The methods shown (``nspca_core.api.METHODS`` names, or strategies on
        the several-components page).
    n_components : int or None
    widgets : mapping
        The page's widget keys and the values that select ``algorithms`` and
        ``n_components`` there.
    reproduction : str
        Where the matching figure is in ``REPRODUCTION.md``.
    image : str or None
        The reproduction's figure (path from the project root), or its CSV
        when the result is a table.
    """

    key: str
    label: str
    paper: str
    source: str
    caption: str
    page: str
    dataset: str
    k: int
    d: int
    eps: float
    algorithms: tuple
    n_components: int | None = None
    preprocessing: str = "center"
    widgets: Mapping = field(default_factory=dict)
    reproduction: str = ""
    image: str | None = None

    def settings(self) -> dict:
        """The sidebar's permanent keys and values of this preset."""
        return {state.DATASET: self.dataset, state.PREPROCESSING: self.preprocessing,
                state.K: self.k, state.D: self.d, state.EPS: self.eps}


def _variance_preset(fig: int, name: str, title: str, short: str, k: int, points: int,
                     guarantee: float, shape: str) -> Preset:
    return Preset(
        key=f"akd2014_fig{fig}", label=f"Fig. {fig} · {short} variance vs k", paper=AKD_2014_SHORT,
        source=f"{AKD_2014}, Fig. {fig}",
        caption=(f"Explained variance (÷ λ₁) of the nonnegative k-sparse component against k over "
                 f"the whole range of k, {title} ({shape}, features centered): the ε-net "
                 f"spannogram (d = 3, ε = 0.1) beside EM (Sigg & Buhmann 2008), with the paper's "
                 f"upper bound OPT₃/(1−ε) + λ₄ — and our certified band. At k = {k} the paper's "
                 f"bound certifies ≥ {guarantee:.1%} of the optimum."),
        page="pages/variance_vs_k.py", dataset=name, k=k, d=3, eps=0.1, algorithms=("enet", "em"),
        widgets=MappingProxyType({"vk_methods": ["enet", "em"], "vk_points": points,
                                  "vk_band": True, "vk_paper": True}),
        reproduction=f"{AKD_2014}, Fig. {fig} ({title})",
        image=f"reproduction/s002_fig{fig}_{name}.png")


PRESETS: tuple[Preset, ...] = (
    Preset(
        key="akd2014_fig3", label="Fig. 3 · CBCL components", paper=AKD_2014_SHORT,
        source=f"{AKD_2014}, Fig. 3",
        caption=("The first six orthogonal nonnegative 40-sparse components of the CBCL faces "
                 "(2,429 images of 19 × 19 pixels, centered), found one after the other with the "
                 "pixels of earlier components removed: the ε-net spannogram (d = 3, ε = 0.1) "
                 "beside EM (Sigg & Buhmann 2008); the variance each explains under it. The paper: "
                 "the ε-net's components explain more variance than EM's."),
        page="pages/components_images.py", dataset="cbcl", k=40, d=3, eps=0.1,
        algorithms=("enet", "em"), n_components=6,
        widgets=MappingProxyType({"ci_methods": ["enet", "em"], "ci_r": 6}),
        reproduction=f"{AKD_2014}, Fig. 3", image="reproduction/s002_fig3_components.png"),
    _variance_preset(4, "cbcl", "CBCL faces", "CBCL", 180, 14, 0.58, "2,429 × 361"),
    _variance_preset(5, "mll", "MLL leukemia", "MLL", 50, 17, 0.446, "72 × 12,582"),
    _variance_preset(6, "lrs", "IRAS LRS spectra", "LRS", 20, 9, 0.86, "531 × 93"),
    Preset(
        key="akpd2015_table1", label="Table 1 · 5 components", paper=AKPD_2015_SHORT,
        source=f"{AKPD_2015}, Table 1",
        caption=("Total variance Σ xⱼᵀAxⱼ of 5 nonnegative components with 40 nonzeros each on the "
                 "CBCL faces (centered): the joint bipartite-matching method on a rank-4 sketch "
                 "(d = 4, ε = 0.1) against greedy projection deflation. The paper's table: TPower "
                 "5.06 < EM 5.18 < SpanSPCA 5.23 < bipartite 5.29 (its normalization is not stated: "
                 "compare the order). Deflation runs the ε-net spannogram (SpanSPCA); pick TPower or "
                 "EM as the solver for the table's other columns."),
        page="pages/several_components.py", dataset="cbcl", k=40, d=4, eps=0.1,
        algorithms=(PROJECT, BIPARTITE), n_components=5,
        widgets=MappingProxyType({"sc_r": 5, "sc_strategies": [PROJECT, BIPARTITE],
                                  "sc_method": "enet"}),
        reproduction=f"{AKPD_2015}, Table 1", image="reproduction/s004_table1.csv"),
)


def by_key(key: str) -> Preset:
    """The preset named ``key``.

    Raises
    ------
    KeyError
        With the known keys.
    """
    for p in PRESETS:
        if p.key == key:
            return p
    raise KeyError(f"no preset {key!r}; known: {', '.join(p.key for p in PRESETS)}")


def apply(preset: Preset, session: MutableMapping) -> None:
    """Write a preset into ``session`` (``st.session_state`` or a dict).

    Sets the sidebar's permanent keys, the page's widget keys (fresh lists, so
    a widget never shares the preset's data) and the active preset; clears a
    pending "invalid k" message.
    """
    for key, value in preset.settings().items():
        session[key] = value
    for key, value in preset.widgets.items():
        session[key] = list(value) if isinstance(value, list | tuple) else value
    session[ACTIVE] = preset.key
    session.pop("nspca_k_error", None)


def matches(preset: Preset, session: Mapping) -> bool:
    """Whether ``session`` still has every setting of ``preset`` (nothing changed since)."""
    wanted = {**preset.settings(), **preset.widgets}
    for key, value in wanted.items():
        have = session.get(key)
        if isinstance(value, list | tuple):
            if have is None or list(have) != list(value):
                return False
        elif have != value:
            return False
    return True


def active(session: Mapping) -> Preset | None:
    """The preset applied last, if any."""
    key = session.get(ACTIVE)
    try:
        return by_key(key) if key else None
    except KeyError:
        return None


def reproduction_image(preset: Preset) -> Path | None:
    """The reproduction's figure (or table CSV) of ``preset`` when the file exists."""
    if not preset.image:
        return None
    path = ROOT / preset.image
    return path if path.is_file() else None


# ----------------------------------------------------------------- the sidebar block
def _on_click(key: str) -> None:
    import streamlit as st

    apply(by_key(key), st.session_state)


def consume_query() -> None:
    """Apply the preset named in the address (``?preset=<key>``) once, then drop it.

    The preset links of :func:`draw` open their page with that parameter; the
    sidebar calls this *before* drawing its widgets, so the run that changes
    the settings is the run that draws them (a page switch in the middle of a
    run would leave the browser's widgets at the old values).
    """
    import streamlit as st

    key = st.query_params.get(QUERY)
    if not key:
        return
    del st.query_params[QUERY]
    try:
        apply(by_key(key), st.session_state)
    except KeyError:
        st.session_state[UNKNOWN] = key


def draw() -> None:
    """The "As in the paper" block of the sidebar: one link per preset, then the active one's caption."""
    import streamlit as st

    current = active(st.session_state)
    unchanged = current is not None and matches(current, st.session_state)
    with st.expander("As in the paper", expanded=unchanged, icon=":material/menu_book:"):
        st.caption("One click sets the dataset, k, d, ε, the algorithms and the number of "
                   "components to a figure or table of the papers, and opens its page.")
        if unknown := st.session_state.pop(UNKNOWN, None):
            st.warning(f"The address names no preset {unknown!r}; the presets are listed below.")
        for i, p in enumerate(PRESETS):
            if i == 0 or PRESETS[i - 1].paper != p.paper:
                st.caption(f"**{p.paper}**")
            label = ("✓ " if unchanged and p is current else "") + p.label
            try:  # a link: the page opens with ?preset=<key>, applied by consume_query()
                st.page_link(p.page, label=label, query_params={QUERY: p.key}, help=p.source,
                             width="stretch")
            except Exception:  # noqa: BLE001 - no navigation (a page run on its own): apply here
                st.button(label, key=f"preset_{p.key}", on_click=_on_click, args=(p.key,),
                          help=p.source, width="stretch")
        if current is None:
            return
        if unchanged:
            st.markdown(f"**{current.source}.** {current.caption}")
        else:
            st.caption(f"Settings changed since *{current.source}* was applied; click it again to "
                       "restore them.")
        _reproduction(current)


def _reproduction(preset: Preset) -> None:
    """The matching figure of the reproduction report, shown in place."""
    import pandas as pd
    import streamlit as st

    path = reproduction_image(preset)
    where = (f"Reproduce this figure: `make reproduce` writes `REPRODUCTION.md`, section "
             f"*{preset.reproduction}*")
    if path is None:
        st.caption(where + " (not generated in this copy yet).")
        return
    st.caption(where + ":")
    if path.suffix == ".png":
        st.image(str(path), width="stretch")
    else:
        st.dataframe(pd.read_csv(path), hide_index=True)
