"""The analysis pages (4–9) under AppTest: on their own, per dataset kind, with interactions."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from tests.conftest import app_pages, page_app

from ui import compute, jobs, state

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
TIMEOUT = 120

# the analysis pages and Your data, as app.py lists them (a new one is run too); Features by class and
# Topics are run by their own modules (test_labelled.py, test_topics_page.py)
_OWN_MODULE = {"labelled.py", "topics.py"}
PAGES = [Path(path).name for section in ("Analyse", "Your data") for path, *_ in app_pages()[section]
         if Path(path).name not in _OWN_MODULE]


def _page(name: str, **session) -> AppTest:
    return page_app(name, timeout=TIMEOUT, **session)


def _ok(at: AppTest) -> AppTest:
    """No exception, no error box, and the two opening lines of the page."""
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    intro = at.markdown[0].value
    assert "What it shows" in intro and "From the paper" in intro
    return at


def _charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def _texts(elements) -> str:
    return " | ".join(str(e.value) for e in elements)


def _upload(X, *, labels=None, image_shape=None, name="mine.csv") -> compute.Upload:
    return compute.Upload(X=np.asarray(X, float), feature_names=[f"f{j}" for j in range(X.shape[1])],
                          labels=labels, image_shape=image_shape, notes=["test upload"], metadata=None,
                          source_name=name, options={}, token="")


def _planted_upload(m=60, n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    X[:, :3] += 3 * rng.standard_normal((m, 1))  # a planted 3-sparse direction
    return X


def _real(name: str) -> None:
    from nspca_core.datasets import is_available

    if not is_available(name):
        pytest.skip(f"{name} not found locally (NSPCA_DATA_DIR)")


def _settled(at: AppTest) -> AppTest:
    """Run, let the page's background jobs finish, run again (the final page)."""
    at.run()
    jobs.REGISTRY.wait(TIMEOUT)
    return at.run()


# small, fast widget choices used where the defaults would run every algorithm
FAST = {"vk_methods": ["enet"], "vk_points": 5, "cmp_methods": ["enet", "auto"],
        "ci_methods": ["enet", "pca"], "sc_strategies": ["deflation-remove", "deflation-project"]}


# ------------------------------------------------------------------ each page on its own
@pytest.mark.parametrize("page", PAGES)
def test_page_runs_on_its_own_with_defaults(page):
    at = _ok(_settled(_page(page)))
    if page != "your_data.py":
        assert _charts(at) >= 1
    else:
        assert at.file_uploader and "No data uploaded yet" in _texts(at.info)


# ------------------------------------------------------------------ variance vs k
def test_variance_vs_k_interactions():
    # 6 points on digits (n = 64), the sidebar's k = 8 among them
    at = _ok(_settled(_page("variance_vs_k.py", **{state.K: 8, "vk_points": 6})))
    assert _charts(at) == 1
    assert any(m.label == "best variance at k = 8" for m in at.metric)
    assert at.download_button  # CSV export
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any(t.get("name", "").startswith("certified upper bound") for t in spec["data"])
    assert "6 values of k" in _texts(at.caption)
    # moving k puts the new k on the axis (issue 20 item 4): its numbers, not a neighbour's
    at.session_state[state.K] = 20
    at = _ok(_settled(at))
    assert any(m.label == "best variance at k = 20" for m in at.metric)
    assert any(m.label == "certified fraction of the optimum" and m.value.startswith("≥")
               for m in at.metric)
    at.toggle(key="vk_paper").set_value(True)
    at = _ok(_settled(at))
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any("paper" in t.get("name", "") for t in spec["data"])
    assert "The paper's bound at k = 20" in _texts(at.caption)


@pytest.mark.parametrize("dataset", ["synthetic-planted", "synthetic-parts"])
def test_variance_vs_k_synthetic(dataset):
    at = _ok(_settled(_page("variance_vs_k.py", **{state.DATASET: dataset, state.K: 5}, **FAST)))
    assert _charts(at) == 1


def test_variance_vs_k_real_lrs():
    _real("lrs")
    at = _ok(_settled(_page("variance_vs_k.py", **{state.DATASET: "lrs", state.K: 20}, **FAST)))
    assert _charts(at) == 1 and any(m.label.startswith("best variance at k =") for m in at.metric)


def test_variance_vs_k_upload_and_missing_upload():
    X = _planted_upload()
    at = _ok(_settled(_page("variance_vs_k.py", **{state.DATASET: state.UPLOAD_NAME,
                                                   state.UPLOAD: _upload(X), state.K: 3}, **FAST)))
    assert _charts(at) == 1
    # "your data" selected but nothing uploaded: a clear message, no exception
    at = _page("variance_vs_k.py", **{state.DATASET: state.UPLOAD_NAME}).run()
    assert not at.exception and "nothing has been uploaded" in _texts(at.error)


# ------------------------------------------------------------------ components as images
def test_components_images_digits_grid_and_png():
    at = _ok(_page("components_images.py", **{state.K: 6, "ci_r": 2}, **FAST).run())
    assert _charts(at) == 2  # components + sample images
    assert at.download_button[0].label == "Download PNG"
    at.slider(key="ci_r").set_value(3)
    at = _ok(at.run())
    spec = at.get("plotly_chart")[0].proto.spec
    assert spec.count('"heatmap"') >= 6  # 2 methods x 3 components


def test_components_images_pca_row_says_reference_not_none():
    at = _ok(_page("components_images.py", **{state.K: 6, "ci_r": 2}, **FAST).run())
    table = at.dataframe[0].value
    pca = table[table["method"] == "PCA (dense, signed)"] if "PCA (dense, signed)" in set(table["method"]) \
        else table[table["method"].str.contains("PCA")]
    assert pca["seconds"].tolist() == ["— (reference)"]
    assert table["seconds"].notna().all()


def test_components_images_synthetic_parts_and_image_upload():
    _ok(_page("components_images.py", **{state.DATASET: "synthetic-parts", state.K: 8}, **FAST).run())
    rng = np.random.default_rng(0)
    X = rng.random((30, 16))
    at = _ok(_page("components_images.py", **{state.DATASET: state.UPLOAD_NAME,
                                               state.UPLOAD: _upload(X, image_shape=(4, 4)),
                                               state.K: 4, "ci_r": 2}, **FAST).run())
    assert _charts(at) == 2


def test_components_images_not_an_image_dataset():
    at = _ok(_page("components_images.py", **{state.DATASET: "synthetic-planted"}).run())
    assert "not an image dataset" in _texts(at.info) and _charts(at) == 0


def test_components_images_real_cbcl():
    _real("cbcl")
    at = _ok(_page("components_images.py", **{state.DATASET: "cbcl", state.K: 40, "ci_r": 2}, **FAST).run())
    assert _charts(at) == 2


# ------------------------------------------------------------------ compare
def test_compare_digits_labels_and_downloads():
    at = _ok(_settled(_page("compare.py", **{state.K: 5}, **FAST)))
    # ratio/variance bars, seconds, Jaccard, images, loadings, k-means check (digits are labelled)
    assert _charts(at) >= 5
    assert any("separate the classes" in h.value for h in at.subheader)
    assert len(at.dataframe) >= 1 and len(at.download_button) == 2
    at.session_state[state.K] = 8
    _ok(_settled(at))


@pytest.mark.parametrize("dataset", ["synthetic-planted", "lrs"])
def test_compare_other_kinds(dataset):
    if dataset == "lrs":
        _real("lrs")
    at = _ok(_settled(_page("compare.py", **{state.DATASET: dataset, state.K: 5}, **FAST)))
    assert _charts(at) >= 3


def test_compare_labelled_upload():
    X = _planted_upload()
    labels = np.repeat(["a", "b", "c"], 20)
    at = _ok(_settled(_page("compare.py", **{state.DATASET: state.UPLOAD_NAME, state.K: 3,
                                    state.UPLOAD: _upload(X, labels=labels)}, **FAST)))
    assert any("separate the classes" in h.value for h in at.subheader)


# ------------------------------------------------------------------ your data
def _csv(X) -> bytes:
    header = ",".join(f"c{j}" for j in range(X.shape[1]))
    return (header + "\n" + "\n".join(",".join(f"{v:.6g}" for v in row) for row in X)).encode()


def test_your_data_bad_files_show_errors_and_stay_up():
    at = _ok(_page("your_data.py").run())
    for name, content in [("empty.csv", b""), ("words.csv", b"a,b\nx,y\nz,w\n"),
                          ("ragged.csv", b"1,2,3\n4,5\n6,7,8\n"), ("one.npy", b"not really npy")]:
        at.file_uploader(key="yd_file").set_value((name, content, "application/octet-stream"))
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert at.error and name in at.error[0].value, (name, _texts(at.error))
    assert state.UPLOAD not in at.session_state


def test_your_data_upload_select_analyse_then_other_pages():
    X = _planted_upload(m=40, n=9)
    at = _ok(_page("your_data.py", **{state.K: 3}).run())
    at.file_uploader(key="yd_file").set_value(("mine.csv", _csv(X), "text/csv"))
    at = _ok(at.run())
    assert "Read **mine.csv**: 40 samples × 9 features" in _texts(at.success)
    assert any(m.label == "features" and m.value == "9" for m in at.metric)
    at.button(key="yd_use").click()
    at = _ok(at.run())
    assert at.session_state[state.DATASET] == state.UPLOAD_NAME
    up = at.session_state[state.UPLOAD]
    np.testing.assert_allclose(up.X, X, rtol=1e-5)
    # components (long: nonzeros only), components (wide: every feature), scores, figure
    assert _charts(at) >= 1 and len(at.download_button) == 4
    at.slider(key="yd_r").set_value(2)
    at = _ok(at.run())
    # another page now works on the upload
    other = _ok(_page("variance_vs_k.py", **{state.DATASET: state.UPLOAD_NAME, state.UPLOAD: up,
                                             state.K: 3}, **FAST).run())
    assert "mine.csv" in _texts(other.caption)
    # forget it: back to the default dataset
    at.button(key="yd_forget").click()
    at = _ok(at.run())
    assert state.UPLOAD not in at.session_state
    assert at.session_state[state.DATASET] == state.DEFAULTS[state.DATASET]


def test_your_data_zip_of_images_and_npz_variable_choice():
    rng = np.random.default_rng(1)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(12):
            img = Image.fromarray((rng.random((5, 4)) * 255).astype(np.uint8), mode="L")
            b = io.BytesIO()
            img.save(b, format="PNG")
            zf.writestr(f"img_{i:02d}.png", b.getvalue())
    at = _ok(_page("your_data.py", **{state.K: 3}).run())
    at.file_uploader(key="yd_file").set_value(("faces.zip", buf.getvalue(), "application/zip"))
    at = _ok(at.run())
    assert any(m.label == "images" and m.value == "5×4" for m in at.metric)
    npz = io.BytesIO()
    np.savez(npz, first=rng.random((20, 6)), second=rng.random((20, 3)))
    at.file_uploader(key="yd_file").set_value(("two.npz", npz.getvalue(), "application/octet-stream"))
    at = _ok(at.run())
    at.selectbox(key="yd_variable").set_value("second")
    at = _ok(at.run())
    assert any(m.label == "features" and m.value == "3" for m in at.metric)


# ------------------------------------------------------------------ several components
def test_several_components_and_counterexample_demo():
    at = _ok(_settled(_page("several_components.py", **{state.K: 4, "sc_r": 2}, **FAST)))
    assert _charts(at) >= 3  # cumulative, sum, supports
    at.button(key="sc_run").click()
    at = _ok(at.run())
    table = at.dataframe[-1].value
    best = table[table["method"].str.startswith("optimum")]["total_variance"].iloc[0]
    assert best == pytest.approx(2.0)  # the joint optimum of the §7 example (brute force: tests/core)
    deflation = table[table["method"].str.startswith("deflation")]
    if len(deflation):
        assert deflation["total_variance"].iloc[0] == pytest.approx(1 + 0.1 + 0.05)
    joint = table[table["method"].str.startswith("joint")]
    if len(joint):
        assert joint["total_variance"].iloc[0] == pytest.approx(2.0)


@pytest.mark.parametrize("dataset", ["synthetic-planted", "lrs", state.UPLOAD_NAME])
def test_several_components_kinds(dataset):
    extra = {}
    if dataset == "lrs":
        _real("lrs")
    if dataset == state.UPLOAD_NAME:
        extra[state.UPLOAD] = _upload(_planted_upload())
    at = _ok(_settled(_page("several_components.py", **{state.DATASET: dataset, state.K: 3, "sc_r": 2},
                   **extra, **FAST)))
    assert _charts(at) >= 3


# ------------------------------------------------------------------ nonnegative scores
def test_nonneg_scores_simulated_2d_and_3d():
    at = _ok(_page("nonneg_scores.py", ns_methods=["nspca", "pca"], ns_n=200).run())
    assert any(m.label == "final negativity S(B̂)" for m in at.metric)
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert spec["data"][0]["type"] == "scatter3d" and spec["frames"]  # p = 3: animated 3-D cloud
    at.slider(key="ns_p").set_value(2)
    at = _ok(at.run())
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert spec["data"][0]["type"] == "scatter" and spec["frames"]
    assert _charts(at) == 4  # history, cloud, profiles, D/W diffs


def test_nonneg_scores_on_a_dataset():
    at = _ok(_page("nonneg_scores.py", **{state.DATASET: "synthetic-scores"}, ns_source="the sidebar's dataset",
                   ns_methods=["nspca", "pca"]).run())
    assert _charts(at) >= 3
    X = np.random.default_rng(0).random((80, 3))
    at = _ok(_page("nonneg_scores.py", **{state.DATASET: state.UPLOAD_NAME, state.UPLOAD: _upload(X)},
                   ns_source="the sidebar's dataset").run())
    assert _charts(at) >= 3


def test_nonneg_scores_follow_the_sidebar_and_name_the_features():
    """Issue 21 item 9: the page showed simulated data whatever the sidebar said, as "variable 1, 2, 3"."""
    X = np.random.default_rng(1).random((80, 3))
    at = _ok(_page("nonneg_scores.py", **{state.DATASET: state.UPLOAD_NAME, state.UPLOAD: _upload(X)}).run())
    assert at.radio(key="ns_source").value == "the sidebar's dataset"
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
    xs = {str(v) for t in spec["data"] for v in (t.get("x") or [])}
    assert {"f0", "f1", "f2"} <= xs
    # on the app's default dataset the simulation (with its known truth) stays the default
    assert _page("nonneg_scores.py", ns_n=200).run().radio(key="ns_source").value.startswith("simulated")


# ------------------------------------------------------------------ through app.py
@pytest.mark.skipif(not (ROOT / "app.py").exists(), reason="app.py not there yet")
@pytest.mark.parametrize("page", PAGES)
def test_pages_through_the_app(page):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in FAST.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    at.switch_page(f"pages/{page}").run()
    _ok(at)


def test_tiny_upload_two_features_large_k():
    """Edge case: fewer features than the sidebar's k (sliders must not collapse)."""
    X = np.random.default_rng(2).random((30, 2))
    session = {state.DATASET: state.UPLOAD_NAME, state.UPLOAD: _upload(X), state.K: 10}
    for page in ["variance_vs_k.py", "compare.py", "several_components.py", "your_data.py"]:
        at = _ok(_settled(_page(page, **session, **{k: v for k, v in FAST.items() if k != "vk_points"})))
        assert page == "your_data.py" or _charts(at) >= 1


@pytest.mark.skipif(not (ROOT / "app.py").exists(), reason="app.py not there yet")
def test_upload_flow_through_the_app():
    """Upload on "Your data", select it, and another page of the app runs on it."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in FAST.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/your_data.py").run()
    X = _planted_upload(m=40, n=6)
    at.file_uploader(key="yd_file").set_value(("mine.csv", _csv(X), "text/csv"))
    at.run()
    at.button(key="yd_use").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state[state.DATASET] == state.UPLOAD_NAME
    at.switch_page("pages/variance_vs_k.py").run()
    _ok(at)
    assert "Your data (mine.csv)" in _texts(at.caption)

