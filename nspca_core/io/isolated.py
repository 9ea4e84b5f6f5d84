"""Readers whose compiled code can crash the process on hostile bytes, run in a child process.

The fuzz tests found two: scipy's MAT reader and its fast Matrix Market reader each end the
whole process with a segmentation fault on a valid file with one byte changed (an upload
would take the app server down).  :func:`run_reader` runs such a reader in a fresh
interpreter (``python -I``) that gets the file's bytes on standard input and answers with a
JSON header and the arrays it read as a ``.npz`` (read here without pickle), or a JSON error.
A crash, a non-zero exit or a timeout becomes a :class:`DataFormatError` naming the file.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np

from .loaded import DataFormatError

__all__ = ["CHILD_PRELUDE", "MMREAD", "run_reader"]

#: Defines ``send(header, arrays)`` and ``fail(kind, message)`` for a reader script.
CHILD_PRELUDE = r"""
import io, json, sys
import numpy as np

def send(header, arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    head = json.dumps(header).encode()
    sys.stdout.buffer.write(len(head).to_bytes(8, "little") + head + buf.getvalue())
    sys.exit(0)

def fail(kind, message):
    sys.stdout.write(json.dumps({"error": kind, "message": message}))
    sys.exit(0)

data = sys.stdin.buffer.read()
"""


def run_reader(script: str, data: bytes, name: str, what: str, *, timeout: float = 300.0):
    """Run ``CHILD_PRELUDE + script`` on ``data``; returns ``(header, arrays)``.

    ``header`` is the script's JSON object (``{"error": kind, "message": ...}`` when it called
    ``fail``; the caller words that), ``arrays`` the arrays it sent by name.
    """
    unreadable = f"{name}: not a readable {what}"
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", CHILD_PRELUDE + script], input=data,
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DataFormatError(f"{unreadable} (its reader ran over {timeout:.0f} s)") from None
    if proc.returncode < 0:
        raise DataFormatError(f"{unreadable} (the reader crashed on its content, signal "
                              f"{-proc.returncode})")
    if proc.returncode != 0:
        last = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["reader failed"])[-1]
        raise DataFormatError(f"{unreadable} ({last})")
    out = proc.stdout
    if out[:1] == b"{":
        return json.loads(out), {}
    size = int.from_bytes(out[:8], "little")
    header = json.loads(out[8:8 + size])
    with np.load(io.BytesIO(out[8 + size:]), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return header, arrays


#: ``scipy.io.mmread`` of the bytes (:func:`nspca_core.io.bow.read_mtx`): a sparse matrix as COO
#: arrays and its shape, a dense one as one array
MMREAD = r"""
import scipy.io, scipy.sparse
try:
    M = scipy.io.mmread(io.BytesIO(data))
except Exception as exc:
    fail("read", str(exc))
if scipy.sparse.issparse(M):
    M = scipy.sparse.coo_matrix(M)
    send({"dense": False, "shape": list(M.shape)}, {"row": M.row, "col": M.col, "data": M.data})
send({"dense": True}, {"A": np.asarray(M)})
"""
