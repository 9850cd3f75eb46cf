"""The Plan page's LLM form: training mode, sequence length and fp8 reach the planner."""

from __future__ import annotations

from pathlib import Path

from planner.workloads.catalog import llm_workload
from tests.app.conftest import chart
from tests.app.test_plan_page import Open, direct, ranked


def test_lora_fp8_and_sequence_length_reach_the_plan(open_page: Open, results_dir: Path) -> None:
    at = open_page(
        "plan",
        {"job": "llm", "params_b": "69", "tokens_b": "1", "llm_mode": "lora", "seq_len": "4096"},
    )
    assert not at.exception and not at.error
    title = chart(at, "plan.chart")["layout"]["title"]["text"]
    assert "llm-69b-lora-1b" in title  # the 69B preset, named by its size
    table = ranked(at)
    plan = direct(results_dir, llm_workload(69e9, 1e9, seq_len=4096, mode="lora"), precision="fp16")
    assert sorted(table["throughput"].round()) == sorted(plan.rows["throughput"].round())
    at.radio(key="plan.precision").set_value("fp8").run()
    assert not at.exception
    fp8 = ranked(at)
    assert set(fp8["gpu_name"]) <= {
        "H100-SXM",
        "H100-PCIe",
        "H100-NVL",
        "H200-SXM",
        "H200-NVL",
        "GH200",
        "B200",
        "GB200",
        "B300",
        "L4",
        "L40",
        "L40S",
        "RTX-4090",
        "RTX-5090",
        "RTX-6000-Ada",
        "MI300X",
        "MI325X",
        "Gaudi2",
        "Gaudi3",
    }
    # Back to the catalog: fp8 is not offered there, the page falls back to a valid precision.
    at.radio(key="plan.job").set_value("catalog").run()
    assert not at.exception
    assert "fp8" not in at.radio(key="plan.precision").options
