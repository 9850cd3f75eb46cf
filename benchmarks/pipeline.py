"""Input-pipeline benchmark: decode and augment real JPEG bytes, report images/s per core.

A GPU trains only as fast as the CPUs feed it. This measures the standard ImageNet
training input path on this machine's cores: JPEG decode (Pillow), random-resized crop
to 224 (scale 0.08-1, aspect 3/4-4/3: Szegedy et al. 2015, "Going deeper with
convolutions", as torchvision's RandomResizedCrop), horizontal flip with p = 0.5, uint8
CHW tensors batched by DataLoader workers (normalisation is left to the GPU, as DALI
and FFCV do). The JPEGs are made here, in memory, at ImageNet's typical size (500x375,
quality 90), textured so they do not compress to nothing.

Throughput is images/s over the whole timed window; per core divides by the cores the
workers could use (min(workers, usable cores); 1 for workers = 0). Step times are the
arrival intervals of batches, bursty when several workers deliver at once.
"""

from __future__ import annotations

import io
import math
import random
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from benchmarks.env import collect_env, cpu_model, usable_cores
from benchmarks.results import BenchmarkResult
from benchmarks.summary import step_stats
from benchmarks.workload_names import PIPELINE_WORKLOAD

CROP_SCALE = (0.08, 1.0)
CROP_RATIO = (3 / 4, 4 / 3)
OUTPUT_SIZE = 224


def make_jpegs(
    count: int, width: int = 500, height: int = 375, quality: int = 90, seed: int = 0
) -> list[bytes]:
    """`count` distinct JPEG files as bytes: smooth colour fields plus pixel noise."""
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(count):
        coarse = rng.integers(0, 256, size=(12, 16, 3), dtype=np.uint8)
        base = Image.fromarray(coarse).resize((width, height), Image.Resampling.BICUBIC)
        noisy = np.asarray(base, dtype=np.int16) + rng.integers(-24, 25, size=(height, width, 3))
        buffer = io.BytesIO()
        Image.fromarray(noisy.clip(0, 255).astype(np.uint8)).save(
            buffer, format="JPEG", quality=quality
        )
        images.append(buffer.getvalue())
    return images


def random_resized_crop_box(
    width: int, height: int, rng: random.Random
) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of a random crop: torchvision's RandomResizedCrop rule.

    Ten tries at an area fraction in CROP_SCALE and a log-uniform aspect in CROP_RATIO;
    otherwise the largest centred crop with the aspect clamped to the range.
    """
    area = width * height
    log_ratio = (math.log(CROP_RATIO[0]), math.log(CROP_RATIO[1]))
    for _ in range(10):
        target = area * rng.uniform(*CROP_SCALE)
        aspect = math.exp(rng.uniform(*log_ratio))
        w = round(math.sqrt(target * aspect))
        h = round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            left = rng.randint(0, width - w)
            top = rng.randint(0, height - h)
            return left, top, left + w, top + h
    in_ratio = width / height
    if in_ratio < CROP_RATIO[0]:
        w, h = width, round(width / CROP_RATIO[0])
    elif in_ratio > CROP_RATIO[1]:
        h, w = height, round(height * CROP_RATIO[1])
    else:
        w, h = width, height
    left, top = (width - w) // 2, (height - h) // 2
    return left, top, left + w, top + h


def decode_and_augment(data: bytes, rng: random.Random) -> Any:
    """JPEG bytes -> uint8 tensor (3, 224, 224): decode, random-resized crop, random flip."""
    import torch

    with Image.open(io.BytesIO(data)) as opened:
        image = opened.convert("RGB")
    box = random_resized_crop_box(image.width, image.height, rng)
    image = image.resize((OUTPUT_SIZE, OUTPUT_SIZE), Image.Resampling.BILINEAR, box=box)
    if rng.random() < 0.5:
        image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    pixels = torch.frombuffer(bytearray(image.tobytes()), dtype=torch.uint8)
    return pixels.view(OUTPUT_SIZE, OUTPUT_SIZE, 3).permute(2, 0, 1)


class JpegDataset:
    """A map-style dataset of `length` samples cycling over in-memory JPEGs."""

    def __init__(self, jpegs: list[bytes], length: int, seed: int = 0) -> None:
        self.jpegs = jpegs
        self.length = length
        self.rng = random.Random(seed)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[Any, int]:
        return decode_and_augment(self.jpegs[index % len(self.jpegs)], self.rng), index % 1000


def _seed_worker(worker_id: int) -> None:
    import torch
    import torch.utils.data

    info = torch.utils.data.get_worker_info()
    if info is not None:
        info.dataset.rng = random.Random(torch.initial_seed() % 2**32)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PipelineOptions:
    """How to run the input-pipeline benchmark."""

    workers: int = 2
    batch_size: int = 64
    batches: int = 30
    warmup_batches: int = 5
    images: int = 256
    quality: int = 90
    seed: int = 0


def run_pipeline(
    options: PipelineOptions, run_id: str, started_at: str, progress: Any = None
) -> BenchmarkResult:
    """Time `batches` batches out of a DataLoader after `warmup_batches`; one result."""
    import torch

    if options.workers < 0 or options.batch_size < 1 or options.batches < 1:
        raise ValueError("--workers must be >= 0, --batch and --batches >= 1")
    jpegs = make_jpegs(options.images, quality=options.quality, seed=options.seed)
    times, wall, images = _time_batches(_loader(options, jpegs), options, progress)
    if tuple(images.shape[1:]) != (3, OUTPUT_SIZE, OUTPUT_SIZE) or images.dtype != torch.uint8:
        raise RuntimeError(f"unexpected batch {tuple(images.shape)} {images.dtype}")
    return _pipeline_result(options, run_id, started_at, jpegs, times, wall)


def _loader(options: PipelineOptions, jpegs: list[bytes]) -> Any:
    """A shuffled, seeded DataLoader over `jpegs` with exactly enough samples for the
    warm-up and the timed batches."""
    import torch
    import torch.utils.data

    total = (options.warmup_batches + options.batches) * options.batch_size
    return torch.utils.data.DataLoader(
        JpegDataset(jpegs, total, options.seed),  # type: ignore[arg-type]
        batch_size=options.batch_size,
        shuffle=True,
        num_workers=options.workers,
        drop_last=True,
        worker_init_fn=_seed_worker,
        prefetch_factor=4 if options.workers else None,
        generator=torch.Generator().manual_seed(options.seed),
    )


def _time_batches(
    loader: Any, options: PipelineOptions, progress: Any
) -> tuple[list[float], float, Any]:
    """(arrival interval of each timed batch, the timed window in s, the last batch's
    images), after `warmup_batches` untimed ones."""
    times: list[float] = []
    iterator = iter(loader)
    for i in range(options.warmup_batches):
        next(iterator)
        if progress:
            progress("warm-up", i + 1, options.warmup_batches)
    start = last = time.perf_counter()
    for i in range(options.batches):
        images, _ = next(iterator)
        now = time.perf_counter()
        times.append(now - last)
        last = now
        if progress:
            progress("measure", i + 1, options.batches)
    del iterator
    return times, last - start, images


def _pipeline_result(
    options: PipelineOptions,
    run_id: str,
    started_at: str,
    jpegs: list[bytes],
    times: list[float],
    wall: float,
) -> BenchmarkResult:
    """The measured batches as one input-pipeline BenchmarkResult (images/s over the
    timed window, per core used)."""
    stats = step_stats(times, options.batch_size, wall)
    cores = min(options.workers, usable_cores()) if options.workers else 1
    per_s = options.batch_size * options.batches / wall
    return BenchmarkResult(
        id=run_id,
        source="measured",
        workload=PIPELINE_WORKLOAD,
        model_size=f"jpeg-{OUTPUT_SIZE}",
        precision=None,
        device="cpu",
        device_name=cpu_model(),
        world_size=1,
        batch_size_per_device=options.batch_size,
        throughput=per_s,
        throughput_unit="images/s",
        throughput_p10=stats.samples_per_s_p10,
        throughput_p90=stats.samples_per_s_p90,
        throughput_cv=stats.throughput_cv,
        samples_per_s=per_s,
        samples_per_s_per_core=per_s / cores,
        step_time_s_p10=stats.step_time_s_p10,
        step_time_s_p50=stats.step_time_s_p50,
        step_time_s_p90=stats.step_time_s_p90,
        step_times_s=[round(t, 9) for t in times],
        env=collect_env("cpu"),
        config={
            "workers": options.workers,
            "cores_used": cores,
            "batches_timed": options.batches,
            "warmup_batches": options.warmup_batches,
            "distinct_images": options.images,
            "source_size": "500x375",
            "jpeg_quality": options.quality,
            "mean_jpeg_bytes": round(sum(map(len, jpegs)) / len(jpegs)),
            "decoder": f"Pillow {Image.__version__}",
            "augment": "random-resized crop 224 (scale 0.08-1, ratio 3/4-4/3), h-flip 0.5",
            "output": "uint8 (3, 224, 224) per image",
            "throughput": "images over the whole timed window (not a median step)",
            "step_times": "arrival interval of each batch; several workers deliver in "
            "bursts, so the spread (throughput_cv) is wide by nature",
        },
        started_at=started_at,
        notes=f"{options.workers} DataLoader worker(s) on {cores} core(s)",
    )
