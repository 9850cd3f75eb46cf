"""The Streamlit app's entry script: page set-up and navigation (`gpuplan app` runs it).

Page paths are absolute, so the script works from a checkout (app.py imports it) and from
an installed package alike.
"""

from pathlib import Path

import streamlit as st

PAGES = Path(__file__).resolve().parent / "pages"


def run() -> None:
    """Configure the page and run the navigation (one call per script run)."""
    st.set_page_config(page_title="gpuplan", page_icon="📈", layout="wide")
    st.navigation(
        [
            st.Page(PAGES / "page_plan.py", title="Plan", icon=":material/explore:", default=True),
            st.Page(
                PAGES / "page_scaling.py",
                title="Scaling",
                icon=":material/trending_up:",
                url_path="scaling",
            ),
            st.Page(
                PAGES / "page_onprem.py",
                title="Cloud vs on-prem",
                icon=":material/apartment:",
                url_path="onprem",
            ),
            st.Page(
                PAGES / "page_benchmarks.py",
                title="Benchmarks",
                icon=":material/timer:",
                url_path="benchmarks",
            ),
            st.Page(
                PAGES / "page_prices.py",
                title="Prices",
                icon=":material/sell:",
                url_path="prices",
            ),
        ]
    ).run()


if __name__ == "__main__":
    run()
