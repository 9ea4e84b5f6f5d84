"""The page tests share the app tests' fixtures: a headless Chromium per module, and no background
work left running after a test (``tests/app/conftest.py``)."""

from tests.app.conftest import _no_background_work_left, browser  # noqa: F401 - pytest fixtures
