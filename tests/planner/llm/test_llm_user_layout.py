"""The user's own layout: parsing, checks, timing beside the best layout, and the CLIs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.llm.throughput import llm_shape_of, peak_flops, predict_layout
from planner.llm.user_layout import (
    LayoutComparison,
    LayoutSpecError,
    UserLayout,
    check_layout,
    compare_layout,
    parse_layout,
)
from planner.render.llm import user_layout_text
from planner.workloads.catalog import Workload, get_workload, moe_workload

runner = CliRunner()


def test_a_layout_string_reads_every_token_in_any_order():
    user = parse_layout("recompute=selective zero3 dp16 ep8 cp1 pp2 tp4 mb2 vpp2")
    assert user == UserLayout(4, 2, 1, 8, 16, 2, 2, "zero3", "selective")
    assert parse_layout("tp2, mbs4") == UserLayout(tp=2, mb=4)
    assert parse_layout("zero0 tp2") == UserLayout(tp=2, zero="zero0")
    assert parse_layout("tp8").for_gpus(64).dp == 8  # dp = GPUs / (tp pp cp)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("tp4 qp2", "layout token 'qp2' is not understood; did you mean 'tp'? Valid: tp<N> pp<N>"),
        ("tp4 recompute=sometimes", "recompute=none|selective|per-op|full|partial-25"),
        ("tp4 tp8", "layout token 'tp8': tp is given twice"),
        ("tp0", "layout token 'tp0': sizes are whole numbers >= 1"),
        ("   ", "empty layout: write it as tp<N> pp<N>"),
        ("zero2", "layout token 'zero2' is not understood"),
    ],
)
def test_a_bad_layout_names_the_token_and_the_valid_form(text, said):
    with pytest.raises(LayoutSpecError) as caught:
        parse_layout(text)
    assert said in str(caught.value)


def test_the_product_must_be_the_gpu_count():
    with pytest.raises(LayoutSpecError, match=r"tp x pp x cp x dp = 32, but the option has 64"):
        parse_layout("tp4 pp2 dp4").for_gpus(64)
    with pytest.raises(LayoutSpecError, match="tp x pp x cp = 3 does not divide the 64 GPUs"):
        parse_layout("tp1 pp3").for_gpus(64)


def test_a_layout_must_suit_the_model():
    dense = llm_shape_of(get_workload("llm-6.7b-134b"))
    with pytest.raises(LayoutSpecError, match="ep2: the model is dense"):
        check_layout(UserLayout(ep=2, dp=8), dense)
    moe = llm_shape_of(get_workload("mixtral-8x7b-1t"))
    with pytest.raises(LayoutSpecError, match="ep16 must divide the 8 experts and dp16"):
        check_layout(UserLayout(ep=16, dp=16), moe)
    with pytest.raises(LayoutSpecError, match="tp3 must divide the 32 attention heads"):
        check_layout(UserLayout(tp=3, dp=1), moe)


def _compare(workload: Workload, gpus: int, text: str) -> LayoutComparison:
    """`text` timed beside the search's best on `gpus` x H100 SXM, 8 per node, 3,200 Gb/s."""
    best = predict_layout(workload, "bf16", "H100-SXM", gpus, 8, 3200.0)
    return compare_layout(best, workload, "H100-SXM", parse_layout(text))


# Users' layouts that fit, by workload and GPU count.
FITTING_LAYOUTS = {
    ("llm-69b-140b", 64): ("tp2 pp4 mb1", "tp8 pp2 mb1 recompute=full"),
    ("llm-6.7b-134b", 16): ("tp2 mb2",),
    ("mixtral-8x7b-1t", 32): ("tp2 pp2 ep4 mb1", "tp1 ep8 mb1 recompute=full"),
}


@pytest.mark.parametrize(
    ("name", "gpus", "text"),
    [(*asked, text) for asked, texts in FITTING_LAYOUTS.items() for text in texts],
)
def test_the_best_layout_is_never_slower_than_a_users_that_fits(name, gpus, text):
    found = _compare(get_workload(name), gpus, text)
    mine, best = found.timed.layout, found.best.layout
    assert mine.reason == "fits" and best.fits
    assert best.tokens_per_s >= mine.tokens_per_s * (1 - 1e-9)
    assert mine.tokens_per_s > 0 and mine.step_s > 0


def test_the_best_layout_given_back_is_timed_the_same():
    workload = get_workload("mixtral-8x7b-1t")
    best = _compare(workload, 32, "tp1")
    label = best.best.layout.label.replace(" zero1", "")
    again = _compare(workload, 32, label)
    assert again.timed.layout.tokens_per_s == pytest.approx(best.best.tokens_per_s, rel=1e-9)
    assert again.timed.layout.a2a_share == pytest.approx(best.best.layout.a2a_share)


def test_a_layout_that_does_not_fit_says_which_term_fills_the_memory():
    found = _compare(get_workload("llm-69b-140b"), 64, "tp1 pp1 mb1")
    timed = found.timed
    assert timed.layout.reason == "over_memory" and timed.over_terms[0] == "states"
    states = dict(timed.terms_gb)["states"]
    # ZeRO-1 over 64: 4 bytes of every weight and gradient + 12 / 64 of the optimizer.
    assert states == pytest.approx(get_workload("llm-69b-140b").params * (4 + 12 / 64) / 1e9)
    words = user_layout_text(found, "bf16")
    assert "does NOT fit" in words and "weights, gradients and optimizer state alone" in words
    assert f"best layout found: {found.best.layout.label}" in words


def test_a_plain_data_parallel_layout_keeps_every_optimizer_state_and_may_not_fit():
    workload = get_workload("llm-6.7b-134b")
    sharded = _compare(workload, 16, "tp1 mb1 zero1").timed
    plain = _compare(workload, 16, "tp1 mb1 zero0").timed
    states = {name: dict(t.terms_gb)["states"] for name, t in (("1", sharded), ("0", plain))}
    assert states["1"] == pytest.approx(workload.params * (4 + 12 / 16) / 1e9)  # ZeRO-1
    assert states["0"] == pytest.approx(workload.params * 16 / 1e9)  # all of it on every rank
    assert sharded.layout.reason == "fits" and plain.layout.reason == "over_memory"
    assert plain.over_terms[0] == "states" and plain.layout.zero == "zero0"
    assert "zero0" in user_layout_text(_compare(workload, 16, "tp1 mb1 zero0"), "bf16")


def run_estimate(tmp_path: Path, text: str) -> tuple[int, str, Path]:
    queries = tmp_path / "q.csv"
    queries.write_text(text)
    out = tmp_path / "out.csv"
    done = runner.invoke(app, ["estimate-llm", "--queries", str(queries), "--output", str(out)])
    return done.exit_code, done.stderr, out


def test_estimate_llm_times_moe_rows_on_active_parameters_and_own_layouts(tmp_path: Path):
    text = (
        "params,seq_len,num_gpus,gpu_model,precision,active_params,experts,top_k,network_gbps,"
        "tp,pp,ep,mbs,zero,recompute\n"
        "46.7b,4096,32,H100-SXM,bf16,12.9b,8,2,3200,,,,,,\n"
        "46.7b,4096,32,H100-SXM,bf16,12.9b,8,2,3200,2,1,2,1,1,selective\n"
    )
    code, err, out = run_estimate(tmp_path, text)
    assert code == 0, err
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    best, own = table.iloc[0], table.iloc[1]
    flops = moe_workload(46.7e9, 12.9e9, 1e9, 4096).flops_per_sample
    assert flops == pytest.approx(6 * 12.9e9 + 12 * 32 * 4096 * 4096)
    peak = peak_flops("H100-SXM", "bf16")
    assert float(best["tokens_per_s"]) == pytest.approx(float(best["mfu"]) * peak * 32 / flops)
    assert " ep" in best["layout"] and "expert grouped GEMM" in best["method_detail"]
    assert own["layout"] == "tp2 pp1 cp1 ep2 dp16 mb1 zero1 recompute=selective"
    assert own["method_detail"].startswith("your layout tp2 pp1 cp1 ep2 dp16")
    assert own["best_layout"] == best["layout"]
    assert float(own["best_tokens_per_s"]) >= float(own["tokens_per_s"])


def test_estimate_llm_reads_a_zero_column_of_stages(tmp_path: Path):
    text = "params,seq_len,num_gpus,gpu_model,precision,tp,mbs,zero\n"
    text += "".join(f"1.3b,2048,16,H100-SXM,bf16,1,1,{zero}\n" for zero in ("0", "zero1", "3"))
    code, err, out = run_estimate(tmp_path, text)
    assert code == 0, err
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert [layout.split()[6] for layout in table["layout"]] == ["zero0", "zero1", "zero3"]
    out.unlink()
    code, err, out = run_estimate(tmp_path, text.replace(",3\n", ",2\n"))
    assert code == 2 and not out.exists()  # nothing written
    assert "zero2" in err and "zero0|zero1|zero3" in " ".join(err.split())


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ("7b,2048,16,H100-SXM,bf16,,4,1,8,", "field 'tp, pp, dp': layout 'tp4 pp1 cp1 ep1 dp8"),
        ("7b,2048,16,H100-SXM,bf16,,1,1,,4", "ep4: the model is dense"),
        ("7b,2048,16,H100-SXM,bf16,8,,,,", "a mixture-of-experts row needs active_params"),
    ],
)
def test_estimate_llm_refuses_bad_moe_and_layout_rows(tmp_path: Path, row, said):
    header = "params,seq_len,num_gpus,gpu_model,precision,experts,tp,pp,dp,ep\n"
    code, err, out = run_estimate(tmp_path, header + row + "\n")
    assert code == 2 and not out.exists()
    assert said in " ".join(err.split()) and "line 2" in err


def test_plan_takes_a_moe_preset_and_a_layout_end_to_end():
    done = runner.invoke(
        app,
        ["plan", "-w", "mixtral-8x7b-1t", "--precision", "bf16", "--provider", "aws",
         "--gpu", "H100", "--max-gpus", "64", "--layout", "tp2 pp2 ep4 mb1", "--top", "2"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    said = " ".join(done.stdout.split())
    assert "mixtral-8x7b-1t" in said
    assert "Your layout tp2 pp2 cp1 ep4 dp" in said and "best layout found: tp" in said
    assert "MFU" in said and "on active parameters" in said


def test_plan_refuses_a_bad_layout_or_one_for_a_model_that_is_not_an_llm():
    bad = runner.invoke(app, ["plan", "-w", "mixtral-8x7b-1t", "--layout", "tp2 qq4"])
    assert bad.exit_code == 2 and "--layout: layout token 'qq4'" in " ".join(bad.stderr.split())
    cnn = runner.invoke(app, ["plan", "-w", "resnet50-imagenet-90ep", "--layout", "tp2"])
    assert cnn.exit_code == 2 and "not an LLM workload" in cnn.stderr


def test_plan_layout_dp_must_agree_with_the_exact_count_and_stay_within_the_cap():
    """dp fixes the count at t x p x c x d: refused where --gpus asks for another or it is
    above --max-gpus, as estimate-llm refuses a product that is not the row's count; in
    JSON the layout's timing is a note on stderr, not a warning."""
    base = ["plan", "-w", "llm-8b-1t", "--gpu", "H100-SXM", "--provider", "aws"]
    other = runner.invoke(app, [*base, "--gpus", "64", "--layout", "tp4 pp2 dp16"])
    said = " ".join(other.stderr.split())
    assert other.exit_code == 2
    assert "tp4 x pp2 x cp1 x dp16 = 128 GPUs, but the plan asks for exactly 64" in said
    above = runner.invoke(app, [*base, "--max-gpus", "64", "--layout", "tp8 pp1 dp16"])
    assert above.exit_code == 2
    assert "= 128 GPUs, more than the 64 GPUs allowed per option" in " ".join(above.stderr.split())
    agree = runner.invoke(
        app, [*base, "--gpus", "64", "--layout", "tp4 pp2 dp8", "--format", "json"]
    )
    assert agree.exit_code == 0, agree.output
    lines = agree.stderr.splitlines()
    mine = [line for line in lines if "your layout tp4 pp2" in line]
    assert mine and mine[0].startswith("note: ") and "on 64 x H100-SXM" in mine[0]


def test_a_tensor_parallel_group_wider_than_a_node_runs_its_collectives_over_the_network():
    # llm-6.7b-134b: 32 heads of 128 (MHA), so tp16 divides them; 8 GPUs per node.
    workload = get_workload("llm-6.7b-134b")
    inside = _compare(workload, 16, "tp8 pp2 mb1")
    across = _compare(workload, 16, "tp16 mb1")
    assert across.timed.tp_nodes == 2 and inside.timed.tp_nodes == 1
    mine = across.timed.layout
    assert mine.reason == "fits"
    # tp16's collectives cross the network (1/8 of the bytes at each GPU's 50 GB/s after
    # NVLink's pass): its exposed tp time is over twice tp8's per step, and the layout is
    # slower than the search's best.
    tp_across = mine.tp_share * mine.step_s
    tp_inside = inside.timed.layout.tp_share * inside.timed.layout.step_s
    assert tp_across > 2 * tp_inside
    assert mine.tokens_per_s < across.best.layout.tokens_per_s
    words = user_layout_text(across, "bf16")
    assert "(tp16 spans 2 nodes: its collectives cross the network)" in words
    assert "spans" not in user_layout_text(inside, "bf16")


def test_plan_help_names_every_mixture_of_experts_preset_a_workload_can_name():
    from planner.workloads.moe_presets import MOE_PRESETS

    done = runner.invoke(app, ["plan", "--help"], env={"COLUMNS": "400"})
    said = " ".join(done.stdout.split())
    assert done.exit_code == 0 and all(name in said for name in MOE_PRESETS)
    assert "llm-<total>-a<active>-<tokens>" in said
