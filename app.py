"""Nonnegative sparse PCA — the app.

Start with ``make run`` (or ``streamlit run app.py``).  This file only sets up
the page, the navigation over the files in ``pages/`` and the shared sidebar;
each page composes widgets -> cached compute (``ui/compute*.py``) -> figures
(``ui/figures/``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import jobs, shutdown, streamlit_runtime, style
from ui.live import heartbeat
from ui.sidebar import draw_sidebar, mark_through_app

ROOT = Path(__file__).resolve().parent

# (file, title, icon) per section; the first page is the default.
PAGES = {
    "Learn": [
        ("pages/home.py", "Guided tour", ":material/school:"),
        ("pages/spannogram_d2.py", "Spannogram, d = 2", ":material/show_chart:"),
        ("pages/spannogram_d3.py", "Spannogram, d = 3", ":material/grid_on:"),
        ("pages/feasible_arc.py", "Feasible arc of (P₂)", ":material/donut_large:"),
    ],
    "Analyse": [
        ("pages/variance_vs_k.py", "Variance vs k, certified", ":material/verified:"),
        ("pages/components_images.py", "Components as images", ":material/image:"),
        ("pages/compare.py", "Compare algorithms", ":material/compare_arrows:"),
        ("pages/several_components.py", "Several components", ":material/stacked_bar_chart:"),
        ("pages/nonneg_scores.py", "Nonnegative-score PCA", ":material/scatter_plot:"),
        ("pages/labelled.py", "Features by class", ":material/table_chart:"),
        ("pages/topics.py", "Topics (text data)", ":material/article:"),
    ],
    "Your data": [
        ("pages/your_data.py", "Your data", ":material/upload_file:"),
    ],
}


def build_navigation() -> dict[str, list]:
    """st.Page objects for the page files that exist (a missing file is skipped)."""
    sections: dict[str, list] = {}
    default_set = False
    for section, entries in PAGES.items():
        pages = []
        for path, title, icon in entries:
            if not (ROOT / path).is_file():
                continue
            pages.append(st.Page(path, title=title, icon=icon, default=not default_set))
            default_set = True
        if pages:
            sections[section] = pages
    return sections


st.set_page_config(page_title="Nonnegative sparse PCA", page_icon=":material/scatter_plot:",
                   layout="wide", initial_sidebar_state="auto")
page = st.navigation(build_navigation(), position="sidebar", expanded=True)
jobs.REGISTRY.warm()  # the worker processes' forkserver, started once
if not shutdown.installed():  # SIGTERM cancels the jobs at once and ends the server with tabs open
    streamlit_runtime.on_server_loop(lambda: shutdown.install(jobs.cancel_all))
streamlit_runtime.serve_frontend_from_memory()  # Streamlit's frontend files gzipped from memory, once per server
streamlit_runtime.send_shipped_figures_prebuilt()  # the teaching pages' figures encoded once per server
if st.get_option("server.fileWatcherType") == "none":  # served, not developed: config files polled every 5 s
    streamlit_runtime.poll_files_every(5.0)
style.apply()
draw_sidebar(page=page.url_path)  # the page's address: a message about k stays on its page
mark_through_app()
page.run()
heartbeat()  # after the page: lists (and keeps alive) the work it started
