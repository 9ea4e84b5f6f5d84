"""Fingerprints of the public outputs, to show that a refactor keeps behaviour bit for bit.

``python -m tools.fingerprint_core OUT.json`` runs ``fit`` (every method), ``components`` (every
strategy, with and without ``certify``), ``certify`` and ``certify_components`` on several small
inputs (dense data, a covariance, sparse data, a Dask array on the default scheduler) and on CBCL
(when ``NSPCA_DATA_DIR`` holds it), and writes one SHA-256 per case of everything a result holds
except wall-clock times.  ``python -m tools.fingerprint_core --compare BEFORE.json AFTER.json``
prints "N/N bit-identical" and the cases that differ.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import warnings

import numpy as np
import scipy.sparse as sp

_TIME_KEYS = ("seconds", "time", "elapsed")


def _canon(obj, out: list) -> None:
    """Append a canonical byte form of ``obj`` (floats by their bits; times left out)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out.append(type(obj).__name__.encode())
        for f in dataclasses.fields(obj):
            if any(t in f.name for t in _TIME_KEYS):
                continue
            out.append(f.name.encode())
            _canon(getattr(obj, f.name), out)
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            if any(t in str(key) for t in _TIME_KEYS):
                continue
            out.append(str(key).encode())
            _canon(obj[key], out)
    elif isinstance(obj, (list, tuple)):
        out.append(b"[%d" % len(obj))
        for v in obj:
            _canon(v, out)
    elif isinstance(obj, np.ndarray):
        out.append(str(obj.dtype).encode() + str(obj.shape).encode())
        out.append(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, (float, np.floating)):
        out.append(np.float64(obj).tobytes())
    elif isinstance(obj, (bool, int, np.integer, str, type(None))):
        out.append(repr(obj).encode())
    else:
        out.append(type(obj).__name__.encode())


def digest(obj) -> str:
    parts: list = []
    _canon(obj, parts)
    return hashlib.sha256(b"\x00".join(parts)).hexdigest()


def _inputs():
    rng = np.random.default_rng(7)
    X1 = rng.standard_normal((30, 12)) @ rng.standard_normal((12, 12))
    X1 -= X1.mean(axis=0)
    X2 = np.abs(rng.standard_normal((8, 20))) * rng.random(20)  # thin (m < n), nonnegative
    X2 -= X2.mean(axis=0)
    B = rng.standard_normal((10, 10))
    A = B @ B.T / 10
    rho = 0.3
    E = np.full((8, 8), rho) + (1 - rho) * np.eye(8)
    S = sp.random(40, 15, density=0.3, random_state=3, format="csr")
    return {"gauss12": dict(X=X1), "thin20": dict(X=X2), "cov10": dict(cov=A), "equi8": dict(cov=E),
            "sparse15": dict(X=S)}


def cases():
    import nspca_core as nc

    data = _inputs()
    for name, kw in data.items():
        n = (kw.get("X") if kw.get("X") is not None else kw["cov"]).shape[1]
        for method in nc.METHODS:
            if name == "sparse15" and method in ("zass", "sklearn-spca", "nmf"):
                continue
            if method == "nmf" and "X" not in kw:
                continue
            extra = {"data": np.abs(kw["X"])} if method == "nmf" else {}
            for k in (2, min(5, n)):
                yield f"fit/{name}/{method}/k{k}", lambda kw=kw, method=method, k=k, extra=extra: nc.fit(
                    **kw, k=k, method=method, certify=False, **extra)
        yield f"fit/{name}/auto/k3/certify", lambda kw=kw: nc.fit(**kw, k=3)
        yield f"certify/{name}/k3", lambda kw=kw: nc.certify(**kw, k=3)
        for strategy in nc.api.STRATEGIES:
            methods = ("auto", "tpower", "em") if strategy.startswith("deflation") else ("auto",)
            for method in methods:
                for cert in (False, True):
                    if cert and name == "sparse15" and strategy == "quasi-orthogonal":
                        continue
                    yield (f"components/{name}/{strategy}/{method}/cert{int(cert)}",
                           lambda kw=kw, s=strategy, m=method, c=cert: nc.components(
                               **kw, n_components=3, k=3, strategy=s, method=m, certify=c))
        if "sparse" not in name:
            yield f"certify_components/{name}", lambda kw=kw: _certify_components(kw)
    # the peers' own multi-component routines and the deflation baselines
    from nspca_core.operators.covariance import as_cov
    try:
        from nspca_core.peers.bipartite import deflation_components
    except ImportError:  # before it moved there
        from nspca_core.deflation import deflation_components
    from nspca_core.peers import em_components, zass_components

    C = as_cov(data["gauss12"]["X"], None)
    for method in ("tpower", "em", "spannogram"):
        yield f"deflation_components/{method}", lambda m=method: deflation_components(C, 3, 3, method=m, d=3)
    yield "em_components/remove", lambda: em_components(C, 3, 3)
    yield "em_components/project", lambda: em_components(C, 3, 3, nonneg=False)
    yield "em_components/quasi", lambda: em_components(C, 3, 3, min_angle=70)
    yield "zass_components", lambda: zass_components(C, 3)
    yield "partial", lambda: nc.components(**data["gauss12"], n_components=3, k=3,
                                           partial=nc.components(**data["gauss12"], n_components=1, k=3))
    yield "k_per_component", lambda: nc.components(**data["gauss12"], n_components=3, k=[2, 3, 4], certify=True)
    # Dask on the default (threaded) scheduler; persist given (its "auto" reason names the free memory)
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover
        da = None
    if da is not None:
        Xd = da.from_array(data["gauss12"]["X"], chunks=(10, 12))
        for method in ("tpower", "em", "auto"):
            yield f"dask/fit/{method}", lambda m=method: nc.fit(Xd, k=3, method=m, certify=False, persist=True)
        for strategy in ("deflation-remove", "deflation-project", "bipartite"):
            yield f"dask/components/{strategy}", lambda s=strategy: nc.components(
                Xd, n_components=2, k=3, strategy=s, method="tpower", persist=True)
    # CBCL
    try:
        ds = nc.load_dataset("cbcl")
    except Exception:  # noqa: BLE001 - not there: skipped
        ds = None
    if ds is not None:
        X = ds.X
        for method in ("auto", "tpower", "em", "enet"):
            yield f"cbcl/fit/{method}", lambda m=method: nc.fit(X, k=10, method=m, certify=m == "auto")
        for strategy in nc.api.STRATEGIES:
            yield f"cbcl/components/{strategy}", lambda s=strategy: nc.components(
                X, n_components=3, k=10, strategy=s, method="tpower", certify=s != "quasi-orthogonal")


def _certify_components(kw):
    import nspca_core as nc
    from nspca_core.certificates import certify_components

    res = nc.components(**kw, n_components=2, k=2, strategy="bipartite")
    return certify_components(**kw, k=2, loadings=res.loadings)


def run() -> dict:
    out = {}
    warnings.simplefilter("ignore")
    for name, fn in cases():
        try:
            res = fn()
            out[name] = digest(res)
        except Exception as exc:  # noqa: BLE001 - an error is a fingerprint too
            out[name] = f"error: {type(exc).__name__}: {exc}"
        print(name, out[name][:16], flush=True)
    return out


def compare(before: dict, after: dict) -> int:
    names = sorted(set(before) | set(after))
    same = [n for n in names if before.get(n) == after.get(n)]
    print(f"{len(same)}/{len(names)} bit-identical")
    for n in names:
        if before.get(n) != after.get(n):
            print(f"  differs: {n}: {before.get(n, 'absent')[:60]} -> {after.get(n, 'absent')[:60]}")
    return 0 if len(same) == len(names) else 1


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        with open(sys.argv[2]) as f1, open(sys.argv[3]) as f2:
            sys.exit(compare(json.load(f1), json.load(f2)))
    with open(sys.argv[1], "w") as fh:
        json.dump(run(), fh, indent=1, sort_keys=True)
