"""The run environment: read locally (DMI, /proc), never over the network."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from benchmarks.env import AZURE_ASSET_TAG, cloud_from_dmi, collect_env, read_dmi


@pytest.mark.parametrize(
    ("dmi", "expected"),
    [
        ({"sys_vendor": "Amazon EC2", "product_name": "p5.48xlarge"}, ("aws", "p5.48xlarge")),
        ({"sys_vendor": "Amazon EC2", "product_name": "Not Specified"}, ("aws", None)),
        ({"sys_vendor": "Google", "product_name": "Google Compute Engine"}, ("gcp", None)),
        (
            {"sys_vendor": "Microsoft Corporation", "chassis_asset_tag": AZURE_ASSET_TAG},
            ("azure", None),
        ),
        ({"sys_vendor": "Microsoft Corporation", "product_name": "Virtual Machine"}, (None, None)),
        ({"sys_vendor": "Supermicro", "product_name": "SYS-821GE-TNHR"}, (None, None)),
        ({}, (None, None)),
    ],
)
def test_cloud_from_dmi(dmi: dict[str, str], expected: tuple[str | None, str | None]) -> None:
    assert cloud_from_dmi(dmi) == expected


def test_read_dmi_reads_the_files_that_exist(tmp_path: Path) -> None:
    (tmp_path / "sys_vendor").write_text("Amazon EC2\n")
    (tmp_path / "product_name").write_text("g6e.xlarge\n")
    (tmp_path / "board_vendor").write_text("\n")
    assert read_dmi(tmp_path) == {"sys_vendor": "Amazon EC2", "product_name": "g6e.xlarge"}
    assert cloud_from_dmi(read_dmi(tmp_path)) == ("aws", "g6e.xlarge")
    assert read_dmi(tmp_path / "missing") == {}


def test_collect_env_names_versions_cpu_memory_and_host() -> None:
    env = collect_env("cpu")
    assert env["torch"] == torch.__version__
    assert env["cpu_model"] and env["cpu_cores"] >= 1
    assert env["memory_gib"] > 0 and env["hostname"]
    assert {"cuda", "cudnn", "nccl", "driver", "cloud_provider", "instance_type"} <= set(env)
