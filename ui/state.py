"""Session-state keys and the settings every page shares.

``app.py`` draws the shared sidebar (dataset, preprocessing, k, d, eps, seed)
and stores the choices under the keys below; a page reads them with
:func:`settings`, which falls back to the defaults so that every page also
runs on its own (``AppTest.from_file("pages/x.py")``).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

DATASET = "nspca_dataset"
PREPROCESSING = "nspca_preprocessing"
K = "nspca_k"
D = "nspca_d"
EPS = "nspca_eps"
SEED = "nspca_seed"
UPLOAD = "nspca_upload"  # the parsed user dataset (nspca_core.io result), if any

DEFAULTS = {
    DATASET: "digits",
    PREPROCESSING: "center",
    K: 10,
    D: 2,
    EPS: 0.1,
    SEED: 0,
}


@dataclass(frozen=True)
class Settings:
    dataset: str
    preprocessing: str
    k: int
    d: int
    eps: float
    seed: int


def ensure_defaults() -> None:
    """Put every default into ``st.session_state`` that is not there yet."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


def settings() -> Settings:
    """The shared settings, from session state or the defaults."""
    ensure_defaults()
    s = st.session_state
    return Settings(dataset=s[DATASET], preprocessing=s[PREPROCESSING], k=int(s[K]),
                    d=int(s[D]), eps=float(s[EPS]), seed=int(s[SEED]))
