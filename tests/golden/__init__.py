"""Golden CLI outputs. The cases, how each runs and how its output is normalised are in
tools/golden_cases.py, shared with tools/update_golden.py (which records them)."""
