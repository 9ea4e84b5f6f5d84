"""Tests of the app (app.py, pages/, ui/): AppTest pages, figures, background jobs, headless Chromium."""
