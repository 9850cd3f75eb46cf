"""Fixed-epoch and time-to-accuracy workloads: batch caps and samples that grow with B."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.workloads.catalog import IMAGENET_TRAIN_IMAGES, get_workload


def test_fixed_workloads_train_the_same_samples_at_any_batch() -> None:
    fixed = get_workload("resnet50-imagenet-90ep")
    assert fixed.kind == "fixed" and fixed.global_batch_cap == 8192
    assert fixed.samples_at([256, 8192]).tolist() == [fixed.samples] * 2


def test_to_accuracy_samples_grow_with_the_global_batch() -> None:
    target = get_workload("resnet50-imagenet-to-75.9")
    assert target.kind == "to-accuracy" and target.target == "75.9% top-1"
    epochs = target.samples_at([256, 8192, 32768]) / IMAGENET_TRAIN_IMAGES
    assert epochs[1] == pytest.approx(90, abs=1)  # Goyal et al.: 90 epochs up to 8k
    assert epochs[0] < epochs[1] < epochs[2]
    bert = get_workload("bert-large-pretrain-phase2")
    # Through both published points: 100k x 256 and 1,563 x 32k sequences.
    assert bert.samples_at([256])[0] == pytest.approx(25.6e6, rel=0.01)
    assert bert.samples_at([32768])[0] == pytest.approx(1563 * 32768, rel=0.01)
    assert bert.benchmark_samples_per_sample > 384 / 384


def test_workloads_command_says_which_kind_each_is() -> None:
    done = CliRunner().invoke(app, ["workloads", "--format", "json"])
    assert done.exit_code == 0, done.output
    kinds = {row["name"]: row["kind"] for row in json.loads(done.stdout)}
    assert kinds["resnet50-imagenet-90ep"] == "fixed"
    assert kinds["resnet50-imagenet-to-75.9"] == "to-accuracy"
    assert kinds["bert-large-pretrain-phase2"] == "to-accuracy"
