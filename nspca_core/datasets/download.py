"""Downloads: streamed, size-capped and atomic; a real set is fetched, parsed,
verified and cached as ``.npz``, a UCI corpus fetched into ``<cache>/raw``.
"""

from __future__ import annotations

import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from .checksums import _verify
from .local import _save_npz, cache_dir
from .types import ChecksumError, DatasetInfo, DatasetUnavailableError


#: download size cap (bytes) -- the largest original (MLL, text) is ~20 MB
MAX_DOWNLOAD_BYTES = 300_000_000


_BOW_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words/"


def _fetch(url: str, dest: Path) -> None:
    """Download ``url`` to ``dest`` (streamed, size-capped, atomic rename)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=30) as resp:
            total = 0
            while True:
                chunk = resp.read(1 << 20)
                if not chunk:
                    break
                total += len(chunk)
                if total > MAX_DOWNLOAD_BYTES:
                    raise DatasetUnavailableError(
                        f"download of {url} exceeds {MAX_DOWNLOAD_BYTES} bytes; stopped")
                out.write(chunk)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _fetch_or_explain(url: str, dest: Path, data_dir, advice) -> None:
    """:func:`_fetch`, or a DatasetUnavailableError "could not reach URL (reason)" followed by
    ``advice(where)``, ``where`` naming the folder searched for local copies."""
    try:
        _fetch(url, dest)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        where = (f"data_dir={data_dir}" if data_dir is not None else
                 f"NSPCA_DATA_DIR={os.environ.get('NSPCA_DATA_DIR', '(unset)')}")
        raise DatasetUnavailableError(f"could not reach {url} ({reason})" + advice(where)) from None


def _download(info: DatasetInfo, data_dir=None) -> Path:
    """Fetch ``info.url`` to ``<cache>/raw/<info.raw_filename>``, parse it with
    ``info.parser``, verify and cache it as ``info.filename``; return the cached ``.npz``."""
    parse = info.parser
    target = cache_dir() / info.filename
    raw = cache_dir() / "raw" / info.raw_filename
    if not raw.is_file():
        _fetch_or_explain(info.url, raw, data_dir,
                          lambda where: f"; put {info.filename} in {where} (or in the cache "
                                        f"{cache_dir()}) and try again")
    try:
        arrays = parse(raw)
    except DatasetUnavailableError:
        raise
    except Exception as exc:
        raise DatasetUnavailableError(f"could not parse the download {raw} of {info.name!r}: "
                                      f"{exc}; delete it and try again") from None
    try:
        _verify(info, arrays, f"the download {info.url}")
    except ChecksumError:
        raw.unlink(missing_ok=True)  # a bad download must not be reused by the next attempt
        raise
    _save_npz(target, arrays)
    return target


def _download_bow(info: DatasetInfo, data_dir) -> tuple[Path, Path]:
    """Fetch docword + vocab of a UCI corpus into ``<cache>/raw`` (kept across calls)."""
    raw = cache_dir() / "raw"
    out = []
    for fname in (f"docword.{info.name}.txt.gz", f"vocab.{info.name}.txt"):
        dest = raw / fname
        if not dest.is_file():
            url = _BOW_URL + fname
            _fetch_or_explain(url, dest, data_dir,
                              lambda where: ": this machine seems to be offline; download "
                                            f"docword.{info.name}.txt.gz and vocab.{info.name}.txt "
                                            f"from {_BOW_URL} by hand and put them in {where} (or "
                                            f"in {raw}), then try again")
        out.append(dest)
    return out[0], out[1]
