"""The Plan page's LLM form: training mode, sequence length and fp8 reach the planner."""

from __future__ import annotations

from pathlib import Path

from planner.llm.frameworks import ATTENTION_CHOICES
from planner.ui.plan_page import ATTENTION_WORDS
from planner.workloads.catalog import llm_workload, reshape_llm
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
    assert at.radio(key="plan.precision").value == "bf16"  # an LLM starts at bf16
    table = ranked(at)
    plan = direct(results_dir, llm_workload(69e9, 1e9, seq_len=4096, mode="lora"), precision="bf16")
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


def test_eager_pytorch_is_offered_for_the_fsdp_and_deepspeed_stacks_and_slows_the_plan(
    open_page: Open,
) -> None:
    query = {"job": "llm", "params_b": "1.3", "tokens_b": "26", "providers": "aws",
             "gpus": "H100-SXM", "max_gpus": "8", "precision": "bf16"}  # fmt: skip
    at = open_page("plan", query)
    assert not at.exception and not at.error
    assert "plan.eager" not in [t.key for t in at.toggle]  # megatron: its own kernels
    at.radio(key="plan.framework").set_value("fsdp").run()
    compiled = ranked(at)["throughput"].max()
    at.toggle(key="plan.eager").set_value(True).run()
    assert not at.exception and not at.error
    eager = ranked(at)["throughput"].max()
    assert 0.7 * compiled < eager < 0.97 * compiled
    # deepspeed: fitted on fused-kernel runs, a Hugging Face model under it runs eager
    at.radio(key="plan.framework").set_value("deepspeed").run()
    assert not at.exception and not at.error
    assert at.toggle(key="plan.eager").value  # the choice carries over
    eager = ranked(at)["throughput"].max()
    at.toggle(key="plan.eager").set_value(False).run()
    fused = ranked(at)["throughput"].max()
    assert 0.7 * fused < eager < 0.97 * fused
    at.radio(key="plan.framework").set_value("nanotron").run()
    assert "plan.eager" not in [t.key for t in at.toggle]  # its own kernels


def test_the_fp8_recipe_is_asked_at_fp8_only_and_a_slower_recipe_slows_the_plan(
    open_page: Open,
) -> None:
    query = {"job": "llm", "params_b": "8", "tokens_b": "10", "providers": "aws",
             "gpus": "H100-SXM", "max_gpus": "8", "framework": "fsdp",
             "precision": "bf16"}  # fmt: skip
    at = open_page("plan", query)
    assert not at.exception and not at.error
    assert "plan.fp8_recipe" not in [s.key for s in at.selectbox]  # bf16: no recipe
    at.radio(key="plan.precision").set_value("fp8").run()
    assert at.selectbox(key="plan.fp8_recipe").value == "auto"
    tensorwise = ranked(at)["throughput"].max()  # fsdp's default recipe
    at.selectbox(key="plan.fp8_recipe").set_value("rowwise").run()
    assert not at.exception and not at.error
    rowwise = ranked(at)["throughput"].max()
    assert 0.8 * tensorwise < rowwise < 0.98 * tensorwise
    at.selectbox(key="plan.fp8_recipe").set_value("mxfp8").run()  # no H100 runs it
    assert not at.exception
    words = " ".join(str(w.value).replace("\\", "") for w in at.warning)
    assert "No option to plan" in words and "mxfp8 needs Blackwell" in words


def test_communication_overlap_is_asked_where_the_stack_runs_it_and_moves_the_plan(
    open_page: Open,
) -> None:
    query = {"job": "llm", "params_b": "69", "tokens_b": "10", "providers": "aws",
             "gpus": "H100-SXM", "max_gpus": "64", "precision": "bf16"}  # fmt: skip
    at = open_page("plan", query)
    assert not at.exception and not at.error
    keys = [t.key for t in at.toggle]
    assert "plan.tp_overlap" in keys and at.toggle(key="plan.dp_overlap").value is True
    between = ranked(at)["throughput"].max()
    at.toggle(key="plan.tp_overlap").set_value(True).run()
    assert not at.exception and not at.error
    pipelined = ranked(at)["throughput"].max()
    assert pipelined > 1.02 * between  # a 69B's tensor-parallel collectives mostly hidden
    at.toggle(key="plan.dp_overlap").set_value(False).run()
    assert ranked(at)["throughput"].max() <= pipelined
    at.radio(key="plan.framework").set_value("nanotron").run()
    assert not at.exception and not at.error
    assert "plan.tp_overlap" not in [t.key for t in at.toggle]  # nanotron does not run it


def test_the_gradient_reduction_is_asked_and_fp32_slows_a_data_parallel_plan(
    open_page: Open,
) -> None:
    query = {"job": "llm", "params_b": "69", "tokens_b": "10", "providers": "aws",
             "gpus": "H100-SXM", "gpu_count": "64", "precision": "bf16",
             "framework": "fsdp"}  # fmt: skip
    at = open_page("plan", query)
    assert not at.exception and not at.error
    assert at.radio(key="plan.framework").value == "fsdp"
    assert at.radio(key="plan.fp32_reduce").value == "auto"  # the stack's own: 2 bytes on FSDP
    own = ranked(at)["throughput"].max()
    at.radio(key="plan.fp32_reduce").set_value("fp32").run()
    assert not at.exception and not at.error
    assert ranked(at)["throughput"].max() < 0.99 * own  # 4-byte reduce-scatters
    at.radio(key="plan.fp32_reduce").set_value("16-bit").run()
    assert ranked(at)["throughput"].max() == own


def test_the_attention_kernel_is_asked_and_fa3_speeds_an_fsdp_plan_at_long_context(
    open_page: Open,
) -> None:
    query = {"job": "llm", "params_b": "8", "tokens_b": "10", "seq_len": "8192",
             "providers": "aws", "gpus": "H100-SXM", "gpu_count": "8", "precision": "bf16",
             "framework": "fsdp"}  # fmt: skip
    at = open_page("plan", query)
    assert not at.exception and not at.error
    kernel = at.radio(key="plan.attention")
    assert kernel.value == "auto"
    assert kernel.options == [ATTENTION_WORDS[c] for c in ATTENTION_CHOICES]
    own = ranked(at)["throughput"].max()  # FSDP's own: FlashAttention-2
    kernel.set_value("fa3").run()
    assert not at.exception and not at.error
    fa3 = ranked(at)["throughput"].max()
    assert fa3 > 1.05 * own  # 8k-token attention at FlashAttention-3's rates
    at.radio(key="plan.attention").set_value("cudnn").run()  # FA3-class on Hopper
    assert ranked(at)["throughput"].max() == fa3
    at.radio(key="plan.attention").set_value("fa2").run()
    assert ranked(at)["throughput"].max() == own


def test_a_described_llm_takes_the_shape_given_and_refuses_one_far_from_its_size(
    open_page: Open, results_dir: Path
) -> None:
    query = {"job": "llm", "params_b": "6.7", "tokens_b": "10", "providers": "aws",
             "gpus": "H100-SXM", "gpu_count": "8", "precision": "bf16"}  # fmt: skip
    shape = {"n_layer": "34", "d_model": "4096", "embeddings": "untied"}
    at = open_page("plan", {**query, **shape})
    assert not at.exception and not at.error
    assert at.number_input(key="plan.n_layer").value == 34
    assert at.radio(key="plan.embeddings").value == "untied"
    title = chart(at, "plan.chart")["layout"]["title"]["text"]
    # the 6.7B preset at 34 layers, untied: counted from the shape and named by its size
    expected = reshape_llm(llm_workload(6.7e9, 10e9), n_layer=34, d_model=4096, tied=False)
    assert expected.name.startswith("llm-7.14b") and expected.name in title
    plan = direct(results_dir, expected, precision="bf16", providers=("aws",),
                  gpus=("H100-SXM",), gpu_count=8)  # fmt: skip
    assert sorted(ranked(at)["throughput"].round()) == sorted(plan.rows["throughput"].round())
    # 48 layers is 9.98B: refused, naming the input, the shape's size and the fix
    at.number_input(key="plan.n_layer").set_value(48).run()
    assert not at.exception
    message = " ".join(e.value for e in at.error)
    assert "**Model shape**" in message and "9\\.98B parameters" in message
    assert "Set **Parameters (billions)** to the shape's size (9.98b)" in message
    # cleared, the preset's shape again
    for name in ("n_layer", "d_model"):
        at.number_input(key=f"plan.{name}").set_value(None).run()
    at.radio(key="plan.embeddings").set_value("auto").run()
    assert not at.error and "llm-6.7b-10b" in chart(at, "plan.chart")["layout"]["title"]["text"]
    # a link's count beyond the range plan's --n-layer takes is refused, not planned
    at = open_page("plan", {**query, "n_layer": "99999"})
    assert at.number_input(key="plan.n_layer").value is None
    assert "out of range" in " ".join(w.value for w in at.warning) and not at.error
