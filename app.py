"""gpuplan's Streamlit app from a checkout: `streamlit run app.py` (or `gpuplan app`)."""

from planner.ui.app_main import run

run()
