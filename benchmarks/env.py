"""The environment a benchmark ran in: library versions, CPU, memory, host, GPU, cloud.

Everything is read locally: /proc, /sys/class/dmi/id (the firmware's DMI table, which
names the cloud on AWS, GCP, Azure, Oracle and others) and the libraries themselves.
No network or metadata-server call is ever made. torch is imported inside functions.
"""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path
from typing import Any

DMI_DIR = Path("/sys/class/dmi/id")
DMI_FIELDS = (
    "sys_vendor",
    "product_name",
    "product_version",
    "board_vendor",
    "bios_vendor",
    "bios_version",
    "chassis_asset_tag",
    "chassis_vendor",
)
# Azure VMs carry this chassis asset tag (Microsoft, "Detect Azure VMs", Azure docs).
AZURE_ASSET_TAG = "7783-7084-3265-9085-8269-3286-77"


def read_dmi(directory: Path = DMI_DIR) -> dict[str, str]:
    """The readable DMI fields (empty when there is no DMI table, as in containers)."""
    found: dict[str, str] = {}
    for name in DMI_FIELDS:
        try:
            value = (directory / name).read_text(errors="replace").strip()
        except OSError:
            continue
        if value:
            found[name] = value
    return found


def cloud_from_dmi(dmi: dict[str, str]) -> tuple[str | None, str | None]:
    """(cloud provider, instance type) from DMI fields; None where not identifiable.

    AWS Nitro instances put the instance type in product_name (sys_vendor "Amazon EC2");
    GCP says "Google" / "Google Compute Engine" (machine type not in DMI); Azure is
    told by its chassis asset tag; Oracle by "OracleCloud.com"; Alibaba by "Alibaba
    Cloud"; Hetzner by "Hetzner".
    """
    vendor = dmi.get("sys_vendor", "")
    product = dmi.get("product_name", "")
    bios = dmi.get("bios_vendor", "") + " " + dmi.get("bios_version", "")
    if vendor == "Amazon EC2" or "amazon" in bios.lower():
        instance = product if product and "." in product else None
        return "aws", instance
    if vendor == "Google" or product == "Google Compute Engine":
        return "gcp", None
    if dmi.get("chassis_asset_tag") == AZURE_ASSET_TAG:
        return "azure", None
    if dmi.get("chassis_asset_tag") == "OracleCloud.com":
        return "oci", None
    if vendor == "Alibaba Cloud":
        return "alibaba", product or None
    if vendor == "Hetzner":
        return "hetzner", product or None
    return None, None


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name (/proc/cpuinfo), else platform.processor()."""
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib(meminfo: Path = Path("/proc/meminfo")) -> float | None:
    """Total system memory in GiB (/proc/meminfo MemTotal)."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 2)
    except (OSError, ValueError, IndexError):
        pass
    return None


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask, else os.cpu_count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def collect_env(device: str, driver_version: str | None = None) -> dict[str, Any]:
    """Versions, CPU, memory, host and cloud, and for CUDA the GPU stack."""
    import torch

    provider, instance = cloud_from_dmi(read_dmi())
    env: dict[str, Any] = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "os": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_cores": usable_cores(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "memory_gib": memory_gib(),
        "hostname": socket.gethostname(),
        "cloud_provider": provider,
        "instance_type": instance,
        "cuda": torch.version.cuda,
        "cudnn": None,
        "nccl": None,
        "driver": driver_version,
    }
    if device == "cuda" and torch.cuda.is_available():
        env["cudnn"] = torch.backends.cudnn.version()
        try:
            nccl = torch.cuda.nccl.version()
            env["nccl"] = ".".join(str(p) for p in nccl) if isinstance(nccl, tuple) else nccl
        except (AttributeError, RuntimeError):
            env["nccl"] = None
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        env["gpu_count"] = torch.cuda.device_count()
        env["gpu_memory_gib"] = round(props.total_memory / 2**30, 2)
        env["gpu_capability"] = f"{props.major}.{props.minor}"
    return env


def available_memory_bytes(meminfo: Path = Path("/proc/meminfo")) -> int:
    """Memory available for new allocations (/proc/meminfo MemAvailable), in bytes."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:  # elsewhere: free physical pages (POSIX sysconf)
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30  # unknown: assume a small machine
