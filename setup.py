"""One build step beside pyproject.toml (which holds everything else): the wheel's package
``nspca_app`` carries the Streamlit app.

The checkout keeps the app at its top level (``app.py``, ``pages/``, ``ui/``, run by
``make run``); ``build_py`` copies those files, the app's ``.streamlit/config.toml`` (read
beside the main script) and the reproduction figures the presets show into
``<build>/nspca_app/``, so that ``pip install 'nspca-core[app]'`` then ``nspca app`` serves it.
An editable install copies nothing: ``nspca_app.app_dir()`` finds the checkout's files.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: what the installed app needs, as globs relative to the checkout's top level
APP_FILES = ("app.py", "pages/*.py", "ui/*.py", "ui/**/*.py", ".streamlit/config.toml",
             "reproduction/*.png", "reproduction/*.csv")


class BuildPyWithApp(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "nspca_app"
        for src in sorted({p for pattern in APP_FILES for p in ROOT.glob(pattern)}):
            if "__pycache__" in src.parts or not src.is_file():
                continue
            dst = target / src.relative_to(ROOT)
            dst.parent.mkdir(parents=True, exist_ok=True)
            self.copy_file(str(src), str(dst))


setup(cmdclass={"build_py": BuildPyWithApp})
