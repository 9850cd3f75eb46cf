"""Parsing SkyPilot catalog extracts: the reference defects are fixed or dropped, on record."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from pricing.providers.skypilot import parse_gcp_skypilot_vms, parse_skypilot_vms

AWS_CSV = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch
p4d.24xlarge,A100,8.0,96.0,1152.0,"{'Gpus': [{'Name': 'A100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 327680}",21.96,8.0,us-east-1,use1-az1,x86_64
p4d.24xlarge,A100,8.0,96.0,1152.0,"{'Gpus': [{'Name': 'A100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 327680}",21.96,9.0,us-east-1,use1-az2,x86_64
p4d.24xlarge,A100,8.0,96.0,1152.0,"{'Gpus': [{'Name': 'A100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 40960}}], 'TotalGpuMemoryInMiB': 327680}",21.96,13.0,us-east-1,use1-az4,x86_64
p5e.48xlarge,H200,8.0,192.0,2048.0,,,18.5,us-east-2,use2-az1,x86_64
p5.48xlarge,H100,8.0,192.0,2048.0,,55.04,55.04,us-east-1,use1-az1,x86_64
g6f.2xlarge,L4,0.25,8.0,32.0,,0.475,0.17,us-east-1,use1-az1,x86_64
m8i.large,,,2.0,8.0,,0.1,0.04,us-east-1,use1-az1,x86_64
"""

GCP_CSV = """InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-a,0.73948,0.36975
a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-b,0.73948,0.36975
,,,A100,1.0,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]}",us-central1,us-central1-a,2.93391,1.4341
a3-highgpu-8g,208.0,1872.0,,,,us-central1,us-central1-a,9.46006,2.88933
a3-highgpu-8g,208.0,1872.0,,,,us-east4,us-east4-a,9.46006,2.15966
a3-highgpu-8g,208.0,1872.0,,,,europe-west4,europe-west4-a,9.93306,2.27469
,,,H100,8.0,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]}",us-central1,us-central1-a,33.60609,23.9408
,,,H100,8.0,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]}",us-east4,us-east4-a,78.37241,17.8848
,,,H100,8.0,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]}",europe-west4,europe-west4-a,101.88413,23.2896
a4-highgpu-8g,224.0,3968.0,,,,us-east4,us-east4-a,0.0,0.0
,,,B200,8.0,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 184320}}]}",us-east4,us-east4-a,64.44,32.6064
n1-highcpu-16,16.0,14.4,,,,us-central1,us-central1-a,0.56679,0.15739
,,,V100,1.0,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]}",us-central1,us-central1-a,2.48,1.0885
,,,V100,2.0,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]}",us-central1,us-central1-a,4.96,2.177
,,,T4,1.0,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]}",us-central1,us-central1-a,0.35,0.175
,,,tpu-v6e-1,1.0,tpu-v6e-1,us-central1,us-central1-a,700.0,700.0
"""


def read(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


def test_aws_zones_collapse_to_a_regional_spot_median() -> None:
    offers, _ = parse_skypilot_vms("aws", read(AWS_CSV), "src", "2026-01-01")
    p4d = offers.set_index("instance_type").loc["p4d.24xlarge"]
    assert p4d["usd_per_hour"] == pytest.approx(21.96)
    assert p4d["spot_usd_per_hour"] == pytest.approx(9.0)  # median of 8, 9, 13
    assert p4d["gpu_name"] == "A100-SXM-40GB"
    assert p4d["gpu_memory_gib"] == pytest.approx(40.0)
    assert p4d["interconnect"] == "nvlink"


def test_aws_missing_price_stays_missing_and_repeated_spot_is_dropped() -> None:
    offers, fixes = parse_skypilot_vms("aws", read(AWS_CSV), "src", "2026-01-01")
    by_type = offers.set_index("instance_type")
    assert np.isnan(by_type.loc["p5e.48xlarge", "usd_per_hour"])
    assert by_type.loc["p5e.48xlarge", "spot_usd_per_hour"] == pytest.approx(18.5)
    assert np.isnan(by_type.loc["p5.48xlarge", "spot_usd_per_hour"])
    assert "not below on-demand" in " ".join(fixes["reason"])
    assert "no on-demand price" in " ".join(fixes["reason"])


def test_fractional_gpus_stay_fractions_and_cpu_rows_are_dropped_on_record() -> None:
    offers, fixes = parse_skypilot_vms("aws", read(AWS_CSV), "src", "2026-01-01")
    assert offers.set_index("instance_type").loc["g6f.2xlarge", "gpu_count"] == 0.25
    assert "m8i.large" not in set(offers["instance_type"])
    assert fixes["reason"].str.contains("CPU-only").any()


def test_gcp_machine_price_is_host_plus_accelerators() -> None:
    offers, _ = parse_gcp_skypilot_vms(read(GCP_CSV), "src", "2026-01-01")
    a2 = offers.set_index(["instance_type", "region"]).loc[("a2-highgpu-1g", "us-central1")]
    assert a2["usd_per_hour"] == pytest.approx(0.73948 + 2.93391)
    assert a2["spot_usd_per_hour"] == pytest.approx(0.36975 + 1.4341)
    assert a2["gpu_name"] == "A100-SXM-40GB"
    assert a2["vcpus"] == 12


def test_gcp_placeholder_zero_is_missing_never_free() -> None:
    offers, fixes = parse_gcp_skypilot_vms(read(GCP_CSV), "src", "2026-01-01")
    a4 = offers.set_index("instance_type").loc["a4-highgpu-8g"]
    assert np.isnan(a4["usd_per_hour"]) and np.isnan(a4["spot_usd_per_hour"])
    assert fixes["reason"].str.contains("placeholder Price=0").any()


def test_gcp_implausibly_cheap_regional_gpu_price_is_set_missing() -> None:
    offers, fixes = parse_gcp_skypilot_vms(read(GCP_CSV), "src", "2026-01-01")
    a3 = offers.loc[offers["instance_type"] == "a3-highgpu-8g"].set_index("region")
    assert np.isnan(a3.loc["us-central1", "usd_per_hour"])  # 4.20/GPU vs 9.80 and 12.74
    assert a3.loc["us-east4", "usd_per_hour"] == pytest.approx(9.46006 + 78.37241)
    assert a3.loc["us-central1", "spot_usd_per_hour"] == pytest.approx(2.88933 + 23.9408)
    assert fixes["reason"].str.contains("non-standard").any()


def test_gcp_n1_hosts_take_only_the_gpu_counts_their_vcpus_allow() -> None:
    offers, _ = parse_gcp_skypilot_vms(read(GCP_CSV), "src", "2026-01-01")
    n1 = sorted(offers.loc[offers["instance_type"].str.startswith("n1-"), "instance_type"])
    # 16 vCPUs: one V100 allows at most 12, so only the 2-V100 shape is offered.
    assert n1 == ["n1-highcpu-16 + 1 x T4", "n1-highcpu-16 + 2 x V100"]


def test_gcp_tpus_are_dropped_with_a_reason() -> None:
    offers, fixes = parse_gcp_skypilot_vms(read(GCP_CSV), "src", "2026-01-01")
    assert not offers["instance_type"].str.contains("tpu").any()
    assert fixes["reason"].str.contains("TPU, not a GPU").any()


def test_azure_gpu_count_fix_and_repeated_spot() -> None:
    text = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation
Standard_ND96isr_H100_v5,H100,12.0,96.0,1900,H100,98.32,98.32,eastus,V2
Standard_NV12s_v3,M60,1.0,12.0,112,M60,1.14,0.12,eastus,"V1,V2"
"""
    offers, fixes = parse_skypilot_vms("azure", read(text), "src", "2026-01-01")
    nd = offers.set_index("instance_type").loc["Standard_ND96isr_H100_v5"]
    assert nd["gpu_count"] == 8 and nd["gpu_name"] == "H100-SXM"
    assert np.isnan(nd["spot_usd_per_hour"])
    assert "Standard_NV12s_v3" not in set(offers["instance_type"])
    assert set(fixes["action"]) >= {"corrected 12.0 -> 8", "dropped row", "set missing"}


def test_vast_total_memory_is_divided_per_gpu_and_zero_spot_is_missing() -> None:
    text = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region
2x-H200-32-65536,H200,2,32,64.0,"{'Gpus': [{'Name': 'H200', 'Count': 2, 'MemoryInfo': {'SizeInMiB': 287542}}], 'TotalGpuMemoryInMiB': 287542}",5.18,0.00,", US, NA"
"""
    offers, _ = parse_skypilot_vms("vast", read(text), "src", "2026-01-01")
    row = offers.iloc[0]
    assert row["gpu_memory_gib"] == pytest.approx(287542 / 2 / 1024, rel=1e-3)
    assert np.isnan(row["spot_usd_per_hour"])
    assert row["region"] == "US, NA"


def test_a_gpu_slice_reports_whole_gpu_memory_so_count_times_memory_is_the_slice() -> None:
    row = (
        "g6f.2xlarge,L4,0.25,8.0,32.0,\"{'Gpus': [{'Name': 'L4', 'Count': 0, "
        "'LogicalGpuCount': 1, 'GpuPartitionSize': 0.25, 'MemoryInfo': {'SizeInMiB': 5722}}], "
        "'TotalGpuMemoryInMiB': 5722}\",0.475,0.17,us-east-1,use1-az1,x86_64\n"
    )
    offers, _ = parse_skypilot_vms(
        "aws", read(AWS_CSV.splitlines()[0] + "\n" + row), "s", "2026-01-01"
    )
    g6f = offers.iloc[0]
    assert g6f["gpu_count"] == 0.25
    assert g6f["gpu_memory_gib"] == pytest.approx(22.35, abs=0.01)
    assert g6f["gpu_count"] * g6f["gpu_memory_gib"] == pytest.approx(5722 / 1024, abs=0.01)
