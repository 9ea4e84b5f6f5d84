"""``nspca app`` (serve the Streamlit app) and ``nspca --version``.

The app (``app.py``, ``pages/``, ``ui/``) is not part of ``nspca_core``: it is the
package ``nspca_app``, whose wheel carries those files (copied at build time by
``setup.py``) and whose checkout copy finds them at the checkout's top level
(:func:`nspca_app.app_dir`).  Streamlit runs in a child process of this
Python; nothing here imports streamlit.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import signal
import subprocess
import sys
import threading

from .. import __version__
from .errors import _BadInput

__all__ = ["add_app_command", "version_text", "app_dir", "app_command", "run_app", "DEFAULT_PORT",
           "DEFAULT_ADDRESS"]

DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "localhost"
_EXTRA = "pip install 'nspca-core[app]'"


def version_text() -> str:
    """What ``nspca --version`` prints: ``nspca <version>``."""

    return f"nspca {__version__}"


def add_app_command(sub) -> None:
    """The ``app`` subcommand on the parser's subparsers."""
    a = sub.add_parser("app", help="serve the interactive app in the browser (needs the [app] extra)",
                       description="Serve the interactive app (Streamlit) and print its address. "
                                   f"Needs the app's extra: {_EXTRA}. Ctrl-C stops it.")
    a.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT})")
    a.add_argument("--address", default=DEFAULT_ADDRESS,
                   help=f"address to listen on (default {DEFAULT_ADDRESS}; 0.0.0.0 for every interface)")


def app_dir():
    """The folder holding ``app.py``, ``pages/`` and ``ui/`` (from the package ``nspca_app``)."""
    if importlib.util.find_spec("nspca_app") is None:
        raise _BadInput(f"the app is not installed (no package nspca_app): {_EXTRA}")
    try:
        return importlib.import_module("nspca_app").app_dir()
    except FileNotFoundError as exc:
        raise _BadInput(str(exc)) from None


def app_command(port: int, address: str) -> list[str]:
    """The ``streamlit run`` command line serving the app (checked options)."""
    if not 1 <= port <= 65535:
        raise _BadInput(f"--port must be an int in [1, 65535]; got {port}")
    if not address or any(c.isspace() for c in address):
        raise _BadInput(f"--address must be a host name or IP address (e.g. localhost, 0.0.0.0); "
                        f"got {address!r}")
    if importlib.util.find_spec("streamlit") is None:
        raise _BadInput(f"the app needs streamlit and plotly, which are not installed: {_EXTRA}")
    return [sys.executable, "-m", "streamlit", "run", str(app_dir() / "app.py"),
            "--server.port", str(port), "--server.address", address, "--server.headless", "true",
            "--browser.gatherUsageStats", "false"]


# glibc's allocator settings for the server: freed arrays go back to the system (the app's
# ui.compute.tune_allocator says why; it sets the same once the app is imported)
SERVER_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 20), "MALLOC_ARENA_MAX": "2"}


def server_env() -> dict:
    """The server's environment: this one, with :data:`SERVER_MALLOC_ENV` where not set already."""
    env = dict(os.environ)
    for key, value in SERVER_MALLOC_ENV.items():
        env.setdefault(key, value)
    return env


def run_app(args) -> int:
    """Serve the app until Streamlit exits; SIGINT/SIGTERM are passed on to it."""
    cmd = app_command(args.port, args.address)
    print(f"serving the app at http://{args.address}:{args.port}  (Ctrl-C to stop)", file=sys.stderr,
          flush=True)
    proc = subprocess.Popen(cmd, env=server_env())
    previous = {}
    if threading.current_thread() is threading.main_thread():
        def forward(signum, frame):
            if proc.poll() is None:
                proc.send_signal(signum)

        previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            try:
                return proc.wait()
            except KeyboardInterrupt:  # the handler was not installed: stop the server ourselves
                proc.terminate()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
