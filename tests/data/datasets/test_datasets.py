"""nspca_core.datasets / synthetic: registry, preprocessing, generators, real copies, downloads."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest

from nspca_core import InputError, list_datasets, load_dataset, preprocess
from nspca_core import datasets as D
from nspca_core import synthetic as S
from tests.bruteforce import brute_opt
from tests.conftest import data_dir

# The entries the project ships, in the listing's order (the first is the app's default). A new
# dataset (CONTRIBUTING, "One dataset") is appended to the registry and checked by the invariants
# below without editing this list.
NAMES = ["digits", "synthetic-planted", "synthetic-parts", "synthetic-scores", "cbcl", "mll", "lrs"]


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No shared copies and an empty cache: only what the test puts there."""
    monkeypatch.delenv("NSPCA_DATA_DIR", raising=False)
    monkeypatch.setenv("NSPCA_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _need(filename):
    if not (data_dir() / filename).is_file():
        pytest.skip(f"{filename} not in NSPCA_DATA_DIR={data_dir()}")
    return data_dir()


# ----------------------------------------------------------------------------- registry

def test_registry_names_and_fields():
    infos = list_datasets()
    names = [i.name for i in infos]
    assert names[:len(NAMES)] == NAMES and len(set(names)) == len(names)
    for i in infos:
        assert i.kind in {"embedded", "synthetic", "real"}
        assert i.title and i.description and i.source and i.citation and i.paper_preprocessing
        assert len(i.shape) == 2
        assert (i.image_shape is None) or (i.image_shape[0] * i.image_shape[1] == i.shape[1])
    real = {i.name: i for i in infos if i.kind == "real"}
    assert real["cbcl"].shape == (2429, 361) and real["cbcl"].image_shape == (19, 19)
    assert real["mll"].shape == (72, 12582) and real["mll"].has_labels
    assert real["lrs"].shape == (531, 93)
    assert all(i.url.startswith("http") and i.filename.endswith(".npz") for i in real.values())


@pytest.mark.parametrize("name", ["synthetic-planted", "synthetic-parts", "synthetic-scores"])
def test_synthetic_entries_load_with_info_shape(name):
    ds = load_dataset(name)
    assert ds.X.shape == ds.X_raw.shape == ds.info.shape
    assert len(ds.feature_names) == ds.X.shape[1]
    assert ds.preprocessing == ("center",) and np.allclose(ds.X.mean(axis=0), 0)
    assert ds.ground_truth is not None and D.is_available(name)


def test_digits_offline():
    ds = load_dataset("digits", preprocessing="none")
    assert ds.X.shape == (1797, 64) and ds.image_shape == (8, 8)
    assert ds.labels.shape == (1797,) and set(ds.labels.tolist()) == set(range(10))
    assert ds.preprocessing == () and np.array_equal(ds.X, ds.X_raw)


def test_load_dataset_errors(isolated):
    with pytest.raises(InputError, match=r"`name` must be one of \['digits'"):
        load_dataset("faces")
    with pytest.raises(InputError, match=r"takes parameters \['decay', .*got unknown \['q'\]"):
        load_dataset("synthetic-planted", q=1)
    with pytest.raises(InputError, match="'cbcl' takes no parameters"):
        load_dataset("cbcl", n=3)
    with pytest.raises(InputError, match="`preprocessing` steps must be from"):
        load_dataset("synthetic-parts", preprocessing="whiten")
    with pytest.raises(InputError, match="`n_components` \\* `k` must be <= n=10"):
        load_dataset("synthetic-planted", n=10, k=4, n_components=3)
    with pytest.raises(D.DatasetUnavailableError, match="'mll' is not available locally: put "
                                                         "mll_leukemia.npz in NSPCA_DATA_DIR"):
        load_dataset("mll")
    assert not D.is_available("mll")


# ----------------------------------------------------------------------------- preprocessing

def test_preprocess_semantics():
    rng = np.random.default_rng(1)
    X = rng.gamma(2.0, size=(20, 5))
    X[:, 3] = 7.0  # constant column
    c = preprocess(X)
    assert c.steps == ("center",) and np.allclose(c.X.mean(axis=0), 0)
    assert np.allclose(c.mean, X.mean(axis=0)) and c.scale is None
    assert np.allclose(c.X + c.mean, X)
    s = preprocess(X, steps="standardize")
    assert s.steps == ("center", "standardize")
    sd = s.X.std(axis=0)
    assert np.allclose(sd[[0, 1, 2, 4]], 1) and np.all(s.X[:, 3] == 0) and s.scale[3] == 1
    assert any("constant feature(s) (columns 3)" in n and "instead of dividing by zero" in n
               for n in s.notes)
    assert np.allclose(s.X * s.scale + s.mean, X)
    lg = preprocess(X, steps=("center", "log1p"))  # applied in the fixed order log1p -> center
    assert lg.steps == ("log1p", "center")
    assert np.allclose(lg.X, np.log1p(X) - np.log1p(X).mean(axis=0))
    raw = preprocess(X, steps="none")
    assert raw.steps == () and np.array_equal(raw.X, X) and raw.X is not X
    assert preprocess(X, steps=None).steps == ()


def test_preprocess_errors():
    with pytest.raises(InputError, match=r"log1p needs nonnegative data; `X` has 1 negative "
                                         r"value\(s\), the first at row 0, column 1"):
        preprocess([[1.0, -2.0], [3.0, 4.0]], steps="log1p")
    with pytest.raises(InputError, match="`steps` steps must be from"):
        preprocess([[1.0, 2.0], [3.0, 4.0]], steps=("center", "pca"))
    with pytest.raises(InputError, match="`X` must be finite"):
        preprocess([[1.0, np.nan], [3.0, 4.0]])


def test_dataset_records_preprocessing():
    ds = load_dataset("synthetic-parts", preprocessing=("log1p", "standardize"))
    assert ds.preprocessing == ("log1p", "center", "standardize")
    assert np.allclose(ds.X * ds.scale + ds.mean, np.log1p(ds.X_raw))
    assert any("log1p" in n for n in ds.notes)


# ----------------------------------------------------------------------------- generators

def test_generators_deterministic_under_seed():
    for name in ["synthetic-planted", "synthetic-parts", "synthetic-scores"]:
        a, b = load_dataset(name, random_state=3), load_dataset(name, seed=3)
        c = load_dataset(name, random_state=4)
        assert np.array_equal(a.X_raw, b.X_raw) and not np.array_equal(a.X_raw, c.X_raw)
        g = np.random.default_rng(5)
        assert np.array_equal(load_dataset(name, random_state=g).X_raw,
                              load_dataset(name, random_state=np.random.default_rng(5)).X_raw)


def test_planted_ground_truth_is_the_population_optimum():
    X, gt = S.planted_sparse(n=8, m=50, k=3, n_components=2, decay=0.5, noise=0.3, seed=0)
    U = gt["components"]
    assert X.shape == (50, 8) and U.shape == (8, 2)
    assert np.allclose(U.T @ U, np.eye(2)) and (U >= 0).all()
    for j, sup in enumerate(gt["supports"]):
        assert np.array_equal(np.flatnonzero(U[:, j]), sup) and sup.size == 3
    A = U @ np.diag(gt["variances"]) @ U.T + gt["noise"] ** 2 * np.eye(8)
    opt, _ = brute_opt(A, 3)
    assert np.isclose(opt, gt["optimal_variance"]) and np.isclose(U[:, 0] @ A @ U[:, 0], opt)


def test_planted_sample_covariance_recovers_component():
    X, gt = S.planted_sparse(n=30, m=4000, k=4, n_components=2, decay=0.5, noise=0.2, seed=1)
    Xc = X - X.mean(axis=0)
    v = np.linalg.eigh(Xc.T @ Xc / len(X))[1][:, -1]
    assert abs(v @ gt["components"][:, 0]) > 0.98


def test_parts_ground_truth():
    X, gt = S.parts_images(n=50, n_parts=6, noise=0.0, seed=2)
    P = gt["components"]
    assert X.shape == (50, 144) and P.shape == (144, 6) and gt["parts"].shape == (6, 12, 12)
    assert np.allclose(P.T @ P, np.eye(6)) and (P >= 0).all()   # disjoint, unit, nonnegative
    assert np.allclose(X, (gt["coefficients"] * gt["weights"]) @ P.T)
    Xn, _ = S.parts_images(n=50, n_parts=2, noise=0.1, seed=2)
    assert (Xn >= 0).all()
    with pytest.raises(InputError, match=r"`n_parts` must be an int in \[1, 6\]; got 7"):
        S.parts_images(n_parts=7)


def test_scores_model_ground_truth():
    Y, gt = S.nonneg_scores_model(p=4, n=20000, seed=0)
    A, X = gt["A"], gt["X"]
    assert np.allclose(Y, X @ A.T) and (X >= 0).all()
    assert np.allclose(X.var(axis=0), 1, atol=0.05)
    assert np.allclose(gt["lambdas"], (A ** 2).sum(axis=0)) and np.all(np.diff(gt["lambdas"]) <= 0)
    assert np.allclose(np.linalg.norm(gt["D"], axis=0), 1)
    assert np.allclose(gt["W"] @ gt["D"].T, Y)
    for share in (0.96, 0.77, 0.57):
        _, g = S.nonneg_scores_model(p=10, n=10, first_share=share, seed=1)
        assert np.isclose(g["lambdas"][0] / g["lambdas"].sum(), share)
    with pytest.raises(InputError, match=r"`first_share` must be a number in \[0.1, 1\)"):
        S.nonneg_scores_model(p=10, first_share=1.0)


# ----------------------------------------------------------------------------- real copies

@pytest.mark.parametrize("name, shape, image_shape", [("cbcl", (2429, 361), (19, 19)),
                                                      ("mll", (72, 12582), None),
                                                      ("lrs", (531, 93), None)])
def test_real_sets_from_local_copies(name, shape, image_shape):
    info = D.get_info(name)
    folder = _need(info.filename)
    assert D.is_available(name, data_dir=folder)
    ds = load_dataset(name, data_dir=folder)
    assert ds.X.shape == shape and ds.image_shape == image_shape
    assert len(ds.feature_names) == shape[1] and np.allclose(ds.X.mean(axis=0), 0)
    assert any("checksum verified" in n for n in ds.notes)
    if name == "mll":
        assert ds.feature_names[0] == "AFFX-MurIL2_at" and len(set(ds.feature_names)) == shape[1]
        assert [int((ds.labels == c).sum()) for c in ("ALL", "MLL", "AML")] == [24, 20, 28]
    if name == "lrs":
        assert ds.feature_names[0] == "blue-band-flux_1" and ds.labels.shape == (531,)


def test_checksums_json_matches_shared_copies():
    recorded = json.loads(D.CHECKSUMS_PATH.read_text())
    for name in ("cbcl", "lrs"):  # recomputed here straight from np.load
        info = D.get_info(name)
        folder = _need(info.filename)
        with np.load(folder / info.filename, allow_pickle=False) as z:
            arrays = {k: z[k] for k in recorded[name]["arrays"]}
        assert D.array_checksum(arrays) == recorded[name]["sha256"]
        assert [list(arrays[k].shape) for k in arrays] == list(recorded[name]["shapes"].values())


def test_entries_agree_with_the_checksum_record():
    """What each real entry carries (file, checked arrays) is what the record was computed on."""
    recorded = json.loads(D.CHECKSUMS_PATH.read_text())
    real = [i for i in list_datasets() if i.kind == "real"]
    assert sorted(i.name for i in real) == sorted(k for k in recorded if not k.startswith("_"))
    for info in real:
        assert info.filename == recorded[info.name]["file"]
        assert list(info.checked_arrays) == recorded[info.name]["arrays"]
        assert D._CHECKED_ARRAYS[info.name] == info.checked_arrays
        assert info.raw_filename == info.url.rsplit("/", 1)[-1] and callable(info.parser)
    assert dict(D._CHECKED_ARRAYS) == {i.name: i.checked_arrays for i in real}


def test_corrupt_local_copy_fails_checksum(isolated):
    folder = isolated / "data"
    folder.mkdir()
    np.savez_compressed(folder / "cbcl_faces_train.npz",
                        images=np.zeros((3, 19, 19), dtype=np.uint8))
    with pytest.raises(D.ChecksumError, match="'cbcl' from .* does not match its checksum"):
        load_dataset("cbcl", data_dir=folder)


def test_array_checksum_ignores_storage_details():
    a = {"X": np.arange(6.0).reshape(2, 3), "labels": np.array(["a", "bb"])}
    b = {"labels": np.array(["a", "bb"], dtype="<U5"),
         "X": np.asfortranarray(np.arange(6.0).reshape(2, 3)).astype(">f8")}
    assert D.array_checksum(a) == D.array_checksum(b)
    b["X"][0, 0] = 1.0
    assert D.array_checksum(a) != D.array_checksum(b)


# ----------------------------------------------------------------------------- downloads

def _tar_bytes(members: dict) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _pgm(arr) -> bytes:
    return b"P5\n19 19\n255\n" + arr.astype(np.uint8).tobytes()


def _fake_cbcl(tmp_path):
    rng = np.random.default_rng(0)
    faces = rng.integers(0, 256, size=(3, 19, 19)).astype(np.uint8)
    inner = _tar_bytes({**{f"train/face/face{i + 1:05d}.pgm": _pgm(faces[i]) for i in (2, 0, 1)},
                        "train/non-face/cmu_0000.pgm": _pgm(faces[0] // 2)})
    path = tmp_path / "faces.tar.gz"
    path.write_bytes(_tar_bytes({"face.train.tar.gz": inner, "face.test.tar.gz": b"x"}))
    return path, {"images": faces}


def _fake_lrs(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(1000, 300, size=(3, 93)).round(4)
    recs = []
    for i in range(3):
        head = f"{12043 + i}-6225  {20 + i}  1 ( 12.07 -62.4 2.0 1 2 3 4 )"
        blue = " ".join(f"{v:.4f}" for v in X[i, :44])
        red = " ".join(f"{v:.4f}" for v in X[i, 44:])
        recs.append(f"{head}\n  ( {blue} )\n  ( {red} )")
    path = tmp_path / "lrs.data"
    path.write_text("\n".join(recs) + "\n")
    return path, {"X": X, "labels": np.array(["20", "21", "22"])}


def _fake_mll(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(0, 100, size=(4, 5)).round(1)
    heads = ["ALL_1", "MLL_2", "AML_3", "ALL_4"]
    lines = ["Name\tDescription\t" + "\t".join(heads)]
    for j in range(5):
        lines.append(f"{j}_at\tgene {j}\t" + "\t".join(f"{v:.1f}" for v in X[:, j]))
    lines.append("footer\tnot a probe row")  # text rows after the data are not genes
    path = tmp_path / "expression_data.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, {"X": X, "labels": np.array(["ALL", "MLL", "AML", "ALL"])}


@pytest.mark.parametrize("name, fake, image_shape", [("cbcl", _fake_cbcl, (19, 19)),
                                                     ("lrs", _fake_lrs, None),
                                                     ("mll", _fake_mll, None)])
def test_download_parse_verify_and_cache(isolated, monkeypatch, name, fake, image_shape):
    src, expected = fake(isolated)
    info = D.get_info(name)
    monkeypatch.setitem(D._REGISTRY, name, D.DatasetInfo(**{**info.__dict__, "url": src.as_uri()}))
    sums = {name: {"sha256": D.array_checksum(expected)}}
    monkeypatch.setattr(D.checksums, "_expected_checksums", lambda: sums)
    assert not D.is_available(name)
    ds = load_dataset(name, download=True, preprocessing="none")
    key = "images" if name == "cbcl" else "X"
    assert np.array_equal(ds.X, expected[key].reshape(len(expected[key]), -1))
    assert ds.image_shape == image_shape and any("downloaded from file:" in n for n in ds.notes)
    cached = D.cache_dir() / info.filename
    assert cached.is_file() and D.is_available(name)
    src.unlink()  # second load: from the cache, no fetch
    again = load_dataset(name, preprocessing="none")
    assert np.array_equal(again.X, ds.X) and not any("downloaded" in n for n in again.notes)
    if name == "mll":
        assert again.labels.tolist() == ["ALL", "MLL", "AML", "ALL"]
        assert again.feature_names == [f"{j}_at" for j in range(5)]


def test_download_checksum_mismatch(isolated, monkeypatch):
    src, _ = _fake_lrs(isolated)
    info = D.get_info("lrs")
    monkeypatch.setitem(D._REGISTRY, "lrs", D.DatasetInfo(**{**info.__dict__, "url": src.as_uri()}))
    with pytest.raises(D.ChecksumError, match=r"'lrs' from the download file:.* does not match"):
        load_dataset("lrs", download=True)
    assert not (D.cache_dir() / info.filename).exists()  # nothing bad cached as a copy


def test_download_offline_message(isolated, monkeypatch):
    info = D.get_info("cbcl")
    url = "http://127.0.0.1:9/faces.tar.gz"  # the discard port: refused at once, no network used
    monkeypatch.setitem(D._REGISTRY, "cbcl", D.DatasetInfo(**{**info.__dict__, "url": url}))
    monkeypatch.setenv("NSPCA_DATA_DIR", str(isolated / "nowhere"))
    with pytest.raises(D.DatasetUnavailableError,
                       match=r"could not reach http://127.0.0.1:9/faces.tar.gz .*; put "
                             r"cbcl_faces_train.npz in NSPCA_DATA_DIR=.*nowhere"):
        load_dataset("cbcl", download=True)


def test_download_argument_validated(isolated):
    with pytest.raises(InputError, match="`download` must be True or False; got 'yes'"):
        load_dataset("lrs", download="yes")


def test_real_urls_are_the_public_sources():
    assert D.get_info("cbcl").url == "http://cbcl.mit.edu/projects/cbcl/software-datasets/faces.tar.gz"
    assert D.get_info("lrs").url.endswith("machine-learning-databases/spectrometer/lrs.data")
    assert D.get_info("mll").url.endswith("/mpr/projects/Leukemia/expression_data.txt")
    assert Path(D.CHECKSUMS_PATH).is_file()


from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4)),
              elements=st.floats(0, 1e3)),
       st.sampled_from(["center", "standardize", ("log1p", "standardize"), "none"]))
def test_preprocess_inverts_and_centers_property(X, steps):
    p = preprocess(X, steps=steps)
    base = np.log1p(X) if "log1p" in p.steps else X
    back = p.X * (p.scale if p.scale is not None else 1) + (p.mean if p.mean is not None else 0)
    const = np.ptp(base, axis=0) == 0
    assert np.allclose(back[:, ~const], base[:, ~const], atol=1e-9 * (1 + np.abs(base).max()))
    if "center" in p.steps:
        assert np.allclose(p.X.mean(axis=0), 0, atol=1e-9 * (1 + np.abs(base).max()))
    if "standardize" in p.steps:
        assert np.all(p.X[:, const] == 0)


# ----------------------------------------------------------------------------- text corpora (UCI bag of words)

BOW = {"kos": (3430, 6906), "nips": (1500, 12419), "enron": (39861, 28102),
       "nytimes": (300000, 102660)}


def _write_bow(folder, key, gz=True):
    """A tiny corpus in the UCI format: 3 documents x 4 words."""
    import gzip
    folder.mkdir(parents=True, exist_ok=True)
    text = b"3\n4\n5\n1 1 2\n1 3 1\n2 2 4\n3 1 1\n3 4 3\n"
    name = f"docword.{key}.txt" + (".gz" if gz else "")
    (folder / name).write_bytes(gzip.compress(text) if gz else text)
    (folder / f"vocab.{key}.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    return np.array([[2, 0, 1, 0], [0, 4, 0, 0], [1, 0, 0, 3]], dtype=float)


def test_text_registry_entries():
    assert [i.name for i in list_datasets()][:len(NAMES)] == NAMES  # default listing unchanged
    assert not any(i.kind == "text" for i in list_datasets())
    text = {i.name: i for i in list_datasets(include_text=True) if i.kind == "text"}
    assert sorted(text) == sorted(BOW)
    for key, shape in BOW.items():
        assert text[key].shape == shape
        assert text[key].url == ("https://archive.ics.uci.edu/ml/machine-learning-databases/"
                                 f"bag-of-words/docword.{key}.txt.gz")
        assert "Bipartite" in text[key].citation


@pytest.mark.parametrize("gz", [True, False])
def test_text_corpus_from_local_copy(isolated, gz):
    import scipy.sparse as sp
    M = _write_bow(isolated / "data", "kos", gz=gz)
    assert not D.is_available("kos")
    assert D.is_available("kos", data_dir=isolated / "data")
    ds = load_dataset("kos", data_dir=isolated / "data")
    assert sp.issparse(ds.X) and np.array_equal(ds.X.toarray(), M)
    assert ds.preprocessing == ("counts", "center") and np.allclose(ds.mean, M.mean(axis=0))
    assert ds.feature_names == ["alpha", "beta", "gamma", "delta"]
    assert any("no checksum recorded for 'kos'" in n and "sha256" in n for n in ds.notes)
    tf = load_dataset("kos", data_dir=isolated / "data", preprocessing=("tfidf", "center"))
    df = (M > 0).sum(axis=0)
    np.testing.assert_allclose(tf.X.toarray(), M * (np.log(4 / (1 + df)) + 1))
    raw = load_dataset("kos", data_dir=isolated / "data", preprocessing="none")
    assert raw.preprocessing == ("counts",) and raw.mean is None


def test_text_corpus_checksum_recorded(isolated, monkeypatch):
    _write_bow(isolated / "data", "enron")
    digest = D.load_corpus("enron", data_dir=isolated / "data").extra["sha256"]
    monkeypatch.setattr(D.checksums, "_expected_checksums", lambda: {"enron": {"sha256": digest}})
    assert "checksum verified" in D.load_corpus("enron", data_dir=isolated / "data").notes
    monkeypatch.setattr(D.checksums, "_expected_checksums", lambda: {"enron": {"sha256": "0" * 64}})
    with pytest.raises(D.ChecksumError, match="corpus 'enron' from .* does not match"):
        D.load_corpus("enron", data_dir=isolated / "data")


def test_text_corpus_download_and_cache(isolated, monkeypatch):
    M = _write_bow(isolated / "uci", "nips")
    monkeypatch.setattr(D.download, "_BOW_URL", (isolated / "uci").as_uri() + "/")
    ds = load_dataset("nips", download=True)
    assert np.array_equal(ds.X_raw.toarray(), M)
    assert (D.cache_dir() / "raw" / "docword.nips.txt.gz").is_file()
    assert (D.cache_dir() / "raw" / "vocab.nips.txt").is_file()
    assert any("downloaded from" in n for n in ds.notes)
    for f in (isolated / "uci").iterdir():
        f.unlink()  # second load: from the cache, no fetch
    again = load_dataset("nips")
    assert np.array_equal(again.X_raw.toarray(), M) and D.is_available("nips")


def test_text_corpus_offline_and_absent_messages(isolated, monkeypatch):
    with pytest.raises(D.DatasetUnavailableError,
                       match=r"corpus 'kos' is not available locally: put docword.kos.txt.gz "
                             r"and vocab.kos.txt in NSPCA_DATA_DIR"):
        load_dataset("kos")
    monkeypatch.setattr(D.download, "_BOW_URL", "http://127.0.0.1:9/bag-of-words/")  # refused at once
    with pytest.raises(D.DatasetUnavailableError,
                       match=r"could not reach http://127.0.0.1:9/bag-of-words/docword.kos.txt.gz "
                             r".*offline; download docword.kos.txt.gz and vocab.kos.txt"):
        load_dataset("kos", download=True)


def test_text_corpus_argument_messages(isolated):
    _write_bow(isolated / "data", "kos")
    with pytest.raises(InputError, match=r"`preprocessing` of a text corpus must be from"):
        load_dataset("kos", data_dir=isolated / "data", preprocessing="standardize")
    with pytest.raises(InputError, match="`name` must be a text corpus"):
        D.load_corpus("lrs")
    with pytest.raises(InputError, match="takes no parameters"):
        load_dataset("kos", data_dir=isolated / "data", n=3)


# ----------------------------------------------------------------------------- one entry is a dataset

def _csv_loader(info, *, data_dir, download, seed, params):
    """A loader as a new entry would bring: its own file format, read from ``data_dir``."""
    path = Path(data_dir) / info.filename
    rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
    X = np.array([[float(v) for v in r[1:]] for r in rows]) * params["scale"]
    names = path.read_text().splitlines()[0].split(",")[1:]
    return D.Loaded(X=X, feature_names=names, labels=np.array([r[0] for r in rows]),
                    notes=[f"read {path.name}"])


def _csv_available(info, data_dir):
    return data_dir is not None and (Path(data_dir) / info.filename).is_file()


def _write_csv(folder, X, labels):
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["label," + ",".join(f"f{j}" for j in range(X.shape[1]))]
    lines += [f"{lab}," + ",".join(repr(float(v)) for v in row) for lab, row in zip(labels, X)]
    (folder / "toy.csv").write_text("\n".join(lines) + "\n")


def test_one_registry_entry_is_a_loadable_dataset(isolated, monkeypatch):
    rng = np.random.default_rng(7)
    X = rng.gamma(2.0, size=(9, 4))
    labels = np.array(list("abcabcabc"))
    info = D.DatasetInfo(name="toy-csv", title="Toy table", description="9 rows x 4 columns",
                         kind="embedded", shape=(9, 4), source="written by the test", citation="-",
                         paper_preprocessing="center", image_shape=None, has_labels=True,
                         filename="toy.csv", params=(("scale", 1.0),), loader=_csv_loader,
                         available=_csv_available)
    monkeypatch.setitem(D._REGISTRY, "toy-csv", info)  # the only change: one entry
    folder = isolated / "data"
    assert "toy-csv" in [i.name for i in list_datasets()]
    assert not D.is_available("toy-csv", data_dir=folder)
    _write_csv(folder, X, labels)
    assert D.is_available("toy-csv", data_dir=folder)

    ds = load_dataset("toy-csv", data_dir=folder)  # the registry's default preprocessing: center
    assert ds.name == "toy-csv" and ds.info is info and ds.params == {"scale": 1.0}
    assert np.array_equal(ds.X_raw, X) and ds.labels.tolist() == labels.tolist()
    assert ds.feature_names == ["f0", "f1", "f2", "f3"] and ds.image_shape is None
    centered = np.array([[X[i, j] - sum(X[:, j]) / 9 for j in range(4)] for i in range(9)])
    assert ds.preprocessing == ("center",) and np.allclose(ds.X, centered)
    assert ds.notes[0] == "read toy.csv" and any("centered" in n for n in ds.notes[1:])

    sd = np.sqrt(np.array([sum(centered[:, j] ** 2) / 9 for j in range(4)]))
    st_ = load_dataset("toy-csv", data_dir=folder, preprocessing="standardize", scale=2.0)
    assert st_.params == {"scale": 2.0} and np.allclose(st_.X_raw, 2 * X)
    assert st_.preprocessing == ("center", "standardize") and np.allclose(st_.X, centered / sd)
    with pytest.raises(InputError, match=r"'toy-csv' takes parameters \['scale'\]; got unknown \['k'\]"):
        load_dataset("toy-csv", data_dir=folder, k=3)
    with pytest.raises(InputError, match="`preprocessing` steps must be from"):
        load_dataset("toy-csv", data_dir=folder, preprocessing="whiten")


def _parse_toy(path):
    """Original format of the throwaway real set: ``label v1 v2 v3`` per line."""
    rows = [line.split() for line in Path(path).read_text().splitlines()]
    return {"X": np.array([[float(v) for v in r[1:]] for r in rows]),
            "labels": np.array([r[0] for r in rows]), "cols": np.array(["u", "v", "w"])}


def test_one_registry_entry_is_a_downloadable_checked_real_set(isolated, monkeypatch):
    from functools import partial

    from nspca_core.datasets.loaders import _table_data
    from nspca_core.datasets.registry import _real_info

    X = np.arange(12.0).reshape(4, 3) ** 1.5
    labels = np.array(["p", "q", "p", "q"])
    src = isolated / "origin" / "toy.txt"
    src.parent.mkdir()
    src.write_text("".join(f"{lab} " + " ".join(repr(float(v)) for v in row) + "\n"
                           for lab, row in zip(labels, X)))
    info = _real_info("toy-real", "Toy real set", (4, 3), "toy_real.npz", src.as_uri(),
                      raw_filename="toy.txt", parser=_parse_toy, checked_arrays=("X", "labels"),
                      to_data=partial(_table_data, names_key="cols", prefix="col"),
                      description="4 x 3", source="the test", citation="-",
                      paper_preprocessing="center")
    monkeypatch.setitem(D._REGISTRY, "toy-real", info)  # one entry ...
    digest = D.array_checksum({"X": X, "labels": labels})  # ... and its recorded checksum
    monkeypatch.setattr(D.checksums, "_expected_checksums", lambda: {"toy-real": {"sha256": digest}})
    assert D._CHECKED_ARRAYS["toy-real"] == ("X", "labels")

    assert not D.is_available("toy-real")
    with pytest.raises(D.DatasetUnavailableError, match="put toy_real.npz in NSPCA_DATA_DIR"):
        load_dataset("toy-real")
    ds = load_dataset("toy-real", download=True)
    assert np.array_equal(ds.X_raw, X) and np.allclose(ds.X, X - X.mean(axis=0))
    assert ds.feature_names == ["u", "v", "w"] and ds.labels.tolist() == labels.tolist()
    assert (D.cache_dir() / "raw" / "toy.txt").is_file() and D.is_available("toy-real")
    assert ds.notes[0].startswith("loaded toy_real.npz") and "checksum verified" in ds.notes[0]

    np.savez(D.cache_dir() / "toy_real.npz", X=X, labels=np.array(["p", "p", "p", "q"]))
    with pytest.raises(D.ChecksumError, match=r"'toy-real' from .* does not match its checksum "
                                              r"\(sha256 of arrays \['X', 'labels'\]"):
        load_dataset("toy-real")
    np.savez(D.cache_dir() / "toy_real.npz", X=X)
    with pytest.raises(D.ChecksumError, match=r"lacks array\(s\) \['labels'\] expected for "
                                              r"dataset 'toy-real'"):
        load_dataset("toy-real")


def test_no_dataset_name_outside_the_registry():
    """Only registry.py names a dataset: loading, checksums and downloads read the entry."""
    folder = Path(D.__file__).parent
    names = list(D._REGISTRY)
    for path in folder.glob("*.py"):
        if path.name == "registry.py":
            continue
        text = path.read_text()
        quoted = [n for n in names if f'"{n}"' in text or f"'{n}'" in text]
        assert not quoted, f"{path.name} names datasets {quoted}: put what they need in their entry"
