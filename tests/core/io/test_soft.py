"""GEO SOFT files (DataSet and family) read by load_file, against the table written."""

import gzip

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from nspca_core._common.validation import InputError
from nspca_core.io import DataFormatError, load_file

from .geo_writer import dataset_soft, family_soft


def _gds(m=6, n=9, seed=0, nan_at=None):
    rng = np.random.default_rng(seed)
    values = np.round(rng.gamma(2.0, 100.0, size=(n, m)), 1)
    if nan_at is not None:
        values[nan_at] = np.nan
    probes = [f"2000{i:02d}_s_at" for i in range(n)]
    symbols = [f"GENE{i // 2}" for i in range(n)]  # two probes per gene
    gsm = [f"GSM{11810 + j}" for j in range(m)]
    subsets = [("disease state", "RCC", gsm[: m // 2]), ("disease state", "normal", gsm[m // 2:]),
               ("individual", "all", gsm)]
    return values, probes, symbols, gsm, subsets


def test_dataset_soft_reads_the_table_subsets_and_names(tmp_path):
    values, probes, symbols, gsm, subsets = _gds()
    # a one-class subset type first: the default labels are the first type with >= 2 classes
    subsets = [subsets[2], subsets[0], subsets[1]]
    path = tmp_path / "GDS507.soft"
    path.write_text(dataset_soft(values, probes, symbols, gsm, subsets))
    got = load_file(path)
    assert got.format == "geo-soft"
    assert np.array_equal(got.X, values.T)
    assert got.sample_names == gsm and got.feature_names == probes
    assert got.labels.tolist() == ["RCC"] * 3 + ["normal"] * 3
    assert got.variable == "disease state"
    assert list(got.metadata["individual"]) == ["all"] * 6
    assert got.extra["gene_symbols"] == symbols
    assert any("disease state" in n and "individual" in n for n in got.notes)
    sym = load_file(path, feature_names="symbol")
    assert sym.feature_names[:4] == ["GENE0", "GENE0.1", "GENE1", "GENE1.1"]
    assert load_file(path, label_column="individual").labels.tolist() == ["all"] * 6
    with pytest.raises(InputError, match="label_column.*subset type"):
        load_file(path, label_column="tissue")


def test_dataset_soft_gz_bytes_and_unnamed_content_read_alike(tmp_path):
    values, probes, symbols, gsm, subsets = _gds(seed=3)
    text = dataset_soft(values, probes, symbols, gsm, subsets)
    plain = load_file(text.encode(), filename="GDS1.soft")
    gz = tmp_path / "GDS1.soft.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    for got in (load_file(gz), load_file(gz.read_bytes(), filename="GDS1.soft.gz"), load_file(text.encode())):
        assert np.array_equal(got.X, plain.X)
        assert got.feature_names == plain.feature_names and got.labels.tolist() == plain.labels.tolist()


def test_dataset_null_values_follow_nan_policy(tmp_path):
    values, probes, symbols, gsm, subsets = _gds(nan_at=(2, 1))
    path = tmp_path / "GDS2.soft"
    path.write_text(dataset_soft(values, probes, symbols, gsm, subsets))
    with pytest.raises(DataFormatError, match="NaN/inf"):
        load_file(path)
    got = load_file(path, nan_policy="drop-columns")
    assert probes[2] not in got.feature_names and got.X.shape == (6, 8)


def test_malformed_soft_files_are_refused_by_name(tmp_path):
    values, probes, symbols, gsm, subsets = _gds()
    text = dataset_soft(values, probes, symbols, gsm, subsets)
    cut = text[: text.index("!dataset_table_end")]
    (tmp_path / "a.soft").write_text(cut)
    with pytest.raises(DataFormatError, match="never ends.*truncated"):
        load_file(tmp_path / "a.soft")
    (tmp_path / "b.soft").write_text(text.replace("\t123", "\tabc", 1).replace(
        "\n" + probes[3] + "\t" + symbols[3] + "\t", "\n" + probes[3] + "\t" + symbols[3] + "\tabc\t", 1))
    with pytest.raises(DataFormatError, match="field|not a number"):
        load_file(tmp_path / "b.soft")
    bad = text.replace("\n" + probes[3] + "\t", "\n" + probes[3] + "x\t", 1)
    first_val = bad.split("\n" + probes[3] + "x\t" + symbols[3] + "\t", 1)
    bad = first_val[0] + "\n" + probes[3] + "x\t" + symbols[3] + "\tHIGH" + first_val[1][first_val[1].index("\t"):]
    (tmp_path / "c.soft").write_text(bad)
    line = 1 + next(i for i, ln in enumerate(bad.splitlines()) if ln.startswith(probes[3] + "x"))
    with pytest.raises(DataFormatError, match=f"'HIGH' at line {line}, sample column 'GSM11810' is not a number"):
        load_file(tmp_path / "c.soft")
    (tmp_path / "d.soft").write_text(text.replace("\n" + probes[4] + "\t", "\n" + probes[3] + "\t", 1))
    with pytest.raises(DataFormatError, match="duplicated probe.*2000"):
        load_file(tmp_path / "d.soft")
    gz = gzip.compress(text.encode())
    (tmp_path / "e.soft.gz").write_bytes(gz[: len(gz) // 2])
    with pytest.raises(DataFormatError, match="gzip file is truncated or damaged"):
        load_file(tmp_path / "e.soft.gz")
    (tmp_path / "f.soft").write_text("hello\tworld\n1\t2\n")
    with pytest.raises(DataFormatError, match="not a GEO SOFT file"):
        load_file(tmp_path / "f.soft")
    with pytest.raises(InputError, match="`platform` applies to GEO family"):
        load_file(text.encode(), filename="g.soft", platform="GPL1")
    with pytest.raises(InputError, match="`sheet` applies only to Excel"):
        load_file(text.encode(), filename="g.soft", sheet=0)


def _family(seed=0, shuffled=False):
    rng = np.random.default_rng(seed)
    ids = {"GPL8300": [f"{1000 + i}_at" for i in range(12)], "GPL91": [f"{3000 + i}_g_at" for i in range(5)]}
    syms = {p: [f"SYM{i}" for i in range(len(v))] for p, v in ids.items()}
    samples = []
    for j in range(7):
        p = "GPL8300" if j % 3 != 2 else "GPL91"  # 5 on GPL8300, 2 on GPL91
        order = list(range(len(ids[p])))
        if shuffled and j % 2:
            rng.shuffle(order)
        vals = np.round(rng.normal(500, 80, size=len(order)), 2)
        samples.append({"gsm": f"GSM{26790 + j}", "platform": p, "title": f"patient {j}",
                        "characteristics": [f"disease state: {'AML' if j % 2 else 'healthy'}", f"age: {30 + j}"],
                        "ids": [ids[p][i] for i in order], "values": vals, "order": order})
    return samples, {p: (ids[p], syms[p]) for p in ids}


def _expected(samples, platforms, gpl):
    ids = platforms[gpl][0]
    rows = []
    for s in samples:
        if s["platform"] != gpl:
            continue
        row = np.full(len(ids), np.nan)
        for i, v in zip(s["ids"], s["values"]):
            row[ids.index(i)] = v
        rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("shuffled", [False, True])
def test_family_soft_joins_samples_on_id_ref_per_platform(tmp_path, shuffled):
    samples, platforms = _family(shuffled=shuffled)
    path = tmp_path / "GSE1563_family.soft.gz"
    path.write_bytes(gzip.compress(family_soft(samples, platforms).encode()))
    got = load_file(path)
    assert got.extra["platform"] == "GPL8300"
    assert got.feature_names == platforms["GPL8300"][0]
    assert np.array_equal(got.X, _expected(samples, platforms, "GPL8300"))
    assert got.sample_names == [s["gsm"] for s in samples if s["platform"] == "GPL8300"]
    assert any("GPL91 (2 samples)" in n for n in got.notes)
    assert got.labels is None
    states = [s["characteristics"][0].split(": ")[1] for s in samples if s["platform"] == "GPL8300"]
    assert list(got.metadata["disease state"]) == states
    assert list(got.metadata["age"]) == [s["characteristics"][1][5:] for s in samples if s["platform"] == "GPL8300"]
    lab = load_file(path, label_column="disease state")
    assert lab.labels.tolist() == states
    other = load_file(path, platform="GPL91", feature_names="symbol")
    assert np.array_equal(other.X, _expected(samples, platforms, "GPL91"))
    assert other.feature_names == platforms["GPL91"][1]
    with pytest.raises(InputError, match="`platform` must be one of.*GPL8300 \\(5 samples\\)"):
        load_file(path, platform="GPL570")


def test_family_soft_malformed(tmp_path):
    samples, platforms = _family()
    text = family_soft(samples, platforms)
    last = text.rindex("!sample_table_end")
    (tmp_path / "a.soft").write_text(text[:last])
    with pytest.raises(DataFormatError, match="sample table starting on line .* never ends"):
        load_file(tmp_path / "a.soft", platform="GPL91")
    samples[1]["ids"][3] = samples[1]["ids"][2]
    (tmp_path / "b.soft").write_text(family_soft(samples, platforms))
    with pytest.raises(DataFormatError, match="sample GSM26791: duplicated ID_REF.*1002_at"):
        load_file(tmp_path / "b.soft")
    samples, platforms = _family()
    samples[0]["values"] = samples[0]["values"].astype(object)
    samples[0]["values"][4] = "low"
    (tmp_path / "c.soft").write_text(family_soft(samples, platforms))
    with pytest.raises(DataFormatError, match="'low' at line .*GSM26790, column VALUE"):
        load_file(tmp_path / "c.soft")


def test_family_probe_missing_from_one_sample_is_missing_there(tmp_path):
    samples, platforms = _family()
    s = samples[0]
    s["ids"], s["values"] = s["ids"][1:], s["values"][1:]
    path = tmp_path / "GSE_family.soft"
    path.write_text(family_soft(samples, platforms))
    with pytest.raises(DataFormatError, match="NaN/inf"):
        load_file(path)
    got = load_file(path, nan_policy="drop-columns")
    # the first sample lacks the first probe; the join puts it last (order of first appearance)
    assert sorted(got.feature_names) == sorted(platforms["GPL8300"][0][1:])


@settings(max_examples=25, deadline=None)
@given(m=st.integers(2, 6), n=st.integers(2, 8), seed=st.integers(0, 10_000), gz=st.booleans())
def test_dataset_soft_round_trip_property(m, n, seed, gz):
    values, probes, symbols, gsm, subsets = _gds(m=m, n=n, seed=seed)
    rng = np.random.default_rng(seed)
    values = np.round(rng.normal(0, 1000, size=(n, m)), int(rng.integers(0, 6)))
    values[:, 0] += np.arange(n)  # no constant column issue; constants are allowed anyway
    text = dataset_soft(values, probes, symbols, gsm, subsets).encode()
    data = gzip.compress(text) if gz else text
    got = load_file(data, filename="GDS9.soft" + (".gz" if gz else ""))
    assert np.array_equal(got.X, values.T)


def test_soft_recognised_by_content_in_an_upload_named_txt():
    import io

    values, probes, symbols, gsm, subsets = _gds(seed=5)
    text = dataset_soft(values, probes, symbols, gsm, subsets).encode()

    class Upload(io.BytesIO):
        name = "GDS5_full.txt"

    got = load_file(Upload(text))
    assert got.format == "geo-soft" and np.array_equal(got.X, values.T)


@pytest.mark.parametrize("kind", ["bz2", "xz"])
def test_soft_in_other_compressions(tmp_path, kind):
    import bz2
    import lzma

    values, probes, symbols, gsm, subsets = _gds(seed=7)
    text = dataset_soft(values, probes, symbols, gsm, subsets).encode()
    path = tmp_path / f"GDS7.soft.{kind}"
    path.write_bytes((bz2.compress if kind == "bz2" else lzma.compress)(text))
    assert np.array_equal(load_file(path).X, values.T)
    cap = path.stat().st_size + 10  # the file fits, its content does not
    with pytest.raises(DataFormatError, match=rf"expands to more than the size cap max_bytes={cap:,}"):
        load_file(path, max_bytes=cap)


def test_family_default_platform_is_the_one_with_most_samples_wherever_listed(tmp_path):
    samples, platforms = _family()
    ids = platforms["GPL91"][0]
    for s in samples[:4]:  # move 4 samples to GPL91: 6 there, 1 left on GPL8300 (listed first)
        if s["platform"] == "GPL8300":
            s["platform"], s["ids"], s["values"] = "GPL91", list(ids), np.arange(len(ids), dtype=float) + len(s["gsm"])
    counts = {p: sum(s["platform"] == p for s in samples) for p in platforms}
    best = max(counts, key=counts.get)
    path = tmp_path / "GSE2_family.soft"
    path.write_text(family_soft(samples, platforms))
    got = load_file(path, nan_policy="drop-columns")
    assert got.extra["platform"] == best == "GPL91"
    assert got.extra["platforms"] == counts
    assert any(f"GPL8300 ({counts['GPL8300']} samples)" in n for n in got.notes)


@settings(max_examples=20, deadline=None)
@given(data=st.data(), m=st.integers(2, 6), n=st.integers(2, 7), declared=st.booleans())
def test_family_join_equals_a_brute_force_pivot(data, m, n, declared):
    """Samples listing any subset of the probes in any order: the join puts each value at its
    (sample, probe) and NaN elsewhere, probes in order of first appearance."""
    ids = [f"{500 + i}_at" for i in range(n)]
    samples = []
    for j in range(m):
        mine = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=n, unique=True))
        vals = data.draw(st.lists(st.integers(-999, 999), min_size=len(mine), max_size=len(mine)))
        samples.append({"gsm": f"GSM{j}", "platform": "GPL1", "title": f"t{j}", "ids": mine,
                        "values": [v / 4 for v in vals]})
    text = family_soft(samples, {"GPL1": (ids, [f"S{i}" for i in range(n)])})
    if not declared:  # no ^SERIES sample list: the matrix is not sized up front
        text = "\n".join(ln for ln in text.split("\n") if not ln.startswith("!Series_sample_id"))
    order = list(dict.fromkeys(i for s in samples for i in s["ids"]))
    expect = np.full((m, len(order)), np.nan)
    for r, s in enumerate(samples):
        for i, v in zip(s["ids"], s["values"]):
            expect[r, order.index(i)] = v
    if len(order) < 2:  # one probe: refused as a single column (tested elsewhere)
        return
    got = load_file(text.encode(), filename="GSE9_family.soft", nan_policy="impute-mean" if np.isnan(expect).any()
                    else "error")
    assert got.feature_names == order
    want = expect.copy()
    if np.isnan(want).any():
        means = np.nanmean(want, axis=0)
        want[np.isnan(want)] = np.take(means, np.nonzero(np.isnan(want))[1])
    np.testing.assert_array_equal(got.X, want)
