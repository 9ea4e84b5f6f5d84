"""AnnData layers, .raw and in-memory objects; Cell Ranger's 10x HDF5 written with h5py."""

import numpy as np
import pytest
import scipy.sparse as sp

from nspca_core._common.validation import InputError
from nspca_core.io import DataFormatError, load_file

anndata = pytest.importorskip("anndata")
h5py = pytest.importorskip("h5py")
pd = pytest.importorskip("pandas")


def _adata(seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    counts = sp.random(12, 8, density=0.5, random_state=seed, format="csr", dtype=np.float64)
    counts.data = np.round(counts.data * 20) + 1
    obs = pd.DataFrame({"cluster": pd.Categorical(["a", "b", "c"] * 4)}, index=[f"cell{i}" for i in range(12)])
    var = pd.DataFrame(index=[f"gene{j}" for j in range(8)])
    ad = anndata.AnnData(X=counts.astype(dtype), obs=obs, var=var)
    ad.layers["counts"] = counts.copy()
    ad.layers["dense"] = rng.normal(size=(12, 8))
    ad.raw = ad.copy()
    return ad[:, :6].copy(), counts


def _h5ad_bytes(ad, tmp_path):
    ad.write_h5ad(tmp_path / "w.h5ad")
    return (tmp_path / "w.h5ad").read_bytes()


def test_layers_raw_and_objects(tmp_path):
    ad, counts = _adata()
    data = _h5ad_bytes(ad, tmp_path)
    x = load_file(data, filename="a.h5ad")
    assert x.X.dtype == np.float32 and x.X.shape == (12, 6)
    assert np.array_equal(x.X.toarray(), counts[:, :6].toarray().astype(np.float32))
    assert any("layers: counts, dense" in n and ".raw with 8 variables" in n for n in x.notes)
    lay = load_file(data, filename="a.h5ad", layer="counts")
    assert lay.X.dtype == np.float64 and np.array_equal(lay.X.toarray(), counts[:, :6].toarray())
    dense = load_file(data, filename="a.h5ad", layer="dense")
    assert np.array_equal(dense.X, ad.layers["dense"])
    raw = load_file(data, filename="a.h5ad", use_raw=True)
    assert raw.X.shape == (12, 8) and raw.feature_names == [f"gene{j}" for j in range(8)]
    obj = load_file(ad)
    assert np.array_equal(obj.X.toarray(), x.X.toarray()) and obj.labels.tolist() == x.labels.tolist()
    assert load_file(ad, use_raw=True).X.shape == (12, 8)
    with pytest.raises(DataFormatError, match=r"not a 10x .*looks like an AnnData file: give it the extension .h5ad"):
        load_file(data, filename="a.h5")
    with pytest.raises(InputError, match=r"`layer` must be one of the layers of a.h5ad: \['counts', 'dense'\]"):
        load_file(data, filename="a.h5ad", layer="spliced")
    with pytest.raises(InputError, match=r"`layer` and `use_raw` exclude each other"):
        load_file(ad, layer="counts", use_raw=True)
    with pytest.raises(InputError, match=r"`use_raw`: .* has no .raw"):
        load_file(anndata.AnnData(X=np.eye(3)), use_raw=True)
    with pytest.raises(InputError, match=r"`layer` applies only to AnnData"):
        load_file(b"1,2\n3,4\n5,7\n", filename="t.csv", layer="counts")
    with pytest.raises(InputError, match=r"`feature_names` applies only to GEO SOFT and 10x HDF5 files"):
        load_file(ad, feature_names="symbol")
    with pytest.raises(InputError, match=r"`feature_names` must be 'id' .* or 'symbol'"):
        load_file(ad, feature_names="gene")


def _write_10x(path_or_buf, counts_genes_by_cells, ids, names, barcodes, *, version=3):
    """A Cell Ranger matrix, written with h5py as Cell Ranger lays it out (CSC features x barcodes)."""
    M = sp.csc_matrix(counts_genes_by_cells)
    with h5py.File(path_or_buf, "w") as f:
        g = f.create_group("matrix" if version == 3 else "GRCh38")
        g.create_dataset("data", data=M.data.astype(np.int32), compression="gzip")
        g.create_dataset("indices", data=M.indices.astype(np.int64), compression="gzip")
        g.create_dataset("indptr", data=M.indptr.astype(np.int64))
        g.create_dataset("shape", data=np.array(M.shape, dtype=np.int32))
        g.create_dataset("barcodes", data=np.array(barcodes, dtype="S"))
        if version == 3:
            feats = g.create_group("features")
            feats.create_dataset("id", data=np.array(ids, dtype="S"))
            feats.create_dataset("name", data=np.array(names, dtype="S"))
            feats.create_dataset("feature_type", data=np.array(["Gene Expression"] * len(ids), dtype="S"))
            feats.create_dataset("genome", data=np.array(["GRCh38"] * len(ids), dtype="S"))
            feats.create_dataset("_all_tag_keys", data=np.array([b"genome"]))
        else:
            g.create_dataset("genes", data=np.array(ids, dtype="S"))
            g.create_dataset("gene_names", data=np.array(names, dtype="S"))


@pytest.mark.parametrize("version", [3, 2])
def test_tenx_h5_reads_cells_by_genes_sparse(tmp_path, version):
    rng = np.random.default_rng(0)
    G = sp.random(9, 7, density=0.4, random_state=1, format="csc")
    G.data = np.ceil(G.data * 30)
    ids = [f"ENSG{j:011d}" for j in range(9)]
    names = [f"GENE{j}" for j in range(8)] + ["GENE0"]
    barcodes = [f"AAAC{''.join(rng.choice(list('ACGT'), 8))}-1" for _ in range(7)]
    path = tmp_path / "filtered_feature_bc_matrix.h5"
    _write_10x(path, G, ids, names, barcodes, version=version)
    got = load_file(path)
    assert sp.issparse(got.X) and got.X.dtype == np.float32 and got.X.shape == (7, 9)
    assert np.array_equal(got.X.toarray(), G.toarray().T)
    assert got.sample_names == barcodes and got.feature_names[-1] == "GENE0.1"
    assert got.extra["feature_ids"] == ids
    assert load_file(path, feature_names="id").feature_names == ids


def test_tenx_h5_malformed(tmp_path):
    G = sp.random(5, 4, density=0.6, random_state=2, format="csc")
    ids, names = [f"E{j}" for j in range(5)], [f"G{j}" for j in range(5)]
    path = tmp_path / "a.h5"
    _write_10x(path, G, ids, names, ["b1", "b2", "b1", "b4"])
    with pytest.raises(DataFormatError, match=r"duplicated barcode\(s\) \['b1'\]"):
        load_file(path)
    _write_10x(path, G, ids[:4], names[:4], ["b1", "b2", "b3", "b4"])
    with pytest.raises(DataFormatError, match=r"5 features x 4 barcodes but the file lists 4 feature ids"):
        load_file(path)
    data = (tmp_path / "a.h5").read_bytes()
    with pytest.raises(DataFormatError, match=r"not a readable HDF5 file|damaged"):
        load_file(data[: len(data) // 2], filename="cut.h5")
    with h5py.File(tmp_path / "o.h5", "w") as f:
        f.create_dataset("x", data=np.zeros(3))
    with pytest.raises(DataFormatError, match=r"not a 10x \(Cell Ranger\) HDF5 matrix"):
        load_file(tmp_path / "o.h5")
    _write_10x(path, G, ids, names, ["b1", "b2", "b3", "b4"])
    with h5py.File(path, "r+") as f:
        idx = f["matrix/indices"][()]
        idx[0] = 99
        f["matrix/indices"][...] = idx
    with pytest.raises(DataFormatError, match=r"feature index outside \[0, 5\)"):
        load_file(path)
    with h5py.File(path, "r+") as f:  # a forged shape: refused before any array is read
        f["matrix/shape"][...] = np.array([2_000_000_000, 4], dtype=np.int32)
    with pytest.raises(DataFormatError, match=r"about [\d,]+ bytes in memory, over 4 x the size cap max_bytes="):
        load_file(path)
