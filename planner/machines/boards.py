"""Boards whose GPUs link to each other directly, without a switch, and the share of a
GPU's link bandwidth a collective among some of them can use.

An NVSwitch lets every GPU of a board reach every other at its whole NVLink rate; NVIDIA
fits NVSwitch to its 8-GPU HGX baseboards (A100, H100, H800, H200, B200, B300: the NVIDIA
AI Enterprise documentation's "NVIDIA NVSwitch" platform list), and cloud instances of 1,
2 or 4 such GPUs are slices of those boards. Without a switch each GPU's links are split
among its peers:
- AMD's Instinct MI300X, MI325X and MI355X platforms join eight OAM GPUs, each by 7
  Infinity Fabric links, one to every other GPU (the spec table's "7 links x 128 GB/s");
- a node of four NVIDIA GPUs (an HGX 4-GPU board, or NVL cards under a 4-way bridge) splits
  each GPU's NVLinks among its 3 peers (an even split assumed). An on-prem server of 3 to 7
  SXM GPUs is such a board (server_board_gpus); a cloud instance of 4 is a slice of a
  switched 8-GPU board, so only a source or the user says a node is one.
A ring collective among k of a board's g GPUs uses k - 1 of each GPU's g - 1 peer links
(NCCL and RCCL lay their rings over different links): (k - 1) / (g - 1) of the GPU's link
bandwidth (link_share).
"""

from __future__ import annotations

import numpy as np

from planner.machines.specs import load_specs

# GPUs whose platform is a switchless board, and its GPU count (module docstring).
DIRECT_LINK_BOARDS = {"MI300X": 8, "MI325X": 8, "MI355X": 8}


def board_gpus(gpu_name: str, stated: int = 0) -> int:
    """GPUs on the switchless board `gpu_name` sits on: `stated` (a node its source
    describes, above 1), else its platform's (DIRECT_LINK_BOARDS); 0 on a switched board."""
    return stated if stated > 1 else DIRECT_LINK_BOARDS.get(gpu_name, 0)


def server_board_gpus(gpu_name: str, gpus_per_server: int) -> int:
    """GPUs on the board of an on-prem server of `gpus_per_server` `gpu_name`s: all of them
    where they are 3 to 7 SXM modules (a board without NVSwitch, module docstring), else
    the GPU's own platform's (board_gpus)."""
    specs = load_specs()
    form = str(specs.at[gpu_name, "form_factor"]) if gpu_name in specs.index else ""
    if form.startswith("SXM") and 3 <= gpus_per_server <= 7:
        return gpus_per_server
    return board_gpus(gpu_name)


def link_share(ranks: np.ndarray | float, board: int) -> np.ndarray:
    """Share of each GPU's link bandwidth a ring collective among `ranks` GPUs of one board
    of `board` directly linked GPUs uses: (ranks - 1) / (board - 1), at most 1; 1 on a
    switched board (board 0)."""
    ranks = np.asarray(ranks, float)
    if board <= 1:
        return np.ones_like(ranks)
    return np.clip((ranks - 1.0) / (board - 1.0), 1.0 / (board - 1.0), 1.0)
