"""The Scaling page: a GPU's figures, fitted laws and extrapolation follow its inputs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import chart, metrics, plain, table_with, trace

Open = Callable[..., AppTest]


def curve(at: AppTest) -> list[float]:
    return trace(chart(at, "scaling.throughput_chart"), "planner extrapolation")["y"]


def test_default_view_shows_figures_laws_and_extrapolation(open_page: Open) -> None:
    at = open_page("scaling")
    shown = metrics(at)
    assert set(shown) == {
        "1 GPU (images/s)",
        "Efficiency at 8 GPUs",
        "Efficiency at 1,024 GPUs",
        "Law used",
    }
    assert shown["1 GPU (images/s)"].replace(",", "").isdigit()
    throughput = chart(at, "scaling.throughput_chart")
    names = [t.get("name") for t in throughput["data"]]
    assert {"linear law", "amdahl law", "usl law", "ring law"} & {
        n.replace(" (chosen)", "") for n in names if n
    } == {"linear law", "amdahl law", "usl law", "ring law"}
    assert sum("(chosen)" in (n or "") for n in names) == 1
    assert any((n or "").startswith("published (") for n in names)
    assert trace(throughput, "planner extrapolation")["x"][0] == 1
    assert trace(throughput, "planner extrapolation, across nodes")["x"][-1] == 1024
    efficiency = chart(at, "scaling.efficiency_chart")
    assert trace(efficiency, "planner efficiency")["y"][0] == 1.0
    links = table_with(at, "scope", "link", "bus_gbs")
    assert "NVLink" in links["link"].iloc[0]
    laws = table_with(at, "law", "fit_mape", "heldout_mape", "chosen")
    assert laws["chosen"].sum() == 1
    assert at.query_params["gpu"] == "H100-SXM"


def test_another_gpu_changes_the_curve(open_page: Open) -> None:
    at = open_page("scaling")
    before, one_before = curve(at), metrics(at)["1 GPU (images/s)"]
    at.selectbox(key="scaling.gpu").set_value("A100-SXM-40GB").run()
    assert not at.exception
    assert curve(at) != before
    assert metrics(at)["1 GPU (images/s)"] != one_before
    assert at.query_params["gpu"] == "A100-SXM-40GB"


def test_a_slower_network_costs_efficiency_only_across_nodes(open_page: Open) -> None:
    at = open_page("scaling")
    node, far = metrics(at)["Efficiency at 8 GPUs"], metrics(at)["Efficiency at 1,024 GPUs"]
    at.number_input(key="scaling.network_gbps").set_value(10.0).run()
    after = metrics(at)
    assert after["Efficiency at 8 GPUs"] == node
    assert int(after["Efficiency at 1,024 GPUs"].rstrip("%")) < int(far.rstrip("%"))
    at.number_input(key="scaling.gpus_per_node").set_value(4).run()
    assert "Efficiency at 4 GPUs" in metrics(at)


def test_an_unmeasured_gpu_is_estimated_and_says_so(open_page: Open) -> None:
    at = open_page("scaling", {"gpu": "L4"})
    assert metrics(at)["Law used"] == "pooled / estimated"
    assert "no law was fitted" in plain(at.info[0].value)
    assert "spec regression" in plain(at.info[0].value)
    assert curve(at)[0] > 0


def test_a_link_reproduces_the_view(open_page: Open) -> None:
    clicked = open_page("scaling")
    clicked.selectbox(key="scaling.model").set_value("bert_large_squad").run()
    clicked.radio(key="scaling.precision").set_value("tf32").run()
    clicked.selectbox(key="scaling.gpu").set_value("A100-PCIe-40GB").run()
    clicked.number_input(key="scaling.network_gbps").set_value(100.0).run()
    linked = open_page("scaling", dict(clicked.query_params))
    assert linked.query_params == clicked.query_params
    assert metrics(linked) == metrics(clicked)
    assert curve(linked) == curve(clicked)


def test_a_misspelt_gpu_in_the_link_is_named(open_page: Open) -> None:
    at = open_page("scaling", {"gpu": "H100-SMX", "gpus_per_node": "0"})
    text = plain(" ".join(w.value for w in at.warning))
    assert "did you mean 'H100-SXM'?" in text
    assert "gpus_per_node='0' is out of range" in text
    assert at.selectbox(key="scaling.gpu").value == "H100-SXM"


def test_efficiency_is_stated_in_words_before_the_tables(open_page: Open) -> None:
    at = open_page("scaling")
    words = next(plain(m.value) for m in at.markdown if "of linear scaling" in m.value)
    assert words.startswith("H100-SXM keeps on 8 GPUs (one node) **")
    assert "on 64 GPUs (8 nodes)" in words and "on 1,024 GPUs (128 nodes)" in words
    curve = table_with(at, "total_gpus", "efficiency")
    counts = curve["total_gpus"].astype(int).tolist()
    assert counts == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    eight = curve.set_index("total_gpus").loc[8, "efficiency"]
    assert f"**{eight:.0%}**" in words.split(";")[0]
    at.toggle(key="scaling.every_count").set_value(True).run()
    assert len(table_with(at, "total_gpus", "efficiency")) > len(counts)


def test_the_step_chart_shows_why_efficiency_falls_at_scale(open_page: Open) -> None:
    at = open_page("scaling")
    steps = chart(at, "scaling.step_chart")
    compute = trace(steps, "compute")
    overhead = trace(steps, "fixed overhead")
    assert trace(steps, "communication (exposed)")["x"] == compute["x"]
    # the per-GPU batch sits under each count on the axis: no text drawn over the bars
    assert not any("text" in str(t.get("mode", "")) for t in steps["data"])
    ticks = steps["layout"]["xaxis"]["ticktext"]
    assert len(ticks) == len(compute["x"]) and all("<br>b=" in t for t in ticks)
    # ResNet-50 at the 8k global batch: compute per step shrinks with the per-GPU batch,
    # the fixed overhead does not (it grows a little: the wait for the slowest of more GPUs,
    # planner.throughput.step_model), so at 1,024 GPUs it is a large share of the step.
    assert compute["y"][-1] < compute["y"][0] / 50
    assert overhead["y"][0] <= overhead["y"][-1] < 2 * overhead["y"][0]
    assert overhead["y"][-1] > compute["y"][-1]
    before = metrics(at)["Efficiency at 1,024 GPUs"]
    at.number_input(key="scaling.global_batch_resnet50").set_value(0.0).run()
    assert not at.exception
    assert metrics(at)["Efficiency at 1,024 GPUs"] != before


def test_an_llm_scales_by_the_operator_model_with_its_step_parts(open_page: Open) -> None:
    at = open_page("scaling")
    table = table_with(at, "layout", "tokens_per_s_per_gpu", "efficiency")
    assert table["total_gpus"].astype(int).tolist() == [8, 16, 32, 64, 128, 256, 512, 1024]
    fits = table.loc[table["reason"] == "yes"]
    assert len(fits) and fits["efficiency"].iloc[0] == 1.0  # against the fewest that fit
    assert fits["layout"].str.startswith("tp").all()
    parts = chart(at, "scaling.llm_chart")
    names = {t["name"] for t in parts["data"]}
    assert {"GEMM", "attention", "memory-bound", "DP comm"} <= names
    # Each count's parts make up its whole step.
    ys = [trace(parts, name)["y"] for name in names]
    totals = [sum(y[i] for y in ys) for i in range(len(fits))]
    assert all(abs(total - 1.0) < 0.01 for total in totals)
    # FSDP weighs no pipeline: its layouts at 1,024 GPUs have pp1.
    at.radio(key="scaling.llm_framework").set_value("fsdp").run()
    fsdp = table_with(at, "layout", "tokens_per_s_per_gpu", "efficiency")
    assert fsdp.loc[fsdp["reason"] == "yes", "layout"].str.contains(" pp1 ").all()


def grid_config(at: AppTest, *columns: str) -> dict[str, Any]:
    """The column config (labels, formats) of the first table that has all of `columns`."""
    for frame in at.dataframe:
        if set(columns) <= set(frame.value.columns):
            return dict(json.loads(frame.proto.columns or "{}"))
    raise KeyError(f"no table with columns {columns}")


def test_the_per_gpu_batch_sits_beside_the_efficiency_it_explains(open_page: Open) -> None:
    """ResNet-50's 8k global batch over the counts the page extrapolates to: 8,192 / GPUs
    per GPU once that is below the recipe's own batch, next to each count's efficiency."""
    at = open_page("scaling")
    table = table_with(at, "total_gpus", "efficiency", "per_gpu_batch")
    columns = table.columns.tolist()
    assert columns.index("per_gpu_batch") == columns.index("efficiency_high") + 1
    by_count = table.set_index("total_gpus")["per_gpu_batch"]
    for gpus in (64, 128, 256, 512, 1024):
        assert by_count.loc[gpus] == pytest.approx(8192 / gpus)
    assert (
        grid_config(at, "per_gpu_batch", "efficiency")["per_gpu_batch"]["label"] == "batch per GPU"
    )
    words = next(plain(m.value) for m in at.markdown if "of linear scaling" in m.value)
    assert "batch 8/GPU" in words.split(";")[-2] + words.split(";")[-1]


def test_the_step_chart_gives_every_count_its_own_bar(open_page: Open) -> None:
    """Counts as categories, evenly spaced: on a linear axis the small counts overprinted
    each other and 1,024 was cut at the edge."""
    at = open_page("scaling")
    steps = chart(at, "scaling.step_chart")
    assert steps["layout"]["xaxis"]["type"] == "category"
    assert trace(steps, "compute")["x"][-1] == "1,024"
    assert steps["layout"]["xaxis"]["ticktext"][-1] == "1,024<br>b=8"
    assert chart(at, "scaling.llm_chart")["layout"]["xaxis"]["type"] == "category"


def test_the_llm_table_has_labels_and_one_number_format(open_page: Open) -> None:
    at = open_page("scaling")
    config = grid_config(at, "layout", "tokens_per_s_per_gpu")
    table = table_with(at, "layout", "tokens_per_s_per_gpu", "efficiency")
    for column in table.columns:
        label = config[column]["label"]
        assert "_" not in label, (column, label)
    rates = [c for c in table.columns if c.startswith("tokens_per_s")]
    assert len(rates) == 4
    assert {config[c]["type_config"]["format"] for c in rates} == {"localized"}
    assert config["tokens_per_s"]["label"] == "tokens/s"
    values = table[rates].to_numpy(float)
    finite = values[~np.isnan(values)]
    assert len(finite) and (finite == np.round(finite)).all()  # 114,903, not 114902.9139
