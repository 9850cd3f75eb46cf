"""Custom price lists: validated like any snapshot, then ranked by `gpuplan plan`."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from pricing.catalog import SnapshotError, read_manifest, user_snapshot_dir
from pricing.providers.custom import fetch_custom, parse_custom
from tests.conftest import ROOT
from tests.pricing.conftest import FIXTURES, tree_bytes

runner = CliRunner()
NEOCLOUDS = FIXTURES / "custom" / "neoclouds.csv"
GOOD_HEADER = "provider,region,instance_type,gpu_name,gpu_count,usd_per_hour,priced_at"
GOOD_ROW = "indus-gpu,delhi,h100-8x,H100-SXM,8,24.5,2026-11-15"


def test_a_valid_list_keeps_its_prices_dates_and_fractions() -> None:
    offers = parse_custom(fetch_custom(NEOCLOUDS), NEOCLOUDS).offers.set_index("instance_type")
    h100 = offers.loc["h100-sxm-8x"]
    assert (h100["usd_per_hour"], h100["reserved_1y_usd_per_hour"]) == (24.5, 19.6)
    assert h100["source"] == "indus-gpu rate card, 2026-11-15"
    assert h100["interconnect"] == "nvlink"  # derived: 8 SXM GPUs
    assert offers.loc["h100-pcie-2x", "interconnect"] == "pcie"
    assert offers.loc["a100-80g-1x", "source"] == "custom price list neoclouds.csv"
    assert offers.loc["l4-quarter", "gpu_count"] == 0.25
    assert pd.isna(offers.loc["a100-80g-1x", "reserved_1y_usd_per_hour"])  # blank: missing


@pytest.mark.parametrize(
    ("rows", "line", "field", "message"),
    [
        (
            [GOOD_ROW, GOOD_ROW.replace("H100-SXM", "H100-SMX")],
            3,
            "gpu_name",
            "did you mean 'H100-SXM'",
        ),
        ([GOOD_ROW.replace(",24.5,", ",-3,")], 2, "usd_per_hour", "is negative"),
        ([GOOD_ROW.replace(",24.5,", ",0,")], 2, "usd_per_hour", "0 is a placeholder"),
        ([GOOD_ROW.replace(",8,", ",0,")], 2, "gpu_count", "must be > 0"),
        ([GOOD_ROW.replace("2026-11-15", "15/11/2026")], 2, "priced_at", "ISO date"),
        ([GOOD_ROW, GOOD_ROW.replace(",24.5,", ",,")], 3, "usd_per_hour", "has no price"),
        ([GOOD_ROW.replace("indus-gpu", "aws")], 2, "provider", "'aws-negotiated'"),
        (
            [GOOD_ROW, GOOD_ROW.replace("indus-gpu", "Indus GPU")],
            3,
            "provider",
            "not a provider name: use 1 to 64 lower-case letters, digits, '.', '_' or '-', "
            "starting with a letter or digit; e.g. 'indus-gpu'",
        ),
        ([GOOD_ROW.replace("indus-gpu", "../../etc")], 2, "provider", "not a provider name"),
        ([GOOD_ROW.replace("indus-gpu", "x" * 65)], 2, "provider", "not a provider name"),
        ([GOOD_ROW.replace("indus-gpu", "-gpu")], 2, "provider", "e.g. 'gpu'"),
    ],
)
def test_a_malformed_list_is_refused_with_file_line_and_field(
    tmp_path: Path, rows: list[str], line: int, field: str, message: str
) -> None:
    path = tmp_path / "prices.csv"
    path.write_text("\n".join([GOOD_HEADER, *rows]) + "\n")
    with pytest.raises(SnapshotError) as info:
        parse_custom(fetch_custom(path), path, taken_providers={"aws", "gcp"})
    assert (info.value.file, info.value.line, info.value.field) == (str(path), line, field)
    assert message in str(info.value)


def test_a_misspelt_or_missing_column_is_named_with_the_closest_one(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(GOOD_HEADER.replace("usd_per_hour", "usd_per_hr") + "\n" + GOOD_ROW + "\n")
    with pytest.raises(
        SnapshotError, match="unknown column 'usd_per_hr'; did you mean 'usd_per_hour'"
    ):
        parse_custom(fetch_custom(path), path)
    path.write_text(GOOD_HEADER.replace(",priced_at", "") + "\n" + GOOD_ROW[:-11] + "\n")
    with pytest.raises(SnapshotError, match=r"missing column\(s\) \['priced_at'\]"):
        parse_custom(fetch_custom(path), path)


def test_add_custom_then_plan_ranks_its_offers(results_dir: object) -> None:
    done = runner.invoke(app, ["pricing", "add-custom", str(NEOCLOUDS)])
    assert done.exit_code == 0, done.output
    assert "added custom-neoclouds: 5 offers" in done.stdout
    info = next(i for i in read_manifest() if i.provider == "custom-neoclouds")
    assert info.origin == "user" and info.priced_at == "2026-10-01"  # the oldest row
    plan = runner.invoke(app, ["plan", "--workload", "resnet50-imagenet-90ep", "--format", "json"])
    assert plan.exit_code == 0, plan.output
    rows = json.loads(plan.stdout)
    providers = {r["provider"] for r in rows}
    assert {"indus-gpu", "example-cloud", "acme-negotiated", "aws", "gcp"} <= providers
    indus = next(r for r in rows if r["instance_type"] == "h100-sxm-8x")
    assert indus["usd_per_hour"] == 24.5 and indus["price_date"] == "2026-11-15"
    reserved = runner.invoke(
        app,
        [
            "plan",
            "--workload",
            "resnet50-imagenet-90ep",
            "--provider",
            "indus-gpu",
            "--pricing",
            "reserved-1y",
            "--format",
            "json",
        ],
    )
    assert reserved.exit_code == 0, reserved.output
    assert [r["usd_per_hour"] for r in json.loads(reserved.stdout)] == [19.6]


def test_adding_the_same_list_again_replaces_it(results_dir: object, tmp_path: Path) -> None:
    assert runner.invoke(app, ["pricing", "add-custom", str(NEOCLOUDS)]).exit_code == 0
    cheaper = tmp_path / "neoclouds.csv"
    cheaper.write_text(NEOCLOUDS.read_text().replace(",24.50,", ",20.00,"))
    done = runner.invoke(app, ["pricing", "add-custom", str(cheaper)])
    assert done.exit_code == 0, done.output
    assert "replaced custom-neoclouds" in done.stdout
    assert [i.provider for i in read_manifest()].count("custom-neoclouds") == 1
    shown = runner.invoke(app, ["pricing", "show", "--provider", "indus-gpu", "--format", "json"])
    assert {r["usd_per_hour"] for r in json.loads(shown.stdout)} == {20.0, 1.9}
    # A custom list's dates are the user's own: exact; the bundled extracts' are bounds.
    assert {r["price_date_basis"] for r in json.loads(shown.stdout)} == {"exact"}
    bundled = runner.invoke(app, ["pricing", "show", "--provider", "aws", "--format", "json"])
    rows = json.loads(bundled.stdout)
    assert {(r["priced_at"], r["price_date_basis"]) for r in rows} == {("2025-06-01", "not-before")}


def test_a_malformed_list_is_refused_on_the_cli_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(
        GOOD_HEADER + "\n" + GOOD_ROW + "\n" + GOOD_ROW.replace("H100-SXM", "H10") + "\n"
    )
    done = runner.invoke(app, ["pricing", "add-custom", str(path)])
    assert done.exit_code == 2
    assert f"{path}, line 3, field 'gpu_name'" in done.stderr
    assert "unknown GPU 'H10'" in done.stderr
    assert "Traceback" not in done.output
    assert tree_bytes(user_snapshot_dir()) == {}


def test_a_provider_that_another_source_uses_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(GOOD_HEADER + "\n" + GOOD_ROW.replace("indus-gpu", "lambda") + "\n")
    done = runner.invoke(app, ["pricing", "add-custom", str(path)])
    assert done.exit_code == 2
    assert "provider 'lambda' already comes from another price source" in done.stderr


def test_the_documented_example_is_a_valid_custom_list(tmp_path: Path) -> None:
    readme = (ROOT / "docs" / "prices.md").read_text()
    example = readme.split("```csv\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.csv"
    path.write_text(example)
    offers = parse_custom(fetch_custom(path), path, taken_providers={"aws"}).offers
    assert offers["provider"].tolist() == ["indus-gpu", "aws-negotiated"]
