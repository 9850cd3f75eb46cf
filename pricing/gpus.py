"""Canonical GPU names and the per-provider alias tables that map onto them.

One canonical name per chip and form factor: SXM, PCIe and NVL parts are different
chips for training (an H100 PCIe trains ResNet-50 ~35% slower than an H100 SXM), so
they are never merged. Canonical names are the `gpu_name` column of
`planner/data/gpu_specs.csv`; every offer in a snapshot resolves to one of them.

Provider quirks live in named tables, each with the date it was checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from edge.choices import closest_match as choices_closest
from edge.choices import did_you_mean as choices_hint

# Canonical names, in the order of planner/data/gpu_specs.csv (which is the source of
# truth for specs; this tuple is the source of truth for names and is checked against it).
CANONICAL_GPUS: tuple[str, ...] = (
    "K80-board", "K80", "P100-PCIe", "P100-SXM2",
    "V100-SXM2-16GB", "V100-SXM2-32GB", "V100-SXM3-32GB", "V100-PCIe-16GB", "V100-PCIe-32GB",
    "T4", "A10G", "A10", "A30", "A40", "L4", "L40", "L40S",
    "A100-SXM-40GB", "A100-SXM-80GB", "A100-PCIe-40GB", "A100-PCIe-80GB",
    "H100-SXM", "H100-PCIe", "H100-NVL", "H800-SXM", "H200-SXM", "H200-NVL", "GH200",
    "B200", "GB200", "B300", "GB300",
    "RTX-3070", "RTX-3080", "RTX-3090", "RTX-4090", "RTX-5090",
    "RTX-A4000", "RTX-A4500", "RTX-A5000", "RTX-A5500", "RTX-A6000", "RTX-6000-Ada",
    "Quadro-RTX-8000", "Quadro-RTX-6000", "Quadro-RTX-5000", "Titan-RTX", "RTX-2080-Ti",
    "GTX-1080-Ti",
    "MI250X", "MI300X", "MI325X", "MI355X", "Gaudi2", "Gaudi3",
    "TPU-v4", "TPU-v5e", "TPU-v5p", "TPU-v6e",
)  # fmt: skip

# Common spellings users type, and labels used by benchmark files and vendors.
# Checked 2026-11 against the Lambda benchmark labels and the gpu_specs reference.
USER_ALIASES: dict[str, str] = {
    "H100": "H100-SXM",
    "H100-80GB": "H100-SXM",
    "H100-SXM5": "H100-SXM",
    "H100 SXM5 80GB": "H100-SXM",
    "H100 PCIe 80GB": "H100-PCIe",
    "H100 NVL 94GB": "H100-NVL",
    "H800": "H800-SXM",
    "H200": "H200-SXM",
    "H200 SXM 141GB": "H200-SXM",
    "H200 NVL 141GB": "H200-NVL",
    "A100": "A100-SXM-40GB",
    "A100-40GB": "A100-SXM-40GB",
    "A100-80GB": "A100-SXM-80GB",
    "A100 SXM4 40GB": "A100-SXM-40GB",
    "A100 SXM4 80GB": "A100-SXM-80GB",
    "A100 PCIe 40GB": "A100-PCIe-40GB",
    "A100 PCIe 80GB": "A100-PCIe-80GB",
    "V100": "V100-SXM2-16GB",
    "V100 SXM2 16GB": "V100-SXM2-16GB",
    "V100 SXM2 32GB": "V100-SXM2-32GB",
    "V100 PCIe 16GB": "V100-PCIe-16GB",
    "V100 PCIe 32GB": "V100-PCIe-32GB",
    "V100 SXM3 32GB (DGX-2)": "V100-SXM3-32GB",
    "P100": "P100-PCIe",
    "P100 PCIe 16GB": "P100-PCIe",
    "P100 SXM2 16GB": "P100-SXM2",
    "GH200 96GB": "GH200",
    "GB200 (per GPU)": "GB200",
    "GB300 (per GPU)": "GB300",
    "K80 (per GK210 die)": "K80",
    "K80 (board, 2x GK210)": "K80-board",
    "RTX 6000 Ada": "RTX-6000-Ada",
    "RTX6000-Ada": "RTX-6000-Ada",
    "A6000": "RTX-A6000",
    "A4000": "RTX-A4000",
    "RTX 2080 Ti": "RTX-2080-Ti",
    "GTX 1080 Ti": "GTX-1080-Ti",
    "TPU v6e (Trillium)": "TPU-v6e",
    # Lambda benchmark labels (reference/benchmarks/README.md, checked 2026-11). Three are
    # the reference's stated assumptions: Lambda Cloud "V100 16GB" is the SXM2 16GB part;
    # "V100 32GB" is the PCIe 32GB card, because Lambda lists 250 W per GPU (so a bare
    # "V100 32GB" means PCIe here); the "80GB" GH200 label is the GH200 96GB.
    "V100 16GB": "V100-SXM2-16GB",
    "V100 32GB": "V100-PCIe-32GB",
    "GH200 (Lambda label 80GB)": "GH200",
    "GH200 80GB": "GH200",
    # Lambda's config labels put the memory before the form factor.
    "A100 40GB SXM4": "A100-SXM-40GB",
    "A100 80GB SXM4": "A100-SXM-80GB",
    "A100 40GB PCIe": "A100-PCIe-40GB",
    "A100 80GB PCIe": "A100-PCIe-80GB",
    "H100 80GB SXM5": "H100-SXM",
    "H100 80GB PCIe": "H100-PCIe",
    "B200 180GB": "B200",
    "H200 141GB": "H200-SXM",
}


class UnknownGPUError(ValueError):
    """A GPU name that resolves to no canonical name."""

    def __init__(self, name: str, context: str = "") -> None:
        hint = closest_match(name, list(CANONICAL_GPUS) + list(USER_ALIASES))
        where = f" ({context})" if context else ""
        msg = f"unknown GPU {name!r}{where}"
        if hint:
            msg += f"; did you mean {hint!r}?"
        msg += f" Valid names: {', '.join(CANONICAL_GPUS)}"
        super().__init__(msg)
        self.name = name
        self.suggestion = hint


def closest_match(value: str, choices: Iterable[str]) -> str | None:
    """edge.choices.closest_match with the first three letters as a last resort (for
    the callers that import it from here)."""
    return choices_closest(value, choices, prefix=3)


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """edge.choices.did_you_mean with the first three letters as a last resort (for the
    callers that import it from here): '; did you mean 'X'?', or ''."""
    return choices_hint(value, choices, prefix=3)


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "-", name.strip()).lower()


_CANONICAL_BY_KEY = {_key(n): n for n in CANONICAL_GPUS}
_ALIAS_BY_KEY = {_key(a): c for a, c in USER_ALIASES.items()}


def canonical_gpu(name: str) -> str:
    """Resolve a user- or vendor-facing GPU name to its canonical name.

    Case, spaces, underscores and dashes do not matter ("h100 sxm" == "H100-SXM").
    Raises UnknownGPUError with the closest match.
    """
    key = _key(name)
    if key in _CANONICAL_BY_KEY:
        return _CANONICAL_BY_KEY[key]
    if key in _ALIAS_BY_KEY:
        return _ALIAS_BY_KEY[key]
    raise UnknownGPUError(name)


def match_gpu_names(query: str) -> list[str]:
    """Canonical names a user's GPU filter means.

    An exact canonical name means itself; a family ("H100", "a100") means every
    variant ("H100-SXM", "H100-PCIe", "H100-NVL"); otherwise an alias is resolved.
    Raises UnknownGPUError with the closest match.
    """
    key = _key(query)
    if key in _CANONICAL_BY_KEY:
        return [_CANONICAL_BY_KEY[key]]
    family = [n for k, n in _CANONICAL_BY_KEY.items() if k.startswith(key + "-")]
    if family:
        return family
    return [canonical_gpu(query)]


# CUDA device names (torch.cuda.get_device_name / nvidia-smi) -> canonical GPU.
# Regexes, first match wins. Checked 2026-11 against names reported by current drivers.
DEVICE_NAME_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"H100.*NVL", "H100-NVL"),
    (r"H100.*PCIe", "H100-PCIe"),
    (r"H100", "H100-SXM"),
    (r"H800", "H800-SXM"),
    (r"H200.*NVL", "H200-NVL"),
    (r"GH200", "GH200"),
    (r"H200", "H200-SXM"),
    (r"GB200", "GB200"),
    # Before B300: "NVIDIA GB300" also holds "B300".
    (r"GB300", "GB300"),
    (r"B300", "B300"),
    (r"B200", "B200"),
    (r"A100.*SXM4?-80GB|A100.*80GB.*SXM", "A100-SXM-80GB"),
    (r"A100.*SXM", "A100-SXM-40GB"),
    (r"A100.*80GB", "A100-PCIe-80GB"),
    (r"A100", "A100-PCIe-40GB"),
    (r"V100.*SXM3", "V100-SXM3-32GB"),
    (r"V100.*SXM2.*32GB", "V100-SXM2-32GB"),
    (r"V100.*SXM2", "V100-SXM2-16GB"),
    (r"V100.*PCIE.*32GB", "V100-PCIe-32GB"),
    (r"V100", "V100-PCIe-16GB"),
    (r"A10G", "A10G"),
    (r"\bA10\b", "A10"),
    (r"\bA30\b", "A30"),
    (r"\bA40\b", "A40"),
    (r"L40S", "L40S"),
    (r"\bL40\b", "L40"),
    (r"\bL4\b", "L4"),
    (r"\bT4\b", "T4"),
    (r"P100.*SXM2", "P100-SXM2"),
    (r"P100", "P100-PCIe"),
    (r"RTX 6000 Ada", "RTX-6000-Ada"),
    (r"RTX A(4000|4500|5000|5500|6000)", r"RTX-A\1"),
    (r"Quadro RTX (8000|6000|5000)", r"Quadro-RTX-\1"),
    (r"TITAN RTX", "Titan-RTX"),
    (r"RTX (3070|3080|3090|4090|5090)", r"RTX-\1"),
    (r"RTX 2080 Ti", "RTX-2080-Ti"),
    (r"GTX 1080 Ti", "GTX-1080-Ti"),
    (r"MI300X", "MI300X"),
    (r"MI325X", "MI325X"),
    (r"MI355X", "MI355X"),
    (r"MI250X", "MI250X"),
)


def gpu_from_device_name(device_name: str) -> str | None:
    """Canonical GPU for a CUDA device name ("NVIDIA H100 80GB HBM3" -> "H100-SXM").

    None when the name is not a known GPU (a CPU, or a chip with no spec row).
    """
    for pattern, name in DEVICE_NAME_PATTERNS:
        match = re.search(pattern, device_name, flags=re.IGNORECASE)
        if match:
            return match.expand(name)
    return None
