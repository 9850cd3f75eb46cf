"""Page scripts for st.navigation (app.py): each draws one page when Streamlit runs it."""
