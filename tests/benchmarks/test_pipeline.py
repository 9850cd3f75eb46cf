"""Input-pipeline benchmark: real JPEG decode, torchvision's crop rule, a valid result."""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import torch
from PIL import Image

from benchmarks.pipeline import (
    CROP_RATIO,
    CROP_SCALE,
    PipelineOptions,
    decode_and_augment,
    make_jpegs,
    random_resized_crop_box,
    run_pipeline,
)
from benchmarks.results import load_results, write_result


def test_generated_files_are_real_distinct_jpegs() -> None:
    files = make_jpegs(3)
    assert len(set(files)) == 3
    for data in files:
        with Image.open(io.BytesIO(data)) as image:
            assert image.format == "JPEG" and image.size == (500, 375)


def test_crop_boxes_follow_the_scale_and_ratio_ranges() -> None:
    rng = random.Random(0)
    for _ in range(500):
        left, top, right, bottom = random_resized_crop_box(500, 375, rng)
        width, height = right - left, bottom - top
        assert 0 <= left < right <= 500 and 0 <= top < bottom <= 375
        assert CROP_SCALE[0] * 0.97 <= width * height / (500 * 375) <= CROP_SCALE[1]
        assert CROP_RATIO[0] * 0.97 <= width / height <= CROP_RATIO[1] * 1.03
    # Too narrow an image for the ratio range: the centred fallback crop.
    assert random_resized_crop_box(10, 1000, random.Random(0))[0] == 0


def test_decode_and_augment_gives_uint8_chw_and_flips() -> None:
    data = make_jpegs(1)[0]
    outputs = [decode_and_augment(data, random.Random(seed)) for seed in range(6)]
    assert all(o.shape == (3, 224, 224) and o.dtype == torch.uint8 for o in outputs)
    assert len({o.sum().item() for o in outputs}) > 1  # random crops differ


def test_pipeline_result_reports_images_per_core(tmp_path: Path) -> None:
    options = PipelineOptions(workers=0, batch_size=4, batches=3, warmup_batches=1, images=4)
    result = run_pipeline(options, "pipe-1", "2026-11-30T05:00:00+00:00")
    assert result.workload == "input-pipeline" and result.precision is None
    assert result.throughput > 0 and result.throughput_unit == "images/s"
    assert result.samples_per_s_per_core == result.samples_per_s  # 0 workers: 1 core
    assert len(result.step_times_s) == 3
    assert math.isclose(result.throughput, 12 / sum(result.step_times_s), rel_tol=1e-6)
    write_result(result, tmp_path)
    loaded, problems = load_results(tmp_path)
    assert problems == [] and loaded[0] == result
