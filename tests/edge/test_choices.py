"""edge.choices: the closest choice to a typo and the hint that names it."""

from __future__ import annotations

from edge.choices import closest_match, did_you_mean
from pricing.gpus import CANONICAL_GPUS
from pricing.gpus import did_you_mean as gpu_did_you_mean


def test_a_typo_gets_the_closest_choice_as_it_is_spelt() -> None:
    assert closest_match("resnt50", ["resnet50", "bert", "gpt"]) == "resnet50"
    assert closest_match("h100-sxm", CANONICAL_GPUS) == "H100-SXM"
    assert closest_match("US-EAST-1", ["us-east-1", "us-west-2"]) == "us-east-1"


def test_nothing_close_is_none_and_no_hint() -> None:
    assert closest_match("zzzz", ["resnet50", "bert"]) is None
    assert did_you_mean("zzzz", ["resnet50", "bert"]) == ""


def test_the_hint_wording() -> None:
    assert did_you_mean("bret", ["resnet50", "bert", "gpt"]) == "; did you mean 'bert'?"


def test_the_cutoff_decides_what_is_close() -> None:
    choices = ["p4d.24xlarge"]
    # difflib ratio 0.59: offered at the default 0.5, not at 0.6 (the cloud runners' cutoff)
    assert closest_match("p4d.x", choices) == "p4d.24xlarge"
    assert closest_match("p4d.x", choices, cutoff=0.6) is None


def test_a_prefix_is_the_last_resort_only_when_asked() -> None:
    assert closest_match("A10xxxxxxxxxx", ["B200", "A100-SXM-40GB"]) is None
    assert closest_match("A10xxxxxxxxxx", ["B200", "A100-SXM-40GB"], prefix=3) == "A100-SXM-40GB"
    assert gpu_did_you_mean("A10xxxxxxxxxx", ["B200", "A100-SXM-40GB"]) == (
        "; did you mean 'A100-SXM-40GB'?"
    )
