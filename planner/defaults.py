"""Defaults that the CLI shows in its help and the engine uses.

This module imports nothing heavy, so `gpuplan --help` can show them without loading
pandas, numpy or scipy.
"""

DEFAULT_MAX_GPUS = 512
DEFAULT_DRAWS = 10_000
MAX_DRAWS = 1_000_000  # Monte Carlo draws a request may ask for
# Assumed checkpoint and restart costs when a caller has no measurement (planning figures,
# not sourced): a checkpoint of model + optimizer state to network storage takes minutes;
# a restart is a new spot instance, boot, container start and checkpoint reload.
DEFAULT_CHECKPOINT_HOURS = 5 / 60  # assumption; typical range 1-15 min
DEFAULT_RESTART_HOURS = 0.25  # assumption; typical range 5-60 min
