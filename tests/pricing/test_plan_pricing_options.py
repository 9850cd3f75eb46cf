"""Tiers, retired sizes and reserved pricing as `plan` and `tco` see them: the same
defaults as `pricing show`, and the same words when no reserved price exists."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from planner.cli.main import app
from pricing.reserved import no_reserved_message

runner = CliRunner()
PLAN = ["plan", "--workload", "bert-large-squad-2ep", "--format", "json"]


def rows(*args: str) -> list[dict[str, object]]:
    done = runner.invoke(app, [*PLAN, *args])
    assert done.exit_code == 0, done.output
    return list(json.loads(done.stdout))


def test_default_plans_weigh_no_marketplace_host_and_no_retired_size(results_dir: object) -> None:
    default = rows("--gpu", "K80", "--gpu", "H100-SXM", "--gpu", "RTX-4090")
    providers = {r["provider"] for r in default}
    assert "vast" not in providers and "aws" in providers
    assert not any(str(r["instance_type"]).startswith("Standard_NC6") for r in default)
    both = rows("--tier", "marketplace", "--tier", "hyperscaler", "--include-retired")
    assert "vast" in {r["provider"] for r in both} and "lambda" not in {r["provider"] for r in both}
    constraints = runner.invoke(app, [*PLAN, "--view", "constraints"])
    assert constraints.exit_code == 0


def test_plan_and_tco_say_the_same_when_no_reserved_price_exists(results_dir: object) -> None:
    plan = runner.invoke(
        app, ["plan", "--workload", "bert-large-squad-2ep", "--pricing", "reserved-1y"]
    )
    tco = runner.invoke(
        app, ["tco", "--config", "examples/onprem-dgx-h100.toml", "--pricing", "reserved-1y"]
    )
    expected = no_reserved_message("reserved-1y")
    for done in (plan, tco):
        assert done.exit_code == 2, done.output
        assert expected in " ".join(done.output.split())


def test_a_reserved_discount_prices_every_row_and_labels_it(results_dir: object) -> None:
    on_demand = {r["option_id"]: r for r in rows("--provider", "lambda")}
    reserved = rows(
        "--provider", "lambda", "--pricing", "reserved-1y", "--reserved-discount", "0.35"
    )
    assert reserved and all(
        "assumed: on-demand less 35%" in str(r["price_source"]) for r in reserved
    )
    for row in reserved:
        listed = on_demand[row["option_id"]]
        assert row["option_usd_per_hour"] == listed["option_usd_per_hour"] * 0.65  # type: ignore[operator]
    tco = runner.invoke(
        app,
        [
            "tco",
            "--config",
            "examples/onprem-dgx-h100.toml",
            "--pricing",
            "reserved-3y",
            "--reserved-discount",
            "0.35",
            "--format",
            "json",
        ],
    )
    assert tco.exit_code == 0, tco.output
    for bad in ("0", "1", "1.5", "nan", "inf"):
        done = runner.invoke(app, [*PLAN, "--pricing", "reserved-1y", "--reserved-discount", bad])
        assert done.exit_code == 2 and "--reserved-discount" in done.output, done.output
