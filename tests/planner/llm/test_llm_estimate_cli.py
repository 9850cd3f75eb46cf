"""`gpuplan estimate-llm` end to end on small Q files, and its errors (nothing written)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.io.validate import FLAG_RANGES, MAX_TABLE_ROWS
from planner.llm.estimate import OUTPUT_COLUMNS
from planner.workloads.catalog import llm_workload, reshape_llm

runner = CliRunner()
QUERY = """params,seq_len,num_gpus,gpu_model,precision,mode,network_gbps,global_batch_tokens
6.7b,2048,8,H100 SXM5 80GB,bf16,,3200,
6.7b,2048,8,H100-SXM,fp8,,3200,
69b,4096,8,H100-SXM,bf16,lora,3200,
69b,4096,8,H100-SXM,bf16,finetune,3200,
405e9,2048,1024,H100-SXM,bf16,pretrain,3200,16777216
1.3b,2048,1,A100-SXM-80GB,bf16,,,
"""


def run(tmp_path: Path, text: str, *extra: str) -> tuple[int, str, Path]:
    queries = tmp_path / "q.csv"
    queries.write_text(text)
    out = tmp_path / "out.csv"
    done = runner.invoke(
        app, ["estimate-llm", "--queries", str(queries), "--output", str(out), *extra]
    )
    return done.exit_code, done.stderr, out


def test_round_trip_keeps_q_and_adds_layout_tokens_and_fit(tmp_path: Path) -> None:
    code, err, out = run(tmp_path, QUERY)
    assert code == 0, err
    assert "wrote" in err and "6 rows (5 fit, 1 do not)" in err
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    query = pd.read_csv(tmp_path / "q.csv", dtype=str, keep_default_na=False)
    assert list(table.columns) == [*query.columns, *OUTPUT_COLUMNS]
    assert table["params"].tolist() == query["params"].tolist()  # Q comes back as given
    bf16, fp8, lora, full, big, a100 = (table.iloc[i] for i in range(6))
    assert bf16["layout"].startswith("tp1 pp1 dp8") and bf16["fits"] == "True"
    # tokens/s over all GPUs = MFU x dense peak x GPUs / FLOPs per token.
    flops = llm_workload(6.7e9, 1e9).flops_per_sample
    assert float(bf16["tokens_per_s"]) == pytest.approx(
        float(bf16["mfu"]) * 989.4e12 * 8 / flops, rel=1e-6
    )
    low, mid, high = (
        float(bf16[c]) for c in ("tokens_per_s_low", "tokens_per_s", "tokens_per_s_high")
    )
    assert low < mid < high
    # fp8 gains less than its GEMMs' 2x: casts, attention and the rest stay 16-bit
    # (planner.llm.ops; Megatron-Core Llama3-8B on 8 H100 gains 1.29x in the corpus).
    assert 1.1 * mid < float(fp8["tokens_per_s"]) < 1.6 * mid
    assert bf16["method"] == "estimated" and "Hopper kernels" in bf16["method_detail"]
    assert bf16["method_detail"].startswith(f"layout {bf16['layout']} (")
    assert f"MFU {float(bf16['mfu']):.0%} of the bf16 peak" in bf16["method_detail"]
    assert lora["fits"] == "True" and full["fits"] == "False"
    assert full["tokens_per_s"] == "" and full["layout"] == "" and full["method"] == "none"
    assert "does not fit" in full["method_detail"] and "full recomputation" in full["method_detail"]
    parts = {x[:2]: x[2:] for x in big["layout"].split()}
    assert int(parts["tp"]) >= 2 and int(parts["pp"]) >= 2  # 405B on 1,024 GPUs: tp and pp
    # One A100, nothing exposed: the operators' MFU, below the GEMMs' own 75% of peak.
    assert a100["layout"].startswith("tp1 pp1 dp1") and 0.35 < float(a100["mfu"]) < 0.7


def test_row_options_override_the_global_ones(tmp_path: Path) -> None:
    text = "params,seq_len,num_gpus,gpu_model,precision,gpus_per_node,network_gbps\n"
    text += "6.7b,2048,64,H100-SXM,bf16,8,3200\n6.7b,2048,64,H100-SXM,bf16,1,25\n"
    code, err, out = run(tmp_path, text)
    assert code == 0, err
    fast, slow = pd.read_csv(out)["tokens_per_s"]
    assert slow < fast  # 1-GPU nodes on 25 Gb/s expose the gradient reduce


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "params,seq_len,num_gpus,gpu_model,precision\n7b,2048,8,H10O,bf16\n",
            "line 2, field 'gpu_model': unknown GPU 'H10O'; did you mean",
        ),
        (
            "params,seqlen,num_gpus,gpu_model,precision\n7b,2048,8,H100-SXM,bf16\n",
            "missing column(s) 'seq_len'; required: params, seq_len, num_gpus, gpu_model, "
            "precision; optional: n_layer",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n7b,2048,8,H100-SXM,bf16\n"
            "7b,2048,eight,H100-SXM,bf16\n",
            "line 3, field 'num_gpus': 'eight' is not a number; it must be a whole number from "
            "1 to 1,000,000 GPUs",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\nseven,2048,8,H100-SXM,bf16\n",
            "line 2, field 'params': 'seven' is not a number (e.g. 7e9 or 7b)",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n7b,-1,8,H100-SXM,bf16\n",
            "line 2, field 'seq_len': '-1' must be a whole number from 1 to 10,000,000 tokens",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n7b,2048,8,A100-SXM-80GB,fp8\n",
            "line 2, field 'precision': A100-SXM-80GB has no fp8 tensor cores",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n-8b,2048,8,H100-SXM,bf16\n",
            "line 2, field 'params': '-8b' must be a finite number greater than 0",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision,active_params,experts,top_k\n"
            "30b,2048,8,H100-SXM,bf16,3b,8,16\n",
            "line 2, field 'top_k': top_k 16 is more than the 8 experts",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision,active_params\n"
            "30b,2048,8,H100-SXM,bf16,40b\n",
            "line 2, field 'active_params': 40b active parameters are more than the 30b in all",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision,global_batch_tokens\n"
            "7b,2048,8,H100-SXM,bf16,1000\n",
            "line 2, field 'global_batch_tokens': 1,000 tokens is less than one sequence of "
            "2,048; give at least 2,048",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision,mode\n7b,2048,8,H100-SXM,bf16,lorra\n",
            "line 2, field 'mode': unknown mode 'lorra'; did you mean 'lora'?",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n7b,2048,8,H100-SXM,bf17\n",
            "unknown precision 'bf17'; did you mean 'bf16'?",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n7b,1e308,8,H100-SXM,bf16\n",
            "q.csv, line 2, field 'seq_len': '1e308' must be a whole number from 1 to "
            "10,000,000 tokens",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n7b,2048,1e308,H100-SXM,bf16\n",
            "q.csv, line 2, field 'num_gpus': '1e308' must be a whole number from 1 to "
            "1,000,000 GPUs",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n1e308,2048,8,H100-SXM,bf16\n",
            "field 'params': '1e308' must be a finite number greater than 0 and at most 1e+15",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision,n_layer\n7b,2048,8,H100-SXM,bf16,1e9\n",
            "field 'n_layer': '1e9' must be a whole number from 1 to 10,000 layers",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision,precision\n7b,2048,8,H100-SXM,bf16,fp8\n",
            "q.csv, line 1: columns 5 and 6 are both named 'precision'; rename or remove one",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision\n7b,2048,8,H100-SXM,bf16,extra\n",
            "q.csv, line 2: 6 cells, but the header names 5 columns",
        ),
        (
            "params,seq_len,num_gpus,gpu_model,precision,note\n7b,2048,8,H100-SXM,bf16,"
            + "x" * 1001
            + "\n",
            "q.csv, line 2, field 'note': 1,001 characters, more than the 1,000 allowed",
        ),
    ],
)
def test_bad_queries_exit_2_name_the_place_and_write_nothing(
    tmp_path: Path, text: str, expected: str
) -> None:
    out = tmp_path / "out.csv"
    out.write_text("earlier output\n")
    code, err, _ = run(tmp_path, text)
    assert code == 2
    assert "error:" in err and expected in " ".join(err.split()), err
    assert out.read_text() == "earlier output\n"  # untouched
    assert not list(tmp_path.glob(".out.csv.*"))  # no temp file left


def test_missing_queries_file_is_an_error(tmp_path: Path) -> None:
    done = runner.invoke(app, ["estimate-llm", "--queries", str(tmp_path / "none.csv")])
    assert done.exit_code == 2 and "no such file" in done.stderr


def test_own_gpt_results_replace_the_prior(tmp_path: Path, results_dir: Path) -> None:
    from benchmarks.results import write_result
    from tests.planner.llm.test_llm_mfu import gpt

    write_result(gpt("H100-SXM", "1.3b", 0.44), results_dir)
    text = "params,seq_len,num_gpus,gpu_model,precision\n1.3b,2048,1,H100-SXM,bf16\n"
    text += "1.3b,2048,8,H100-SXM,bf16\n6.7b,2048,8,A100-SXM-80GB,bf16\n"
    code, err, out = run(tmp_path, text, "--results", str(results_dir))
    assert code == 0, err
    table = pd.read_csv(out)
    assert table["method"].tolist() == ["measured", "scaled", "estimated"]
    # Own runs calibrate the operator model: the measured configuration gives back its MFU.
    assert table["mfu"].iloc[0] == pytest.approx(0.44, rel=0.01)
    assert "measured by the GPT benchmark on this GPU" in table["method_detail"].iloc[0]
    without = pd.read_csv(run(tmp_path, text)[2])
    assert without["method"].tolist() == ["estimated"] * 3


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("gpus_per_node", "5000"),
        ("gpus_per_node", "2.5"),
        ("network_gbps", "0"),
        ("network_gbps", "1e300"),
    ],
)
def test_a_row_override_is_refused_where_its_flag_is_and_in_the_same_words(
    tmp_path: Path, column: str, value: str
) -> None:
    flag = "--" + column.replace("_", "-")  # the column's flag, e.g. --gpus-per-node
    text = (
        f"params,seq_len,num_gpus,gpu_model,precision,{column}\n7b,2048,8,H100-SXM,bf16,{value}\n"
    )
    code, err, out = run(tmp_path, text)
    valid = FLAG_RANGES[flag].text()
    assert code == 2 and not out.exists()
    assert f"line 2, field '{column}': '{value}' must be {valid}" in " ".join(err.split())
    (tmp_path / "ok.csv").write_text(
        "params,seq_len,num_gpus,gpu_model,precision\n7b,2,8,H100,bf16\n"
    )
    done = runner.invoke(app, ["estimate-llm", "--queries", str(tmp_path / "ok.csv"), flag, value])
    refused = " ".join(done.stderr.split())
    # The flag refuses it too: out of range, or (a whole-number flag) not an integer.
    assert done.exit_code == 2
    assert f"must be {valid}" in refused or f"'{value}' is not a valid int" in refused


def test_a_file_over_the_row_limit_is_refused_before_it_is_read_to_the_end(
    tmp_path: Path,
) -> None:
    row = "7b,2048,8,H100-SXM,bf16\n"
    queries = tmp_path / "q.csv"
    # Well past the limit the file is not even UTF-8: reading stops at the limit, so that
    # is never seen.
    queries.write_bytes(
        ("params,seq_len,num_gpus,gpu_model,precision\n" + row * (MAX_TABLE_ROWS + 5000)).encode()
        + b"\xff\xfe" * 1000
    )
    done = runner.invoke(app, ["estimate-llm", "--queries", str(queries), "--format", "json"])
    assert done.exit_code == 2 and done.stdout == ""
    assert (
        f"{queries}: more than {MAX_TABLE_ROWS:,} rows, the most one file may hold; split it"
        in " ".join(done.stderr.split())
    )


def test_a_column_gpuplan_does_not_know_is_refused_naming_it_and_the_valid_ones(
    tmp_path: Path,
) -> None:
    """A Q column that is not read (a typo, a MoE count, a note) is refused, never ignored:
    the row would be timed without it and nobody told."""
    text = "params,seq_len,num_gpus,gpu_model,precision,topk,=HEADER()\n"
    text += '7b,2048,8,H100-SXM,bf16,2,"=HYPERLINK(""http://x"",""y"")"\n'
    code, err, out = run(tmp_path, text)
    said = " ".join(err.split())
    assert code == 2 and not out.exists()
    assert "unknown column(s) 'topk'; did you mean 'top_k'?, '=HEADER()'" in said
    assert "optional n_layer, d_model" in said and "active_params, experts, top_k" in said


def test_text_cells_that_a_spreadsheet_would_run_are_quoted_numbers_are_not(
    tmp_path: Path,
) -> None:
    text = "params,seq_len,num_gpus,gpu_model,precision,network_gbps\n"
    text += "7b,2048,8,H100-SXM,bf16,+1.5e3\n"
    text += "7b,2048,8,H100-SXM,bf16,3200\n"
    code, err, out = run(tmp_path, text)
    assert code == 0, err
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert written["network_gbps"].tolist() == ["+1.5e3", "3200"]  # numbers stay numbers
    assert written["params"].tolist() == ["7b"] * 2
    float(written["tokens_per_s"].iloc[0])
    shown = runner.invoke(
        app, ["estimate-llm", "--queries", str(tmp_path / "q.csv"), "--format", "csv"]
    )
    assert shown.exit_code == 0
    detail = pd.read_csv(io.StringIO(shown.stdout), dtype=str)["method_detail"]
    assert not any(str(cell).startswith(("=", "+", "-", "@")) for cell in detail)


def test_shape_columns_make_the_shape_the_model_as_plans_flags_do(tmp_path: Path) -> None:
    # Llama 3.1 8B (Dubey et al. 2024, table 3): 32 x 4096, 32 heads, 8 kv, MLP 14336.
    head = "params,seq_len,num_gpus,gpu_model,precision,n_layer,d_model,ffn,heads,kv_heads,vocab\n"
    llama = "8b,8192,8,H100-SXM,bf16,32,4096,14336,32,8,128256\n"
    plain = "8b,8192,8,H100-SXM,bf16,32,4096,,,,\n"
    code, err, out = run(tmp_path, head + llama + plain)
    assert code == 0, err
    shaped, gpt_like = (pd.read_csv(out).iloc[i] for i in range(2))
    # The GQA, SwiGLU shape (8.03B) is not the GPT-style default (4 h MLP, MHA): their
    # FLOPs per token differ, and so do tokens/s at nearly the same MFU.
    assert float(shaped["tokens_per_s"]) != pytest.approx(float(gpt_like["tokens_per_s"]), rel=0.02)
    model = reshape_llm(
        llm_workload(8e9, 1e9, seq_len=8192, n_layer=32, d_model=4096),
        ffn_dim=14336, n_heads=32, n_kv_heads=8, vocab_size=128256,
    )  # fmt: skip
    assert model.params == pytest.approx(8.03e9, rel=0.001)
    assert float(shaped["tokens_per_s"]) == pytest.approx(
        float(shaped["mfu"]) * 989.4e12 * 8 / model.flops_per_sample, rel=1e-6
    )
    # A shape far from params, a range, and a MoE row with a shape are refused by name.
    far = "70b,8192,8,H100-SXM,bf16,32,4096,14336,32,8,128256\n"
    code, err, _ = run(tmp_path, head + far)
    assert code == 2 and "line 2, field 'params, ffn, heads, kv_heads, vocab'" in err
    assert "but params is 70B, more than 10% apart: set params to 8.03b" in err
    code, err, _ = run(tmp_path, head + "8b,8192,8,H100-SXM,bf16,32,4096,0,32,8,128256\n")
    assert code == 2 and "field 'ffn'" in err
    moe = "params,seq_len,num_gpus,gpu_model,precision,active_params,heads\n"
    code, err, _ = run(tmp_path, moe + "235b,4096,32,H100-SXM,bf16,22b,64\n")
    assert code == 2 and "field 'heads'" in err and "leave n_layer, d_model" in err


def test_mlp_and_embeddings_columns_say_what_the_width_rule_would_guess(
    tmp_path: Path,
) -> None:
    # Llama 3.2 1B's shape: a SwiGLU MLP of 4 d and tied embeddings, 1.24B. Given for a
    # 1.2b row (no preset) without the two columns, the 4 d MLP is taken as GPT's and the
    # shape counts 0.967B, refused.
    head = (
        "params,seq_len,num_gpus,gpu_model,precision,n_layer,d_model,ffn,heads,kv_heads,vocab,"
        "mlp,embeddings\n"
    )
    shape = "1.2b,4096,8,H100-SXM,bf16,16,2048,8192,32,8,128256"
    code, err, out = run(tmp_path, head + shape + ",swiglu,tied\n")
    assert code == 0, err
    row = pd.read_csv(out).iloc[0]
    model = reshape_llm(
        llm_workload(1.2e9, 1e9, seq_len=4096, n_layer=16, d_model=2048), ffn_dim=8192,
        n_heads=32, n_kv_heads=8, vocab_size=128256, gated=True, tied=True,
    )  # fmt: skip
    assert model.params == pytest.approx(1.2358e9, rel=1e-4)
    assert float(row["tokens_per_s"]) == pytest.approx(
        float(row["mfu"]) * 989.4e12 * 8 / model.flops_per_sample, rel=1e-6
    )
    code, err, _ = run(tmp_path, head + shape + ",,\n")
    assert code == 2 and "0.967B parameters" in err and "GELU MLP 8192" in err
    assert "mlp, embeddings)" in err  # the fix names the two columns
    code, err, _ = run(tmp_path, head + shape + ",swish,tied\n")
    assert code == 2 and "line 2, field 'mlp': unknown MLP 'swish'" in err
    code, err, _ = run(tmp_path, head + shape + ",swiglu,sometimes\n")
    assert code == 2 and "field 'embeddings': unknown embeddings 'sometimes'" in err
    moe = "params,seq_len,num_gpus,gpu_model,precision,active_params,mlp\n"
    code, err, _ = run(tmp_path, moe + "235b,4096,32,H100-SXM,bf16,22b,swiglu\n")
    assert code == 2 and "field 'mlp'" in err and "mixture-of-experts row" in err


def test_attention_column_and_flag_name_the_kernel(tmp_path: Path) -> None:
    # FlashAttention-3-class attention (fa3; cudnn on Hopper) times the same fsdp layout
    # faster than the stack's FlashAttention-2; cudnn on an A100 is FlashAttention-2's.
    head = "params,seq_len,num_gpus,gpu_model,precision,framework,attention\n"
    rows = [f"8b,8192,8,{gpu},bf16,fsdp,{kernel}\n" for gpu, kernel in (
        ("H100-SXM", ""), ("H100-SXM", "fa3"), ("H100-SXM", "cudnn"),
        ("A100-SXM-40GB", ""), ("A100-SXM-40GB", "cudnn"),
    )]  # fmt: skip
    code, err, out = run(tmp_path, head + "".join(rows))
    assert code == 0, err
    rate = pd.read_csv(out)["tokens_per_s"].astype(float).tolist()
    assert rate[1] > 1.05 * rate[0] and rate[2] == pytest.approx(rate[1])
    assert rate[4] == pytest.approx(rate[3])
    # The flag sets what a blank cell means; a cell says otherwise.
    code, err, out = run(tmp_path, head + rows[0] + "8b,8192,8,H100-SXM,bf16,fsdp,fa2\n",
                         "--attention", "fa3")  # fmt: skip
    assert code == 0, err
    flagged = pd.read_csv(out)["tokens_per_s"].astype(float).tolist()
    assert flagged[0] == pytest.approx(rate[1]) and flagged[1] == pytest.approx(rate[0])
    code, err, _ = run(tmp_path, head + "8b,8192,8,H100-SXM,bf16,fsdp,fa4\n")
    assert code == 2 and "line 2, field 'attention': unknown attention kernel 'fa4'" in err
    assert "did you mean 'fa3'?" in err and "auto, fa2, fa3, cudnn" in err


MOE_QUERY = """params,active_params,seq_len,num_gpus,gpu_model,precision,moe_overlap
671b,37b,4096,2048,H800-SXM,bf16,
671b,37b,4096,2048,H800-SXM,bf16,true
671b,37b,4096,2048,H800-SXM,bf16,false
"""


def test_moe_overlap_column_and_flag_time_the_all_to_all_under_compute(tmp_path: Path) -> None:
    code, err, out = run(tmp_path, MOE_QUERY)
    assert code == 0, err
    rows = pd.read_csv(out)
    blank, overlapped, exposed = rows["tokens_per_s"]
    assert overlapped > exposed and blank == exposed  # blank: the flag's default, off
    assert "DualPipe-style overlap" in rows["method_detail"][1]
    assert "DualPipe-style overlap" not in rows["method_detail"][2]
    code, err, out = run(tmp_path, MOE_QUERY, "--moe-overlap")
    assert code == 0, err
    flagged = pd.read_csv(out)["tokens_per_s"]
    assert flagged[0] == overlapped and flagged[2] == exposed  # a row's false wins


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("params,seq_len,num_gpus,gpu_model,precision,moe_overlap\n7b,4096,8,H100-SXM,bf16,true\n",
         ["line 2", "moe_overlap", "mixture-of-experts rows", "leave moe_overlap blank"]),
        ("params,active_params,seq_len,num_gpus,gpu_model,precision,moe_overlap\n"
         "671b,37b,4096,64,H100-SXM,bf16,maybe\n", ["line 2", "'maybe' is not true or false"]),
        ("params,seq_len,num_gpus,gpu_model,precision,framework,tp_overlap\n"
         "8b,4096,8,H100-SXM,bf16,nanotron,true\n",
         ["line 2", "field 'tp_overlap'", "which nanotron does not run", "megatron, fsdp2"]),
        ("params,seq_len,num_gpus,gpu_model,precision,dp_overlap\n8b,4096,8,H100-SXM,bf16,often\n",
         ["line 2", "'often' is not true or false"]),
    ],
)  # fmt: skip
def test_a_bad_overlap_cell_is_refused_and_nothing_written(
    tmp_path: Path, text: str, words: list[str]
) -> None:
    code, err, out = run(tmp_path, text)
    assert code == 2 and not out.exists()
    for word in words:
        assert word in err


def test_a_layout_only_timing_refuses_exits_2_naming_the_line_not_a_traceback(
    tmp_path: Path,
) -> None:
    # 64 sequences per step over dp 4 at mb 1: 16 micro-batches, not a multiple of pp 3.
    text = ("params,seq_len,num_gpus,gpu_model,precision,global_batch_tokens,tp,pp,vpp,mbs\n"
            "13b,4096,24,H100-SXM,bf16,,2,1,,1\n"
            "13b,4096,24,H100-SXM,bf16,262144,2,3,2,1\n")  # fmt: skip
    code, err, out = run(tmp_path, text)
    assert code == 2 and not out.exists()
    assert "q.csv, line 3, the layout columns" in err and "vpp2 needs" in err
    assert "Traceback" not in err


OVERLAP_QUERY = """params,seq_len,num_gpus,gpu_model,precision,tp,pp,vpp,mbs,tp_overlap,dp_overlap
69b,4096,64,H100-SXM,bf16,8,2,1,1,,
69b,4096,64,H100-SXM,bf16,8,2,1,1,true,
69b,4096,64,H100-SXM,bf16,8,2,1,1,,false
"""


def test_overlap_columns_and_flags_time_the_layout_as_the_run_states(tmp_path: Path) -> None:
    code, err, out = run(tmp_path, OVERLAP_QUERY)
    assert code == 0, err
    rows = pd.read_csv(out)
    blank, tp_overlapped, dp_exposed = rows["tokens_per_s"]
    assert tp_overlapped > blank > dp_exposed  # the tp8 ring shows 1/8; ZeRO-1 shows whole
    code, err, out = run(tmp_path, OVERLAP_QUERY, "--tp-overlap", "--no-dp-overlap")
    assert code == 0, err
    flagged = pd.read_csv(out)["tokens_per_s"]
    # a blank cell takes the flag: every row is tp-overlapped with ZeRO-1 exposed
    assert flagged[0] == flagged[1] == flagged[2]
    assert dp_exposed < flagged[0] < tp_overlapped
    # the searched layout's detail says what was asked
    searched = "params,seq_len,num_gpus,gpu_model,precision,tp_overlap,dp_overlap\n"
    code, err, out = run(tmp_path, searched + "69b,4096,64,H100-SXM,bf16,true,false\n")
    assert code == 0, err
    detail = pd.read_csv(out)["method_detail"][0]
    assert "as asked: --tp-overlap" in detail and "as asked: --no-dp-overlap" in detail


REDUCE_QUERY = """\
params,seq_len,num_gpus,gpu_model,precision,network_gbps,framework,tp,mbs,zero,fp32_reduce
69b,4096,64,H100-SXM,bf16,3200,fsdp,8,1,3,
69b,4096,64,H100-SXM,bf16,3200,fsdp,8,1,3,true
69b,4096,64,H100-SXM,bf16,3200,fsdp,8,1,3,false
8b,4096,64,H100-SXM,bf16,3200,nanotron,1,1,1,
8b,4096,64,H100-SXM,bf16,3200,nanotron,1,1,1,no
"""


def test_fp32_reduce_column_and_flag_set_the_gradient_bytes_and_say_so(tmp_path: Path) -> None:
    code, err, out = run(tmp_path, REDUCE_QUERY)
    assert code == 0, err
    rows = pd.read_csv(out)
    fsdp, fsdp_fp32, fsdp_16, nanotron, nanotron_16 = rows["tokens_per_s"]
    # FSDP reduces 2-byte gradients unless told; fp32 doubles the reduce-scatter's bytes
    assert fsdp_fp32 < 0.97 * fsdp and fsdp_16 == fsdp
    # nanotron reduces fp32 unless told otherwise
    assert nanotron_16 > nanotron
    # the user's layout is compared with the best one found; the searched rows say what moved
    searched = REDUCE_QUERY.replace(",tp,mbs,zero,", ",").replace(",8,1,3,", ",")
    code, err, out = run(tmp_path, searched.replace(",1,1,1,", ","))
    assert code == 0, err
    details = pd.read_csv(out)["method_detail"]
    assert "as asked: --fp32-reduce" in details[1] and "4 bytes a value" in details[1]
    assert "as asked: --no-fp32-reduce" in details[4] and "2 bytes a value" in details[4]
    assert "fp32-reduce" not in details[0] + details[2] + details[3]  # the stacks' own
    # a blank cell takes the flag; a cell wins over it
    code, err, out = run(tmp_path, REDUCE_QUERY, "--fp32-reduce")
    assert code == 0, err
    flagged = pd.read_csv(out)["tokens_per_s"]
    assert flagged[0] == flagged[1] == fsdp_fp32 and flagged[2] == fsdp
    assert flagged[3] == nanotron and flagged[4] == nanotron_16


def test_a_bad_fp32_reduce_cell_is_refused_naming_the_column(tmp_path: Path) -> None:
    text = (
        "params,seq_len,num_gpus,gpu_model,precision,fp32_reduce\n8b,4096,8,H100-SXM,bf16,maybe\n"
    )
    code, err, out = run(tmp_path, text)
    assert code == 2 and not out.exists()
    assert "line 2" in err and "fp32_reduce" in err and "'maybe' is not true or false" in err


def test_the_table_tells_rows_apart_and_shows_each_band_and_why_a_row_does_not_fit(
    tmp_path: Path,
) -> None:
    """Two rows alike but for their stack show it; every timed row shows its 80% band
    around its tokens/s; a row no layout fits says how much memory it would need."""
    queries = tmp_path / "q.csv"
    queries.write_text(
        "params,seq_len,num_gpus,gpu_model,precision,framework\n"
        "8b,2048,8,H100-SXM,bf16,megatron\n8b,2048,8,H100-SXM,bf16,fsdp\n"
        "405b,8192,8,H100-SXM,bf16,fsdp\n"
    )
    table = runner.invoke(app, ["estimate-llm", "--queries", str(queries)], env={"COLUMNS": "220"})
    as_json = runner.invoke(app, ["estimate-llm", "--queries", str(queries), "--format", "json"])
    assert table.exit_code == 0 and as_json.exit_code == 0, table.output
    rows = pd.read_json(io.StringIO(as_json.stdout))
    lines = [line for line in table.stdout.splitlines() if line.startswith(("8b", "405b"))]
    assert "P10–P90" in table.stdout and "framework" in table.stdout
    for line, row in zip(lines, rows.itertuples(), strict=True):
        assert row.framework in line.split()
        if row.fits:
            assert f"{row.tokens_per_s_low:,.0f}-{row.tokens_per_s_high:,.0f}" in line
            assert row.tokens_per_s_low < row.tokens_per_s < row.tokens_per_s_high
        else:
            assert "does not fit (least " in line and "GB per GPU of 72.0 usable)" in line


def test_a_row_at_its_own_layout_that_cannot_run_has_method_none(tmp_path: Path) -> None:
    """dp64 x mb64 wants 4,096 sequences a step, more than the default batch holds: no
    timing, so no method (the best layout found is still given beside it)."""
    queries = tmp_path / "q.csv"
    queries.write_text(
        "params,seq_len,num_gpus,gpu_model,precision,dp,mbs\n8b,2048,64,H100-SXM,bf16,64,64\n"
        "8b,2048,64,H100-SXM,bf16,64,1\n"
    )
    done = runner.invoke(app, ["estimate-llm", "--queries", str(queries), "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = pd.read_json(io.StringIO(done.stdout))
    assert list(rows["method"]) == ["none", "estimated"]
    assert (
        "does not run: the global batch has fewer sequences than dp x mb"
        in rows.at[0, "method_detail"]
    )
    assert rows["best_tokens_per_s"].gt(0).all()
