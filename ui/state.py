"""Session-state keys and the settings every page shares.

``app.py`` draws the shared sidebar (dataset, preprocessing, k, d, eps, seed)
and stores the choices under the keys below; a page reads them with
:func:`settings`, which falls back to the defaults so that every page also
runs on its own (``AppTest.from_file("pages/x.py")``).

The values live under these *permanent* keys, not under the widgets' own keys:
Streamlit deletes the state of a widget that is not drawn in a run, and the
sidebar widgets (``ui/sidebar.py``) copy their value here on every run, so a
choice survives page switches and pages that draw no sidebar.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from nspca_core.datasets import PREPROCESSING as PREPROCESSING_CHOICES

DATASET = "nspca_dataset"
PREPROCESSING = "nspca_preprocessing"
K = "nspca_k"
D = "nspca_d"
EPS = "nspca_eps"
SEED = "nspca_seed"
UPLOAD = "nspca_upload"  # the parsed user dataset (nspca_core.io result), if any

# Name under which an uploaded dataset appears in the dataset choice
# (``settings().dataset == UPLOAD_NAME`` means: use ``st.session_state[UPLOAD]``).
UPLOAD_NAME = "your-data"

# Teaching pages: the support / small factor chosen on the d = 2 spannogram page,
# read by the feasible-arc page ((P_2) for that support).
TEACH_V = "nspca_teach_V"              # ndarray (n, 2) of the spannogram page
TEACH_SUPPORT = "nspca_teach_support"  # tuple[int, ...] chosen there
TEACH_V3 = "nspca_teach_V3"            # ndarray (n, 3) of the d = 3 spannogram page
TEACH_SUPPORT3 = "nspca_teach_support3"  # its optimal support (the sphere view of (P_3))

DEFAULTS = {
    DATASET: "digits",
    PREPROCESSING: "center",
    K: 10,
    D: 2,
    EPS: 0.1,
    SEED: 0,
}

# Preprocessing choices of the sidebar -> steps for nspca_core.preprocess /
# load_dataset(preprocessing=...), and their labels: the core's registry (nspca_core.datasets.PREPROCESSING)
PREPROCESSING_STEPS = {name: spec.steps for name, spec in PREPROCESSING_CHOICES.items()}
PREPROCESSING_LABELS = {name: spec.label for name, spec in PREPROCESSING_CHOICES.items()}


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


def preprocessing_steps(name: str) -> tuple[str, ...]:
    """Steps of a sidebar preprocessing choice (unknown names: center only)."""
    return PREPROCESSING_STEPS.get(name, ("center",))


def steps_of(preprocessing) -> tuple[str, ...]:
    """The steps of a sidebar choice (a name: :func:`preprocessing_steps`) or of steps given as such."""
    if isinstance(preprocessing, str):
        return preprocessing_steps(preprocessing)
    return tuple(preprocessing)
