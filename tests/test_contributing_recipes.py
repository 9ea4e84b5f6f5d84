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


# ------------------------------------------------------------------- one method of the paper

PAPER_MODULE = '''"""Section 3.1 on the top eigenvector alone (d = 1): a demonstration method of the ICML 2014
paper, added by following CONTRIBUTING.md."""

from __future__ import annotations

import numpy as np

from .._common.rank1 import rank1_point

__all__ = ["u1_nspca"]


def u1_nspca(V: np.ndarray, k: int, *, callback=None) -> np.ndarray:
    """The k largest entries of +u1 or -u1, whichever holds more of it (Asteris et al. 2014, §3.1):
    the exact optimum on the rank-1 approximation ``A_1 = V[:, :1] V[:, :1]^T``."""
    x = rank1_point(V[:, 0], k)
    if callback is not None:
        callback(1, 1)
    return x
'''

PAPER_SPEC = ('    MethodSpec("u1", "rank 1 (top eigenvector)", "u1", "single", "asteris2014", "#1B7A6E",\n'
              '               function="nspca_core.spannogram.u1:u1_nspca", symbol="diamond-tall"),\n')

PAPER_BRANCH = '''    if method == "u1":
        from .spannogram.u1 import u1_nspca

        V, eig = cov.factor(1)
        return _make_result(cov, u1_nspca(V, k, callback=callback), V, "u1", params, t0, {"eigenvalues": eig})
'''


def test_recipe_one_method_of_the_paper(checkout):  # noqa: F811 (the fixture)
    """Three files: the module (in spannogram/, working on the rank-d factor), its MethodSpec, and
    its branch in solve.fit_cov (the paper's methods are given ``cov.factor(d)``, not ``cov``)."""
    root = checkout
    (root / "nspca_core/spannogram/u1.py").write_text(PAPER_MODULE)
    registry = root / "nspca_core/methods.py"
    text = registry.read_text()
    end = text.index("\n)}", text.index("REGISTRY: dict[str, MethodSpec]")) + 1
    registry.write_text(text[:end] + PAPER_SPEC + text[end:])
    solve = root / "nspca_core/solve.py"
    text = solve.read_text()
    anchor = "    return _fit_auto(cov, k, d, eps, seed, callback, options, params, t0)\n"
    assert text.count(anchor) == 1
    solve.write_text(text.replace(anchor, PAPER_BRANCH + anchor))
    assert _changed(root) == {"nspca_core/spannogram/u1.py", "nspca_core/methods.py", "nspca_core/solve.py"}
    probe = _run(root, "-c", textwrap.dedent("""
        import numpy as np, nspca_core as nc
        from nspca_core.methods import PEERS
        assert "u1" in nc.METHODS and "u1" not in PEERS
        rng = np.random.default_rng(3)
        X = np.abs(rng.standard_normal((40, 9))) + np.outer(rng.standard_normal(40), np.ones(9))
        A = np.cov(X, rowvar=False, bias=True)
        w, U = np.linalg.eigh(A)
        u = U[:, -1]
        for k in (1, 3, 9):
            r = nc.fit(X, k=k, method="u1")
            assert r.x.min() >= 0 and np.count_nonzero(r.x) <= k and abs(np.linalg.norm(r.x) - 1) < 1e-12
            # brute force: the best support of size k for (u^T x)^2 over x >= 0 on either sign
            best = max(np.sort(np.clip(s * u, 0, None))[::-1][:k] @ np.sort(np.clip(s * u, 0, None))[::-1][:k]
                       for s in (1, -1))
            assert abs((u @ r.x) ** 2 - best) < 1e-12, (k, (u @ r.x) ** 2, best)
            assert r.upper_bound >= r.variance * (1 - 1e-12)  # certified as every method
        from ui.figures import analysis
        assert analysis.method_label("u1") == "rank 1 (top eigenvector)"
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    help_text = _run(root, "-m", "nspca_core", "fit", "--help")
    assert help_text.returncode == 0 and "u1" in help_text.stdout
    cli = _run(root, "-m", "nspca_core", "fit", "synthetic-planted", "--k", "3", "--method", "u1",
               "--out", str(root / "out"))
    assert cli.returncode == 0, cli.stderr[-3000:]
    _pytest(root, "tests/app_shell/test_registry.py", "tests/core/test_api.py")


# ------------------------------------------------------------------- one bound that optimizes

OFFDIAG = '''"""A bound that optimizes (a demonstration added by following CONTRIBUTING.md).

For x >= 0, ||x|| = 1, ||x||_0 <= k and any c >= 0: x^T (J - I) x = (sum x)^2 - 1 <= k - 1
(Cauchy-Schwarz), and x^T M x <= x^T M_+ x <= lambda_max(M_+) for M = A - c (J - I) (x >= 0:
the negative entries only lower it).  So OPT <= lambda_max((A - c(J - I))_+) + c (k - 1) for every
c >= 0, and the smallest over the c tried is a bound too.
"""

from __future__ import annotations

import numpy as np

_EPS = np.finfo(float).eps


def offdiag_bound(A: np.ndarray, k: int, tries: int = 24) -> float:
    """min over c in [0, max |A_ij|] (golden-section search) of lambda_max((A - c(J-I))_+) + c(k-1),
    each value raised by the rounding of eigvalsh (n eps ||M_+||_F times 4)."""
    n = A.shape[0]
    off = ~np.eye(n, dtype=bool)

    def value(c: float) -> float:
        M = np.where(off, A - c, A).clip(min=0.0)
        return float(np.linalg.eigvalsh(M)[-1]) + 4 * n * _EPS * float(np.linalg.norm(M)) + c * (k - 1)

    lo, hi = 0.0, float(np.abs(A).max())
    best = value(lo)
    g = (np.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = value(a), value(b)
    for _ in range(tries):
        best = min(best, fa, fb)
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = value(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = value(b)
    return min(best, fa, fb)
'''


def test_recipe_one_bound_that_optimizes(checkout):  # noqa: F811 (the fixture)
    """Two files: the bound's module in certificates/ and one line (and its import) in the dense
    driver `_certify_dense`; a path of k takes it at every k where it runs certify(k)."""
    root = checkout
    (root / "nspca_core/certificates/offdiag.py").write_text(OFFDIAG)
    single = root / "nspca_core/certificates/single.py"
    text = single.read_text()
    anchor = "    bounds.update(cheap_bounds_at(spec.spectrum(), k))"
    assert text.count(anchor) == 1
    text = text.replace(anchor, "    bounds[\"offdiag\"] = offdiag_bound(A, k)\n" + anchor)
    text = text.replace("from .dual import", "from .offdiag import offdiag_bound\nfrom .dual import", 1)
    single.write_text(text)
    assert _changed(root) == {"nspca_core/certificates/offdiag.py", "nspca_core/certificates/single.py"}
    probe = _run(root, "-c", textwrap.dedent("""
        import numpy as np
        from nspca_core import certify
        from tests.bruteforce import brute_opt
        rng = np.random.default_rng(5)
        tighter = 0
        for trial in range(12):
            m, n = 30, int(rng.integers(5, 10))
            X = np.abs(rng.standard_normal((m, n))) + rng.uniform(0, 2) * np.abs(rng.standard_normal((m, 1)))
            A = X.T @ X / m
            for k in range(1, n + 1):
                c = certify(X, k=k, center=False, effort="fast")
                assert c.bounds["offdiag"] >= brute_opt(A, k)[0] * (1 - 1e-12), (trial, k, c.bounds)
                assert c.upper_bound <= c.bounds["offdiag"]
                tighter += c.bounds["offdiag"] < np.linalg.eigvalsh(np.clip(A, 0, None))[-1] * (1 - 1e-9)
        assert tighter > 0  # the search over c gains over c = 0 somewhere
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    _pytest(root, "tests/core/certificates/test_single.py")
