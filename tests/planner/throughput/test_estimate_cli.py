"""`gpuplan estimate` end to end on tiny REF/Q files, and its errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner, Result

from planner.cli.main import app
from planner.io.validate import FIELD_RANGES, FLAG_RANGES
from planner.throughput.scaling import ring_throughput
from planner.throughput.spec_model import spec_features

runner = CliRunner()
# Lambda's labels, with the spec name where the reference gives one.
LABELS = {
    "A100 SXM4 40GB": "A100 SXM4 40GB",
    "H100 SXM5 80GB": "H100 SXM5 80GB",
    "H100 PCIe 80GB": "H100 PCIe 80GB",
    "RTX A6000": "RTX A6000",
    "V100 16GB": "V100 SXM2 16GB",
}
OUT_COLUMNS = ["predicted_throughput", "predicted_low", "predicted_high", "method"]


def write_reference(path: Path) -> pd.DataFrame:
    rows = []
    spec = pd.Series(list(LABELS.values()))
    feats = spec_features(spec.map(_canonical), pd.Series(["fp16_amp"] * len(spec)))
    one = 4.0 * np.exp(0.7 * feats["log_peak"] + 0.3 * feats["log_bw"])
    for (label, spec_name), x1 in zip(LABELS.items(), one, strict=True):
        for n in (1, 2, 4):
            rows.append(
                {
                    "gpu_model": label,
                    "spec_gpu_model": spec_name,
                    "num_gpus": n,
                    "model": "resnet50",
                    "precision": "fp16_amp",
                    "throughput": round(float(ring_throughput(n, x1, 0.04)), 1),
                    "unit": "images/s",
                    "flag": "",
                }
            )
    # A suspect row Lambda flags: must be skipped.
    rows.append({**rows[0], "num_gpus": 3, "throughput": 1e9, "flag": "superlinear(suspect)"})
    frame = pd.DataFrame(rows)
    frame.to_csv(path, index=False)
    return frame


def _canonical(spec_name: str) -> str:
    from pricing.gpus import canonical_gpu

    return canonical_gpu(spec_name)


def write_queries(path: Path, rows: list[dict[str, object]]) -> None:
    pd.DataFrame(rows).to_csv(path, index=False)


def run_estimate(tmp_path: Path, *extra: str) -> Result:
    """`gpuplan estimate` on ref.csv and q.csv in `tmp_path`."""
    files = ["--reference", str(tmp_path / "ref.csv"), "--queries", str(tmp_path / "q.csv")]
    return runner.invoke(app, ["estimate", *files, *extra])


def invoke(tmp_path: Path, queries: list[dict[str, object]], *extra: str) -> tuple[int, str]:
    write_reference(tmp_path / "ref.csv")
    write_queries(tmp_path / "q.csv", queries)
    done = run_estimate(tmp_path, "--output", str(tmp_path / "out.csv"), *extra)
    return done.exit_code, done.output


def q(gpu: str, n: float, precision: str = "fp16_amp", **more: object) -> dict[str, object]:
    return {"gpu_model": gpu, "num_gpus": n, "model": "resnet50", "precision": precision, **more}


def test_estimate_writes_q_plus_predictions(tmp_path: Path) -> None:
    queries = [
        q("H100 SXM5 80GB", 2, note="keep me"),
        q("V100 16GB", 4, note=""),
        q("H100 SXM5 80GB", 8, note=""),
        q("A100 SXM4 40GB", 3, note=""),
        q("L40S", 1, note=""),
        q("anything", 1, spec_gpu_model="RTX 6000 Ada", note=""),
    ]
    code, output = invoke(tmp_path, queries)
    assert code == 0, output
    out = pd.read_csv(tmp_path / "out.csv", keep_default_na=False)
    assert list(out.columns) == [*pd.DataFrame(queries).columns, *OUT_COLUMNS, "method_detail"]
    assert out["note"].iloc[0] == "keep me"
    ref = pd.read_csv(tmp_path / "ref.csv", keep_default_na=False)
    expected = ref.loc[
        (ref["gpu_model"] == "H100 SXM5 80GB") & (ref["num_gpus"] == 2), "throughput"
    ].iloc[0]
    assert out["predicted_throughput"].iloc[0] == pytest.approx(expected)
    v100 = ref.loc[(ref["gpu_model"] == "V100 16GB") & (ref["num_gpus"] == 4), "throughput"]
    assert out["predicted_throughput"].iloc[1] == pytest.approx(v100.iloc[0])
    assert out["method"].tolist() == [
        "measured",
        "measured",
        "scaled",
        "scaled",  # the flagged 3-GPU row is skipped, so 3 GPUs is scaled
        "estimated",
        "estimated",
    ]
    assert out["predicted_throughput"].iloc[3] < 1e6
    assert (out["predicted_low"] <= out["predicted_throughput"]).all()
    assert (out["predicted_throughput"] <= out["predicted_high"]).all()
    assert "skipped: 1 flagged REF rows" in output
    assert not list(tmp_path.glob(".out.csv.*"))  # no temp file left behind


def test_missing_column_names_file_and_column(tmp_path: Path) -> None:
    write_reference(tmp_path / "ref.csv")
    ref = pd.read_csv(tmp_path / "ref.csv").drop(columns="throughput")
    ref.to_csv(tmp_path / "ref.csv", index=False)
    write_queries(tmp_path / "q.csv", [q("H100 SXM5 80GB", 1)])
    done = run_estimate(tmp_path)
    assert done.exit_code == 2
    assert "ref.csv: missing column(s) 'throughput'" in done.output
    assert "Traceback" not in done.output


def test_unknown_gpu_names_line_field_and_closest_match(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, [q("H100 SXM5 80GB", 1), q("H100 SXM5 80G", 1)])
    assert code == 2
    assert "q.csv, line 3, field 'gpu_model': unknown GPU 'H100 SXM5 80G'" in output
    assert "did you mean 'H100 SXM5 80GB'?" in output
    assert not (tmp_path / "out.csv").exists()


def test_unknown_precision_names_the_valid_ones(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, [q("H100 SXM5 80GB", 1, precision="fp16amp")])
    assert code == 2
    assert "field 'precision': unknown precision 'fp16amp'; did you mean 'fp16_amp'?" in output
    assert "fp32, tf32" in output


def test_non_positive_throughput_is_rejected_with_its_line(tmp_path: Path) -> None:
    frame = write_reference(tmp_path / "ref.csv")
    frame.loc[4, "throughput"] = -5
    frame.to_csv(tmp_path / "ref.csv", index=False)
    write_queries(tmp_path / "q.csv", [q("H100 SXM5 80GB", 1)])
    done = run_estimate(tmp_path)
    assert done.exit_code == 2
    expected = "ref.csv, line 6, field 'throughput': '-5.0' must be a finite number greater than 0"
    assert expected in done.output


def test_unknown_model_in_queries(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, [{**q("H100 SXM5 80GB", 1), "model": "resnet5"}])
    assert code == 2
    assert "model 'resnet5' has no row in the reference; did you mean 'resnet50'?" in output


def test_lambda_labels_resolve_with_the_references_assumptions() -> None:
    from pricing.gpus import canonical_gpu

    assert canonical_gpu("V100 16GB") == "V100-SXM2-16GB"
    assert canonical_gpu("V100 32GB") == "V100-PCIe-32GB"  # Lambda lists 250 W per GPU
    assert canonical_gpu("GH200 (Lambda label 80GB)") == "GH200"
    assert canonical_gpu("A100 40GB SXM4") == "A100-SXM-40GB"


def test_query_rows_override_node_network_and_global_batch(tmp_path: Path) -> None:
    queries = [
        q("H100 SXM5 80GB", 64, gpus_per_node="", network_gbps="", global_batch=""),
        q("H100 SXM5 80GB", 64, gpus_per_node="", network_gbps=10, global_batch=""),
        q("H100 SXM5 80GB", 64, gpus_per_node="", network_gbps="", global_batch=512),
        q("H100 SXM5 80GB", 4, gpus_per_node=1, network_gbps=10, global_batch=""),
    ]
    code, output = invoke(tmp_path, queries, "--network-gbps", "3200")
    assert code == 0, output
    out = pd.read_csv(tmp_path / "out.csv")["predicted_throughput"].tolist()
    plain, slow_network, small_batch, one_gpu_nodes = out
    assert slow_network < plain and small_batch < 0.7 * plain
    # 1-GPU nodes: the 4-GPU NVLink figure does not apply, the 1-GPU one is scaled.
    detail = pd.read_csv(tmp_path / "out.csv")["method_detail"].iloc[3]
    assert "1-GPU" in detail and one_gpu_nodes > 0


def test_a_bad_override_names_its_line_and_field(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, [q("H100 SXM5 80GB", 8, global_batch="lots")])
    assert code != 0
    assert "line 2, field 'global_batch'" in output and "not a number" in output


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("gpus_per_node", 2.5),
        ("gpus_per_node", 0.5),
        ("gpus_per_node", 5000),
        ("network_gbps", 1e300),
        ("num_gpus", 1e308),
    ],
)
def test_a_row_value_is_refused_with_the_range_its_flag_has(
    tmp_path: Path, column: str, value: float
) -> None:
    # A column's flag is its name in flag form; num_gpus has none: its field's own range.
    flag = None if column == "num_gpus" else "--" + column.replace("_", "-")
    code, output = invoke(tmp_path, [q("H100 SXM5 80GB", 8, **{column: value})])
    valid = (FLAG_RANGES[flag] if flag else FIELD_RANGES[column]).text()
    assert code == 2 and not (tmp_path / "out.csv").exists()
    assert f"q.csv, line 2, field '{column}': '{value}' must be {valid}" in " ".join(output.split())


def test_a_column_named_twice_is_refused_naming_both(tmp_path: Path) -> None:
    write_reference(tmp_path / "ref.csv")
    (tmp_path / "q.csv").write_text(
        "gpu_model,num_gpus,model,precision,num_gpus\nH100 SXM5 80GB,8,resnet50,fp16_amp,1\n"
    )
    done = run_estimate(tmp_path)
    assert done.exit_code == 2
    assert "q.csv, line 1: columns 2 and 5 are both named 'num_gpus'" in " ".join(
        done.stderr.split()
    )


def test_formula_cells_of_q_come_back_quoted_in_the_csv(tmp_path: Path) -> None:
    queries = [
        q("H100 SXM5 80GB", 2, note='=HYPERLINK("http://x")', offset="-5"),
        q("H100 SXM5 80GB", 4, note="+cmd|' /C calc'!A0", offset="@x"),
    ]
    code, output = invoke(tmp_path, queries)
    assert code == 0, output
    out = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    assert out["note"].tolist() == ['\'=HYPERLINK("http://x")', "'+cmd|' /C calc'!A0"]
    assert out["offset"].tolist() == ["-5", "'@x"]
    float(out["predicted_throughput"].iloc[0])
