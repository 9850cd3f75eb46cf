"""Refreshes against hostile and slow local servers: memory stays bounded whatever the
body, one --deadline bounds the whole refresh (every page and retry), a writer killed
before its manifest swap leaves nothing the next writer keeps, and text from servers
and users is printed as written (no markup, no emoji codes)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import closing
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from pricing import catalog
from pricing.catalog import bundled_snapshot_dir, read_manifest, user_snapshot_dir
from pricing.providers import aws_public, azure, skypilot_catalog
from pricing.providers.azure import fetch_azure
from pricing.providers.retry import DeadlineExceeded, FetchError, RetryPolicy
from pricing.store import UNCOMMITTED_NAME, commit_snapshot
from tests.pricing.conftest import (
    FIXTURES,
    FileServer,
    MisbehavingServer,
    Sleeps,
    fixture_json,
    serving,
    tree_bytes,
)

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
OFFER_LINES = (FIXTURES / "aws_public" / "us-east-1_index.csv").read_bytes().splitlines(True)
GPU_ROW = next(line for line in OFFER_LINES if b'"OnDemand","$55.04' in line)
AZURE_ITEM = fixture_json("azure/eastus_page1.json")["Items"][0]


class Hostile(MisbehavingServer):
    """A price server on 127.0.0.1 that misbehaves by path.

    /nolines/...         an endless body without a newline
    /gpurows/...         an offer file's header, then GPU rows that never end
    /endless/...         an endless body of short CSV lines
    /pages?page=N        Azure pages of PAGE_ITEMS items (~1 MB) linking to page N+1
    /slow?page=N         the same with one item, each answered after `delay_s`
    /fail                HTTP 500 after `delay_s`
    /reason              HTTP 404 whose reason phrase holds markup and an emoji code
    """

    PAGE_ITEMS = 1500

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        super().__init__()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path, _, query = handler.path.partition("?")
        page = int(urllib.parse.parse_qs(query).get("page", ["1"])[0])
        if path == "/reason":
            handler.send_response(404, ":b: [red]boom[/red]")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        elif path == "/fail":
            self.stop.wait(self.delay_s)
            handler.send_response(500)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        elif path in ("/pages", "/slow"):
            self.stop.wait(self.delay_s)
            count = self.PAGE_ITEMS if path == "/pages" else 1
            link = f"{self.url}{path}?page={page + 1}"
            body = json.dumps({"Items": [AZURE_ITEM] * count, "NextPageLink": link}).encode()
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        else:
            head, repeat = {
                "/nolines": (b"", b"x" * 65536),
                "/gpurows": (b"".join(OFFER_LINES[:6]), GPU_ROW * 100),
                "/endless": (b"InstanceType,Price\n", b"p5.48xlarge,98.32\n" * 4000),
            }["/" + path.split("/")[1]]
            handler.send_response(200)
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(head)
            while not self.stop.is_set():
                handler.wfile.write(repeat)


@pytest.fixture()
def hostile() -> Iterator[Hostile]:
    yield from serving(Hostile())


BUNDLED = {
    "aws": "aws-2025-06-01.csv",
    "azure": "azure-2024-01-01.csv",
    "lambda": "lambda-2025-01-01.csv",
}


def snapshots_in_use() -> dict[str, str]:
    """Commit user snapshots of the providers the hostile refreshes would replace; the
    folder's bytes, to prove that they stay as they were."""
    for provider, name in BUNDLED.items():
        offers = catalog.read_snapshot(bundled_snapshot_dir() / name)
        commit_snapshot(provider, offers, source="t", priced_at="2026-11-30", date_basis="t")
    return tree_bytes(user_snapshot_dir())


def custom_list(folder: Path, provider: str) -> Path:
    """A one-offer custom price list of `provider`."""
    path = folder / f"{provider}.csv"
    path.write_text(
        "provider,region,instance_type,gpu_name,gpu_count,usd_per_hour,priced_at\n"
        f"{provider},r1,h100-8x,H100-SXM,8,24.5,2026-11-15\n"
    )
    return path


# ------------------------------------------------------------------ bounded memory

# Runs each refresh in a fresh interpreter and reports the peak of the memory Python
# allocated during it (tracemalloc). A watchdog ends the process (exit 3) if its
# resident memory grows GUARD_MB past the baseline, so that an unbounded reader fails
# the test instead of filling the machine.
MEASURE = r"""
import json, os, sys, threading, time, tracemalloc
from pricing.providers.retry import RetryPolicy
from pricing.refresh import RefreshError, refresh

GUARD_KB = int(sys.argv[1]) * 1024
runs = json.loads(sys.argv[2])

def rss_kb():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024

def attempt(source, regions, options):
    retry = RetryPolicy(attempts=1, timeout_s=5.0, deadline_s=30.0)
    try:
        refresh(source, regions, options=options, retry=retry)
        return "refreshed"
    except RefreshError as exc:
        return str(exc)

attempt(*runs[0])  # warm-up: imports and first-use allocations
limit = rss_kb() + GUARD_KB

def guard():
    while True:
        if rss_kb() > limit:
            print(json.dumps({"guard": "memory grew past the guard"}), flush=True)
            os._exit(3)
        time.sleep(0.01)

threading.Thread(target=guard, daemon=True).start()
report = []
for run in runs[1:]:
    started = time.monotonic()
    tracemalloc.start()
    message = attempt(*run)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    report.append(
        {"message": message, "peak_mb": peak / 2**20, "seconds": time.monotonic() - started}
    )
print(json.dumps(report), flush=True)
"""
GUARD_MB = 400


def measure(runs: list[tuple[str, list[str], dict[str, str]]]) -> list[dict[str, object]]:
    """Each run's failure message, peak memory allocated (MB) and seconds."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(GUARD_MB), json.dumps(runs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "GPUPLAN_SKYPILOT_COMMITS_URL": f"{runs[0][2]['base_url']}/commits",
        },
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads /proc (Linux)")
def test_hostile_bodies_fail_the_refresh_with_bounded_memory(hostile: Hostile) -> None:
    before = snapshots_in_use()
    url = hostile.url
    report = measure(
        [
            ("azure", ["eastus"], {"base_url": f"{url}/reason"}),
            ("aws-public", ["us-east-1"], {"base_url": f"{url}/nolines"}),
            ("aws-public", ["us-east-1"], {"base_url": f"{url}/gpurows"}),
            ("azure", ["eastus"], {"base_url": f"{url}/pages"}),
            ("skypilot", [], {"base_url": f"{url}/endless", "clouds": ["lambda"]}),
        ]
    )
    messages = [" ".join(str(r["message"]).split()) for r in report]
    peak_mb = [float(r["peak_mb"]) for r in report]  # type: ignore[arg-type]
    limits = [
        f"a line longer than {aws_public.MAX_LINE_BYTES:,} bytes",
        f"more than {aws_public.MAX_KEPT_ROWS:,} GPU price rows",
        f"more than {azure.MAX_ITEMS:,} price items for eastus",
        f"larger than the {skypilot_catalog.MAX_CATALOG_BYTES:,} bytes allowed",
    ]
    for message, limit in zip(messages, limits, strict=True):
        assert limit in message, message
        assert "check the URL" in message and f"{url}/" in message
        assert "stays in use, unchanged" in message
    # The AWS offer file is streamed: one line (at most 256 KB) and the kept rows.
    assert peak_mb[0] < 4 and peak_mb[1] < 48, peak_mb
    # Azure keeps only the fields it parses of at most MAX_ITEMS items.
    assert peak_mb[2] < 64, peak_mb
    # A SkyPilot catalog file is held whole, up to its cap (64 MB).
    assert peak_mb[3] < 64 * 2.5, peak_mb
    assert max(float(r["seconds"]) for r in report) < 10  # type: ignore[arg-type]
    assert tree_bytes(user_snapshot_dir()) == before


def test_a_line_without_an_end_fails_at_the_line_cap(hostile: Hostile) -> None:
    retry = RetryPolicy(attempts=1, timeout_s=5.0, deadline_s=30.0)
    with pytest.raises(FetchError, match="a line longer than 262,144 bytes"):
        aws_public.fetch_aws_public(["us-east-1"], base_url=f"{hostile.url}/nolines", retry=retry)


def test_an_azure_item_with_a_huge_field_is_refused() -> None:
    item = {**AZURE_ITEM, "productName": "x" * 10_000}
    with pytest.raises(ValueError, match="productName has 10,000 characters"):
        azure._kept_fields(item)
    kept = azure._kept_fields({**AZURE_ITEM, "unrelated": ["big"] * 1000})
    assert "unrelated" not in kept and set(kept) <= {*azure.ITEM_FIELDS, "reservationTerm"}


def test_a_device_as_a_custom_list_is_refused_not_read_forever() -> None:
    started = time.monotonic()
    result = runner.invoke(app, ["pricing", "add-custom", "/dev/zero"])
    assert result.exit_code == 2, result.output
    assert "/dev/zero" in result.output and "not a regular file" in result.output
    assert time.monotonic() - started < 5


# ------------------------------------------------------------ one total deadline


def seconds_to_the_deadline(server: Hostile, path: str, retry: RetryPolicy) -> float:
    """Seconds an Azure fetch from `path` of `server` took to stop at its deadline."""
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match=f"did not finish within {retry.deadline_s:g} s"):
        fetch_azure(["eastus"], base_url=f"{server.url}{path}", retry=retry)
    return time.monotonic() - started


def test_pages_each_in_time_still_stop_at_the_refresh_deadline() -> None:
    retry = RetryPolicy(attempts=1, timeout_s=1.0, deadline_s=2.0)
    with closing(Hostile(delay_s=0.4)) as server:
        seconds = seconds_to_the_deadline(server, "/slow", retry)
    assert 3 <= len(server.requests) <= 6  # each page came in time; together they did not
    assert seconds < 3.5


def test_retries_stop_at_the_refresh_deadline_not_after_every_try() -> None:
    retry = RetryPolicy(
        attempts=50, base_delay_s=0.05, max_delay_s=0.05, jitter=0.0, timeout_s=1.0,
        deadline_s=1.0,
    )  # fmt: skip
    with closing(Hostile(delay_s=0.2)) as server:
        seconds = seconds_to_the_deadline(server, "/fail", retry)
    assert len(server.requests) < 10 and seconds < 2.5


def test_a_wait_that_would_end_past_the_deadline_is_not_waited(file_server: FileServer) -> None:
    file_server.files["/api/retail/prices"] = 503
    sleeps = Sleeps()
    retry = RetryPolicy(
        attempts=5, base_delay_s=30.0, max_delay_s=60.0, deadline_s=5.0, sleep=sleeps
    )
    with pytest.raises(DeadlineExceeded) as info:
        fetch_azure(["eastus"], base_url=f"{file_server.url}/api/retail/prices", retry=retry)
    assert sleeps.delays == [] and len(file_server.requests) == 1
    assert "HTTP 503" in str(info.value) and "next try would start too late" in str(info.value)


def test_the_deadline_message_names_the_deadline_flag(file_server: FileServer) -> None:
    file_server.files["/api/retail/prices"] = "drip"
    result = runner.invoke(
        app,
        [
            *("pricing", "refresh", "azure", "--region", "eastus", "--deadline", "1.5"),
            *("--base-url", f"{file_server.url}/api/retail/prices"),
        ],
    )
    out = " ".join(result.output.split())
    assert result.exit_code == 1, out
    assert "did not finish within 1.5 s" in out and "raise --deadline" in out
    assert "--timeout" not in out


def test_deadline_help_says_it_is_for_the_whole_refresh() -> None:
    result = runner.invoke(app, ["pricing", "refresh", "--help"], env={"COLUMNS": "200"})
    assert "whole refresh" in " ".join(result.output.split())


# ------------------------------------------------------ a writer killed mid-commit

KILLED = """
import os, signal, sys
from pathlib import Path
from pricing import store
from pricing.refresh import add_custom

def killed(*_args, **_kwargs):
    os.kill(os.getpid(), signal.SIGKILL)  # after the CSVs, before the manifest swap

store.write_manifest = killed
add_custom(Path(sys.argv[1]))
"""


def killed_before_the_manifest_swap(path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(path)],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]


def listed_files(folder: Path) -> set[str]:
    names = {"MANIFEST.json"}
    for info in [*catalog.read_manifest(folder), *catalog.read_history(folder)]:
        names |= {info.file, info.fixes_file, info.spot_zones_file} - {""}
    return names


def test_the_next_writer_removes_what_a_killed_writer_never_committed(tmp_path: Path) -> None:
    from pricing.refresh import add_custom

    folder = user_snapshot_dir()
    first = custom_list(tmp_path, "first-cloud")
    add_custom(first)
    killed_before_the_manifest_swap(first)
    orphans = {p.name for p in folder.iterdir()} - listed_files(folder) - {".lock"}
    assert any(name.startswith("custom-first-cloud-") for name in orphans), orphans
    mine = folder / "mine-2026-01-01.csv"  # a user's own file of the same pattern
    mine.write_text("kept")
    add_custom(custom_list(tmp_path, "second-cloud"))
    left = {p.name for p in folder.iterdir()} - {".lock"}
    assert left == listed_files(folder) | {mine.name}
    assert {i.provider for i in read_manifest(folder)} == {
        "custom-first-cloud",
        "custom-second-cloud",
    }


def test_an_uncommitted_list_never_removes_a_committed_or_outside_file(tmp_path: Path) -> None:
    from pricing.refresh import add_custom

    folder = user_snapshot_dir()
    info = add_custom(custom_list(tmp_path, "first-cloud")).info
    outside = folder.parent / "outside-2026-01-01.csv"
    outside.write_text("not ours")
    names = [info.file, "../outside-2026-01-01.csv", "/etc/passwd", ".lock", "MANIFEST.json"]
    (folder / UNCOMMITTED_NAME).write_text(json.dumps(names))
    add_custom(custom_list(tmp_path, "second-cloud"))
    assert info.path.exists() and outside.read_text() == "not ours"
    assert (folder / "MANIFEST.json").exists() and not (folder / UNCOMMITTED_NAME).exists()
    assert {i.provider for i in read_manifest(folder)} == {
        "custom-first-cloud",
        "custom-second-cloud",
    }


# ------------------------------------------------ text from outside, printed as text


def test_a_server_reason_with_markup_and_emoji_codes_is_printed_verbatim(
    hostile: Hostile,
) -> None:
    result = runner.invoke(
        app,
        [
            *("pricing", "refresh", "azure", "--region", "eastus", "--attempts", "1"),
            *("--base-url", f"{hostile.url}/reason"),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "HTTP 404 :b: [red]boom[/red]" in " ".join(result.output.split())
    assert "\N{NEGATIVE SQUARED LATIN CAPITAL LETTER B}" not in result.output


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_paths_with_markup_and_emoji_codes_are_printed_verbatim(tmp_path: Path, fmt: str) -> None:
    old = tmp_path / ":b: [red]old.csv"
    new = tmp_path / ":b: [bold]new.csv"
    shutil.copy(bundled_snapshot_dir() / "aws-2025-06-01.csv", old)
    shutil.copy(bundled_snapshot_dir() / "aws-2025-06-01.csv", new)
    result = runner.invoke(
        app, ["pricing", "diff", str(old), str(new), "--format", fmt], env={"COLUMNS": "400"}
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert f"{old} -> {new}" in out
    assert "\N{NEGATIVE SQUARED LATIN CAPITAL LETTER B}" not in result.output
    missing = runner.invoke(app, ["pricing", "diff", str(tmp_path / ":b: [red]gone.csv"), str(new)])
    assert missing.exit_code == 2
    assert ":b: [red]gone.csv" in " ".join(missing.output.split())
