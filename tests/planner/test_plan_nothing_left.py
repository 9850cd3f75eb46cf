"""Plans that filters leave with few or no options: a GPU nobody prices, on-prem only, and
random valid flag combinations through the CLI (never a traceback)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.onprem.tco import load_onprem_config
from planner.plan import make_plan
from planner.render.notes import notes_text
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from tests.conftest import ROOT
from tests.planner.choose.test_plan_constraints import CLOUD, RESULTS

runner = CliRunner()
ONPREM = str(ROOT / "examples" / "onprem-dgx-h100.toml")
RESNET = get_workload("resnet50-imagenet-90ep")


def test_a_gpu_no_offer_prices_is_named_in_one_note() -> None:
    request = PlanRequest(RESNET, "fp16", "on-demand", gpus=("GB200",), max_gpus=8)
    result = make_plan(request, CLOUD, RESULTS)
    assert result.rows.empty
    assert [n.to_dict() for n in result.notes] == [
        {"code": "no_options", "unpriced_gpus": ("GB200",), "offers_chosen": 0, "onprem": 0}
    ]
    (line,) = notes_text(result.notes)
    assert line.startswith("no priced offer of GB200 in the price catalog")
    assert "--onprem" in line


def test_filters_that_choose_no_offer_say_so_not_that_offers_were_left_out() -> None:
    request = PlanRequest(RESNET, "fp16", "on-demand", providers=("aws",), gpus=("H100",))
    (line,) = notes_text(make_plan(request, CLOUD, RESULTS).notes)
    assert line.startswith("no offer matches the filters")


def test_a_plan_of_priced_gpus_names_the_unpriced_one_beside_them() -> None:
    request = PlanRequest(RESNET, "fp16", "on-demand", gpus=("GB300", "H100"), max_gpus=8)
    result = make_plan(request, CLOUD, RESULTS)
    assert set(result.rows["gpu_name"]) == {"H100-SXM"}
    assert [n["gpus"] for n in result.notes_of("gpus_unpriced")] == [("GB300",)]


def test_an_onprem_only_plan_plans_on_prem() -> None:
    """Filters that leave no cloud offer still weigh the on-prem config (it has no vCPUs)."""
    config = load_onprem_config(ONPREM).config
    request = PlanRequest(RESNET, "fp16", "on-demand", providers=("lambda",), onprem=(config,))
    result = make_plan(request, CLOUD, RESULTS)
    assert len(result.rows) == 1 and result.rows["kind"].tolist() == ["on-prem"]
    assert result.rows["vcpus"].isna().all()
    assert result.pick("cheapest_within_deadline") is not None


def test_cli_says_a_gpu_has_no_offer_in_one_line_and_exits_0(results_dir: Path) -> None:
    done = runner.invoke(app, ["plan", "-w", "llm-7b-140b", "--gpu", "GB200"])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [
        "no priced offer of GB200 in the price catalog (no provider, region or tier lists "
        "one): plan it on-prem (--onprem) or add its price with `gpuplan pricing add-custom`"
    ]
    done = runner.invoke(app, ["plan", "-w", "llm-7b-140b", "--gpu", "GB200", "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == []
    assert "no priced offer of GB200" in done.stderr


@pytest.mark.parametrize(
    "filters",
    [
        ["--provider", "azure", "--tier", "neocloud"],  # no azure offer is a neocloud's
        ["--gpu", "L4"],  # the on-prem config is H100
    ],
)
def test_cli_plans_the_onprem_option_the_filters_leave(
    results_dir: Path, filters: list[str]
) -> None:
    args = ["plan", "-w", "bert-base-squad-2ep", *filters, "--onprem", ONPREM, "--format", "json"]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    rows = pd.DataFrame(json.loads(done.stdout))
    assert "on-prem" in set(rows["kind"])


# Valid values for each flag: a random draw of them is a valid command.
FLAG_CHOICES: dict[str, list[list[str]]] = {
    "-w": [["resnet50-imagenet-1ep"], ["bert-base-squad-2ep"], ["llm-124m-2.48b"]],
    "--provider": [[], ["aws"], ["azure"], ["gcp"], ["lambda"], ["aws", "lambda"]],
    "--tier": [[], ["hyperscaler"], ["neocloud"], ["marketplace"]],
    "--gpu": [[], ["L4"], ["H100"], ["A100"], ["T4"], ["GB200"], ["B200", "L4"]],
    "--onprem": [[], [ONPREM]],
    "--max-gpus": [[], ["1"], ["8"], ["64"]],
    "--deadline-hours": [[], ["0.5"], ["24"]],
    "--budget-usd": [[], ["1"], ["1000"]],
    "--pricing": [[], ["spot"], ["reserved-1y"]],
    "--precision": [[], ["fp32"], ["bf16"]],
    "--view": [[], ["picks"], ["options"], ["constraints"]],
}
DRAWS = 40
# Draws stop after this many seconds (a busy machine): the test stays bounded.
TIME_LIMIT_S = 150.0


def _draw(rng: random.Random) -> list[str]:
    args = ["plan", "--draws", "200"]
    for flag, choices in FLAG_CHOICES.items():
        values = rng.choice(choices)
        if flag == "-w":
            args += ["-w", values[0]]
        else:
            for value in values:
                args += [flag, value]
    return args


def test_random_valid_flag_combinations_plan_or_refuse_cleanly(results_dir: Path) -> None:
    """Every draw exits 0, or 1/2 with a message and no traceback."""
    rng = random.Random(20261203)
    started = time.monotonic()
    ran = 0
    for _ in range(DRAWS):
        if time.monotonic() - started > TIME_LIMIT_S:
            break
        args = _draw(rng)
        done = runner.invoke(app, [*args, "--format", "json"])
        ran += 1
        command = " ".join(args)
        assert done.exception is None or isinstance(done.exception, SystemExit), (
            f"{command}: {done.exception!r}"
        )
        assert "Traceback" not in done.output, command
        assert done.exit_code in (0, 1, 2), f"{command}: exit {done.exit_code}"
        if done.exit_code == 0:
            assert isinstance(json.loads(done.stdout), list), command
        else:
            assert done.stderr.strip(), f"{command}: exit {done.exit_code} without a message"
    assert ran >= 10
