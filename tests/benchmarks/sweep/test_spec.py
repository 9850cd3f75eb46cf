"""Sweep spec validation: bad specs are refused before anything starts, naming key and fix."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from benchmarks.sweep.spec import SpecError, check_cloud_targets, expand_runs, load_spec, parse_spec
from planner.sweep_preview import CatalogSweepData
from tests.benchmarks.sweep.conftest import sweep_cli

ROOT = Path(__file__).resolve().parents[3]
BASE = """
name = "demo"
[limits]
max_usd = 10
max_minutes_per_target = 30
[[targets]]
backend = "aws"
instance_type = "p4d.24xlarge"
region = "us-east-1"
[[runs]]
workload = "resnet50"
precision = ["fp16", "bf16"]
world_size = [1, 8]
steps = 20
"""
REGION = 'region = "us-east-1"'  # BASE's target region line


def parse(text: str) -> object:
    return parse_spec(tomllib.loads(text), "sweep.toml")


@pytest.mark.parametrize(
    ("old", "new", "key", "hint"),
    [
        ("max_usd = 10", "max_usdd = 10", "limits.max_usdd", "did you mean 'max_usd'"),
        (REGION, 'regoin = "us-east-1"', "targets[0].regoin", "'region'"),
        ('backend = "aws"', 'backend = "awz"', "targets[0].backend", "did you mean 'aws'"),
        ('workload = "resnet50"', 'workload = "resnet"', "runs[0].workload", "'resnet50'"),
        ('precision = ["fp16", "bf16"]', 'precision = "bf61"', "runs[0].precision", "valid:"),
        ("world_size = [1, 8]", "world_size = [0]", "runs[0].world_size", ">= 1"),
        ("steps = 20", "stepz = 20", "runs[0].stepz", "did you mean 'steps'"),
        ('name = "demo"', 'name = "Demo Sweep"', "name", "lower-case"),
        ("max_usd = 10\n", "", "limits.max_usd", "required"),
        ('name = "demo"', 'name = "demo\\n"', "name", "did you mean 'demo'"),
        (
            "max_minutes_per_target = 30",
            "max_minutes_per_target = 1e15",
            "limits.max_minutes_per_target",
            "<= 10,080",
        ),
        ("max_usd = 10", "max_usd = nan", "limits.max_usd", "<= 1,000,000"),
        ("steps = 20", "steps = 20\nseed = 4294967296", "runs[0].seed", "<= 4,294,967,295"),
        (REGION, REGION + '\nlabel = "a\\nb: c"', "targets[0].label", "printable characters only"),
        (REGION, 'region = "us-east-1\\n"', "targets[0].region", "printable characters only"),
        (
            REGION,
            REGION + '\nkey_name = "k"\nssh_user = "-l"',
            "targets[0].ssh_user",
            "not a login name",
        ),
    ],
)
def test_bad_spec_names_file_key_and_fix(old: str, new: str, key: str, hint: str) -> None:
    assert old in BASE
    with pytest.raises(SpecError) as info:
        parse(BASE.replace(old, new, 1))
    assert info.value.key == key
    assert str(info.value).startswith(f"sweep.toml: {key}:")
    assert hint in str(info.value)


def test_run_options_are_checked_as_bench_run_would() -> None:
    cpu_tf32 = BASE.replace('precision = ["fp16", "bf16"]', 'precision = "tf32"\ndevice = "cpu"')
    with pytest.raises(SpecError, match="tf32 is a CUDA tensor-core mode"):
        parse(cpu_tf32)
    with pytest.raises(SpecError, match=r"runs\[0\]\.size: .*'xl'"):
        parse(BASE.replace('workload = "resnet50"', 'workload = "resnet50"\nsize = "xl"'))
    compile_no_warmup = BASE.replace("steps = 20", "steps = 20\ncompile = true\nwarmup = 0")
    with pytest.raises(SpecError, match="compile needs warmup >= 1"):
        parse(compile_no_warmup)
    with pytest.raises(SpecError, match="only size, precision, world_size"):
        parse(BASE.replace("steps = 20", "steps = [20, 40]"))


def test_lists_expand_to_a_grid_with_bench_run_arguments() -> None:
    runs = expand_runs("s.toml", tomllib.loads(BASE)["runs"])
    assert [r.key for r in runs] == [
        "resnet50-full-fp16-auto-x1-s20",
        "resnet50-full-fp16-auto-x8-s20",
        "resnet50-full-bf16-auto-x1-s20",
        "resnet50-full-bf16-auto-x8-s20",
    ]
    argv = runs[1].argv()
    assert argv[argv.index("--world-size") + 1] == "8"
    assert argv[argv.index("--precision") + 1] == "fp16"
    assert argv[argv.index("--steps") + 1] == "20"


def test_instance_type_and_region_are_checked_against_the_catalog() -> None:
    data = CatalogSweepData()
    spec = parse(BASE.replace("p4d.24xlarge", "p4d.24xlarg"))
    with pytest.raises(SpecError, match=r"did you mean 'p4d\.24xlarge'"):
        check_cloud_targets(spec, data.known_instances)  # type: ignore[arg-type]
    spec = parse(BASE.replace("us-east-1", "us-east-9"))
    with pytest.raises(SpecError, match=r"targets\[0\]\.region: 'us-east-9' is not a region"):
        check_cloud_targets(spec, data.known_instances)  # type: ignore[arg-type]
    spec = parse(BASE.replace("us-east-1", "eu-west-1").replace("p4d.24xlarge", "p5.48xlarge"))
    with pytest.raises(SpecError, match=r"offered in .*us-east-1"):
        check_cloud_targets(spec, data.known_instances)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["sweep-onprem.toml", "sweep-aws.toml", "sweep-gcp.toml"])
def test_examples_are_valid(name: str) -> None:
    spec = load_spec(ROOT / "examples" / name)
    check_cloud_targets(spec, CatalogSweepData().known_instances)
    assert spec.targets and spec.runs


def test_cli_refuses_a_bad_spec_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace("max_parallel", "x").replace("steps = 20", "stpes = 20"))
    result = sweep_cli("plan", str(path))
    assert result.exit_code == 2
    assert "bad.toml: runs[0].stpes: unknown key; did you mean 'steps'?" in result.output
    assert "Traceback" not in result.output
    path.write_text("name = [")
    result = sweep_cli("plan", str(path))
    assert result.exit_code == 2 and "not valid TOML" in result.output


def test_aws_example_describes_the_default_image_the_runner_picks() -> None:
    from benchmarks.runners.aws import DLAMI_NAME

    text = (ROOT / "examples" / "sweep-aws.toml").read_text()
    comment = text[text.index("# image = ") :].split("\n# subnet_id")[0]
    assert DLAMI_NAME.startswith("Deep Learning Base") and "PyTorch" not in DLAMI_NAME
    assert "Deep Learning Base GPU AMI" in comment and "no PyTorch" in comment
    assert "CUDA torch" not in comment
