"""Offer references (provider:region:instance_type, provider:instance_type, GPU) on a tiny table."""

from __future__ import annotations

import pandas as pd
import pytest

from pricing.catalog import validate_offers
from pricing.refs import (
    GPU_HOUR_COLUMNS,
    OfferRefError,
    cheapest_per_provider,
    gpu_hour_prices,
    priced_offers,
    resolve_offer_ref,
    resolve_offer_refs,
)

ROWS = [
    # provider, region, instance_type, gpu, count, on-demand, spot
    ("aws", "us-east-1", "p5.48xlarge", "H100-SXM", 8, 55.04, 19.25),
    ("aws", "us-west-2", "p5.48xlarge", "H100-SXM", 8, 55.04, 12.98),
    ("aws", "us-east-1", "p5.4xlarge", "H100-SXM", 1, 6.88, None),
    ("lambda", "us-east-1", "gpu_1x_h100_sxm5", "H100-SXM", 1, 4.29, None),
    ("fluidstack", "FINLAND", "H100_NVLINK_80GB::8", "H100-SXM", 8, 23.92, None),
    ("gcp", "us-central1", "a2-highgpu-1g", "A100-SXM-40GB", 1, 3.67, 1.10),
]
OFFERS = validate_offers(
    pd.DataFrame(
        [
            {
                "provider": p,
                "region": r,
                "instance_type": i,
                "gpu_name": g,
                "gpu_count": n,
                "usd_per_hour": od,
                "spot_usd_per_hour": sp,
                "source": "test",
                "priced_at": "2025-06-01",
            }
            for p, r, i, g, n, od, sp in ROWS
        ]
    )
)


def one(ref: str, kind: str = "on-demand") -> pd.Series:
    frame = resolve_offer_ref(OFFERS, ref, kind)
    assert len(frame) == 1
    return frame.iloc[0]


def test_full_reference_names_one_offer() -> None:
    row = one("aws:us-west-2:p5.48xlarge", "spot")
    assert (row["region"], row["usd_per_gpu_hour"]) == ("us-west-2", pytest.approx(12.98 / 8))
    assert row["ref"] == "aws:us-west-2:p5.48xlarge"
    assert row["pricing"] == "spot"


def test_provider_and_instance_means_the_cheapest_region() -> None:
    assert one("aws:p5.48xlarge", "spot")["region"] == "us-west-2"
    assert one("AWS:p5.48xlarge")["usd_per_gpu_hour"] == pytest.approx(6.88)


def test_gpu_name_means_its_cheapest_offer_anywhere() -> None:
    row = one("H100")  # alias of H100-SXM
    assert (row["provider"], row["usd_per_gpu_hour"]) == ("fluidstack", pytest.approx(2.99))
    assert one("H100-SXM", "spot")["region"] == "us-west-2"


def test_instance_types_with_colons() -> None:
    assert one("fluidstack:H100_NVLINK_80GB::8")["region"] == "FINLAND"
    assert one("fluidstack:FINLAND:H100_NVLINK_80GB::8")["gpu_count"] == 8


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("awz:p5.48xlarge", "unknown provider 'awz'.*did you mean 'aws'"),
        ("aws:p5.48xlarg", "did you mean 'aws:p5.48xlarge'"),
        ("aws:us-east-9:p5.48xlarge", "did you mean 'us-east-1'.*us-west-2"),
        ("H10", "did you mean 'H100'"),
        ("T4", "no offer of T4"),
    ],
)
def test_errors_name_the_closest_choice(ref: str, message: str) -> None:
    with pytest.raises(OfferRefError, match=message):
        resolve_offer_ref(OFFERS, ref, "on-demand")


def test_an_offer_without_a_spot_price_says_it_has_on_demand_prices() -> None:
    with pytest.raises(OfferRefError, match=r"no spot price.*has on-demand prices"):
        resolve_offer_ref(OFFERS, "aws:us-east-1:p5.4xlarge", "spot")


def test_several_references_keep_their_order() -> None:
    frame = resolve_offer_refs(OFFERS, ["lambda:gpu_1x_h100_sxm5", "aws:p5.4xlarge"], "on-demand")
    assert frame["provider"].tolist() == ["lambda", "aws"]


def test_cheapest_per_provider() -> None:
    frame = cheapest_per_provider(OFFERS, "H100-SXM", "on-demand")
    assert frame["provider"].tolist() == ["fluidstack", "lambda", "aws"]
    assert frame["usd_per_gpu_hour"].is_monotonic_increasing
    assert frame["ref"].iloc[2] == "aws:us-east-1:p5.48xlarge"  # tie at $6.88: first region
    spot = cheapest_per_provider(OFFERS, "H100-SXM", "spot")
    assert spot["ref"].tolist() == ["aws:us-west-2:p5.48xlarge"]
    assert cheapest_per_provider(OFFERS, "H100-SXM", "reserved-1y").empty


def test_priced_offers_lists_every_priced_offer_of_the_gpu_cheapest_first() -> None:
    frame = priced_offers(OFFERS, "H100-SXM", "spot")
    assert frame["ref"].tolist() == ["aws:us-west-2:p5.48xlarge", "aws:us-east-1:p5.48xlarge"]
    assert frame["usd_per_gpu_hour"].tolist() == pytest.approx([12.98 / 8, 19.25 / 8])
    on_demand = priced_offers(OFFERS, "H100-SXM", "on-demand")
    assert len(on_demand) == 5
    assert "fluidstack:FINLAND:H100_NVLINK_80GB::8" in on_demand["ref"].tolist()


def test_gpu_hour_prices_divide_every_kind_by_the_gpu_count() -> None:
    prices = gpu_hour_prices(OFFERS)
    assert list(prices.columns) == list(GPU_HOUR_COLUMNS.values())
    assert prices.index.equals(OFFERS.index)
    p5 = prices.iloc[1]
    assert p5["on_demand_usd_per_gpu_hour"] == pytest.approx(55.04 / 8)
    assert p5["spot_usd_per_gpu_hour"] == pytest.approx(12.98 / 8)
    assert prices["reserved_1y_usd_per_gpu_hour"].isna().all()
    assert prices.iloc[2].isna()["spot_usd_per_gpu_hour"]  # no spot price: missing, not 0
