"""One case per quirk-table row: provider labels resolve to the right canonical GPU."""

from __future__ import annotations

import pytest

from pricing.aliases import (
    AWS_FAMILY_GPU,
    AZURE_SIZE_GPU,
    GCP_ACCELERATOR_GPU,
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


@pytest.mark.parametrize(
    ("instance", "gpu"),
    [
        ("p3.2xlarge", "V100-SXM2-16GB"),
        ("p3dn.24xlarge", "V100-SXM2-32GB"),
        ("p4d.24xlarge", "A100-SXM-40GB"),
        ("p4de.24xlarge", "A100-SXM-80GB"),
        ("p5.48xlarge", "H100-SXM"),
        ("p5e.48xlarge", "H200-SXM"),
        ("p5en.48xlarge", "H200-SXM"),
        ("p6-b200.48xlarge", "B200"),
        ("p6-b300.48xlarge", "B300"),
        ("g4dn.xlarge", "T4"),
        ("g5.xlarge", "A10G"),
        ("g6.xlarge", "L4"),
        ("g6f.2xlarge", "L4"),
        ("g6e.xlarge", "L40S"),
    ],
)
def test_aws_families(instance: str, gpu: str) -> None:
    assert resolve_offer_gpu("aws", "whatever", instance) == gpu


@pytest.mark.parametrize(
    ("size", "gpu"),
    [
        ("Standard_ND96asr_v4", "A100-SXM-40GB"),
        ("Standard_ND96amsr_A100_v4", "A100-SXM-80GB"),
        ("Standard_NC24ads_A100_v4", "A100-PCIe-80GB"),
        ("Standard_NC40ads_H100_v5", "H100-NVL"),
        ("Standard_NC80adis_H100_v5", "H100-NVL"),
        ("Standard_ND96isr_H100_v5", "H100-SXM"),
        ("Standard_ND96isr_H200_v5", "H200-SXM"),
        ("Standard_NC6s_v3", "V100-PCIe-16GB"),
        ("Standard_NC24rs_v3", "V100-PCIe-16GB"),
        ("Standard_ND40rs_v2", "V100-SXM2-32GB"),
        ("Standard_NC4as_T4_v3", "T4"),
        ("Standard_NV36ads_A10_v5", "A10"),
        ("Standard_NC6", "K80"),
        ("Standard_NC24r_Promo", "K80"),
        ("Standard_ND96isr_MI300X_v5", "MI300X"),
    ],
)
def test_azure_sizes(size: str, gpu: str) -> None:
    assert resolve_offer_gpu("azure", "x", size) == gpu


@pytest.mark.parametrize(
    ("provider", "instance", "memory", "gpu"),
    [
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
def test_neocloud_tokens(provider: str, instance: str, memory: float | None, gpu: str) -> None:
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
