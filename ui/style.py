"""Layout rules Streamlit has no option for: narrow screens (issue 21, item 4).

Streamlit stacks columns only below 640 px and collapses the sidebar only at
768 px or less; at 800–1000 px the 300 px sidebar and side-by-side columns
leave each figure a sliver.  :func:`apply` injects CSS that lets columns wrap
(each keeps at least ~20 rem; a column holding a figure takes the full width)
and gives every figure a minimum height, and a
small script that starts the sidebar collapsed on screens narrower than
:data:`NARROW_PX` (once per browser tab: a user who opens it keeps it open).
"""

from __future__ import annotations

import streamlit as st

NARROW_PX = 1000

CSS = f"""
<style>
@media (max-width: {NARROW_PX}px) {{
  [data-testid="stHorizontalBlock"] {{ flex-wrap: wrap; row-gap: 0.5rem; }}
  [data-testid="stHorizontalBlock"] > [data-testid="stColumn"] {{
    flex: 1 1 20rem !important; min-width: min(100%, 20rem) !important; }}
  /* a column holding a figure takes the whole width: its neighbours go above/below it */
  [data-testid="stHorizontalBlock"] > [data-testid="stColumn"]:has([data-testid="stPlotlyChart"]) {{
    flex: 1 1 100% !important; min-width: 100% !important; }}
  [data-testid="stMainBlockContainer"] {{ padding-left: 1rem; padding-right: 1rem; }}
}}
[data-testid="stPlotlyChart"] {{ min-height: 240px; }}
/* a multiselect's chips wrap onto more lines instead of scrolling out of the box under a fade
   ("TPo…", "deflation: proj…", issue 27 item 6); a chip keeps its whole label */
[data-testid="stMultiSelectTagsContainer"] {{ flex-wrap: wrap !important; overflow: visible !important;
  mask-image: none !important; -webkit-mask-image: none !important; height: auto !important; }}
[data-testid="stMultiSelect"] div:has(> [data-testid="stMultiSelectTagsContainer"]) {{
  height: auto !important; max-height: none !important; }}
[data-testid="stMultiSelectTagsContainer"] > span[role="group"] {{ flex-wrap: wrap !important; row-gap: 0.25rem; }}
[data-testid="stMultiSelectTagsContainer"] [data-tag] {{ max-width: none !important; flex-shrink: 0; }}
[data-testid="stMultiSelectTagsContainer"] [data-tag] > span {{ max-width: none !important;
  overflow: visible !important; text-overflow: clip !important; }}
/* a metric's label wraps instead of ending in "…" ("…: certified fraction of the b…" at 800 px) */
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * {{ white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; height: auto !important; }}
/* "Press Enter to apply" sat on top of the number in the narrow sidebar boxes */
[data-testid="stSidebar"] [data-testid="InputInstructions"] {{ display: none; }}
</style>
"""

# Collapse the sidebar once per tab on a narrow screen (Streamlit's own rule is <= 768 px).
SCRIPT = f"""
<script>
(function () {{
  const doc = window.parent ? window.parent.document : document;
  const win = window.parent || window;
  if (win.innerWidth > {NARROW_PX} || win.sessionStorage.getItem("nspcaSidebarAuto")) return;
  win.sessionStorage.setItem("nspcaSidebarAuto", "1");
  let tries = 0;
  const timer = win.setInterval(function () {{
    const bar = doc.querySelector('[data-testid="stSidebar"][data-collapsed="false"]');
    const btn = doc.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (bar && btn) {{ btn.click(); win.clearInterval(timer); }}
    if (++tries > 150) win.clearInterval(timer);
  }}, 100);
}})();
</script>
"""


def apply() -> None:
    """Inject the narrow-screen rules (call once per run, before the page)."""
    st.html(CSS)
    st.html(SCRIPT, unsafe_allow_javascript=True)
