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
    "gr6f": "L4",
    "gr6": "L4",
    "g6": "L4",
}

# EC2 instance-type patterns that hold the GPU families (accelerated computing P and G
# families; DL, Inf, Trn and F carry Gaudi, Inferentia, Trainium and FPGAs, not GPUs).
# Used as the DescribeInstanceTypes "instance-type" filter. Checked 2026-11 against
# docs.aws.amazon.com/ec2/latest/instancetypes/ac.html.
AWS_GPU_TYPE_PATTERNS = ("p*", "g*")

# GPU slices from EC2 DescribeInstanceTypes: a partitioned GPU reports Count 0 with
# LogicalGpuCount and GpuPartitionSize (g6f.2xlarge: 1 x 0.25 of an L4); the instance has
# LogicalGpuCount x GpuPartitionSize GPUs. Checked 2026-11 against the EC2 API reference
# (GpuDeviceInfo) and the g6f/gr6f rows of reference/pricing/aws_vms.csv.
AWS_FRACTIONAL_FIELDS = ("LogicalGpuCount", "GpuPartitionSize")

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

# GCP machine series whose machine types take GPUs, and the N1 hosts offered with
# attached GPUs (every n1-standard size; GCP_N1_MAX_VCPUS says which GPU counts fit).
# Checked 2026-11 against cloud.google.com/compute/docs/gpus.
GCP_GPU_SERIES = ("a2", "a3", "a4", "g2", "n1")
GCP_N1_HOST_PREFIX = "n1-standard-"

# Cloud Billing SKU descriptions (Compute Engine, service 6F81-5844-456A) -> what the SKU
# prices: ("core" | "ram", machine series) per vCPU-hour / GiB-hour, or ("gpu",
# Compute API accelerator type) per GPU-hour. The description is looked up without its
# pricing-model prefix ("Spot Preemptible ", "Commitment v1: ") and region suffix
# (" running in Americas", " in Americas for 1 Year"); the pricing model itself comes
# from category.usageType. Descriptions not listed (DWS, flex-start, sole-tenant,
# custom, premium, reserved SKUs) price something else and are ignored: the first "H100
# 80GB GPU" SKU by substring can be a non-standard one (reference/pricing/README.md).
# A3 machine types are billed on the "A3 Instance" core and RAM SKUs whatever their
# sub-family (high, mega, edge, ultra). N1 commitments are "Commitment v1: Cpu|Ram".
# Checked 2026-11 against cloud.google.com/skus (Compute Engine) and
# cloud.google.com/compute/gpus-pricing.
GCP_SKU_COMPONENTS: dict[str, tuple[str, str]] = {
    "A2 Instance Core": ("core", "a2"),
    "A2 Instance Ram": ("ram", "a2"),
    "A2 Cpu": ("core", "a2"),
    "A2 Ram": ("ram", "a2"),
    "A3 Instance Core": ("core", "a3"),
    "A3 Instance Ram": ("ram", "a3"),
    "A3 Cpu": ("core", "a3"),
    "A3 Ram": ("ram", "a3"),
    "A4 Instance Core": ("core", "a4"),
    "A4 Instance Ram": ("ram", "a4"),
    "A4 Cpu": ("core", "a4"),
    "A4 Ram": ("ram", "a4"),
    "G2 Instance Core": ("core", "g2"),
    "G2 Instance Ram": ("ram", "g2"),
    "G2 Cpu": ("core", "g2"),
    "G2 Ram": ("ram", "g2"),
    "N1 Predefined Instance Core": ("core", "n1"),
    "N1 Predefined Instance Ram": ("ram", "n1"),
    "Cpu": ("core", "n1"),
    "Ram": ("ram", "n1"),
    "Nvidia Tesla T4 GPU": ("gpu", "nvidia-tesla-t4"),
    "Nvidia Tesla V100 GPU": ("gpu", "nvidia-tesla-v100"),
    "Nvidia Tesla P100 GPU": ("gpu", "nvidia-tesla-p100"),
    "Nvidia Tesla A100 GPU": ("gpu", "nvidia-tesla-a100"),
    "Nvidia A100 80GB GPU": ("gpu", "nvidia-a100-80gb"),
    "Nvidia H100 80GB GPU": ("gpu", "nvidia-h100-80gb"),
    # A3 Mega's GPU SKU is worded both ways, depending on the region.
    "Nvidia H100 80GB Mega GPU": ("gpu", "nvidia-h100-mega-80gb"),
    "Nvidia H100 Mega 80GB GPU": ("gpu", "nvidia-h100-mega-80gb"),
    "Nvidia H200 141GB GPU": ("gpu", "nvidia-h200-141gb"),
    "Nvidia L4 GPU": ("gpu", "nvidia-l4"),
    "Nvidia B200 (1 gpu slice)": ("gpu", "nvidia-b200"),
}
# The unit each component is priced in (pricingExpression.usageUnit).
GCP_SKU_UNITS: dict[str, str] = {"core": "h", "ram": "GiBy.h", "gpu": "h"}

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

# Azure GPU sizes -> (GPU label, GPUs, vCPUs, memory GiB): the retail prices API gives
# prices only, so shapes come from here; a size not listed is dropped on record (its GPU
# count is unknown, and is never guessed). Fractional GPUs are NVadsA10 v5 partitions.
# Checked 2026-11 against learn.microsoft.com/azure/virtual-machines/sizes (GPU
# accelerated: NC, NCv3, NCasT4_v3, NC A100 v4, NC H100 v5, ND A100 v4, NDm A100 v4,
# NDv2, ND H100 v5, ND H200 v5, ND MI300X v5, NVv3, NVadsA10 v5) and the resource-SKU
# figures in reference/pricing/azure_vms.csv.
AZURE_SIZE_SHAPES: dict[str, tuple[str, float, float, float]] = {
    "Standard_NC6": ("K80", 1, 6, 56),
    "Standard_NC12": ("K80", 2, 12, 112),
    "Standard_NC24": ("K80", 4, 24, 224),
    "Standard_NC24r": ("K80", 4, 24, 224),
    "Standard_NC6s_v3": ("V100", 1, 6, 112),
    "Standard_NC12s_v3": ("V100", 2, 12, 224),
    "Standard_NC24s_v3": ("V100", 4, 24, 448),
    "Standard_NC24rs_v3": ("V100", 4, 24, 448),
    "Standard_ND40rs_v2": ("V100-32GB", 8, 40, 672),
    "Standard_NC4as_T4_v3": ("T4", 1, 4, 28),
    "Standard_NC8as_T4_v3": ("T4", 1, 8, 56),
    "Standard_NC16as_T4_v3": ("T4", 1, 16, 110),
    "Standard_NC64as_T4_v3": ("T4", 4, 64, 440),
    "Standard_NC24ads_A100_v4": ("A100-80GB", 1, 24, 220),
    "Standard_NC48ads_A100_v4": ("A100-80GB", 2, 48, 440),
    "Standard_NC96ads_A100_v4": ("A100-80GB", 4, 96, 880),
    "Standard_ND96asr_v4": ("A100", 8, 96, 900),
    "Standard_ND96amsr_A100_v4": ("A100-80GB", 8, 96, 1800),
    "Standard_NC40ads_H100_v5": ("H100", 1, 40, 320),
    "Standard_NC80adis_H100_v5": ("H100", 2, 80, 640),
    "Standard_ND96isr_H100_v5": ("H100", 8, 96, 1900),
    "Standard_ND96isr_H200_v5": ("H200", 8, 96, 1850),
    "Standard_ND96isr_MI300X_v5": ("MI300X", 8, 96, 1850),
    "Standard_NV12s_v3": ("M60", 1, 12, 112),
    "Standard_NV24s_v3": ("M60", 2, 24, 224),
    "Standard_NV48s_v3": ("M60", 4, 48, 448),
    "Standard_NV6ads_A10_v5": ("A10", 1 / 6, 6, 55),
    "Standard_NV12ads_A10_v5": ("A10", 1 / 3, 12, 110),
    "Standard_NV18ads_A10_v5": ("A10", 1 / 2, 18, 220),
    "Standard_NV36ads_A10_v5": ("A10", 1, 36, 440),
    "Standard_NV36adms_A10_v5": ("A10", 1, 36, 880),
    "Standard_NV72ads_A10_v5": ("A10", 2, 72, 880),
}

# Hours in a reservation term, to turn an Azure reservation's term price into an
# effective hourly price: 365 days x 24 h per year (Azure bills 730 h a month, 12 months).
AZURE_TERM_HOURS: dict[str, float] = {"1 Year": 8760.0, "3 Years": 26280.0}

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


# GCP accelerator types with a "-vws" suffix are the same GPUs sold with an NVIDIA RTX
# Virtual Workstation licence, priced with it (checked 2026-11, cloud.google.com/compute/
# docs/gpus/create-gpu-vm-virtual-workstation).
VWS_SUFFIX = "-vws"


def unsupported_reason(accelerator: str) -> str | None:
    """The recorded reason an accelerator is not planned for, or None if it is."""
    if accelerator.lower().startswith("tpu"):
        return UNSUPPORTED_ACCELERATORS["tpu"]
    if accelerator.lower().endswith(VWS_SUFFIX):
        return "GPU sold with a virtual-workstation licence (priced with it); not for training"
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
