"""An exact GPU count (`plan --gpus N`, the app's Exact GPU count): the options it leaves, the
constraint it names as binding, and ranked rows told apart when only their region differs."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from planner.cli.main import app
from planner.plan import make_plan
from planner.render.plan_tables import _with_display, collapse_regions, print_plan
from planner.render.plan_words import worded_status
from planner.request import PlanRequest
from planner.workloads.catalog import get_workload
from tests.planner.choose.test_plan_constraints import CLOUD, RESULTS, offers

runner = CliRunner()
RESNET = get_workload("resnet50-imagenet-90ep")


def test_an_exact_count_is_the_binding_constraint_not_max_gpus() -> None:
    request = PlanRequest(RESNET, "fp16", "on-demand", gpu_count=8, max_gpus=512)
    result = make_plan(request, CLOUD, RESULTS)
    assert set(result.rows["total_gpus"]) == {8.0}
    status = worded_status(result)
    assert list(status["constraint"]) == ["gpu_count"]
    row = status.iloc[0]
    assert row["binds"] and row["value"] == 8
    assert row["note"].startswith("every option uses exactly 8 GPUs, as asked")


def test_without_an_exact_count_max_gpus_is_named() -> None:
    request = PlanRequest(RESNET, "fp16", "on-demand", max_gpus=8)
    status = worded_status(make_plan(request, CLOUD, RESULTS))
    assert list(status["constraint"]) == ["max_gpus"]
    assert "of 8 allowed" in status.iloc[0]["note"]


def test_cli_gpus_plans_that_count_only_and_says_it_binds(results_dir: Path) -> None:
    args = ["plan", "-w", "resnet50-imagenet-90ep", "--provider", "lambda", "--gpus", "8"]
    done = runner.invoke(app, [*args, "--format", "json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    assert rows and {r["total_gpus"] for r in rows} == {8}
    done = runner.invoke(app, args, env={"COLUMNS": "120"})
    assert done.exit_code == 0, done.output
    assert "GPU count binds: every option uses exactly 8 GPUs, as asked" in done.stdout
    assert "max GPUs binds" not in done.stdout
    done = runner.invoke(app, [*args[:-1], "9999"])
    assert done.exit_code == 2
    assert "--gpus: GPU count 9999 is more than the 512 GPUs allowed" in done.stderr
    assert "raise --max-gpus or ask for fewer" in done.stderr


def test_cli_gpus_not_a_doubling_of_instances_plans_the_count_or_says_why_not() -> None:
    """24 GPUs on Lambda's 8-GPU instances are 3 of them; 12 on 8-GPU-only offers names the
    offers whose instances cannot make it instead of leaving the plan empty unexplained."""
    args = ["plan", "-w", "resnet50-imagenet-90ep", "--gpu", "H100-SXM", "--format", "json"]
    done = runner.invoke(app, [*args, "--provider", "lambda", "--gpus", "24"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    assert rows and {(r["total_gpus"], r["instances"]) for r in rows} >= {(24, 3)}
    done = runner.invoke(app, [*args[:-2], "--provider", "azure", "--gpus", "12"])
    assert done.exit_code == 0, done.output
    assert "is not a whole number of their instances (8 GPUs each)" in done.output
    assert "no option left to plan" in done.output


# One instance type at one price in two regions, and a dearer third region.
REGIONS = offers(
    *(
        {
            "provider": "aws",
            "region": region,
            "instance_type": "h100x1",
            "gpu_name": "H100-SXM",
            "gpu_count": 1,
            "usd_per_hour": price,
        }
        for region, price in (("us-east-1", 9.0), ("us-west-2", 9.0), ("eu-west-1", 11.0))
    )
)


def test_rows_alike_but_for_their_region_are_one_row_naming_how_many() -> None:
    result = make_plan(PlanRequest(RESNET, "fp16", "on-demand", max_gpus=1), REGIONS, RESULTS)
    assert len(result.rows) == 3
    shown = collapse_regions(_with_display(result.rows))
    assert list(shown["region_label"]) == ["2 regions", "eu-west-1"]
    assert list(shown["rank_mark"].str.rstrip("*")) == ["1-2", "3"]
    assert set(shown.iloc[0]["pick"].split(",")) == set(
        result.rows["pick"].str.split(",").sum()
    ) - {""}


def test_the_table_shows_no_two_rows_alike(capsys: object) -> None:
    result = make_plan(PlanRequest(RESNET, "fp16", "on-demand", max_gpus=1), REGIONS, RESULTS)
    for width in (80, 140):
        print_plan(result, width=width)
        out = capsys.readouterr().out  # type: ignore[attr-defined]
        lines = out.splitlines()
        head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("rank"))
        table = lines[head + 2 : head + 4]
        assert len(table) == 2 and table[0].split()[1:] != table[1].split()[1:]
        assert ("2 regions" in table[0]) == (width == 140)
