"""One case per quirk-table row: provider labels resolve to the right canonical GPU."""

from __future__ import annotations

import fnmatch
import gzip
import json
from importlib import resources

import pandas as pd
import pytest

from pricing.aliases import (
    AWS_FAMILY_GPU,
    AWS_GPU_TYPE_PATTERNS,
    AZURE_GPU_COUNT_FIX,
    AZURE_SIZE_GPU,
    AZURE_SIZE_SHAPES,
    AZURE_TERM_HOURS,
    GCP_ACCELERATOR_GPU,
    GCP_GPU_SERIES,
    GCP_SKU_COMPONENTS,
    GCP_SKU_UNITS,
    NEOCLOUD_TOKEN_GPU,
    resolve_offer_gpu,
    unsupported_reason,
)
from pricing.gpus import (
    CANONICAL_GPUS,
    UnknownGPUError,
    canonical_gpu,
    gpu_from_device_name,
    match_gpu_names,
)
from pricing.providers.aws import shape_rows
from pricing.providers.composition import GCP_N1_MAX_VCPUS, n1_gpu_counts
from pricing.providers.gcp import SKU_DESCRIPTION
from tests.conftest import ROOT

AZURE_REFERENCE = (
    pd.read_csv(ROOT / "reference/pricing/azure_vms.csv")
    .drop_duplicates("InstanceType")
    .set_index("InstanceType")
    .to_dict(orient="index")
)
MOTO_INSTANCE_TYPES = json.loads(
    gzip.decompress((resources.files("moto") / "ec2/resources/instance_types.json.gz").read_bytes())
)


# The instance type names the GPU: AWS by family, Azure by size, the neoclouds by a token
# (vast also by the GPU memory it lists).
@pytest.mark.parametrize(
    ("provider", "instance", "memory", "gpu"),
    [
        ("aws", "p3.2xlarge", None, "V100-SXM2-16GB"),
        ("aws", "p3dn.24xlarge", None, "V100-SXM2-32GB"),
        ("aws", "p4d.24xlarge", None, "A100-SXM-40GB"),
        ("aws", "p4de.24xlarge", None, "A100-SXM-80GB"),
        ("aws", "p5.48xlarge", None, "H100-SXM"),
        ("aws", "p5e.48xlarge", None, "H200-SXM"),
        ("aws", "p5en.48xlarge", None, "H200-SXM"),
        ("aws", "p6-b200.48xlarge", None, "B200"),
        ("aws", "p6-b300.48xlarge", None, "B300"),
        ("aws", "g4dn.xlarge", None, "T4"),
        ("aws", "g5.xlarge", None, "A10G"),
        ("aws", "g6.xlarge", None, "L4"),
        ("aws", "g6f.2xlarge", None, "L4"),
        ("aws", "g6e.xlarge", None, "L40S"),
        ("azure", "Standard_ND96asr_v4", None, "A100-SXM-40GB"),
        ("azure", "Standard_ND96amsr_A100_v4", None, "A100-SXM-80GB"),
        ("azure", "Standard_NC24ads_A100_v4", None, "A100-PCIe-80GB"),
        ("azure", "Standard_NC40ads_H100_v5", None, "H100-NVL"),
        ("azure", "Standard_NC80adis_H100_v5", None, "H100-NVL"),
        ("azure", "Standard_ND96isr_H100_v5", None, "H100-SXM"),
        ("azure", "Standard_ND96isr_H200_v5", None, "H200-SXM"),
        ("azure", "Standard_NC6s_v3", None, "V100-PCIe-16GB"),
        ("azure", "Standard_NC24rs_v3", None, "V100-PCIe-16GB"),
        ("azure", "Standard_ND40rs_v2", None, "V100-SXM2-32GB"),
        ("azure", "Standard_NC4as_T4_v3", None, "T4"),
        ("azure", "Standard_NV36ads_A10_v5", None, "A10"),
        ("azure", "Standard_NC6", None, "K80"),
        ("azure", "Standard_NC24r_Promo", None, "K80"),
        ("azure", "Standard_ND96isr_MI300X_v5", None, "MI300X"),
        ("lambda", "gpu_1x_h100_pcie", None, "H100-PCIe"),
        ("lambda", "gpu_8x_h100_sxm5", None, "H100-SXM"),
        ("lambda", "gpu_8x_a100_80gb_sxm4", None, "A100-SXM-80GB"),
        ("lambda", "gpu_1x_a6000", None, "RTX-A6000"),
        ("lambda", "gpu_1x_a10", None, "A10"),
        ("lambda", "gpu_1x_gh200", None, "GH200"),
        ("lambda", "gpu_8x_b200_sxm6", None, "B200"),
        ("lambda", "gpu_8x_v100_n", None, "V100-SXM2-16GB"),
        ("fluidstack", "H100_PCIE_80GB::1", None, "H100-PCIe"),
        ("fluidstack", "H100_NVLINK_80GB::8", None, "H100-SXM"),
        ("fluidstack", "A100_PCIE_80GB::4", None, "A100-PCIe-80GB"),
        ("fluidstack", "L40_48GB::2", None, "L40"),
        ("nebius", "gpu-h200-sxm_8gpu-128vcpu-1600gb", None, "H200-SXM"),
        ("nebius", "gpu-l40s-a_1gpu-16vcpu-64gb", None, "L40S"),
        ("paperspace", "H100x8", None, "H100-SXM"),
        ("paperspace", "V100-32Gx4", None, "V100-SXM2-32GB"),
        ("paperspace", "A4000x2", None, "RTX-A4000"),
        ("vast", "1x-A100_SXM4-32-65536", 40.0, "A100-SXM-40GB"),
        ("vast", "1x-A100_PCIE-32-65536", 80.0, "A100-PCIe-80GB"),
        ("vast", "8x-Tesla_V100-32-65536", 16.0, "V100-SXM2-16GB"),
        ("vast", "2x-H100_NVL-32-65536", 93.6, "H100-NVL"),
        ("vast", "1x-RTX_6000Ada-32-65536", 48.0, "RTX-6000-Ada"),
        ("vast", "4x-RTX_5090-32-65536", 32.0, "RTX-5090"),
    ],
)
def test_instance_types_name_their_gpu(
    provider: str, instance: str, memory: float | None, gpu: str
) -> None:
    assert resolve_offer_gpu(provider, "x", instance, memory) == gpu


def test_every_table_target_is_canonical() -> None:
    targets = [
        *AWS_FAMILY_GPU.values(),
        *GCP_ACCELERATOR_GPU.values(),
        *(g for _, g in AZURE_SIZE_GPU),
        *(g for rows in NEOCLOUD_TOKEN_GPU.values() for _, g in rows),
    ]
    assert set(targets) <= set(CANONICAL_GPUS)


def test_gcp_labels_from_catalog_and_api_agree() -> None:
    assert resolve_offer_gpu("gcp", "A100", "a2-highgpu-1g") == "A100-SXM-40GB"
    assert resolve_offer_gpu("gcp", "nvidia-h100-mega-80gb", "a3-megagpu-8g") == "H100-SXM"
    assert resolve_offer_gpu("gcp", "nvidia-l4", "g2-standard-4") == "L4"


def test_unsupported_and_unknown_accelerators() -> None:
    assert resolve_offer_gpu("gcp", "tpu-v6e-8", "") is None
    assert "no spec row" in (unsupported_reason("RTX3060") or "")
    with pytest.raises(UnknownGPUError, match="unknown GPU 'Z9000'"):
        resolve_offer_gpu("aws", "Z9000", "z9.xlarge")


def test_user_names_resolve_case_and_separator_insensitively() -> None:
    assert canonical_gpu("h100 sxm") == "H100-SXM"
    assert canonical_gpu("A100_PCIe_80GB") == "A100-PCIe-80GB"
    assert canonical_gpu("H100 SXM5 80GB") == "H100-SXM"
    assert match_gpu_names("a100") == [
        "A100-SXM-40GB",
        "A100-SXM-80GB",
        "A100-PCIe-40GB",
        "A100-PCIe-80GB",
    ]
    with pytest.raises(UnknownGPUError, match="did you mean 'H100-SXM'"):
        canonical_gpu("H100-SMX")


@pytest.mark.parametrize(
    ("device", "gpu"),
    [
        ("NVIDIA H100 80GB HBM3", "H100-SXM"),
        ("NVIDIA H100 PCIe", "H100-PCIe"),
        ("NVIDIA H100 NVL", "H100-NVL"),
        ("NVIDIA H200", "H200-SXM"),
        ("NVIDIA GH200 480GB", "GH200"),
        ("NVIDIA A100-SXM4-80GB", "A100-SXM-80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-SXM-40GB"),
        ("NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"),
        ("NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB"),
        ("Tesla V100-SXM2-16GB", "V100-SXM2-16GB"),
        ("Tesla T4", "T4"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA GeForce RTX 4090", "RTX-4090"),
        ("NVIDIA RTX A6000", "RTX-A6000"),
        ("NVIDIA B200", "B200"),
    ],
)
def test_cuda_device_names(device: str, gpu: str) -> None:
    assert gpu_from_device_name(device) == gpu


def test_cpu_is_not_a_gpu() -> None:
    assert gpu_from_device_name("cpu: Intel(R) Xeon(R) Platinum 8375C") is None


# ------------------------------------------------- live-API quirk tables (one case per row)


@pytest.mark.parametrize(("label", "component"), sorted(GCP_SKU_COMPONENTS.items()))
def test_gcp_sku_descriptions_resolve_under_every_pricing_model(
    label: str, component: tuple[str, str]
) -> None:
    for description in (
        f"{label} running in Americas",
        f"Spot Preemptible {label} running in EMEA",
        f"Commitment v1: {label} in Americas for 1 Year",
        f"Commitment v1: {label} running in APAC for 3 Year",
    ):
        match = SKU_DESCRIPTION.match(description)
        assert match is not None and match["label"] == label, description
    kind, key = component
    assert kind in GCP_SKU_UNITS
    if kind == "gpu":
        assert resolve_offer_gpu("gcp", key, "") in CANONICAL_GPUS
    else:
        assert key in GCP_GPU_SERIES


def test_gcp_non_standard_skus_are_not_in_the_table() -> None:
    for description in (
        "DWS Defined Duration Nvidia H100 80GB GPU running in Americas",
        "Sole Tenancy Instance Core running in Americas",
        "Reserved A2 Instance Core running in Americas",
    ):
        match = SKU_DESCRIPTION.match(description)
        assert match is not None and match["label"] not in GCP_SKU_COMPONENTS


def test_gcp_licensed_workstation_gpus_are_not_planned_for() -> None:
    assert "licence" in (unsupported_reason("nvidia-tesla-t4-vws") or "")
    assert resolve_offer_gpu("gcp", "nvidia-l4-vws", "g2-standard-4") is None


def test_gcp_n1_vcpu_limits_are_keyed_by_canonical_gpus() -> None:
    assert set(GCP_N1_MAX_VCPUS) <= set(CANONICAL_GPUS)
    assert n1_gpu_counts("T4", 8) == [1, 2, 4]
    assert n1_gpu_counts("V100-SXM2-16GB", 16) == [2, 4, 8]
    assert n1_gpu_counts("V100-SXM2-16GB", 16, max_cards=4) == [2, 4]
    assert n1_gpu_counts("A100-SXM-40GB", 16) == []


@pytest.mark.parametrize(("size", "shape"), sorted(AZURE_SIZE_SHAPES.items()))
def test_azure_sizes_have_a_gpu_and_agree_with_the_reference_catalog(
    size: str, shape: tuple[str, float, float, float]
) -> None:
    label, gpus, vcpus, memory = shape
    gpu = resolve_offer_gpu("azure", label, size)
    assert gpu in CANONICAL_GPUS or unsupported_reason(label)
    assert 0 < gpus <= 8 and vcpus > 0 and memory > 0
    reference = AZURE_REFERENCE.get(size)
    if reference is not None:
        ref_gpus = AZURE_GPU_COUNT_FIX.get(size, reference["AcceleratorCount"])
        assert (gpus, vcpus, memory) == (ref_gpus, reference["vCPUs"], reference["MemoryGiB"])


def test_azure_reservation_terms_are_whole_years_of_hours() -> None:
    assert AZURE_TERM_HOURS == {"1 Year": 365 * 24, "3 Years": 3 * 365 * 24}


def test_aws_gpu_families_fall_under_the_instance_type_filter() -> None:
    for family in AWS_FAMILY_GPU:
        assert any(fnmatch.fnmatch(f"{family}.xlarge", p) for p in AWS_GPU_TYPE_PATTERNS)
    assert resolve_offer_gpu("aws", "L4", "gr6.4xlarge") == "L4"
    assert resolve_offer_gpu("aws", "L4", "gr6f.4xlarge") == "L4"


@pytest.mark.parametrize(
    "size", ["g6f.large", "g6f.xlarge", "g6f.2xlarge", "g6f.4xlarge", "gr6f.4xlarge"]
)
def test_aws_gpu_slices_from_ec2_are_fractions(size: str) -> None:
    entry = MOTO_INSTANCE_TYPES[size]  # AWS's own DescribeInstanceTypes data, as moto ships it
    shape = shape_rows([entry], []).iloc[0]
    gpu = entry["GpuInfo"]["Gpus"][0]
    assert shape["gpu_count"] == gpu["LogicalGpuCount"] * gpu["GpuPartitionSize"] < 1
    assert shape["gpu_count"] * shape["gpu_memory_gib"] == pytest.approx(
        entry["GpuInfo"]["TotalGpuMemoryInMiB"] / 1024, abs=0.01
    )
