"""gpuplan's Streamlit app: `streamlit run app.py`. Pages live in planner/ui/."""

import streamlit as st

st.set_page_config(page_title="gpuplan", page_icon="📈", layout="wide")
pages = [
    st.Page(
        "planner/ui/pages/page_plan.py", title="Plan", icon="🧭", url_path="plan", default=True
    ),
    st.Page("planner/ui/pages/page_scaling.py", title="Scaling", icon="📶", url_path="scaling"),
    st.Page(
        "planner/ui/pages/page_onprem.py", title="Cloud vs on-prem", icon="🏢", url_path="onprem"
    ),
    st.Page(
        "planner/ui/pages/page_benchmarks.py", title="Benchmarks", icon="⏱️", url_path="benchmarks"
    ),
    st.Page("planner/ui/pages/page_prices.py", title="Prices", icon="💲", url_path="prices"),
]
st.navigation(pages).run()
