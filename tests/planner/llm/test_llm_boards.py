"""Switchless boards (planner.machines.boards): a collective among some of a board's
directly linked GPUs has only their links; the corpus reads a stated 4-GPU node."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.io.examples import input_path
from planner.llm.corpus import load_corpus
from planner.llm.throughput import predict_layout
from planner.machines.boards import board_gpus, link_share, server_board_gpus
from planner.settings import LLMSettings, StatedLayout
from planner.workloads.catalog import get_workload

L8 = get_workload("llm-8b-10b")


def test_a_collective_among_k_of_g_directly_linked_gpus_has_k_minus_1_of_g_minus_1_links() -> None:
    shares = link_share(np.array([2.0, 4.0, 8.0]), 8)
    assert shares == pytest.approx([1 / 7, 3 / 7, 1.0])
    assert link_share(3.0, 4) == pytest.approx(2 / 3)
    assert link_share(np.array([2.0, 8.0]), 0) == pytest.approx([1.0, 1.0])  # switched


def test_amd_instinct_boards_are_switchless_and_nvidia_boards_switched_unless_stated() -> None:
    assert board_gpus("MI300X") == board_gpus("MI355X") == 8
    assert board_gpus("H100-SXM") == 0 and board_gpus("H200-SXM", stated=4) == 4
    with pytest.raises(ValueError, match="board_gpus 1: the GPUs of a switchless board"):
        LLMSettings(board_gpus=1)


def _tp_seconds(tp: int, board: int, gpus: int = 4) -> float:
    """Tensor-parallel seconds per step of Llama-3-8B at tp (dp the rest) on H200 SXM."""
    settings = LLMSettings(
        framework="fsdp", micro_batch=2, zero="zero3", recompute="none",
        pinned=StatedLayout(tp=tp, pp=1, vpp=1), global_batch_tokens=2**18, board_gpus=board,
    )  # fmt: skip
    layout = predict_layout(L8, "bf16", "H200-SXM", gpus, 4, 1600.0, settings=settings).layout
    assert layout.fits
    return layout.tp_share * layout.step_s


def test_tensor_parallelism_over_a_pair_of_a_4_gpu_board_has_a_third_of_the_links() -> None:
    switched, board = _tp_seconds(2, 0), _tp_seconds(2, 4)
    # bandwidth-bound rings: a third of the bandwidth, about three times the time
    assert 2.5 < board / switched <= 3.0
    # all four GPUs of the board use every link: as fast as through a switch
    assert _tp_seconds(4, 4) == pytest.approx(_tp_seconds(4, 0), rel=1e-9)


def test_the_corpus_times_kempnerforges_runs_on_their_4_gpu_boards() -> None:
    runs, _ = load_corpus()
    boards = {r.row: r.board_gpus for r in runs}
    kempner = {r.row for r in runs if r.source == "KempnerInstitute/KempnerForge"}
    assert kempner and all(boards[row] == 4 for row in kempner)  # "4 H200 per node"
    assert all(b == 0 for row, b in boards.items() if row not in kempner)
    # its 2-GPU run used half a board: the board's, not the run's, GPU count
    two = next(r for r in runs if r.row in kempner and r.num_gpus == 2)
    assert two.gpus_per_node == 2 and two.board_gpus == 4


def _estimate(tmp_path: Path, text: str) -> tuple[int, str, pd.DataFrame | None]:
    """`gpuplan estimate-llm` on the queries `text`: exit code, stderr and the rows written."""
    queries, out = tmp_path / "q.csv", tmp_path / "out.csv"
    queries.write_text(text)
    out.unlink(missing_ok=True)
    done = CliRunner().invoke(
        app, ["estimate-llm", "--queries", str(queries), "--output", str(out)]
    )
    return done.exit_code, done.stderr, pd.read_csv(out) if out.exists() else None


def test_estimate_llm_takes_a_board_column_says_so_and_refuses_a_bad_one(tmp_path: Path) -> None:
    header = "params,seq_len,gpu_model,num_gpus,precision,framework,gpus_per_node,board_gpus"
    code, err, rows = _estimate(
        tmp_path, f"{header},tp,dp,mbs\n8b,4096,H200,2,bf16,fsdp,2,,2,1,4\n"
        "8b,4096,H200,2,bf16,fsdp,2,4,2,1,4\n",
    )  # fmt: skip
    assert code == 0 and rows is not None, err
    switched, board = rows["tokens_per_s"]
    assert board < 0.95 * switched  # tp2 over a third of the links
    # a searched row's detail says which board its collectives were timed on
    code, err, rows = _estimate(
        tmp_path, f"{header}\n8b,4096,H200,4,bf16,fsdp,4,\n8b,4096,H200,4,bf16,fsdp,4,4\n"
    )
    assert code == 0 and rows is not None, err
    assert "without a switch" not in rows["method_detail"][0]
    assert "on a board of 4: a collective among k of them has k - 1 of each GPU's 3" in str(
        rows["method_detail"][1]
    )
    code, err, rows = _estimate(tmp_path, f"{header}\n8b,4096,H200,2,bf16,fsdp,2,1\n")
    assert code == 2 and rows is None
    assert "line 2, field 'board_gpus': '1' must be a whole number from 2 to 64 GPUs" in err


def test_an_on_prem_server_of_four_sxm_gpus_is_a_switchless_board() -> None:
    assert server_board_gpus("H100-SXM", 4) == 4 and server_board_gpus("A100-SXM-40GB", 4) == 4
    assert server_board_gpus("H100-SXM", 8) == 0  # an HGX 8-GPU board: NVSwitch
    assert server_board_gpus("H100-PCIe", 4) == 0  # bridged pairs: the spec table's rule
    assert server_board_gpus("MI300X", 8) == 8 and server_board_gpus("MI300X", 4) == 8


def test_plan_times_an_on_prem_4_gpu_server_on_its_board_and_cloud_slices_switched(
    tmp_path: Path,
) -> None:
    dgx = Path(input_path("example:onprem-dgx-h100")).read_text()
    hgx4 = tmp_path / "hgx4.toml"
    hgx4.write_text(
        dgx.replace('name = "dgx-h100-x4"', 'name = "hgx4"')
        .replace("servers = 4", "servers = 8")
        .replace("gpus_per_server = 8", "gpus_per_server = 4")
    )
    done = CliRunner().invoke(
        app,
        ["plan", "-w", "llm-8b-10b", "--onprem", str(hgx4), "--provider", "lambda", "--gpu",
         "H100", "--framework", "megatron", "--max-gpus", "8", "--view", "rows", "--format",
         "json"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    rows = pd.DataFrame(json.loads(done.stdout))
    onprem = rows[rows["kind"] == "on-prem"].iloc[0]
    assert onprem["board_gpus"] == 4
    assert "on a board of 4: a collective among k of them" in onprem["throughput_detail"]
    cloud = rows[rows["instance_type"] == "gpu_4x_h100_sxm5"]
    assert len(cloud) and (cloud["board_gpus"] == 0).all()  # a slice of an NVSwitch board
