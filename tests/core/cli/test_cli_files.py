"""The CLI on the files of issue 38: --label-column/--layer/--use-raw/--platform/--sheet, the long
components file, --dask writing the files of an in-memory run, missing optional modules."""

from __future__ import annotations

import builtins
import gzip
import json

import numpy as np
import pandas as pd
import pytest

from nspca_core import cli
from tests.core.io.geo_writer import dataset_soft


def run(args, capsys):
    code = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _centered(rng, m, n):
    Z = rng.normal(size=(m, n)) * np.linspace(1, 3, n)
    return Z - Z.mean(axis=0)


def test_long_components_rebuild_the_wide_file(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = _centered(rng, 30, 8)
    np.save(tmp_path / "x.npy", X)
    code, out, err = run(["fit", tmp_path / "x.npy", "--k", 3, "--components", 2, "--no-certify", "--quiet",
                          "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    wide = pd.read_csv(tmp_path / "o" / "components.csv")
    long = pd.read_csv(tmp_path / "o" / "components_long.csv")
    assert list(long.columns) == ["component", "rank", "feature", "index", "loading"]
    back = np.zeros((8, 2))
    for _, r in long.iterrows():
        back[int(r["index"]) - 1, int(r["component"].split("_")[1]) - 1] = r["loading"]
        assert wide.loc[int(r["index"]) - 1, "feature"] == r["feature"]
    np.testing.assert_allclose(back, wide[["component_1", "component_2"]].to_numpy(), rtol=1e-15)
    assert (long["loading"] != 0).all() and len(long) == np.count_nonzero(back)
    for _, grp in long.groupby("component"):  # ranks 1..k by decreasing loading
        assert grp["rank"].tolist() == list(range(1, len(grp) + 1))
        assert (np.diff(np.abs(grp["loading"].to_numpy())) <= 0).all()


@pytest.mark.parametrize("fmt", ["npy", "zarr"])
def test_dask_run_writes_the_files_of_an_in_memory_run(tmp_path, capsys, fmt):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    X = _centered(rng, 60, 7) + 5.0  # not centered: --preprocessing center matters for the scores
    np.save(tmp_path / "x.npy", X)
    src = tmp_path / f"x.{fmt}"
    if fmt == "zarr":
        pytest.importorskip("zarr")
        da.from_array(X, chunks=(20, 7)).to_zarr(str(src))
    common = ["--k", 3, "--components", 2, "--strategy", "bipartite", "--no-certify", "--quiet"]
    assert run(["fit", tmp_path / "x.npy", *common, "--out", tmp_path / "mem"], capsys)[0] == 0
    assert run(["fit", src, "--dask", *common, "--out", tmp_path / "dask"], capsys)[0] == 0
    mem = sorted(p.name for p in (tmp_path / "mem").iterdir())
    assert mem == sorted(p.name for p in (tmp_path / "dask").iterdir())
    assert {"components.csv", "components_long.csv", "scores.csv", "summary.json"} <= set(mem)
    for name in ("components.csv", "components_long.csv", "scores.csv"):
        a, b = pd.read_csv(tmp_path / "mem" / name), pd.read_csv(tmp_path / "dask" / name)
        assert list(a.columns) == list(b.columns) and a.shape == b.shape
        for c in a.columns:
            if a[c].dtype.kind == "f":
                np.testing.assert_allclose(a[c], b[c], rtol=1e-9, atol=1e-9)
            else:
                assert a[c].tolist() == b[c].tolist()


def test_missing_optional_module_is_a_pip_line_not_an_internal_error(tmp_path, capsys, monkeypatch):
    da = pytest.importorskip("dask.array")
    pytest.importorskip("zarr")
    da.from_array(np.random.default_rng(0).normal(size=(20, 4)), chunks=(10, 4)).to_zarr(str(tmp_path / "x.zarr"))
    real = builtins.__import__

    def no_zarr(name, *a, **k):
        if name == "zarr" or name.startswith("zarr."):
            raise ImportError(f"No module named {name!r}", name=name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_zarr)
    code, out, err = run(["fit", tmp_path / "x.zarr", "--dask", "--k", 2, "--out", tmp_path / "o"], capsys)
    assert code == 1 and "internal error" not in err
    assert "needs the optional package zarr; install it with: pip install 'nspca-core[dask]'" in err


def test_label_column_platform_and_soft_from_the_cli(tmp_path, capsys):
    rng = np.random.default_rng(1)
    m, n = 6, 12
    values = np.round(rng.gamma(2, 50, size=(n, m)), 1)
    gsm = [f"GSM{100 + j}" for j in range(m)]
    subsets = [("disease state", "RCC", gsm[:3]), ("disease state", "normal", gsm[3:]),
               ("individual", "p1", gsm[::2]), ("individual", "p2", gsm[1::2])]
    path = tmp_path / "GDS1.soft.gz"
    path.write_bytes(gzip.compress(dataset_soft(values, [f"{i}_at" for i in range(n)],
                                                [f"G{i}" for i in range(n)], gsm, subsets).encode()))
    code, out, err = run(["fit", path, "--k", 3, "--no-certify", "--quiet", "--label-column", "individual",
                          "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    scores = pd.read_csv(tmp_path / "o" / "scores.csv")
    assert scores["sample"].tolist() == gsm and scores["label"].tolist() == ["p1", "p2"] * 3
    code, out, err = run(["fit", path, "--k", 3, "--layer", "counts", "--out", tmp_path / "o"], capsys)
    assert code == 1 and "`layer` applies only to AnnData" in err
    code, out, err = run(["fit", path, "--k", 3, "--platform", "GPL1", "--out", tmp_path / "o"], capsys)
    assert code == 1 and "`platform` applies to GEO family SOFT files" in err


def test_anndata_options_and_quiet_warnings(tmp_path, capsys):
    anndata = pytest.importorskip("anndata")
    rng = np.random.default_rng(2)
    X = rng.poisson(3.0, size=(20, 6)).astype(np.float32)
    obs = pd.DataFrame({"cluster": pd.Categorical(["a", "b"] * 10), "batch": ["x"] * 10 + ["y"] * 10},
                       index=[f"c{i}" for i in range(20)])
    ad = anndata.AnnData(X=X, obs=obs, var=pd.DataFrame(index=[f"g{j}" for j in range(6)]))
    ad.layers["log"] = np.log1p(X)
    ad.raw = ad
    ad.write_h5ad(tmp_path / "a.h5ad")
    code, out, err = run(["fit", tmp_path / "a.h5ad", "--k", 2, "--no-certify", "--quiet", "--layer", "log",
                          "--label-column", "batch", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    assert "Warning" not in err.replace("warned (not shown)", "")
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert any("layer 'log' used" in n for n in summary["reading_notes"])
    assert pd.read_csv(tmp_path / "o" / "scores.csv")["label"].tolist() == ["x"] * 10 + ["y"] * 10
    code, out, err = run(["fit", tmp_path / "a.h5ad", "--k", 2, "--no-certify", "--quiet", "--use-raw",
                          "--out", tmp_path / "o2"], capsys)
    assert code == 0, err
    code, out, err = run(["fit", tmp_path / "a.h5ad", "--k", 2, "--sheet", "1", "--out", tmp_path / "o3"], capsys)
    assert code == 1 and "`sheet` applies only to Excel" in err


def test_platform_and_sheet_options_reach_the_readers(tmp_path, capsys):
    from tests.core.io.geo_writer import family_soft
    from tests.core.io.test_soft import _family

    samples, platforms = _family()
    path = tmp_path / "GSE1_family.soft"
    path.write_text(family_soft(samples, platforms))
    code, out, err = run(["fit", path, "--k", 2, "--no-certify", "--quiet", "--platform", "GPL91",
                          "--label-column", "disease state", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    scores = pd.read_csv(tmp_path / "o" / "scores.csv")
    assert scores["sample"].tolist() == [s["gsm"] for s in samples if s["platform"] == "GPL91"]
    assert "platform GPL91 read (as asked (platform=))" in err
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    wb.active.title = "Notes"
    wb.active.append(["made by the lab"])
    ws = wb.create_sheet("Data")
    ws.append(["id", "a", "b", "c"])
    rng = np.random.default_rng(4)
    for i in range(8):
        ws.append([f"s{i}"] + [float(v) for v in rng.normal(size=3)])
    wb.save(tmp_path / "lab.xlsx")
    code, out, err = run(["fit", tmp_path / "lab.xlsx", "--k", 2, "--no-certify", "--quiet", "--out", tmp_path / "x"],
                         capsys)
    assert code == 0, err
    assert "sheet 'Data' read (the first sheet with a numeric block)" in err
    code, out, err = run(["fit", tmp_path / "lab.xlsx", "--k", 2, "--sheet", "Notes", "--out", tmp_path / "y"], capsys)
    assert code == 1 and "error:" in err and "internal error" not in err
