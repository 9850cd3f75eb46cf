"""Option generation: counts within max GPUs, filters, slices, on-prem configs, prices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from planner.choose.options import (
    cloud_options,
    combine,
    doublings,
    drop_without,
    onprem_counts,
    onprem_options,
)
from planner.codes import NetworkBasis, PriceBasis
from planner.onprem.tco import OnPremConfig, amortized_usd_per_gpu_hour
from planner.render.notes import APP_CONTROLS, notes_text
from planner.render.rows import price_source_text
from pricing.catalog import filter_offers, validate_offers


def offers(*rows: dict[str, object]) -> pd.DataFrame:
    base = {"provider": "aws", "region": "r1", "source": "test", "priced_at": "2026-11-01"}
    return validate_offers(pd.DataFrame([{**base, **row} for row in rows]))


SOME = offers(
    {"instance_type": "one", "gpu_name": "H100-SXM", "gpu_count": 1, "usd_per_hour": 4.0},
    {"instance_type": "eight", "gpu_name": "H100-SXM", "gpu_count": 8, "usd_per_hour": 30.0},
    {"instance_type": "slice", "gpu_name": "A100-SXM-40GB", "gpu_count": 0.25, "usd_per_hour": 1},
    {
        "provider": "gcp",
        "region": "r2",
        "instance_type": "sixteen",
        "gpu_name": "A100-SXM-40GB",
        "gpu_count": 16,
        "usd_per_hour": 50.0,
        "spot_usd_per_hour": 20.0,
    },
)


def test_doublings() -> None:
    assert doublings(1).tolist() == [1.0]
    assert doublings(12).tolist() == [1, 2, 4, 8]
    assert doublings(512)[-1] == 512 and len(doublings(512)) == 10


def test_counts_stay_within_max_gpus_and_slices_stay_single() -> None:
    options, warnings = cloud_options(SOME, "on-demand", max_gpus=16)
    by = options.groupby("instance_type")["instances"].apply(list).to_dict()
    assert by["one"] == [1, 2, 4, 8, 16]
    assert by["eight"] == [1, 2]
    assert by["slice"] == [1]
    assert by["sixteen"] == [1]
    assert (options["total_gpus"] <= 16).all()
    assert (options["total_gpus"] == options["gpu_count"] * options["instances"]).all()
    assert warnings == []
    # The instance's GPUs share a node; one-GPU instances talk over the network.
    nodes = options.drop_duplicates("instance_type").set_index("instance_type")["gpus_per_node"]
    assert nodes.to_dict() == {"one": 1.0, "eight": 8.0, "slice": 1.0, "sixteen": 16.0}


def test_instances_too_big_for_max_gpus_are_left_out_with_a_warning() -> None:
    options, warnings = cloud_options(SOME, "on-demand", max_gpus=4)
    assert set(options["instance_type"]) == {"one", "slice"}
    assert [w.to_dict() for w in warnings] == [
        {"code": "offers_too_big", "offers": 2, "max_gpus": 4, "cap": "max_gpus"}
    ]
    assert notes_text(warnings) == [
        "2 offers left out: more GPUs per instance than the 4 allowed (--max-gpus)"
    ]
    assert notes_text(warnings, APP_CONTROLS)[0].endswith("(Max GPUs per option)")


def test_an_exact_gpu_count_weighs_the_instances_that_make_it_and_names_those_that_cannot() -> None:
    """24 GPUs are 3 eight-GPU instances (not a doubling) and 24 one-GPU ones; the 16-GPU
    offer cannot make 24 and is named; an exact 4 names --gpus, not --max-gpus."""
    options, warnings = cloud_options(SOME, "on-demand", max_gpus=24, exact=24)
    exact = options.loc[options["total_gpus"] == 24].set_index("instance_type")["instances"]
    assert exact.to_dict() == {"one": 24.0, "eight": 3.0}
    assert [w.to_dict() for w in warnings] == [
        {"code": "gpu_count_uneven", "offers": 1, "gpu_count": 24, "sizes": (16,)}
    ]
    assert notes_text(warnings) == [
        "1 offers left out: 24 GPUs (--gpus) is not a whole number of their instances (16 GPUs "
        "each): ask for a multiple"
    ]
    assert "(Exact GPU count)" in notes_text(warnings, APP_CONTROLS)[0]
    _, small = cloud_options(SOME, "on-demand", max_gpus=4, exact=4)
    assert notes_text(small) == [
        "2 offers left out: more GPUs per instance than the 4 allowed (--gpus)"
    ]
    config = OnPremConfig(name="lab", gpu_name="H100-SXM", servers=3, gpus_per_server=8)
    assert (8, 3) in onprem_counts(config, 24, exact=24)
    assert (6, 1) in onprem_counts(config, 24, exact=6)
    assert onprem_counts(config, 512, exact=40) == onprem_counts(config, 512)  # 5 servers: no


def test_prices_follow_the_kind_and_multiply_by_instances() -> None:
    options, _ = cloud_options(SOME, "spot", max_gpus=64)
    sixteen = options.loc[options["instance_type"] == "sixteen"].set_index("instances")
    assert sixteen.loc[4.0, "usd_per_hour"] == 20.0
    assert sixteen.loc[4.0, "option_usd_per_hour"] == 80.0
    assert (options.loc[options["instance_type"] == "one", "usd_per_hour"].isna()).all()
    assert (options["pricing"] == "spot").all()
    assert options["gpu_memory_gb"].tolist()[0] == 80.0  # from the spec table


def test_providers_and_regions_filter_before_counts() -> None:
    chosen = filter_offers(SOME, providers=["gcp"], regions=["r2"])
    options, _ = cloud_options(chosen, "on-demand", max_gpus=512)
    assert set(options["provider"]) == {"gcp"} and set(options["region"]) == {"r2"}
    assert options["instances"].max() == 32  # 32 x 16 = 512


def test_onprem_counts_and_cost_are_amortized_per_gpu_hour() -> None:
    config = OnPremConfig(name="lab", gpu_name="H100-SXM", servers=3, gpus_per_server=8)
    assert onprem_counts(config, 512) == [(1, 1), (2, 1), (4, 1), (8, 1), (8, 2), (8, 3)]
    assert onprem_counts(config, 16) == [(1, 1), (2, 1), (4, 1), (8, 1), (8, 2)]
    options, _ = onprem_options([config], 512, ["lab.toml"])
    rate = float(amortized_usd_per_gpu_hour(config))
    assert options["total_gpus"].tolist() == [1, 2, 4, 8, 16, 24]
    assert options["option_usd_per_hour"].to_numpy() == pytest.approx(
        rate * options["total_gpus"].to_numpy()
    )
    assert (options["provider"] == "on-prem").all() and (options["pricing"] == "amortized").all()
    assert options["price_source"].iloc[0] == "lab.toml"
    assert (options["price_basis"] == PriceBasis.AMORTIZED).all()
    assert (options["network_basis"] == NetworkBasis.ONPREM_ASSUMED).all()
    assert options["amortized_usd_per_gpu_hour"].to_numpy() == pytest.approx(rate)
    assert price_source_text(options.iloc[0]) == (
        f"lab.toml: amortized ${rate:.2f}/GPU-h at {config.utilization:.0%} utilization "
        "(planner.onprem.tco)"
    )


def test_combine_numbers_options_and_drop_without_names_what_went() -> None:
    cloud, _ = cloud_options(SOME, "spot", max_gpus=8)
    table = combine(cloud)
    assert table["option_id"].tolist() == list(range(len(table)))
    kept, warnings = drop_without(
        table, table["option_usd_per_hour"].isna(), "no_price", pricing="spot"
    )
    assert kept["option_usd_per_hour"].notna().all()
    assert notes_text(warnings) == ["3 offers left out: no spot price (A100-SXM-40GB, H100-SXM)"]
    same, none = drop_without(kept, np.zeros(len(kept), bool), "x")
    assert len(same) == len(kept) and none == []
