"""The bundled data: reproducible from reference/, and every offer joins specs and results."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd

from benchmarks.published import held_out, published_frame, read_published_table
from planner.machines.specs import load_specs
from pricing.catalog import bundled_snapshot_dir, file_sha256, load_offers, read_manifest
from pricing.gpus import CANONICAL_GPUS
from tests.conftest import ROOT


def test_bundled_files_are_what_the_builder_makes_from_reference() -> None:
    done = subprocess.run(
        [sys.executable, "tools/build_bundled_data.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_manifest_matches_the_files() -> None:
    directory = bundled_snapshot_dir()
    for info in read_manifest(directory):
        assert file_sha256(directory / info.file) == info.sha256, info.file
        assert info.date_basis and info.source


def test_bundled_snapshot_covers_clouds_and_neoclouds() -> None:
    offers = load_offers(bundled_snapshot_dir())
    assert {"aws", "gcp", "azure", "lambda", "nebius", "vast"} <= set(offers["provider"])
    assert (offers["usd_per_hour"].dropna() > 0).all()
    assert (
        offers["spot_usd_per_hour"].dropna()
        < offers.loc[offers["spot_usd_per_hour"].notna(), "usd_per_hour"].fillna(float("inf"))
    ).all()


def test_every_offer_gpu_has_a_spec_row() -> None:
    offers = load_offers(bundled_snapshot_dir())
    specs = load_specs()
    assert set(offers["gpu_name"]) <= set(specs.index)
    assert set(specs.index) == set(CANONICAL_GPUS)


def test_spec_table_is_dense_and_bf16_only_from_ampere() -> None:
    specs = load_specs()
    assert specs.loc["H100-SXM", "fp16_tflops"] == 989.4  # dense, not the 1979 sparse figure
    assert pd.isna(specs.loc["V100-SXM2-16GB", "bf16_tflops"])
    assert specs.loc["A100-SXM-40GB", "bf16_tflops"] == 312


def test_published_results_exclude_suspect_rows_and_join_specs() -> None:
    table = read_published_table()
    reference = pd.read_csv(ROOT / "reference/benchmarks/lambda_pytorch_throughput.csv")
    flagged = reference["flag"].notna().sum()
    laptops = reference["spec_gpu_model"].isna().sum()
    kept_aside = (
        held_out(reference) & reference["flag"].isna() & reference["spec_gpu_model"].notna()
    )
    assert len(table) == len(reference) - flagged - kept_aside.sum() - len(
        reference.loc[reference["flag"].isna() & reference["spec_gpu_model"].isna()]
    )
    assert flagged > 0 and laptops > 0 and kept_aside.sum() > 0
    # Rows kept for evaluation are never bundled: A100 80GB, RTX 4090, 8 GPUs.
    assert not held_out(table).any()
    assert set(table["gpu_name"]) <= set(load_specs().index)
    frame = published_frame()
    assert (frame["source"] == "published:lambda").all()
    assert set(frame["precision"]) == {"fp16", "tf32", "fp32"}
    assert frame["id"].is_unique
