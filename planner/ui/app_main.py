"""The Streamlit app's entry script: page set-up and navigation (`gpuplan app` runs it).

Page paths are absolute, so the script works from a checkout (app.py imports it) and from
an installed package alike.
"""

from pathlib import Path

import streamlit as st
from streamlit import config as streamlit_config

PAGES = Path(__file__).resolve().parent / "pages"
# The pages in the menu's order: script, title, icon and URL path (the Plan page is the
# default one, at the app's root).
NAVIGATION = (
    ("page_plan.py", "Plan", ":material/explore:", None),
    ("page_scaling.py", "Scaling", ":material/trending_up:", "scaling"),
    ("page_onprem.py", "Cloud vs on-prem", ":material/apartment:", "onprem"),
    ("page_benchmarks.py", "Benchmarks", ":material/timer:", "benchmarks"),
    ("page_prices.py", "Prices", ":material/sell:", "prices"),
)


# The wide layout's side margins (5 rem each) leave the main area 820 px at a 1280 px window
# with the sidebar open: too narrow for the Plan page's ranked table's first columns
# (option, hours, cost, P10-P90, $/GPU-hour, source, price date). 1 rem gives it 948 px.
MARGINS_CSS = (
    '<style>[data-testid="stMainBlockContainer"]{padding-left: 1rem; padding-right: 1rem;}</style>'
)


def run() -> None:
    """Configure the page and run the navigation (one call per script run)."""
    # Streamlit runs a full garbage collection after every script run (runner.postScriptGC):
    # over this app's heap (pandas, plotly, the shared caches) it was ~40% of the server's
    # CPU with five users (py-spy of tests/perf/load_app.py). Python's own generational
    # collector still runs; the load test shows the memory flat without the forced one.
    streamlit_config.set_option("runner.postScriptGC", False, where_defined=__name__)
    st.set_page_config(page_title="gpuplan", page_icon="📈", layout="wide")
    st.html(MARGINS_CSS)  # style only: Streamlit draws nothing for it
    pages = [
        st.Page(PAGES / script, title=title, icon=icon, url_path=path, default=path is None)
        for script, title, icon, path in NAVIGATION
    ]
    st.navigation(pages).run()


if __name__ == "__main__":
    run()
