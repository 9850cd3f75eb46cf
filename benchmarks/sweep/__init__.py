"""Benchmark sweeps: run the standard benchmarks on on-prem servers over SSH and on cloud
instances launched for the purpose, with a cost preview, a dollar cap and teardown.

spec (TOML spec -> SweepSpec), state (one JSON file per sweep), preview (expected
minutes and dollars from injected prices and throughput), orchestrate (targets in
parallel, budget, teardown), startup (the dead-man switch), backends (provisioner
registry), cli (`gpuplan sweep ...`). Nothing here imports planner or pricing: prices
and expected throughput come in as plain data (planner.sweep_preview builds them).
"""
