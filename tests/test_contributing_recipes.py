"""CONTRIBUTING.md, proven by doing (continued): the recipes for a real dataset, a method of the
ICML 2014 paper and a bound that optimizes, each applied to a temporary copy of the checkout
exactly as written, with the files it touches counted (see ``tests/test_contributing.py``)."""

from __future__ import annotations

import functools
import http.server
import json
import threading
import textwrap

import numpy as np

from tests.test_contributing import _changed, _pytest, _run, checkout  # noqa: F401 (a fixture)

# ------------------------------------------------------------------------------ one real dataset

PARSER = '''

def _parse_wine(path: Path) -> dict:
    """UCI ``wine.data`` (class, then 13 measurements per line, comma separated) ->
    ``X`` (m, 13), ``features``, ``labels``.  A demonstration parser (CONTRIBUTING.md)."""
    rows = [line.split(",") for line in path.read_text(encoding="ascii").splitlines() if line.strip()]
    if not rows or any(len(r) != 14 for r in rows):
        raise DatasetUnavailableError(f"{path.name}: expected 14 comma-separated fields per line")
    X = np.array([[float(v) for v in r[1:]] for r in rows])
    return {"X": X, "labels": np.array([r[0] for r in rows]),
            "features": np.array([f"measure_{j}" for j in range(1, 14)])}
'''

REAL_ENTRY = '''    _real_info(
        "wine", "Wine recognition", ({m}, 13), "wine.npz", "{url}",
        raw_filename="wine.data", parser=_parse_wine, checked_arrays=("X", "labels"),
        to_data=partial(_table_data, names_key="features", prefix="measure"),
        description="Chemical analysis of wines from three cultivars (a demonstration entry).",
        source="https://archive.ics.uci.edu/dataset/109/wine",
        citation="Aeberhard, S. & Forina, M. (1991). Wine. UCI Machine Learning Repository.",
        paper_preprocessing="features standardized"),
'''


def _wine_rows(m: int = 60) -> str:
    rng = np.random.default_rng(7)
    labels = rng.integers(1, 4, m)
    X = np.abs(rng.standard_normal((m, 13))) * np.arange(1, 14) + labels[:, None]
    return "".join(f"{c}," + ",".join(f"{v:.4f}" for v in row) + "\n" for c, row in zip(labels, X))


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_recipe_one_real_dataset(checkout, tmp_path, monkeypatch):  # noqa: F811 (the fixture)
    """Three files: a parser in parsers.py, an entry (and the parser's import) in registry.py, the
    parsed arrays' checksum in data/checksums.json; downloaded over HTTP from a local server."""
    root = checkout
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "wine.data").write_text(_wine_rows())
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_Quiet, directory=str(origin)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/wine.data"
        parsers = root / "nspca_core/datasets/parsers.py"
        parsers.write_text(parsers.read_text() + PARSER)                                   # 1. the parser
        registry = root / "nspca_core/datasets/registry.py"
        text = registry.read_text().replace("from .parsers import _parse_cbcl, _parse_lrs, _parse_mll",
                                            "from .parsers import _parse_cbcl, _parse_lrs, _parse_mll, _parse_wine")
        end = text.index("\n)}", text.index("_REGISTRY: dict[str, DatasetInfo]")) + 1
        registry.write_text(text[:end] + REAL_ENTRY.format(m=60, url=url) + text[end:])   # 2. the entry
        # 3. the checksum, computed as datasets/README.md says (the parsed arrays of the original)
        digest = _run(root, "-c", textwrap.dedent(f"""
            from pathlib import Path
            from nspca_core import datasets as D
            from nspca_core.datasets.parsers import _parse_wine
            a = _parse_wine(Path({str(origin / "wine.data")!r}))
            print(D.array_checksum({{k: a[k] for k in ("X", "labels")}}))
        """))
        assert digest.returncode == 0, digest.stderr[-3000:]
        sums = root / "nspca_core/data/checksums.json"
        record = json.loads(sums.read_text())
        record["wine"] = {"file": "wine.npz", "arrays": ["X", "labels"], "shapes": {"X": [60, 13], "labels": [60]},
                          "dtypes": {"X": "<f8", "labels": "<U1"}, "sha256": digest.stdout.strip()}
        sums.write_text(json.dumps(record, indent=2) + "\n")
        assert _changed(root) == {"nspca_core/datasets/parsers.py", "nspca_core/datasets/registry.py",
                                  "nspca_core/data/checksums.json"}

        cache = tmp_path / "cache"
        probe = _run(root, "-c", textwrap.dedent(f"""
            import os
            os.environ["NSPCA_CACHE_DIR"] = {str(cache)!r}
            os.environ.pop("NSPCA_DATA_DIR", None)
            import numpy as np
            import nspca_core as nc
            from nspca_core import datasets as D
            assert "wine" in [i.name for i in nc.list_datasets()] and not D.is_available("wine")
            try:
                nc.load_dataset("wine")
            except D.DatasetUnavailableError as e:
                assert "put wine.npz in NSPCA_DATA_DIR" in str(e), e
            else:
                raise AssertionError("no local copy and no download must be refused")
            ds = nc.load_dataset("wine", download=True)
            assert ds.X.shape == (60, 13) and ds.feature_names[0] == "measure_1"
            assert sorted(set(ds.labels.tolist())) <= ["1", "2", "3"]
            assert "checksum verified" in ds.notes[0] and D.is_available("wine")
            r = nc.fit(ds.X, k=3, certify=False)
            assert np.count_nonzero(r.x) <= 3 and r.x.min() >= 0
            print("ok")
        """))
        assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
        monkeypatch.setenv("NSPCA_CACHE_DIR", str(cache))  # the CLI finds the copy the download cached
        cli = _run(root, "-m", "nspca_core", "fit", "wine", "--k", "3", "--out", str(tmp_path / "out"))
        assert cli.returncode == 0, cli.stderr[-3000:]
        assert (tmp_path / "out" / "components.csv").is_file()
        _pytest(root, "tests/data/datasets/test_datasets.py")
    finally:
        server.shutdown()
        server.server_close()
