"""Provider GPU alias tables: (provider, accelerator label, instance type) -> canonical GPU.

Providers name accelerators loosely ("H100" is an SXM part on AWS p5 and a PCIe part on
Lambda's gpu_1x_h100_pcie), so the instance type decides where the label alone cannot.
Each table is a quirk table: the date says when it was checked against the provider's
documentation or catalog, and tests/pricing/test_aliases.py has a case for each row.

`resolve_offer_gpu` returns None for accelerators gpuplan deliberately does not plan for
(see UNSUPPORTED_ACCELERATORS); callers drop those offers with the recorded reason.
"""

from __future__ import annotations

import re

from pricing.gpus import canonical_gpu

# Instance-family prefixes -> canonical GPU. Checked 2026-11 against the AWS
# accelerated-computing instance pages (p3/p3dn V100 SXM2, p4d A100 SXM4 40GB, p4de
# A100 SXM4 80GB, p5 H100 SXM, p5e/p5en H200 SXM, p6-b200/b300, g4dn T4, g5 A10G,
# g6/g6f L4, g6e L40S).
AWS_FAMILY_GPU: dict[str, str] = {
    "p3dn": "V100-SXM2-32GB",
    "p3": "V100-SXM2-16GB",
    "p4de": "A100-SXM-80GB",
    "p4d": "A100-SXM-40GB",
    "p5en": "H200-SXM",
    "p5e": "H200-SXM",
    "p5": "H100-SXM",
    "p6-b300": "B300",
    "p6-b200": "B200",
    "g4dn": "T4",
    "g5": "A10G",
    "g6f": "L4",
    "g6e": "L40S",
    "g6": "L4",
}

# GCP accelerator type names (catalog labels and Compute API names) -> canonical GPU.
# Checked 2026-11 against cloud.google.com/compute/docs/gpus: A100 40GB on a2-highgpu
# is SXM4, A100 80GB on a2-ultragpu is SXM4, A3 (high/mega/edge) is H100 SXM, A3 Ultra
# is H200 SXM, A4 is B200; the V100 is SXM2 16GB; the P100 is a 16GB PCIe card.
GCP_ACCELERATOR_GPU: dict[str, str] = {
    "a100": "A100-SXM-40GB",
    "nvidia-tesla-a100": "A100-SXM-40GB",
    "a100-80gb": "A100-SXM-80GB",
    "nvidia-a100-80gb": "A100-SXM-80GB",
    "h100": "H100-SXM",
    "nvidia-h100-80gb": "H100-SXM",
    "h100-mega": "H100-SXM",
    "nvidia-h100-mega-80gb": "H100-SXM",
    "h200": "H200-SXM",
    "nvidia-h200-141gb": "H200-SXM",
    "b200": "B200",
    "nvidia-b200": "B200",
    "l4": "L4",
    "nvidia-l4": "L4",
    "t4": "T4",
    "nvidia-tesla-t4": "T4",
    "v100": "V100-SXM2-16GB",
    "nvidia-tesla-v100": "V100-SXM2-16GB",
    "p100": "P100-PCIe",
    "nvidia-tesla-p100": "P100-PCIe",
    "k80": "K80",
    "nvidia-tesla-k80": "K80",
}

# Azure VM size patterns -> canonical GPU. Checked 2026-11 against
# learn.microsoft.com/azure/virtual-machines/sizes (GPU-accelerated): ND A100 v4 is
# A100 SXM4 40GB, NDm A100 v4 80GB, NC A100 v4 is A100 PCIe 80GB, NC H100 v5 is
# H100 NVL, ND H100 v5 is H100 SXM, ND H200 v5 is H200 SXM, NCv3 is V100 PCIe 16GB,
# NDv2 is V100 SXM2 32GB, NC (v1) is K80 (one GK210 die per "GPU").
AZURE_SIZE_GPU: tuple[tuple[str, str], ...] = (
    (r"^Standard_ND\d+amsr_A100_v4$", "A100-SXM-80GB"),
    (r"^Standard_ND\d+asr_v4$", "A100-SXM-40GB"),
    (r"^Standard_NC\d+ads_A100_v4$", "A100-PCIe-80GB"),
    (r"^Standard_NC\d+ad[i]?s_H100_v5$", "H100-NVL"),
    (r"^Standard_ND\d+isr_H100_v5$", "H100-SXM"),
    (r"^Standard_ND\d+isr_H200_v5$", "H200-SXM"),
    (r"^Standard_ND\d+isr_MI300X_v5$", "MI300X"),
    (r"^Standard_NC\d+r?s_v3$", "V100-PCIe-16GB"),
    (r"^Standard_ND\d+rs_v2$", "V100-SXM2-32GB"),
    (r"^Standard_NC\d+as_T4_v3$", "T4"),
    (r"^Standard_NV\d+ads_A10_v5$", "A10"),
    (r"^Standard_NC\d+r?(_Promo)?$", "K80"),
)

# Azure sizes whose catalog GPU count is wrong. Checked 2026-11: ND96isr_H100_v5 has
# 8 x H100 (the SkyPilot v6 catalog says 12).
AZURE_GPU_COUNT_FIX: dict[str, float] = {"Standard_ND96isr_H100_v5": 8.0}

# Instance-name tokens for neoclouds -> canonical GPU (first match wins; order matters:
# specific before general). Checked 2026-11 against each provider's public instance list.
NEOCLOUD_TOKEN_GPU: dict[str, tuple[tuple[str, str], ...]] = {
    "lambda": (
        (r"h100_pcie", "H100-PCIe"),
        (r"h100_sxm", "H100-SXM"),
        (r"a100_80gb_sxm", "A100-SXM-80GB"),
        (r"a100_sxm", "A100-SXM-40GB"),
        (r"_a100$", "A100-PCIe-40GB"),
        (r"a6000", "RTX-A6000"),
        (r"_a10$", "A10"),
        (r"gh200", "GH200"),
        (r"b200", "B200"),
        # Lambda's "V100 16GB" servers: SXM2 assumed, as in the Lambda benchmark data.
        (r"v100", "V100-SXM2-16GB"),
        (r"rtx6000", "Quadro-RTX-6000"),
    ),
    "fluidstack": (
        (r"H100_PCIE", "H100-PCIe"),
        (r"H100_NVLINK", "H100-SXM"),
        (r"A100_PCIE_80GB", "A100-PCIe-80GB"),
        (r"A100_PCIE_40GB", "A100-PCIe-40GB"),
        (r"A100_NVLINK_80GB", "A100-SXM-80GB"),
        (r"L40_48GB", "L40"),
    ),
    "nebius": (
        (r"h100-sxm", "H100-SXM"),
        (r"h200-sxm", "H200-SXM"),
        (r"b200-sxm", "B200"),
        (r"l40s", "L40S"),
    ),
    # Paperspace lists "H100 80GB" and "A100 80GB" without a form factor; its 8-GPU
    # machines are HGX (SXM) servers, and the single-GPU machines are slices of them:
    # SXM assumed (unverified, 2026-11).
    "paperspace": (
        (r"^H100", "H100-SXM"),
        (r"^A100-80G", "A100-SXM-80GB"),
        (r"^V100-32G", "V100-SXM2-32GB"),
        (r"^V100", "V100-SXM2-16GB"),
        (r"^A4000", "RTX-A4000"),
        (r"^A6000", "RTX-A6000"),
    ),
    # Vast.ai marketplace names carry the model; memory tells 40 from 80 GB A100s.
    # H200 without a form factor: SXM assumed (the NVL part is listed as H200_NVL).
    "vast": (
        (r"H100_SXM", "H100-SXM"),
        (r"H100_NVL", "H100-NVL"),
        (r"H200_NVL", "H200-NVL"),
        (r"H200", "H200-SXM"),
        (r"B200", "B200"),
        (r"L40S", "L40S"),
        (r"A40", "A40"),
        (r"RTX_4090", "RTX-4090"),
        (r"RTX_5090", "RTX-5090"),
        (r"RTX_3090", "RTX-3090"),
        (r"RTX_3080", "RTX-3080"),
        (r"RTX_3070", "RTX-3070"),
        (r"RTX_6000Ada", "RTX-6000-Ada"),
        (r"RTX_A6000", "RTX-A6000"),
    ),
}

# Memory-dependent names: (provider, token) -> {per-GPU GiB: canonical}.
MEMORY_DEPENDENT_GPU: dict[tuple[str, str], dict[int, str]] = {
    ("vast", "A100_SXM4"): {40: "A100-SXM-40GB", 80: "A100-SXM-80GB"},
    ("vast", "A100_PCIE"): {40: "A100-PCIe-40GB", 80: "A100-PCIe-80GB"},
    ("vast", "Tesla_V100"): {16: "V100-SXM2-16GB", 32: "V100-SXM2-32GB"},
}

# Accelerators gpuplan does not plan for, with the reason recorded on every dropped row.
UNSUPPORTED_ACCELERATORS: dict[str, str] = {
    "tpu": "TPU, not a GPU: gpuplan's benchmarks are PyTorch on CUDA GPUs",
    "M60": "Tesla M60 is a 2015 graphics/VDI card with no spec row; not a training GPU",
    "M4000": "Quadro M4000 is a 2015 graphics card with no spec row",
    "P4000": "Quadro P4000 is a graphics card with no spec row",
    "RTX3060": "GeForce RTX 3060 / 3060 Ti: no spec row in the reference spec table",
    "RTX4060": "GeForce RTX 4060 Ti: no spec row in the reference spec table",
    "RTX4070": "GeForce RTX 4070 Ti Super: no spec row in the reference spec table",
    "RTXA2000": "RTX A2000: no spec row in the reference spec table",
    "RTXPRO6000S": "RTX PRO 6000 Server: no spec row in the reference spec table",
}


def unsupported_reason(accelerator: str) -> str | None:
    """The recorded reason an accelerator is not planned for, or None if it is."""
    if accelerator.lower().startswith("tpu"):
        return UNSUPPORTED_ACCELERATORS["tpu"]
    return UNSUPPORTED_ACCELERATORS.get(accelerator)


def resolve_offer_gpu(
    provider: str,
    accelerator: str,
    instance_type: str,
    gpu_memory_gib: float | None = None,
) -> str | None:
    """Canonical GPU for one offer, or None if the accelerator is unsupported.

    Raises pricing.gpus.UnknownGPUError when nothing in the tables matches: a new
    accelerator must be added to a table (with its date), never guessed.
    """
    if unsupported_reason(accelerator):
        return None
    provider = provider.lower()
    if provider == "aws":
        family = instance_type.split(".")[0]
        if family in AWS_FAMILY_GPU:
            return AWS_FAMILY_GPU[family]
    elif provider == "gcp":
        key = accelerator.lower()
        if key in GCP_ACCELERATOR_GPU:
            return GCP_ACCELERATOR_GPU[key]
    elif provider == "azure":
        for pattern, gpu in AZURE_SIZE_GPU:
            if re.match(pattern, instance_type):
                return gpu
    elif provider in NEOCLOUD_TOKEN_GPU:
        for (prov, token), by_memory in MEMORY_DEPENDENT_GPU.items():
            if prov == provider and token in instance_type and gpu_memory_gib:
                nearest = min(by_memory, key=lambda gib: abs(gib - gpu_memory_gib))
                return by_memory[nearest]
        for pattern, gpu in NEOCLOUD_TOKEN_GPU[provider]:
            if re.search(pattern, instance_type):
                return gpu
    return canonical_gpu(accelerator)
