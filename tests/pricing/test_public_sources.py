"""Refresh without credentials: `pricing refresh skypilot` and `aws-public` against local
HTTP servers serving recorded, real-shaped files, and every fault (a truncated file, a
changed column set, a stall, a drip, an endless body, errors) leaving the snapshots in
use byte for byte as they were."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from pricing.catalog import load_offers, read_manifest, user_snapshot_dir
from pricing.providers import aws_public, http, skypilot_catalog
from pricing.providers.aws_public import fetch_aws_public
from pricing.providers.retry import FetchError, RetryPolicy
from tests.pricing.conftest import FIXTURES, FileServer, tree_bytes

runner = CliRunner()
SKY = FIXTURES / "skypilot"
OFFER_FILE = (FIXTURES / "aws_public" / "us-east-1_index.csv").read_bytes()
COMMIT_DATES = {"aws": "2025-11-28T08:12:00Z", "lambda": "2025-11-20T17:00:05Z"}


def commits(date: str, sha: str = "8f2c1e0d4b5a69788c1d2e3f4a5b6c7d8e9f0a1b") -> str:
    """A GitHub 'list commits' answer (one commit), as the REST API documents it."""
    return json.dumps(
        [
            {
                "sha": sha,
                "commit": {
                    "author": {"name": "skypilot-bot", "date": date},
                    "committer": {"name": "GitHub", "date": date},
                    "message": "[Bot] Update catalogs",
                },
            }
        ]
    )


def serve_skypilot(server: FileServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for cloud in ("aws", "lambda", "vast"):
        server.files[f"/catalogs/v8/{cloud}/vms.csv"] = (SKY / f"{cloud}_vms.csv").read_bytes()
        server.files[f"/repos/commits?path=catalogs%2Fv8%2F{cloud}%2Fvms.csv&per_page=1"] = commits(
            COMMIT_DATES.get(cloud, "2025-10-01T00:00:00Z")
        )
    monkeypatch.setenv("GPUPLAN_SKYPILOT_COMMITS_URL", f"{server.url}/repos/commits")


def sky(server: FileServer, *extra: str) -> list[str]:
    return [
        "pricing",
        "refresh",
        "skypilot",
        "--clouds",
        "aws,lambda,vast",
        "--base-url",
        f"{server.url}/catalogs/v8",
        "--attempts",
        "2",
        *extra,
    ]


def test_skypilot_refresh_dates_each_cloud_by_its_last_commit(
    file_server: FileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_skypilot(file_server, monkeypatch)
    result = runner.invoke(app, sky(file_server))
    assert result.exit_code == 0, result.output
    infos = {i.provider: i for i in read_manifest() if i.origin == "user"}
    assert set(infos) == {"aws", "lambda", "vast"}
    assert (infos["aws"].priced_at, infos["lambda"].priced_at) == ("2025-11-28", "2025-11-20")
    assert infos["aws"].date_bound == ""  # an exact date: the file's last commit
    assert "8f2c1e0d" in infos["aws"].date_basis
    assert infos["aws"].source_commit.startswith("8f2c1e0d")
    offers = load_offers().set_index(["provider", "instance_type"])
    assert offers.loc[("aws", "p4d.24xlarge"), "usd_per_hour"] == pytest.approx(21.9576, abs=1e-4)
    assert offers.loc[("aws", "p4d.24xlarge"), "priced_at"] == "2025-11-28"
    assert offers.loc[("lambda", "gpu_8x_h100_sxm5"), "gpu_name"] == "H100-SXM"
    assert ("aws", "m8i.large") not in offers.index  # CPU-only: dropped on record
    fixes = (infos["aws"].path.parent / infos["aws"].fixes_file).read_text()
    assert "CPU-only" in fixes
    assert "aws: " in result.output and "priced 2025-11-28" in result.output


def test_skypilot_without_a_commit_date_uses_last_modified(
    file_server: FileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_skypilot(file_server, monkeypatch)
    file_server.files = {k: v for k, v in file_server.files.items() if "repos" not in k}
    file_server.headers["Last-Modified"] = "Wed, 05 Nov 2025 10:00:00 GMT"
    result = runner.invoke(app, sky(file_server))
    assert result.exit_code == 0, result.output
    aws = {i.provider: i for i in read_manifest()}["aws"]
    assert aws.priced_at == "2025-11-05" and "Last-Modified" in aws.date_basis


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("truncated", "cut short"),
        ("columns", "lacks column(s) ['Price']"),
        ("500", "still failing after 2 tries"),
        ("404", "HTTP 404"),
    ],
)
def test_a_bad_skypilot_file_keeps_every_snapshot_byte_for_byte(
    file_server: FileServer, monkeypatch: pytest.MonkeyPatch, fault: str, message: str
) -> None:
    serve_skypilot(file_server, monkeypatch)
    assert runner.invoke(app, sky(file_server)).exit_code == 0
    before = tree_bytes(user_snapshot_dir())
    text = (SKY / "lambda_vms.csv").read_text()
    path = "/catalogs/v8/lambda/vms.csv"
    if fault == "truncated":
        file_server.files[path] = text[: len(text) // 2]
    elif fault == "columns":
        file_server.files[path] = text.replace(",Price,", ",PricePerHour,", 1)
    else:
        file_server.files[path] = int(fault)
    result = runner.invoke(app, sky(file_server))
    assert result.exit_code == 1, result.output
    out = " ".join(result.output.split())
    assert message in out and "stays in use, unchanged" in out
    assert "Traceback" not in result.output
    assert tree_bytes(user_snapshot_dir()) == before


def test_aws_public_streams_the_offer_file_and_keeps_gpu_rows(file_server: FileServer) -> None:
    file_server.files["/offers/us-east-1/index.csv"] = OFFER_FILE
    args = ["pricing", "refresh", "aws-public", "--regions", "us-east-1"]
    result = runner.invoke(app, [*args, "--base-url", f"{file_server.url}/offers"])
    assert result.exit_code == 0, result.output
    aws = {i.provider: i for i in read_manifest()}["aws"]
    assert aws.origin == "user" and aws.priced_at == "2025-11-20" and not aws.date_bound
    assert "publication date" in aws.date_basis
    offers = load_offers().query("provider == 'aws'").set_index("instance_type")
    p5 = offers.loc["p5.48xlarge"]
    # On-demand Linux; standard No Upfront reserved 1y and 3y; Windows, convertible,
    # All Upfront and unused-reservation rows are not taken.
    assert (p5["usd_per_hour"], p5["reserved_1y_usd_per_hour"]) == (55.04, 38.53)
    assert p5["reserved_3y_usd_per_hour"] == 26.94 and p5["gpu_name"] == "H100-SXM"
    assert (p5["gpu_count"], p5["vcpus"], p5["memory_gib"]) == (8, 192, 2048)
    assert sorted(offers.index) == ["g6.xlarge", "p4d.24xlarge", "p5.48xlarge"]
    fixes = (aws.path.parent / aws.fixes_file).read_text()
    assert "p2.xlarge" in fixes and "AWS_FAMILY_GPU" in fixes  # legacy K80: no table row
    assert "p5e.48xlarge" in fixes and "placeholder" in fixes


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("truncated", "cut short"),
        ("columns", "lacks column(s) ['Instance Family']"),
        ("no header", "no header row"),
    ],
)
def test_a_bad_offer_file_fails_and_keeps_the_snapshot(
    file_server: FileServer, fault: str, message: str
) -> None:
    text = OFFER_FILE.decode()
    body = {
        "truncated": text[: len(text) - 300],
        "columns": text.replace('"Instance Family"', '"InstanceFamily"', 1),
        "no header": "\n".join(line for line in text.splitlines() if '"SKU"' not in line),
    }[fault]
    file_server.files["/offers/us-east-1/index.csv"] = body
    result = runner.invoke(
        app,
        [
            *("pricing", "refresh", "aws-public", "--region", "us-east-1", "--attempts", "1"),
            *("--base-url", f"{file_server.url}/offers"),
        ],
    )
    assert result.exit_code == 1, result.output
    assert message in " ".join(result.output.split())
    assert tree_bytes(user_snapshot_dir()) == {}


# ------------------------------------------------- bounded network work (issue 13.4)


def bounded_refresh(source: str, server: FileServer, deadline: float) -> tuple[object, float]:
    base = {
        "skypilot": f"{server.url}/catalogs/v8",
        "aws-public": f"{server.url}/offers",
        "azure": f"{server.url}/api/retail/prices",
    }[source]
    args = ["pricing", "refresh", source, "--base-url", base, "--attempts", "2"]
    args += ["--timeout", "5", "--deadline", str(deadline)]
    args += {"skypilot": ["--clouds", "lambda"], "aws-public": ["--region", "us-east-1"]}.get(
        source, ["--region", "eastus"]
    )
    started = time.monotonic()
    result = runner.invoke(app, args)
    return result, time.monotonic() - started


PATHS = {
    "skypilot": "/catalogs/v8/lambda/vms.csv",
    "aws-public": "/offers/us-east-1/index.csv",
    "azure": "/api/retail/prices",
}


@pytest.mark.parametrize("source", ["skypilot", "aws-public", "azure"])
def test_a_server_that_drips_one_byte_a_second_is_cut_off_at_the_deadline(
    file_server: FileServer, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    serve_skypilot(file_server, monkeypatch)
    before = tree_bytes(user_snapshot_dir())
    file_server.files[PATHS[source]] = "drip"
    result, seconds = bounded_refresh(source, file_server, deadline=2.5)
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]
    assert "did not finish within 2.5 s" in " ".join(result.output.split())  # type: ignore[attr-defined]
    assert seconds < 6  # one deadline, not retried, not kept alive by each byte
    assert tree_bytes(user_snapshot_dir()) == before


@pytest.mark.parametrize("source", ["skypilot", "aws-public", "azure"])
def test_an_endless_body_stops_at_the_size_limit_with_bounded_memory(
    file_server: FileServer, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    limit = 4 * 1024 * 1024
    monkeypatch.setattr(skypilot_catalog, "MAX_CATALOG_BYTES", limit)
    monkeypatch.setattr(aws_public, "MAX_FILE_BYTES", limit)
    monkeypatch.setattr("pricing.providers.azure.MAX_PAGE_BYTES", limit)
    serve_skypilot(file_server, monkeypatch)
    file_server.files[PATHS[source]] = "endless"
    tracemalloc.start()
    try:
        result, seconds = bounded_refresh(source, file_server, deadline=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]
    assert "larger than the 4,194,304 bytes allowed" in " ".join(result.output.split())  # type: ignore[attr-defined]
    assert seconds < 30
    assert peak < 4 * limit  # the body is never held past the limit
    assert tree_bytes(user_snapshot_dir()) == {}


def test_a_page_loop_ends_at_the_first_repeated_link(file_server: FileServer) -> None:
    loop = f"{file_server.url}/api/retail/prices?page=2"
    file_server.files["/api/retail/prices"] = json.dumps({"Items": [], "NextPageLink": loop})
    file_server.files["/api/retail/prices?page=2"] = json.dumps({"Items": [], "NextPageLink": loop})
    result, seconds = bounded_refresh("azure", file_server, deadline=10)
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]
    assert "links back to a page already read" in " ".join(result.output.split())  # type: ignore[attr-defined]
    assert len(file_server.requests) == 2 and seconds < 10


def test_a_page_budget_ends_an_answer_that_never_stops() -> None:
    pages = http.Pages("test pages", max_pages=3)
    for n in range(3):
        pages.follow(f"https://example.invalid/{n}")
    with pytest.raises(FetchError, match="more than 3 pages"):
        pages.follow("https://example.invalid/next")


def test_a_stalled_server_is_retried_then_fails_within_the_read_timeout(
    file_server: FileServer,
) -> None:
    file_server.files["/offers/us-east-1/index.csv"] = "stall"
    retry = RetryPolicy(attempts=2, timeout_s=0.5, deadline_s=10, jitter=0.0, sleep=lambda _: None)
    started = time.monotonic()
    with pytest.raises(FetchError, match="still failing after 2 tries"):
        fetch_aws_public(["us-east-1"], base_url=f"{file_server.url}/offers", retry=retry)
    assert time.monotonic() - started < 5


def test_retry_after_as_an_http_date_is_read() -> None:
    import datetime as dt

    now = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)
    assert http.retry_after_seconds("Mon, 30 Nov 2026 12:00:07 GMT", now) == 7.0
    assert http.retry_after_seconds("12", now) == 12.0
    assert http.retry_after_seconds("soon", now) is None
    policy = RetryPolicy(base_delay_s=4.0, jitter=0.5, random=lambda: 1.0)
    assert policy.wait_s(1) == 2.0  # jitter takes up to half of the 4 s backoff
    assert policy.wait_s(1, hint_s=3.0) == 3.0  # never below the server's hint


def test_offer_file_parsing_is_streamed_line_by_line(tmp_path: Path) -> None:
    lines = OFFER_FILE.decode().splitlines(keepends=True)
    rows, day = aws_public.read_offer_file(iter(lines), "test")
    assert day == "2025-11-20"
    assert {r["Instance Type"] for r in rows} == {
        "p5.48xlarge",
        "p4d.24xlarge",
        "g6.xlarge",
        "p5e.48xlarge",
        "p2.xlarge",
        "g4ad.xlarge",
    }


def test_aws_and_gcp_pagers_stop_on_a_repeated_token() -> None:
    """A NextToken / page token that comes back again is a loop, not more pages."""
    from types import SimpleNamespace

    import boto3

    from pricing.providers import aws, gcp
    from tests.pricing.conftest import AwsWire

    retry = RetryPolicy(attempts=1, jitter=0.0)
    client = boto3.session.Session().client(
        "pricing", region_name="us-east-1", config=aws.client_config(retry)
    )
    wire = AwsWire(client, "GetProducts")
    for _ in range(3):
        wire.add_response({"PriceList": [], "NextToken": "same"})
    with pytest.raises(FetchError, match="links back to a page already read"):
        aws.fetch_price_list(client, "us-east-1", retry, retry.refresh_clock(), lambda _m: None)
    assert len(wire.requests) == 2
    asked: list[int] = []

    def pager_pages() -> Iterator[SimpleNamespace]:
        """A pager's pages whose token never changes (each page counted as asked for)."""
        while True:
            asked.append(1)
            yield SimpleNamespace(next_page_token="again")

    pages = gcp._pages(
        lambda: SimpleNamespace(pages=pager_pages()),
        gcp._Tries(1, "list_skus"),
        retry.refresh_clock(),
        lambda _m: None,
    )
    with pytest.raises(FetchError, match="links back"):
        list(pages)
    assert len(asked) == 2  # the third page is never asked for
