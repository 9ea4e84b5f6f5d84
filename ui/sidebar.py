"""The sidebar every page shares, and the two-line page header.

``app.py`` calls :func:`draw_sidebar` on every run, before the page.  Each
widget has its own key (``"_w" + permanent key``); its value is copied to the
permanent key of :mod:`ui.state` by an ``on_change`` callback, and the widget is
re-seeded from the permanent key whenever the two differ.  So the permanent key
is the single source of truth: it survives page switches (Streamlit drops the
state of widgets that are not drawn) and a page may set it too.
"""

from __future__ import annotations

import streamlit as st

from ui import state, streamlit_runtime, topics

# Shown when the dataset registry cannot be imported (keeps the app up).
_FALLBACK = {"digits": ("Handwritten digits (8×8, scikit-learn)", (1797, 64), "embedded")}

D_CHOICES = (1, 2, 3, 4, 5)
EPS_CHOICES = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


def _wkey(key: str) -> str:
    return "_w" + key


def _copy(key: str) -> None:
    st.session_state[key] = st.session_state[_wkey(key)]


def _seed_widget(key: str, options=None) -> dict:
    """Make the widget show the permanent value; return kwargs for the widget.

    When the widget already shows it, its *default* is that value too (``value=``, or ``index=`` into
    ``options``): Streamlit's default for a number box is 0 and for a select slider its first choice,
    and a browser that re-creates the sidebar's widgets while a rerun races (the dataset switched, a
    fragment redrawing) sends the defaults back as if typed — "got 0 … Keeping k = 10", d and ε at
    their minimums (issue 41).  In the run that writes the widget's state (a page or a preset changed
    the permanent key) no default is given: the written value rules, without Streamlit's warning about
    a widget with a default value also set through the Session State API."""
    wk = _wkey(key)
    kw = dict(key=wk, on_change=_copy, args=(key,))
    value = st.session_state[key]
    if st.session_state.get(wk, object()) != value:
        st.session_state[wk] = value
    elif options is None:
        kw["value"] = value
    elif value in options:
        kw["index"] = list(options).index(value)
    return kw


@st.cache_data(show_spinner=False, ttl=300)
def dataset_choices() -> dict[str, tuple[str, tuple | None, str]]:
    """Registry entries the sidebar offers: name -> (label, shape, kind).

    Real datasets are listed always; their label says whether a local copy
    was found or the first use will download it.
    """
    try:
        from nspca_core.datasets import is_available, list_datasets
        infos = list_datasets()
    except Exception:  # registry not importable: offer the embedded default only
        return dict(_FALLBACK)
    out = {}
    for info in infos:
        label = info.title
        if info.kind == "real":
            try:
                local = is_available(info.name)
            except Exception:
                local = False
            label += " — local copy" if local else " — downloads on first use"
        elif info.kind == "synthetic":
            label += " — synthetic, ground truth"
        shape = tuple(info.shape) if info.shape is not None else None
        out[info.name] = (label, shape, info.kind)
    return out


def n_features(name: str | None = None) -> int | None:
    """Number of features of a dataset choice (None when unknown)."""
    name = name or st.session_state.get(state.DATASET, state.DEFAULTS[state.DATASET])
    if name == state.UPLOAD_NAME:
        up = st.session_state.get(state.UPLOAD)
        X = getattr(up, "X", None)
        return int(X.shape[1]) if X is not None else None
    entry = dataset_choices().get(name)
    if entry is None or entry[1] is None or len(entry[1]) < 2:
        return None
    return int(entry[1][1])


K_ERROR = "nspca_k_error"  # why the last typed k was refused (shown under the box)


def _shown(raw) -> str:
    """A typed number as typed (100000, not 100000.0); an empty box as "nothing"."""
    if raw is None:
        return "nothing"
    return f"{raw:g}" if isinstance(raw, float) else str(raw)


def _copy_k(kmax: int) -> None:
    """Accept a typed k only in 1..kmax; otherwise keep the last valid k and say what is allowed."""
    raw = st.session_state[_wkey(state.K)]
    if raw is None or raw != int(raw) or not 1 <= int(raw) <= kmax:
        # said on the page where it was typed (tagged with that page on the next run), not on
        # every page visited afterwards (issue 27, item 5); the box shows the k in use again
        # (_seed_widget re-seeds it from the permanent key)
        st.session_state[K_ERROR] = (f"k must be a whole number from 1 to {kmax} (the number of "
                                     f"features); got {_shown(raw)}. Keeping k = {st.session_state[state.K]}, "
                                     "the value in the box.", None)
        return
    st.session_state[state.K] = int(raw)
    st.session_state.pop(K_ERROR, None)


def n_samples(name: str | None = None) -> int | None:
    """Number of samples of a dataset choice (the upload's rows for "your data"; None when unknown)."""
    name = name or st.session_state.get(state.DATASET, state.DEFAULTS[state.DATASET])
    if name == state.UPLOAD_NAME:
        X = getattr(st.session_state.get(state.UPLOAD), "X", None)
        return int(X.shape[0]) if X is not None else None
    entry = dataset_choices().get(name)
    if entry is None or entry[1] is None or len(entry[1]) < 2:
        return None
    return int(entry[1][0])


def _k_error(page: str | None) -> str | None:
    """The message about a refused k, once: on the page where it was typed, until another page
    is opened (then it is dropped)."""
    err = st.session_state.get(K_ERROR)
    if not err:
        return None
    msg, where = err if isinstance(err, tuple) else (err, None)
    if where is None:  # the first run after the refusal: this is the page it belongs to
        st.session_state[K_ERROR] = (msg, page or "")
        return msg
    if where == (page or ""):
        return msg
    st.session_state.pop(K_ERROR, None)
    return None


def draw_sidebar(page: str | None = None) -> state.Settings:
    """Draw the shared controls and return the current settings.

    ``page`` names the page being shown (``app.py`` passes its URL path): a message about a
    refused k is shown on that page only."""
    state.ensure_defaults()
    from ui import presets  # a preset link (?preset=...) applies before the widgets are drawn

    presets.consume_query()
    ss = st.session_state
    choices = dataset_choices()
    options = list(choices)
    if ss.get(state.UPLOAD) is not None:
        options.append(state.UPLOAD_NAME)
    if ss[state.DATASET] not in options:  # e.g. the upload was cleared
        ss[state.DATASET] = options[0] if "digits" not in options else "digits"

    def label(name: str) -> str:
        if name == state.UPLOAD_NAME:
            src = getattr(ss.get(state.UPLOAD), "source_name", "") or "uploaded"
            return f"Your data ({src})"
        return choices[name][0]

    with st.sidebar:
        st.header("Data")
        st.selectbox("Dataset", options, format_func=label,
                     help="Digits need no download. Real datasets use a local copy in "
                          "NSPCA_DATA_DIR when present.", **_seed_widget(state.DATASET, options))
        n = n_features()
        m = n_samples()
        if n is not None:
            up = ss.get(state.UPLOAD) if ss[state.DATASET] == state.UPLOAD_NAME else None
            rows, cols = ("samples", "features") if up is None else topics.row_col_words(
                getattr(up, "X", None), getattr(up, "notes", None) or [])
            st.caption(f"{m} {rows} × {n} {cols}" if m is not None else f"{n} {cols}")
        st.selectbox("Preprocessing", list(state.PREPROCESSING_STEPS),
                     format_func=lambda p: state.PREPROCESSING_LABELS[p],
                     **_seed_widget(state.PREPROCESSING, list(state.PREPROCESSING_STEPS)))

        st.header("Problem")
        kmax = n if n is not None else 10_000
        if ss[state.K] > kmax:  # the new dataset has fewer features
            ss[state.K] = kmax
        # no min/max on the widget: an out-of-range value is refused with a message and the
        # last valid k shown again (Streamlit would only turn the box red and keep computing)
        kw = _seed_widget(state.K)
        kw.update(on_change=_copy_k, args=(kmax,))
        st.number_input("k — nonzeros allowed", step=1,
                        help=f"Sparsity: the component may use at most k features (1 to {kmax}).", **kw)
        if (msg := _k_error(page)) is not None:
            st.error(msg)
        if ss[state.D] not in D_CHOICES:
            ss[state.D] = 2
        st.select_slider("d — rank of the approximation", D_CHOICES,
                         help="The spannogram works on the top-d eigenvectors; "
                              "exact for d ≤ 3, ε-net beyond.", **_seed_widget(state.D))
        if ss[state.EPS] not in EPS_CHOICES:
            ss[state.EPS] = min(EPS_CHOICES, key=lambda e: abs(e - ss[state.EPS]))
        st.select_slider("ε — accuracy of the ε-net", EPS_CHOICES,
                         help="Smaller ε: more samples, answer within (1−ε) of OPT_d.",
                         **_seed_widget(state.EPS))
        st.number_input("Random seed", min_value=0, max_value=2**31 - 1, step=1,
                        help="Seeds the ε-net's random directions and the restarts of the other "
                             "algorithms: the same seed gives the same answer.",
                        **_seed_widget(state.SEED))
        presets.draw()  # "As in the paper" links (ui/presets.py)
    return state.settings()


def route_through_app() -> None:
    """Run ``app.py`` (navigation, shared sidebar) around a page opened by a deep link on a
    fresh server.

    Streamlit decides once per server whether the app uses the legacy ``pages/`` folder: it does
    while a ``pages/`` folder sits next to the entry script and no session has called
    ``st.navigation`` yet.  Until then a deep link (``/variance_vs_k`` as the first visit) runs
    ``pages/variance_vs_k.py`` on its own under Streamlit's automatic list of the folder's
    files, without ``app.py`` (issue 27, item 9).  A page that finds itself run that way
    switches the legacy mode off (what ``st.navigation`` itself does, for every session) and
    reruns: the rerun executes ``app.py``, whose ``st.navigation`` resolves the same address
    (the page's URL path is the same in both modes) to the app's page.
    """
    if streamlit_runtime.legacy_pages_mode() and not st.session_state.get(THROUGH_APP):
        streamlit_runtime.leave_legacy_pages_mode()
        st.rerun()


#: session-state key app.py sets before it runs a page: the page already runs inside the app
#: (Streamlit's test harness resets the legacy flag on every run, so the flag alone is not enough)
THROUGH_APP = "_through_app"


def mark_through_app() -> None:
    """Called by ``app.py`` before ``page.run()``."""
    st.session_state[THROUGH_APP] = True


def page_intro(title: str, what: str, source: str) -> None:
    """The title and the two opening lines of a page: what it shows, where from.

    First, a page run without ``app.py`` (a deep link on a fresh server) is rerun through it
    (:func:`route_through_app`)."""
    route_through_app()
    st.title(title)
    st.markdown(f"**What it shows.** {what}  \n**From the paper.** {source}")


def link_page(path: str, label: str, icon: str | None = None) -> None:
    """``st.page_link`` to another page; plain text when the page is not
    registered (a page run on its own, without ``app.py``'s navigation)."""
    try:
        st.page_link(path, label=label, icon=icon)
    except Exception:  # StreamlitPageNotFoundError outside st.navigation
        st.markdown(f"→ *{label}* (open it from the navigation of the app)")


SOURCES = ("random example", "features of the current dataset", "type the rows")


def small_factor_input(d: int, key: str, *, n_default: int = 8, n_max: int = 30):
    """Widgets choosing a small n×d factor V for the teaching pages.

    Returns ``(V, labels, description)``.  V comes from a seeded random
    example, the top-d factor of a chosen subset of the current dataset's
    features (the ``max(n_max, 200)`` highest-variance ones are offered), or
    rows typed into a table.
    """
    import numpy as np
    import pandas as pd

    from ui import compute_teach as ct

    s = state.settings()
    source = st.radio("Where V comes from", SOURCES, horizontal=True, key=f"{key}_source")
    if source == SOURCES[1]:
        with st.spinner("Loading the dataset…"):
            ds = ct.current_dataset()
        X = ds["X"]
        names = ds["feature_names"]
        order = np.argsort(-X.var(axis=0), kind="stable")[: max(n_max, 200)]
        default = sorted(order[:n_default].tolist())
        chosen = st.multiselect(
            f"Features of {ds['title']} (highest-variance first; {4}–{n_max})",
            options=order.tolist(), default=default, max_selections=n_max,
            format_func=lambda j: f"{j}: {names[j]}", key=f"{key}_features")
        if len(chosen) < max(4, d):
            st.warning(f"Choose at least {max(4, d)} features; using the default selection.")
            chosen = default
        feats = tuple(sorted(int(j) for j in chosen))
        V, _ = ct.subset_factor(X, feats, d)
        return V, [f"{names[j]}" for j in feats], (
            f"top-{d} factor of {len(feats)} features of {ds['title']}")
    if source == SOURCES[2]:
        cols = [f"V_i{j + 1}" for j in range(d)]
        base = pd.DataFrame(np.round(ct.small_V(6, d, s.seed), 2), columns=cols)
        df = st.data_editor(base, num_rows="dynamic", key=f"{key}_rows_d{d}", width="content")
        V = df.apply(pd.to_numeric, errors="coerce").dropna().to_numpy(dtype=float)
        if V.shape[0] < max(2, d):
            st.warning(f"Type at least {max(2, d)} complete rows; using the example rows.")
            V = base.to_numpy(dtype=float)
        V = V[:n_max]
        return V, [f"row {i}" for i in range(V.shape[0])], f"{V.shape[0]} typed rows"
    n = st.slider("n — rows of V", 4, n_max, n_default, key=f"{key}_n")
    V = ct.small_V(n, d, s.seed)
    return V, [f"row {i}" for i in range(n)], f"random {n}×{d} example (seed {s.seed})"
