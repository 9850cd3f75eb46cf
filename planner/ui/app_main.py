"""The Streamlit app's entry script: page set-up and navigation (`gpuplan app` runs it).

Page paths are absolute, so the script works from a checkout (app.py imports it) and from
an installed package alike.
"""

from pathlib import Path

import streamlit as st

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


def run() -> None:
    """Configure the page and run the navigation (one call per script run)."""
    st.set_page_config(page_title="gpuplan", page_icon="📈", layout="wide")
    pages = [
        st.Page(PAGES / script, title=title, icon=icon, url_path=path, default=path is None)
        for script, title, icon, path in NAVIGATION
    ]
    st.navigation(pages).run()


if __name__ == "__main__":
    run()
