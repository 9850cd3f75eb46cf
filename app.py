"""gpuplan's Streamlit app: `streamlit run app.py`. Pages live in planner/ui/."""

import streamlit as st

from planner.ui import plan_page

st.set_page_config(page_title="gpuplan", page_icon="📈", layout="wide")
plan_page.render()
