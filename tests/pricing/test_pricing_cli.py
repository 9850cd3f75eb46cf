"""`gpuplan pricing status|diff|refresh|remove|spot-zones` as a user runs them."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from pricing import refresh as refresh_module
from pricing.catalog import (
    bundled_snapshot_dir,
    offers_to_csv,
    read_manifest,
    read_snapshot,
    user_snapshot_dir,
)
from pricing.providers.azure import fetch_azure, parse_azure
from pricing.refresh import Source
from pricing.store import commit_snapshot
from tests.pricing.conftest import StandIn, fast_retry, tree_bytes

runner = CliRunner()


def use_azure_standin(monkeypatch: pytest.MonkeyPatch, api: StandIn, attempts: int = 3) -> None:
    retry, _ = fast_retry(attempts)

    def fetch(regions: object, **kwargs: object) -> object:
        kwargs["retry"] = retry  # the CLI's policy, with the sleeps recorded instead
        return functools.partial(fetch_azure, base_url=f"{api.url}/api/retail/prices")(
            regions,  # type: ignore[arg-type]
            **kwargs,  # type: ignore[arg-type]
        )

    monkeypatch.setitem(
        refresh_module.SOURCES, "azure", Source(fetch, parse_azure, ("eastus", "westeurope"))
    )


def test_status_on_the_bundled_snapshot_shows_dates_ages_and_warns() -> None:
    done = runner.invoke(app, ["pricing", "status", "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = {r["provider"]: r for r in json.loads(done.stdout)}
    assert set(rows) == {i.provider for i in read_manifest(bundled_snapshot_dir())}
    aws = rows["aws"]
    assert (aws["origin"], aws["priced_at"], aws["integrity"]) == ("bundled", "2025-06-01", "ok")
    assert aws["age_days"] > 30 and aws["stale"] == "yes"
    assert "P5 on-demand price cut" in aws["date_basis"]
    assert "warning: prices older than 30 days" in done.stderr
    table = runner.invoke(app, ["pricing", "status"])
    assert table.exit_code == 0 and "date_basis" in table.stdout
    # A bounded date is shown as one, not as an exact date with an exact age.
    assert "catalog extract, not before 2025-06" in table.stdout
    assert "at most" in table.stdout and "2025-06-01" not in table.stdout
    assert aws["price_date"] == "catalog extract, not before 2025-06"
    assert aws["refresh"] == "aws-public, skypilot (no credentials); aws (credentials)"
    # Every source a refresh reads is listed, with what it needs.
    for source in ("skypilot", "aws-public", "azure", "gcp"):
        assert source in table.stdout
    assert "gpuplan pricing refresh skypilot" in " ".join(done.stderr.split())


def test_status_after_a_refresh_shows_the_user_snapshot(
    azure_api: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_azure_standin(monkeypatch, azure_api)
    assert runner.invoke(app, ["pricing", "refresh", "azure"]).exit_code == 0
    rows = {
        r["provider"]: r
        for r in json.loads(runner.invoke(app, ["pricing", "status", "--format", "json"]).stdout)
    }
    azure = rows["azure"]
    assert (azure["origin"], azure["age_days"], azure["stale"]) == ("user", 0, "no")
    assert azure["file"].startswith(str(user_snapshot_dir()))
    assert azure["retrieved_at"].endswith("Z")
    assert rows["gcp"]["origin"] == "bundled"


def test_diff_on_the_bundled_snapshot_shows_what_changed(tmp_path: Path) -> None:
    bundled = read_snapshot(bundled_snapshot_dir() / "aws-2025-06-01.csv")
    edited = bundled.copy()
    first = edited.index[0]
    old_price = edited.loc[first, "usd_per_hour"]
    edited.loc[first, "usd_per_hour"] = old_price * 0.8
    removed = edited.iloc[-1]["instance_type"], edited.iloc[-1]["region"]
    edited = edited.iloc[:-1]
    added = bundled.iloc[[0]].assign(instance_type="p9.96xlarge")
    edited = pd.concat([edited, added], ignore_index=True)
    path = tmp_path / "aws-edited.csv"
    path.write_text(offers_to_csv(edited))
    done = runner.invoke(app, ["pricing", "diff", "aws@bundled", str(path), "--format", "json"])
    assert done.exit_code == 0, done.output
    changes = json.loads(done.stdout)
    kinds = sorted((c["change"], c["instance_type"]) for c in changes)
    assert kinds == sorted(
        [
            ("price", bundled.loc[first, "instance_type"]),
            ("removed", removed[0]),
            ("added", "p9.96xlarge"),
        ]
    )
    price = next(c for c in changes if c["change"] == "price")
    assert price["change_pct"] == pytest.approx(-20.0, abs=0.01)
    assert "1 added, 1 removed, 1 price changes (1 down, 0 up)" in done.stderr
    same = runner.invoke(app, ["pricing", "diff", "aws@bundled", "aws"])
    assert same.exit_code == 0 and "0 added, 0 removed, 0 price changes" in same.stdout


def test_diff_with_an_unknown_reference_names_the_choices() -> None:
    done = runner.invoke(app, ["pricing", "diff", "awz", "aws"])
    assert done.exit_code == 2
    assert "did you mean 'aws'" in done.stderr and "PROVIDER@YYYY-MM-DD" in done.stderr


def test_refresh_on_the_cli_then_plan_uses_the_refreshed_reserved_prices(
    azure_api: StandIn, monkeypatch: pytest.MonkeyPatch, results_dir: object
) -> None:
    use_azure_standin(monkeypatch, azure_api)
    done = runner.invoke(app, ["pricing", "refresh", "azure", "--regions", "eastus,westeurope"])
    assert done.exit_code == 0, done.output
    assert "azure: 7 offers from eastus, westeurope" in done.stdout
    assert "replaces the bundled snapshot of 2024-01-01" in done.stdout
    assert "rows dropped or values set missing" in done.stdout
    plan = runner.invoke(
        app,
        [
            "plan",
            "--workload",
            "resnet50-imagenet-90ep",
            "--provider",
            "azure",
            "--pricing",
            "reserved-1y",
            "--format",
            "json",
        ],
    )
    assert plan.exit_code == 0, plan.output
    rows = json.loads(plan.stdout)
    snapshot = read_snapshot(next(i for i in read_manifest() if i.provider == "azure").path)
    reserved = snapshot.set_index(["region", "instance_type"])["reserved_1y_usd_per_hour"]
    assert rows and all(
        r["usd_per_hour"] == reserved.loc[(r["region"], r["instance_type"])] for r in rows
    )
    assert {r["region"] for r in rows} == {"eastus", "westeurope"}


def test_a_failed_refresh_on_the_cli_exits_1_and_says_what_stays(
    azure_api: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_azure_standin(monkeypatch, azure_api, attempts=2)
    azure_api.fail("eastus", "500", times=2)
    done = runner.invoke(app, ["pricing", "refresh", "azure"])
    assert done.exit_code == 1
    assert "azure refresh failed" in done.stderr and "HTTP 500" in done.stderr
    assert "bundled azure snapshot of 2024-01-01" in done.stderr
    assert "Traceback" not in done.output
    assert tree_bytes(user_snapshot_dir()) == {}


def test_refresh_names_the_refreshable_providers() -> None:
    done = runner.invoke(app, ["pricing", "refresh", "azrue"])
    assert done.exit_code == 2
    assert "did you mean 'azure'" in done.stderr and "add-custom" in done.stderr
    lam = runner.invoke(app, ["pricing", "refresh", "lambda"])
    assert lam.exit_code == 2 and "Refreshable: aws, gcp, azure" in lam.stderr


def test_refresh_aws_without_credentials_exits_1_before_any_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("AWS_SECURITY_TOKEN", raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    done = runner.invoke(app, ["pricing", "refresh", "aws", "--regions", "us-east-1"])
    assert done.exit_code == 1
    assert "no AWS credentials found" in done.stderr and "aws configure" in done.stderr


def test_remove_returns_to_the_bundled_snapshot(
    azure_api: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_azure_standin(monkeypatch, azure_api)
    assert runner.invoke(app, ["pricing", "refresh", "azure"]).exit_code == 0
    done = runner.invoke(app, ["pricing", "remove", "azure"])
    assert done.exit_code == 0 and "kept for `gpuplan pricing diff`" in done.stdout
    assert {i.provider: i for i in read_manifest()}["azure"].origin == "bundled"
    again = runner.invoke(app, ["pricing", "remove", "azure"])
    assert again.exit_code == 2 and "no user snapshot 'azure'" in again.stderr


def test_spot_zones_come_from_the_refreshed_aws_snapshot() -> None:
    missing = runner.invoke(app, ["pricing", "spot-zones"])
    assert missing.exit_code == 2 and "run `gpuplan pricing refresh aws`" in missing.stderr
    offers = read_snapshot(bundled_snapshot_dir() / "aws-2025-06-01.csv")
    zones = pd.DataFrame(
        {
            "region": ["us-east-1", "us-east-1", "us-west-2"],
            "availability_zone": ["us-east-1a", "us-east-1b", "us-west-2a"],
            "instance_type": ["p5.48xlarge"] * 3,
            "spot_usd_per_hour": [21.1, 19.3, 17.0],
            "observed_at": ["2026-11-30T03:12:44Z"] * 3,
        }
    )
    commit_snapshot(
        "aws",
        offers,
        source="test",
        priced_at="2026-11-30",
        date_basis="test",
        details={"spot-zones": zones},
    )
    done = runner.invoke(
        app, ["pricing", "spot-zones", "--region", "us-east-1", "--format", "json"]
    )
    assert done.exit_code == 0, done.output
    assert [z["spot_usd_per_hour"] for z in json.loads(done.stdout)] == [21.1, 19.3]
