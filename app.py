"""gpuplan's Streamlit app: `streamlit run app.py`. Pages live in planner/ui/."""

import streamlit as st

st.set_page_config(page_title="gpuplan", page_icon="📈", layout="wide")
PAGES = "planner/ui/pages"
st.navigation(
    [
        st.Page(f"{PAGES}/page_plan.py", title="Plan", icon=":material/explore:", default=True),
        st.Page(
            f"{PAGES}/page_scaling.py",
            title="Scaling",
            icon=":material/trending_up:",
            url_path="scaling",
        ),
        st.Page(
            f"{PAGES}/page_onprem.py",
            title="Cloud vs on-prem",
            icon=":material/apartment:",
            url_path="onprem",
        ),
        st.Page(
            f"{PAGES}/page_benchmarks.py",
            title="Benchmarks",
            icon=":material/timer:",
            url_path="benchmarks",
        ),
        st.Page(
            f"{PAGES}/page_prices.py", title="Prices", icon=":material/sell:", url_path="prices"
        ),
    ]
).run()
