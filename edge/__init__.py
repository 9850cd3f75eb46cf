"""The bottom layer: helpers every package uses, importing nothing of gpuplan's.

format (money, durations, percentages as people read them), tables (tables that fit the
terminal), console (terminal output of outside text as written, warn and abort), choices
(the closest choice and its "did you mean" hint), files (bounded reads, JSON within a
depth, atomic writes). planner, pricing and benchmarks import from here; edge imports
none of them.
"""
