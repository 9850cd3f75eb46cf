"""Spec rows added in gpuplan beyond the reference table (GB300): named, per GPU and dense
like their neighbours, sourced, and read by `gpuplan estimate-llm` from the table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.llm.throughput import gpu_figures, peak_flops
from planner.machines.specs import load_specs, peak_tflops, spec_for, specs_path
from planner.workloads.catalog import llm_workload
from pricing.gpus import canonical_gpu, gpu_from_device_name, match_gpu_names

runner = CliRunner()


def estimate(tmp_path: Path, text: str) -> pd.DataFrame:
    queries = tmp_path / "q.csv"
    queries.write_text(text)
    out = tmp_path / "out.csv"
    done = runner.invoke(app, ["estimate-llm", "--queries", str(queries), "--output", str(out)])
    assert done.exit_code == 0, done.stderr
    return pd.read_csv(out, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("name", ["GB300", "gb300", "GB300 (per GPU)", "gb300 (per gpu)"])
def test_gb300_names_resolve(name: str) -> None:
    assert canonical_gpu(name) == "GB300"


def test_gb300_is_its_own_gpu_filter_and_device_name() -> None:
    assert match_gpu_names("GB300") == ["GB300"]  # what `--gpu GB300` selects
    assert gpu_from_device_name("NVIDIA GB300") == "GB300"  # not B300, which it contains
    assert gpu_from_device_name("NVIDIA B300 SXM6 AC") == "B300"


def test_gb300_row_is_per_gpu_and_dense_like_gb200() -> None:
    row = spec_for("GB300")
    assert row["spec_model"] == "GB300 (per GPU)"
    assert (row["memory_gb"], row["memory_bw_gbs"]) == (288, 8000)
    assert (row["tdp_w"], row["nvlink_gbs"]) == (1400, 1800)
    assert not row["nvlink_bridge"]
    # Dense per GPU, the GB200 row's convention: BF16 = FP16, FP8 = 2 x BF16 (not the
    # 5 PF BF16 / 10 PF FP8 a sparse or per-superchip figure would give).
    assert row["bf16_tflops"] == row["fp16_tflops"] == 2500
    assert row["fp8_tflops"] == 2 * row["bf16_tflops"]
    gb200 = spec_for("GB200")
    assert (gb200["bf16_tflops"], gb200["fp8_tflops"]) == (2500, 5000)
    assert pd.isna(row["fp32_tflops"])  # sources disagree (80 or 83 TF): left blank
    assert row["confidence"] == "low"


def test_gb300_sources_are_listed() -> None:
    sources = specs_path().with_name("gpu_specs_SOURCES.md").read_text()
    assert load_specs().loc["GB300", "source_ids"] == "S_GB300"
    assert "| S_GB300 |" in sources
    assert "developer.nvidia.com/blog/inside-nvidia-blackwell-ultra" in sources


def test_the_llm_model_reads_gb300_from_the_table() -> None:
    figures = gpu_figures("GB300")
    assert figures is not None and figures.memory_gb == 288
    assert peak_flops("GB300", "bf16") == peak_tflops("GB300", "bf16") * 1e12 == 2500e12
    assert peak_flops("GB300", "fp8") == 5000e12


def test_estimate_llm_accepts_gb300_at_its_bf16_peak(tmp_path: Path) -> None:
    table = estimate(
        tmp_path,
        "params,seq_len,num_gpus,gpu_model,precision\n"
        "6.7b,2048,8,GB300,bf16\n"
        "6.7b,2048,8,GB300 (per GPU),fp8\n",
    )
    bf16, fp8 = table.iloc[0], table.iloc[1]
    assert bf16["fits"] == fp8["fits"] == "True"
    assert bf16["method"] == "estimated"
    # tokens/s over all GPUs = MFU x dense bf16 peak (2,500 TF/GPU) x GPUs / FLOPs per token.
    flops = llm_workload(6.7e9, 1e9).flops_per_sample
    assert float(bf16["tokens_per_s"]) == pytest.approx(
        float(bf16["mfu"]) * 2500e12 * 8 / flops, rel=1e-6
    )
    assert float(fp8["tokens_per_s"]) > float(bf16["tokens_per_s"])


def test_estimate_llm_gives_gb300_its_288_gb(tmp_path: Path) -> None:
    # A 13B full fine-tune on one GPU needs about 210 GB at least: more than a GB200's
    # 186 GB, less than a GB300's 288 GB.
    table = estimate(
        tmp_path,
        "params,seq_len,num_gpus,gpu_model,precision,mode\n"
        "13b,2048,1,GB200,bf16,finetune\n"
        "13b,2048,1,GB300,bf16,finetune\n",
    )
    assert table["fits"].tolist() == ["False", "True"]


def test_h800_is_the_h100_die_with_less_than_half_the_nvlink():
    assert canonical_gpu("H800") == "H800-SXM"
    assert gpu_from_device_name("NVIDIA H800 80GB HBM3") == "H800-SXM"
    h800, h100 = gpu_figures("H800-SXM"), gpu_figures("H100-SXM")
    assert h800 is not None and h100 is not None
    assert h800.peaks_tflops == h100.peaks_tflops
    assert h800.nvlink_gbs == 400.0 and h100.nvlink_gbs == 900.0


def test_amd_boards_collectives_run_over_infinity_fabric_not_pcie():
    from planner.llm.throughput import intra_node_gbs

    for gpu in ("MI300X", "MI325X", "MI355X"):
        assert intra_node_gbs(gpu, 8) > 300.0  # PCIe 5 x16 would be about 50 GB/s
    assert canonical_gpu("MI355X") == "MI355X"
    assert peak_flops("MI355X", "bf16") > peak_flops("MI325X", "bf16")
