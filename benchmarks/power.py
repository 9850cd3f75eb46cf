"""GPU power, SM clock and energy over a timed window, through NVML (nvidia-ml-py).

Energy comes from the GPU's cumulative energy counter where it exists (Volta and
newer: nvmlDeviceGetTotalEnergyConsumption, millijoules), else from power samples
integrated with the trapezoid rule. Where NVML cannot be used (a CPU run, no NVIDIA
driver: NVMLError_LibraryNotFound) every figure is None and the source says
"not measured: <why>".
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PowerReading:
    """What one device drew over the window, with where each figure came from."""

    mean_power_w: float | None
    energy_j: float | None
    power_source: str
    energy_source: str
    mean_sm_clock_mhz: float | None
    samples: int

    def result_fields(self) -> dict[str, Any]:
        """The reading as benchmarks.results.BenchmarkResult's power fields."""
        return {
            "mean_power_w": self.mean_power_w,
            "power_source": self.power_source,
            "energy_j": self.energy_j,
            "energy_source": self.energy_source,
            "mean_sm_clock_mhz": self.mean_sm_clock_mhz,
        }


NOT_MEASURED = PowerReading(None, None, "not measured", "not measured", None, 0)


def _not_measured(why: str) -> PowerReading:
    text = f"not measured: {why}"
    return PowerReading(None, None, text, text, None, 0)


def integrate_w(times_s: list[float], watts: list[float]) -> float:
    """Energy in joules of power samples over time (trapezoid rule)."""
    return sum(
        (t1 - t0) * (w0 + w1) / 2
        for (t0, t1), (w0, w1) in zip(
            itertools.pairwise(times_s), itertools.pairwise(watts), strict=False
        )
    )


class PowerMonitor:
    """Samples one GPU's power and SM clock in a background thread between start and stop."""

    def __init__(self, device: str, cuda_index: int = 0, interval_s: float = 0.1) -> None:
        self.interval_s = interval_s
        self.handle: Any = None
        self.nvml: Any = None
        self.why_not = ""
        self.driver_version: str | None = None
        self._times: list[float] = []
        self._watts: list[float] = []
        self._clocks: list[float] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._energy_start_mj: int | None = None
        self._t0 = self._t1 = 0.0
        if device != "cuda":
            self.why_not = "CPU run (NVML measures NVIDIA GPUs only)"
            return
        try:
            import pynvml
        except ImportError:
            self.why_not = "nvidia-ml-py is not installed (pip install nvidia-ml-py)"
            return
        try:
            pynvml.nvmlInit()
            self.handle = _handle_for(pynvml, cuda_index)
            driver = pynvml.nvmlSystemGetDriverVersion()
            self.driver_version = driver.decode() if isinstance(driver, bytes) else driver
            self.nvml = pynvml
        except pynvml.NVMLError as exc:
            self.why_not = f"NVML unavailable ({type(exc).__name__}: {exc})"

    def _energy_mj(self) -> int | None:
        try:
            return int(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except self.nvml.NVMLError:
            return None

    def _sample(self) -> None:
        try:
            watts = self.nvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0
            clock = self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM)
        except self.nvml.NVMLError:
            return
        self._times.append(time.perf_counter())
        self._watts.append(watts)
        self._clocks.append(float(clock))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def start(self) -> None:
        """Begin the window (call right after a device synchronize)."""
        if self.nvml is None:
            return
        self._energy_start_mj = self._energy_mj()
        self._t0 = time.perf_counter()
        self._sample()
        self._thread = threading.Thread(target=self._run, name="gpuplan-nvml", daemon=True)
        self._thread.start()

    def stop(self) -> PowerReading:
        """End the window (call right after a device synchronize) and summarise it."""
        if self.nvml is None:
            return _not_measured(self.why_not)
        self._t1 = time.perf_counter()
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()
        end_mj = self._energy_mj()
        duration = self._t1 - self._t0
        clock = sum(self._clocks) / len(self._clocks) if self._clocks else None
        if self._energy_start_mj is not None and end_mj is not None and duration > 0:
            energy = (end_mj - self._energy_start_mj) / 1000.0
            return PowerReading(
                energy / duration,
                energy,
                "NVML energy counter / window",
                "NVML total energy counter (nvmlDeviceGetTotalEnergyConsumption)",
                clock,
                len(self._watts),
            )
        if len(self._watts) >= 2:
            energy = integrate_w(self._times, self._watts)
            span = self._times[-1] - self._times[0]
            source = f"NVML power samples every {self.interval_s * 1000:.0f} ms, integrated"
            return PowerReading(
                energy / span if span > 0 else None, energy, source, source, clock, len(self._watts)
            )
        return _not_measured("fewer than two NVML power samples in the window")


def _handle_for(pynvml: Any, cuda_index: int) -> Any:
    """The NVML handle of CUDA device `cuda_index` (by UUID: CUDA_VISIBLE_DEVICES reorders)."""
    try:
        import torch

        uuid = str(torch.cuda.get_device_properties(cuda_index).uuid)
        return pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else f"GPU-{uuid}")
    except (AttributeError, RuntimeError, pynvml.NVMLError):
        return pynvml.nvmlDeviceGetHandleByIndex(cuda_index)
