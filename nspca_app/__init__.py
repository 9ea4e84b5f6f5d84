"""The Streamlit app as an installable package (``pip install 'nspca-core[app]'``, then ``nspca app``).

The app's files stay where the checkout keeps them (``app.py``, ``pages/``, ``ui/`` at
the top level, run by ``make run``); the wheel carries copies of them inside this
package (``setup.py`` copies them at build time).  :func:`app_dir` finds them in
either place.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["app_dir"]


def app_dir() -> Path:
    """The folder holding ``app.py``, ``pages/`` and ``ui/``: this package's own folder in an
    installed wheel, the checkout's top level in an editable install."""
    here = Path(__file__).resolve().parent
    for folder in (here, here.parent):
        if (folder / "app.py").is_file() and (folder / "pages").is_dir() and (folder / "ui").is_dir():
            return folder
    raise FileNotFoundError(f"the app's files (app.py, pages/, ui/) are neither in {here} nor in "
                            f"{here.parent}: reinstall with pip install 'nspca-core[app]'")
