"""Streamlit pages. Inputs -> planner calls -> tables and charts; no math here."""
