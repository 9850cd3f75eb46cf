"""Malformed and hostile input thrown at every pricing command and loader: custom price
lists, snapshot folders and manifests, and API/catalog answers. Each must end with exit 1
(a refresh that failed) or 2 (bad input), no traceback, and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from planner.cli.main import app
from pricing.catalog import user_snapshot_dir
from tests.pricing.conftest import FileServer, tree_bytes

runner = CliRunner()
# The fixtures are per test, not per example: each example checks its own before/after.
FIXTURES_OK = [HealthCheck.function_scoped_fixture]
HEADER = "provider,region,instance_type,gpu_name,gpu_count,usd_per_hour,priced_at"
GOOD = "acme,x,h100-8x,H100-SXM,8,24.5,2026-11-15"
NUMBER_CELLS = ["inf", "-inf", "nan", "1e309", "1e400", "-1", "0", "9" * 400, "１２"]
TEXT_CELLS = [
    "[/bogus]",
    "[bold red]x[/]",
    "=cmd|' /C calc'!A0",
    "\x00",
    "../../etc/passwd",
    "x" * 5000,
    '"unterminated',
]
HOSTILE_CELLS = [
    *((column, cell) for column in ("gpu_count", "usd_per_hour") for cell in NUMBER_CELLS),
    *((column, cell) for column in ("provider", "gpu_name", "priced_at") for cell in TEXT_CELLS),
]


def no_traceback(result: object, codes: tuple[int, ...]) -> None:
    exit_code = result.exit_code  # type: ignore[attr-defined]
    exception = result.exception  # type: ignore[attr-defined]
    assert exit_code in codes, result.output  # type: ignore[attr-defined]
    assert exception is None or isinstance(exception, SystemExit), repr(exception)
    assert "Traceback" not in result.output  # type: ignore[attr-defined]


@pytest.mark.parametrize(("column", "cell"), HOSTILE_CELLS, ids=lambda v: repr(v)[:20])
def test_a_hostile_cell_in_a_custom_list_is_refused_and_nothing_is_written(
    tmp_path: Path, column: str, cell: str
) -> None:
    cells = dict(zip(HEADER.split(","), GOOD.split(","), strict=True))
    cells[column] = cell
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + "\n" + ",".join(cells.values()) + "\n", errors="surrogatepass")
    before = tree_bytes(user_snapshot_dir())
    result = runner.invoke(app, ["pricing", "add-custom", str(path)])
    if result.exit_code == 0:  # a text cell that is a fine name (a provider called "[/bogus]")
        assert column == "provider"
        shown = runner.invoke(app, ["pricing", "show", "--provider", cell, "--format", "json"])
        no_traceback(shown, (0,))
        assert [r["provider"] for r in json.loads(shown.stdout)] == [cell.strip().lower()]
        return
    no_traceback(result, (2,))
    assert tree_bytes(user_snapshot_dir()) == before


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.binary(max_size=600) | st.text(max_size=600).map(str.encode))
def test_any_bytes_as_a_custom_list_end_cleanly(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "fuzz.csv"
    path.write_bytes(body)
    before = tree_bytes(user_snapshot_dir())
    result = runner.invoke(app, ["pricing", "add-custom", str(path), "--name", "fuzz"])
    no_traceback(result, (0, 2))
    if result.exit_code:
        assert tree_bytes(user_snapshot_dir()) == before


@pytest.mark.parametrize(
    "target",
    ["a folder", "missing", "empty", "binary", "header only", "huge line"],
)
def test_odd_files_given_to_add_custom_are_named(tmp_path: Path, target: str) -> None:
    path = tmp_path / "prices.csv"
    if target == "a folder":
        path.mkdir()
    elif target == "empty":
        path.write_text("")
    elif target == "binary":
        path.write_bytes(b"\xff\xfe\x00\x01" * 100)
    elif target == "header only":
        path.write_text(HEADER + "\n")
    elif target == "huge line":
        path.write_text(HEADER + "\n" + "a," * 100_000 + "\n")
    result = runner.invoke(app, ["pricing", "add-custom", str(path)])
    no_traceback(result, (2,))
    assert str(path) in " ".join(result.output.split())
    assert tree_bytes(user_snapshot_dir()) == {}


MANIFESTS = {
    "not json": "{",
    "a list": "[]",
    "deep": "[" * 50_000 + "]" * 50_000,
    "entries not objects": '{"snapshots": [1, 2]}',
    "escaping file": json.dumps(
        {
            "snapshots": [
                {
                    "provider": "aws",
                    "file": "../../../etc/hosts.csv",
                    "priced_at": "2026-01-01",
                    "source": "x",
                    "rows": 1,
                    "sha256": "0",
                }
            ]
        }
    ),
    "missing file": json.dumps(
        {
            "snapshots": [
                {
                    "provider": "aws",
                    "file": "aws-2026-01-01.csv",
                    "priced_at": "2026-01-01",
                    "source": "x",
                    "rows": 1,
                    "sha256": "0",
                }
            ]
        }
    ),
    "unknown key": '{"snapshots": [{"provider": "aws", "evil": 1}]}',
}


@pytest.mark.parametrize("name", list(MANIFESTS))
@pytest.mark.parametrize(
    "command",
    [
        ["pricing", "show"],
        ["pricing", "show", "--format", "json"],
        ["pricing", "status", "--format", "csv"],
        ["pricing", "diff", "aws@bundled", "aws"],
        ["pricing", "remove", "aws"],
        ["plan", "--workload", "bert-large-squad-2ep"],
    ],
    ids=lambda c: " ".join(c[:3]),
)
def test_a_broken_user_manifest_is_an_error_naming_it_for_every_command(
    name: str, command: list[str]
) -> None:
    folder = user_snapshot_dir()
    folder.mkdir(parents=True)
    (folder / "MANIFEST.json").write_text(MANIFESTS[name])
    before = tree_bytes(folder)
    result = runner.invoke(app, command)
    if name == "missing file" and command[1] in ("status", "remove"):
        no_traceback(result, (0,))  # status reports "file missing"; remove needs no file
        return
    no_traceback(result, (2,))
    assert "MANIFEST.json" in result.output or "aws-2026-01-01.csv" in result.output
    if command[1] != "remove":
        assert tree_bytes(folder) == before


def refresh_fails_cleanly(source: str, where: tuple[str, str], base_url: str) -> None:
    """`gpuplan pricing refresh SOURCE` of `where` (--region or --clouds) from `base_url`,
    one try: exit 1 with no traceback, and no user snapshot written."""
    result = runner.invoke(
        app, ["pricing", "refresh", source, *where, "--attempts", "1", "--base-url", base_url]
    )
    no_traceback(result, (1,))
    assert tree_bytes(user_snapshot_dir()) == {}


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"null",
        b"[]",
        b'{"Items": null}',
        b'{"Items": [1, "x", null]}',
        b'{"Items": [], "NextPageLink": 5}',
        b'{"Items": [{"armRegionName": "eastus", "armSkuName": "Standard_NC24ads_A100_v4", '
        b'"retailPrice": 1e400, "unitOfMeasure": "1 Hour", "type": "Consumption", '
        b'"productName": "Virtual Machines NC Series", "skuName": "NC24ads A100 v4", '
        b'"meterName": "NC24ads A100 v4"}]}',
        b"[" * 100_000,
        b"\xff\xfe",
    ],
    ids=lambda b: b[:30].decode("latin-1"),
)
def test_hostile_azure_answers_fail_the_refresh_cleanly(
    file_server: FileServer, body: bytes
) -> None:
    file_server.files["/api/retail/prices"] = body
    refresh_fails_cleanly("azure", ("--region", "eastus"), f"{file_server.url}/api/retail/prices")


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"InstanceType\n",
        b"a,b,c\n1,2,3\n",
        b"InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nx,H100,inf,1e400,r\n",
        b"InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nx,NoSuchGPU,8,2,r\n",
        b"InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nx,H100,abc,[/x],r\n",
        b"\x00\x01\x02\n",
    ],
    ids=lambda b: b[:40].decode("latin-1"),
)
def test_hostile_catalog_files_fail_the_skypilot_refresh_cleanly(
    file_server: FileServer, monkeypatch: pytest.MonkeyPatch, body: bytes
) -> None:
    file_server.files["/v8/lambda/vms.csv"] = body
    file_server.headers["Last-Modified"] = "Wed, 05 Nov 2025 10:00:00 GMT"
    monkeypatch.setenv("GPUPLAN_SKYPILOT_COMMITS_URL", f"{file_server.url}/none")
    refresh_fails_cleanly("skypilot", ("--clouds", "lambda"), f"{file_server.url}/v8")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.binary(max_size=2000))
def test_any_bytes_as_an_offer_file_fail_cleanly(file_server: FileServer, body: bytes) -> None:
    file_server.files["/offers/us-east-1/index.csv"] = body
    refresh_fails_cleanly("aws-public", ("--region", "us-east-1"), f"{file_server.url}/offers")


@pytest.mark.parametrize(
    "args",
    [
        ["--timeout", "inf"],
        ["--timeout", "nan"],
        ["--deadline", "-1"],
        ["--deadline", "1e400"],
        ["--attempts", "0"],
        ["--base-url", "file:///etc/passwd"],
        ["--clouds", "aws"],
        ["--project", "p"],
    ],
)
def test_bad_refresh_flags_are_refused_before_any_request(
    file_server: FileServer, args: list[str]
) -> None:
    result = runner.invoke(app, ["pricing", "refresh", "azure", *args])
    no_traceback(result, (2,))
    assert file_server.requests == []
