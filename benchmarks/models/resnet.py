"""ResNet-50 (v1.5) for ImageNet-shaped synthetic training, written here (no torchvision).

Architecture: He et al. 2016, "Deep Residual Learning for Image Recognition", table 1
(bottleneck blocks [3, 4, 6, 3], widths 64-512, expansion 4), with the v1.5 change used
by torchvision and NVIDIA's DeepLearningExamples: the stride-2 downsampling sits on the
3x3 convolution of a bottleneck, not the first 1x1. 25,557,032 parameters at 1000 classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class ResNetConfig:
    """Shape of a bottleneck ResNet and its input images."""

    blocks: tuple[int, int, int, int] = (3, 4, 6, 3)
    base_width: int = 64
    num_classes: int = 1000
    image_size: int = 224


CONFIGS: dict[str, ResNetConfig] = {
    "tiny": ResNetConfig(blocks=(1, 1, 1, 1), base_width=8, num_classes=10, image_size=64),
    "full": ResNetConfig(),
}
EXPANSION = 4


def _out(size: int, kernel: int, stride: int, padding: int) -> int:
    """Output side of a convolution or pooling window (floor division, as PyTorch)."""
    return (size + 2 * padding - kernel) // stride + 1


def forward_macs(cfg: ResNetConfig) -> int:
    """Multiply-accumulates of one forward pass of one image (convolutions + classifier).

    Sum over layers of k_h k_w C_in C_out H_out W_out (He et al. 2016, table 1 counts the
    same way: 3.8e9 for v1, 4.09e9 for v1.5 at 224x224; NVIDIA DeepLearningExamples,
    ResNet50 v1.5 README). Batch norm, ReLU, pooling and additions are not counted.
    """
    side = _out(cfg.image_size, 7, 2, 3)
    macs = 7 * 7 * 3 * cfg.base_width * side * side
    side = _out(side, 3, 2, 1)
    in_ch = cfg.base_width
    for stage, count in enumerate(cfg.blocks):
        width = cfg.base_width * 2**stage
        for block in range(count):
            stride = 2 if stage > 0 and block == 0 else 1
            out_side = _out(side, 3, stride, 1)
            macs += in_ch * width * side * side  # 1x1 reduce
            macs += 9 * width * width * out_side * out_side  # 3x3 (strided in v1.5)
            macs += width * width * EXPANSION * out_side * out_side  # 1x1 expand
            if block == 0:
                macs += in_ch * width * EXPANSION * out_side * out_side  # projection shortcut
            in_ch = width * EXPANSION
            side = out_side
    return macs + in_ch * cfg.num_classes


def training_flops_per_sample(cfg: ResNetConfig) -> float:
    """Training FLOPs per image: 3 x forward, forward = 2 FLOPs per MAC.

    Backward costs about twice the forward (gradients with respect to inputs and to
    weights): Kaplan et al. 2020, section 2.1. 24.5 GFLOPs for ResNet-50 at 224x224.
    """
    return 3 * 2 * float(forward_macs(cfg))


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (carries the stride), 1x1 expand; projection shortcut when needed."""

    def __init__(self, in_ch: int, width: int, stride: int) -> None:
        super().__init__()
        out_ch = width * EXPANSION
        self.conv1 = nn.Conv2d(in_ch, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_ch, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_ch)
        nn.init.zeros_(self.bn3.weight)  # zero-init residual (Goyal et al. 2017)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), nn.BatchNorm2d(out_ch)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """Bottleneck ResNet: stem (7x7/2 conv, 3x3/2 max pool), four stages, pool, classifier."""

    def __init__(self, cfg: ResNetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        width = cfg.base_width
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        stages = []
        in_ch = width
        for stage, count in enumerate(cfg.blocks):
            stage_width = width * 2**stage
            blocks = []
            for block in range(count):
                stride = 2 if stage > 0 and block == 0 else 1
                blocks.append(Bottleneck(in_ch, stage_width, stride))
                in_ch = stage_width * EXPANSION
            stages.append(nn.Sequential(*blocks))
        self.layers = nn.Sequential(*stages)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_ch, cfg.num_classes)
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.avgpool(self.layers(x))
        return self.fc(torch.flatten(x, 1))


def build(cfg: ResNetConfig) -> ResNet:
    """A freshly initialised ResNet for `cfg`."""
    return ResNet(cfg)


def make_batch(
    cfg: ResNetConfig, batch_size: int, device: torch.device, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Synthetic images (N, 3, H, W) and labels, generated on `device`."""
    images = torch.randn(
        batch_size,
        3,
        cfg.image_size,
        cfg.image_size,
        device=device,
        generator=generator,
    )
    labels = torch.randint(0, cfg.num_classes, (batch_size,), device=device, generator=generator)
    return images, labels


def loss(model: nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Cross-entropy of the classifier on one batch."""
    images, labels = batch
    return nn.functional.cross_entropy(model(images), labels)
