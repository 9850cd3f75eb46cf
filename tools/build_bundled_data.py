"""Build gpuplan's bundled data from the copies of the reference data in reference/.

    python tools/build_bundled_data.py [--check]

Writes (deterministically, so a test can check the committed files are reproducible):
  planner/data/gpu_specs.csv                    from reference/gpu_specs.csv (+ B300, GB300)
  pricing/snapshots/<provider>-<date>.csv       from reference/pricing/*_vms.csv
  pricing/snapshots/MANIFEST.json               source, commit, date and rows per file
  pricing/snapshots/REFERENCE_FIXES.csv         every row dropped or value set missing
  pricing/snapshots/cpu/<provider>-<date>.csv   CPU-only instance types (CPU_SNAPSHOTS),
  pricing/snapshots/cpu/MANIFEST.json           a catalog of their own (pricing.cpu_offers)
  benchmarks/published/lambda_pytorch_throughput.csv   unflagged rows, canonical names
  planner/data/examples/*                       copies of examples/ (planner.io.examples)
With --check it writes nothing and exits 1 if any output would change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.published import held_out  # noqa: E402
from pricing.catalog import offers_to_csv  # noqa: E402
from pricing.cpu_offers import cpu_offers_to_csv  # noqa: E402
from pricing.gpus import CANONICAL_GPUS  # noqa: E402
from pricing.providers.skypilot import parse_skypilot_vms  # noqa: E402
from pricing.providers.skypilot_cpu import parse_skypilot_cpu_vms  # noqa: E402

REF = ROOT / "reference"

# Reference spec label -> canonical name (pricing.gpus.CANONICAL_GPUS).
SPEC_NAMES: dict[str, str] = {
    "K80 (board, 2x GK210)": "K80-board", "K80 (per GK210 die)": "K80",
    "P100 PCIe 16GB": "P100-PCIe", "P100 SXM2 16GB": "P100-SXM2",
    "V100 SXM2 16GB": "V100-SXM2-16GB", "V100 SXM2 32GB": "V100-SXM2-32GB",
    "V100 SXM3 32GB (DGX-2)": "V100-SXM3-32GB", "V100 PCIe 16GB": "V100-PCIe-16GB",
    "V100 PCIe 32GB": "V100-PCIe-32GB", "T4": "T4", "A10G": "A10G", "A10": "A10",
    "A30": "A30", "A40": "A40", "L4": "L4", "L40": "L40", "L40S": "L40S",
    "A100 SXM4 40GB": "A100-SXM-40GB", "A100 SXM4 80GB": "A100-SXM-80GB",
    "A100 PCIe 40GB": "A100-PCIe-40GB", "A100 PCIe 80GB": "A100-PCIe-80GB",
    "H100 SXM5 80GB": "H100-SXM", "H100 PCIe 80GB": "H100-PCIe", "H100 NVL 94GB": "H100-NVL",
    "H200 SXM 141GB": "H200-SXM", "H200 NVL 141GB": "H200-NVL", "GH200 96GB": "GH200",
    "B200": "B200", "GB200 (per GPU)": "GB200", "GB300 (per GPU)": "GB300",
    "RTX 3070": "RTX-3070",
    "RTX 3080": "RTX-3080", "RTX 3090": "RTX-3090", "RTX 4090": "RTX-4090",
    "RTX 5090": "RTX-5090", "RTX A4000": "RTX-A4000", "RTX A4500": "RTX-A4500",
    "RTX A5000": "RTX-A5000", "RTX A5500": "RTX-A5500", "RTX A6000": "RTX-A6000",
    "RTX 6000 Ada": "RTX-6000-Ada", "Quadro RTX 8000": "Quadro-RTX-8000",
    "Quadro RTX 6000": "Quadro-RTX-6000", "Quadro RTX 5000": "Quadro-RTX-5000",
    "Titan RTX": "Titan-RTX", "RTX 2080 Ti": "RTX-2080-Ti", "GTX 1080 Ti": "GTX-1080-Ti",
    "MI250X": "MI250X", "MI300X": "MI300X", "MI325X": "MI325X", "MI355X": "MI355X",
    "H800 SXM5 80GB": "H800-SXM", "Gaudi2": "Gaudi2",
    "Gaudi3": "Gaudi3", "TPU v4": "TPU-v4", "TPU v5e": "TPU-v5e", "TPU v5p": "TPU-v5p",
    "TPU v6e (Trillium)": "TPU-v6e",
}  # fmt: skip

# Offered by AWS (p6-b300) but absent from the reference spec table. Per-GPU figures are
# the HGX B300 platform figures / 8, dense = sparse / 2.
EXTRA_SPECS: list[dict[str, object]] = [
    {
        "gpu_model": "B300",
        "vendor": "NVIDIA",
        "architecture": "Blackwell Ultra",
        "form_factor": "SXM (HGX B300)",
        "release_year": 2025,
        "memory_gb": 288,
        "memory_type": "HBM3e",
        "memory_bw_gbs": 8000,
        "fp32_tflops": 75,
        "tf32_tensor_dense_tflops": 1100,
        "fp16_bf16_tensor_dense_tflops": 2250,
        "fp16_tensor_dense_fp16acc_tflops": 2250,
        "fp8_tensor_dense_tflops": 4500,
        "tdp_w": 1100,
        "nvlink_gbs_bidir_per_gpu": 1800,
        "pcie_gen": 6,
        "interconnect_note": "NVLink 5.0",
        "aliases_in_benchmark_files": "",
        "cloud_examples": "AWS p6-b300",
        "confidence": "medium",
        "source_ids": "S_B300",
        "notes": "S_B300: NVIDIA HGX platform page, HGX B300 column (FP16/BF16 36 PF and "
        "TF32 18 PF sparse per 8 GPUs, 2.3 TB HBM3e); per GPU = /8, dense = sparse/2. "
        "Not cross-checked against Epoch.",
    },
    # GB300 NVL72 (Grace Blackwell Ultra): in no bundled catalog, but named in LLM plans,
    # on-prem configs and estimate-llm queries. Per GPU, dense; S_GB300 in the SOURCES file.
    {
        "gpu_model": "GB300 (per GPU)",
        "vendor": "NVIDIA",
        "architecture": "Blackwell Ultra",
        "form_factor": "Superchip (NVL72 rack)",
        "release_year": 2025,
        "memory_gb": 288,
        "memory_type": "HBM3e",
        "memory_bw_gbs": 8000,
        "fp32_tflops": None,
        "tf32_tensor_dense_tflops": 1250,
        "fp16_bf16_tensor_dense_tflops": 2500,
        "fp16_tensor_dense_fp16acc_tflops": 2500,
        "fp8_tensor_dense_tflops": 5000,
        "tdp_w": 1400,
        "nvlink_gbs_bidir_per_gpu": 1800,
        "pcie_gen": 6,
        "interconnect_note": "NVLink 5.0, 72-GPU NVLink domain",
        "aliases_in_benchmark_files": "",
        "cloud_examples": "",
        "confidence": "low",
        "source_ids": "S_GB300",
        "notes": "Per GPU (a GB300 superchip has 2 GPUs + 1 Grace). S_GB300: 288 GB, 8 TB/s, "
        "NVLink 1.8 TB/s and 1400 W from NVIDIA's Blackwell Ultra blog (NVFP4 15 PF dense; "
        "no FP4 column). FP8 5 PF, BF16 2.5 PF and TF32 1.25 PF dense from a reproduced "
        "per-GPU table (= GB300 NVL72 rack figures / 72, sparse / 2); NVIDIA's own text for "
        "them not retrieved, hence low confidence. FP32 blank: 80 or 83 TF by source.",
    },
    # H800 SXM5: the H100 SXM5 die with NVLink cut to 400 GB/s (and FP64 to ~1 TF) for the
    # Chinese market; FlagPerf and DeepSeek ran on it. S_H800 in the SOURCES file.
    {
        "gpu_model": "H800 SXM5 80GB",
        "vendor": "NVIDIA",
        "architecture": "Hopper",
        "form_factor": "SXM5",
        "release_year": 2023,
        "memory_gb": 80,
        "memory_type": "HBM3",
        "memory_bw_gbs": 3350,
        "fp32_tflops": 67.0,
        "tf32_tensor_dense_tflops": 494.7,
        "fp16_bf16_tensor_dense_tflops": 989.4,
        "fp16_tensor_dense_fp16acc_tflops": 989.4,
        "fp8_tensor_dense_tflops": 1978.9,
        "tdp_w": 700,
        "nvlink_gbs_bidir_per_gpu": 400,
        "pcie_gen": 5,
        "interconnect_note": "NVLink 4.0 (8 links, 400 GB/s)",
        "aliases_in_benchmark_files": "H800",
        "cloud_examples": "",
        "confidence": "medium",
        "source_ids": "S_H800",
        "notes": "S_H800: tensor peaks, memory and TDP as the H100 SXM5 (same GH100 die and "
        "clocks); NVLink 400 GB/s bidirectional instead of 900. Not NVIDIA's own datasheet.",
    },
    # MI355X (CDNA 4): AMD's 2025 flagship; Primus ran MoE training on it. S_MI355X.
    {
        "gpu_model": "MI355X",
        "vendor": "AMD",
        "architecture": "CDNA4",
        "form_factor": "OAM",
        "release_year": 2025,
        "memory_gb": 288,
        "memory_type": "HBM3e",
        "memory_bw_gbs": 8000,
        "fp32_tflops": 157.3,
        "tf32_tensor_dense_tflops": None,
        "fp16_bf16_tensor_dense_tflops": 2516.6,
        "fp16_tensor_dense_fp16acc_tflops": 2516.6,
        "fp8_tensor_dense_tflops": 5033.2,
        "tdp_w": 1400,
        "nvlink_gbs_bidir_per_gpu": 1075,
        "pcie_gen": 5,
        "interconnect_note": "Infinity Fabric 7 links x 153.6 GB/s (1075 GB/s)",
        "aliases_in_benchmark_files": "MI355",
        "cloud_examples": "OCI",
        "confidence": "medium",
        "source_ids": "S_MI355X",
        "notes": "S_MI355X: dense FP16/BF16 2.5 PF and FP8 5.0 PF (sparse = 2x), 288 GB HBM3E "
        "at 8 TB/s, 1400 W board power; no TF32 matrix rate listed.",
    },
]

# Infinity Fabric is the AMD boards' GPU-to-GPU fabric (the planner's nvlink_gbs column):
# the reference leaves it blank for MI300X and MI325X though its note gives 7 links x
# 128 GB/s (AMD's MI300X and MI325X datasheets: 896 GB/s peak aggregate).
FABRIC_GBS_FILLED = {"MI300X": 896.0, "MI325X": 896.0}

NO_BF16_ARCHITECTURES = ("Kepler", "Pascal", "Volta", "Turing")

# Provider catalogs: file, SkyPilot path, commit, not-before date and its basis.
SNAPSHOTS: dict[str, dict[str, str]] = {
    "aws": {
        "file": "aws_vms.csv",
        "path": "catalogs/v8/aws/vms.csv",
        "commit": "00148f2af3672e2229b4f7bf8157d5a3f36e3c35",
        "priced_at": "2025-06-01",
        "date_basis": "not before 2025-06: p5.48xlarge at $55.04/h follows AWS's June 2025 "
        "P5 on-demand price cut; the catalog commit date is unknown",
    },
    "gcp": {
        "file": "gcp_vms.csv",
        "path": "catalogs/v8/gcp/vms.csv",
        "commit": "006059e0f18acb1341e22a27751e9f80df6ba92f",
        "priced_at": "2025-01-01",
        "date_basis": "not before 2025: lists A4 (B200) machine types; the catalog "
        "commit date is unknown",
    },
    "azure": {
        "file": "azure_vms.csv",
        "path": "catalogs/v6/azure/vms.csv",
        "commit": "098741e70562f65d7af1cceb81e33b284f742604",
        "priced_at": "2024-01-01",
        "date_basis": "not before 2024: lists NC H100 v5 sizes; the v6 catalog is older "
        "than the AWS/GCP v8 ones; commit date unknown",
    },
    "lambda": {
        "file": "lambda_vms.csv",
        "path": "catalogs/v8/lambda/vms.csv",
        "commit": "0f4070387edc953d7004cff197940e1918a1d6aa",
        "priced_at": "2025-01-01",
        "date_basis": "not before 2025: lists B200 instances; commit date unknown",
    },
    "nebius": {
        "file": "nebius_vms.csv",
        "path": "catalogs/v8/nebius/vms.csv",
        "commit": "0082b0435f3912ae4c566856b272455cc78f4f61",
        "priced_at": "2025-01-01",
        "date_basis": "not before 2025: lists B200 instances; commit date unknown",
    },
    "vast": {
        "file": "vast_vms.csv",
        "path": "catalogs/v8/vast/vms.csv",
        "commit": "01b8cdda287814b30ff0acb49746cca19fbd4355",
        "priced_at": "2025-02-01",
        "date_basis": "not before 2025-02: lists RTX 5090 offers (launched 2025-01-30); "
        "marketplace prices move daily; commit date unknown",
    },
    "fluidstack": {
        "file": "fluidstack_vms.csv",
        "path": "catalogs/v6/fluidstack/vms.csv",
        "commit": "002403bca05e2ab5110637448f3b1654c983d5d5",
        "priced_at": "2023-01-01",
        "date_basis": "not before 2023: lists H100; an older v6 catalog; commit date unknown",
    },
    "paperspace": {
        "file": "paperspace_vms.csv",
        "path": "catalogs/v6/paperspace/vms.csv",
        "commit": "e520054145d1bce6748bcf18c9a25ddd6ea9a348",
        "priced_at": "2023-01-01",
        "date_basis": "not before 2023: lists H100; an older v6 catalog; commit date unknown",
    },
}

# Providers whose CPU-only rows become the CPU catalog: those whose CPU families
# planner/data/cpu_specs.csv describes (AWS m8i/m8g, GCP c2/c4/n1, Azure Fsv2).
CPU_SNAPSHOTS: tuple[str, ...] = ("aws", "gcp", "azure")


def build_specs() -> str:
    ref = pd.read_csv(REF / "gpu_specs.csv")
    ref = pd.concat([ref, pd.DataFrame(EXTRA_SPECS)], ignore_index=True)
    for model, gbs in FABRIC_GBS_FILLED.items():
        ref.loc[ref["gpu_model"] == model, "nvlink_gbs_bidir_per_gpu"] = gbs
    unknown = set(ref["gpu_model"]) - set(SPEC_NAMES) - {"B300"}
    if unknown:
        raise SystemExit(f"spec rows without a canonical name: {sorted(unknown)}")
    arch = ref["architecture"].astype(str)
    no_bf16 = arch.str.startswith(NO_BF16_ARCHITECTURES)
    specs = pd.DataFrame(
        {
            "gpu_name": ref["gpu_model"].map(lambda m: SPEC_NAMES.get(m, m)),
            "spec_model": ref["gpu_model"],
            "vendor": ref["vendor"],
            "architecture": ref["architecture"],
            "form_factor": ref["form_factor"],
            "release_year": ref["release_year"],
            "memory_gb": ref["memory_gb"],
            "memory_type": ref["memory_type"],
            "memory_bw_gbs": ref["memory_bw_gbs"],
            "fp32_tflops": ref["fp32_tflops"],
            "tf32_tflops": ref["tf32_tensor_dense_tflops"],
            "fp16_tflops": ref["fp16_bf16_tensor_dense_tflops"],
            "fp16_fp16acc_tflops": ref["fp16_tensor_dense_fp16acc_tflops"],
            "bf16_tflops": ref["fp16_bf16_tensor_dense_tflops"].where(~no_bf16),
            "fp8_tflops": ref["fp8_tensor_dense_tflops"],
            "tdp_w": ref["tdp_w"],
            "nvlink_gbs": ref["nvlink_gbs_bidir_per_gpu"],
            "pcie_gen": ref["pcie_gen"],
            "interconnect_note": ref["interconnect_note"],
            # Whether NVLink joins only bridged cards (pairs): the flag the planner reads.
            "nvlink_bridge": ref["interconnect_note"].fillna("").str.contains("bridge", case=False),
            "confidence": ref["confidence"],
            "source_ids": ref["source_ids"],
            "notes": ref["notes"],
        }
    )
    order = {name: i for i, name in enumerate(CANONICAL_GPUS)}
    if set(specs["gpu_name"]) != set(CANONICAL_GPUS):
        raise SystemExit(
            "spec names and pricing.gpus.CANONICAL_GPUS disagree: "
            f"{sorted(set(specs['gpu_name']) ^ set(CANONICAL_GPUS))}"
        )
    for column in ("tdp_w", "pcie_gen", "release_year"):
        specs[column] = specs[column].astype("Int64")
    specs = specs.sort_values("gpu_name", key=lambda s: s.map(order))
    return specs.to_csv(index=False, lineterminator="\n")


def build_snapshots() -> dict[str, str]:
    files: dict[str, str] = {}
    manifest = []
    fixes = []
    for provider, meta in SNAPSHOTS.items():
        catalog = pd.read_csv(REF / "pricing" / meta["file"])
        source = _source(meta)
        offers, fixed = parse_skypilot_vms(provider, catalog, source, meta["priced_at"])
        name = f"{provider}-{meta['priced_at']}.csv"
        text = offers_to_csv(offers)
        files[name] = text
        manifest.append(_manifest_entry(provider, name, meta, len(offers), text))
        fixes.append(fixed)
    files["MANIFEST.json"] = (
        json.dumps({"schema_version": 1, "snapshots": manifest}, indent=2) + "\n"
    )
    files["REFERENCE_FIXES.csv"] = pd.concat(fixes, ignore_index=True).to_csv(
        index=False, lineterminator="\n"
    )
    return files


def _manifest_entry(
    provider: str, name: str, meta: dict[str, str], rows: int, text: str
) -> dict[str, object]:
    """One snapshot's MANIFEST.json entry (pricing.store reads it)."""
    return {
        "provider": provider,
        "file": name,
        "priced_at": meta["priced_at"],
        "date_basis": meta["date_basis"],
        "date_bound": meta["date_basis"].split(":")[0],
        "source": _source(meta),
        "source_commit": meta["commit"],
        "retrieved_at": "",
        "rows": rows,
        "sha256": _sha(text),
    }


def _source(meta: dict[str, str]) -> str:
    return (
        f"skypilot-catalog {meta['path']}@{meta['commit'][:8]} "
        "(github.com/skypilot-org/skypilot-catalog, Apache-2.0)"
    )


def build_cpu_snapshots() -> dict[str, str]:
    """The CPU catalog: one CSV per provider in CPU_SNAPSHOTS and its MANIFEST.json."""
    files: dict[str, str] = {}
    manifest = []
    for provider in CPU_SNAPSHOTS:
        meta = SNAPSHOTS[provider]
        catalog = pd.read_csv(REF / "pricing" / meta["file"])
        offers, _ = parse_skypilot_cpu_vms(provider, catalog, _source(meta), meta["priced_at"])
        name = f"{provider}-{meta['priced_at']}.csv"
        text = cpu_offers_to_csv(offers)
        files[name] = text
        manifest.append(_manifest_entry(provider, name, meta, len(offers), text))
    files["MANIFEST.json"] = (
        json.dumps({"schema_version": 1, "snapshots": manifest}, indent=2) + "\n"
    )
    return files


def build_published() -> str:
    ref = pd.read_csv(REF / "benchmarks" / "lambda_pytorch_throughput.csv")
    keep = ref["flag"].isna() & ref["spec_gpu_model"].notna() & ~held_out(ref)
    table = ref.loc[keep].copy()
    table.insert(0, "gpu_name", table["spec_gpu_model"].map(SPEC_NAMES))
    key = (
        table["benchmark_version"]
        + "-"
        + table["gpu_name"]
        + "-"
        + table["model"]
        + "-"
        + table["precision"]
        + "-"
        + table["num_gpus"].astype(str)
        + "gpu"
    )
    table.insert(0, "id", "lambda-" + key + "-" + table.groupby(key).cumcount().astype(str))
    columns = [
        "id",
        "gpu_name",
        "gpu_model",
        "spec_gpu_model",
        "num_gpus",
        "model",
        "precision",
        "batch_size",
        "batch_size_per_gpu",
        "throughput",
        "unit",
        "lambda_config",
        "host_or_vendor",
        "interconnect_note",
        "instance_gpus",
        "runs_averaged",
        "benchmark_version",
        "container",
        "source",
    ]
    return table[columns].to_csv(index=False, lineterminator="\n")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def outputs() -> dict[Path, str]:
    out = {
        ROOT / "planner/data/gpu_specs.csv": build_specs(),
        ROOT / "benchmarks/published/lambda_pytorch_throughput.csv": build_published(),
    }
    for name, text in build_snapshots().items():
        out[ROOT / "pricing/snapshots" / name] = text
    for name, text in build_cpu_snapshots().items():
        out[ROOT / "pricing/snapshots/cpu" / name] = text
    for example in sorted((ROOT / "examples").iterdir()):
        if example.suffix in (".toml", ".csv"):
            out[ROOT / "planner/data/examples" / example.name] = example.read_text()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a bundled file differs from a rebuild",
    )
    args = parser.parse_args(argv)
    changed = []
    built = outputs()
    for path, text in built.items():
        old = path.read_text() if path.exists() else None
        if old != text:
            changed.append(path.relative_to(ROOT))
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    stale = sorted(p.name for p in (ROOT / "pricing/snapshots").glob("*-*.csv") if p not in built)
    for line in changed:
        print(f"{'differs' if args.check else 'wrote'}: {line}")
    if stale:
        print(f"note: snapshot files not in the manifest: {stale}")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
