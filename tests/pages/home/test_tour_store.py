"""The guided tour's certificate reads and feeds the store of proved bounds (issue 28, item 4): it is
keyed by the dataset's job data key (the one of every analysis page), so a bound proved on another page
serves in the tour, and the tour's own bound serves the other pages.  AppTest of pages/home.py on the
digits (no CBCL copy), with the real certificate."""

from __future__ import annotations

import numpy as np
import pytest

from nspca_core import certify
from tests.conftest import page_app
from ui import bounds_store, compute, jobs, live
from ui import compute_teach as ct

TIMEOUT = 300


@pytest.fixture()
def digits_tour(monkeypatch, tmp_path):
    """The tour on the digits (no local CBCL copy), with no jobs and an empty store."""
    monkeypatch.setenv("NSPCA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("NSPCA_CACHE_DIR", str(tmp_path))
    jobs.REGISTRY.clear()
    bounds_store.shared.clear()
    X = np.asarray(compute.load_dataset("digits", "center", 0).X, float)
    k = max(2, X.shape[1] // 4)  # the tour's k for the digits
    pic = ct.dense_vs_sparse(X, k)
    dkey = live.data_key(compute.load_dataset("digits", "center", 0))
    yield X, k, pic, bounds_store.data_key(dkey)
    jobs.REGISTRY.clear()
    bounds_store.shared.clear()


def _certified() -> float:
    """Open the tour, press its certificate button, wait: the certified fraction it shows."""
    at = page_app("home.py", timeout=TIMEOUT).run()
    assert not at.exception, [e.message for e in at.exception]
    at.button(key="home_certify").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert jobs.REGISTRY.wait(TIMEOUT)
    at.run()
    assert not at.exception
    done = [m.value for m in at.markdown if m.value.startswith("Certified: at least")]
    assert done, "the certificate result is shown"
    return float(done[0].split("**")[1].rstrip("%")) / 100


def test_the_tours_data_key_is_the_analysis_pages_one(digits_tour):
    X, k, pic, data = digits_tour
    assert data is not None and data.preprocessing == "center"
    assert ct.load("digits", "center", 0)["dkey"] == live.data_key(compute.load_dataset("digits", "center", 0))


def test_the_tours_certificate_feeds_the_store(digits_tour):
    X, k, pic, data = digits_tour
    store = bounds_store.shared()
    assert store.get(data, k) is None
    ratio = _certified()
    kept = store.get(data, k)
    assert kept is not None and "fast" in kept.efforts
    expected = certify(X, k=k, x=pic["sparse"], effort="fast")  # the tour's certificate, computed here
    assert kept.upper == pytest.approx(expected.upper_bound, rel=1e-9)
    assert kept.lower == pytest.approx(pic["variance"], rel=1e-9)
    assert ratio == pytest.approx(pic["variance"] / expected.upper_bound, abs=6e-4)  # shown to 0.1%


def test_a_bound_proved_elsewhere_serves_in_the_tour(digits_tour):
    X, k, pic, data = digits_tour
    store = bounds_store.shared()
    # another page proved a tighter bound at a larger k (a bound on OPT at k + 3 bounds OPT at k)
    full = certify(X, k=k + 3, effort="full")
    fast = certify(X, k=k, x=pic["sparse"], effort="fast")
    assert full.upper_bound < fast.upper_bound  # (else this test shows nothing)
    store.offer(data, k + 3, upper=full.upper_bound, kind=full.kind, effort="full")
    ratio = _certified()
    assert ratio == pytest.approx(pic["variance"] / full.upper_bound, abs=6e-4)
    assert ratio > pic["variance"] / fast.upper_bound + 1e-3
