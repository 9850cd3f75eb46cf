"""Reading an on-prem config from TOML or a mapping, and which keys it left to defaults."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from planner.onprem.config import CONFIG_KEYS, DEFAULTS, OnPremConfig, OnPremConfigError
from planner.onprem.ranges import capex_range, network_range
from pricing.gpus import did_you_mean


@dataclass(frozen=True)
class LoadedConfig:
    """A config read from a file, and which keys the file left to their defaults."""

    config: OnPremConfig
    defaulted: tuple[str, ...]
    path: str

    def defaulted_notes(self) -> list[str]:
        """One line per defaulted key (the label and GPU besides): its value and source."""
        lines = []
        for key in self.defaulted:
            if key == "name":
                continue
            lines.append(
                f"{key} = {default_value_text(self.config, key)} ({source_of(self.config, key)})"
            )
        return lines


def source_of(config: OnPremConfig, key: str) -> str:
    """Where a default comes from; for the GPU's server price and the fabric's network, the
    cited range of that GPU or fabric (planner.onprem.ranges)."""
    found = None
    if key == "capex_usd_per_server":
        found = capex_range(config.gpu_name)
    elif key == "network_usd_per_server":
        found = network_range(config.fabric)
    if found is None:
        return DEFAULTS[key].source
    return (
        f"typical {found.typical:,.0f} of {found.low:,.0f}-{found.high:,.0f}: {found.source} "
        f"({found.date}, {found.confidence})"
    )


def default_value_text(config: OnPremConfig, key: str) -> str:
    """The value a defaulted key takes in `config`, resolved where it depends on others."""
    resolved = {
        "capex_usd_per_server": f"{config.server_capex_usd:,.0f} USD",
        "network_usd_per_server": f"{config.network_usd:,.0f} USD ({config.fabric})",
        "power_kw_per_server": f"{config.server_power_kw:.2f} kW",
        "staff_usd_per_year": f"{config.staff_usd:,.0f} USD",
    }
    return resolved.get(key, f"{getattr(config, key)!r}")


def defaulted_of(config: OnPremConfig) -> tuple[str, ...]:
    """The keys a config built in code left to their defaults."""
    return tuple(k for k in CONFIG_KEYS if k not in config.model_fields_set)


def config_from_mapping(data: Mapping[str, Any], source: str = "<config>") -> LoadedConfig:
    """An OnPremConfig from a mapping: unknown keys rejected (closest match named), missing
    keys defaulted and listed, bad values rejected with the field named."""
    for key, value in data.items():
        if isinstance(value, dict):
            raise OnPremConfigError(
                f"[{key}] is a table; an on-prem config is flat key = value pairs "
                "(see examples/onprem-dgx-h100.toml)",
                key,
                source,
            )
        if key not in CONFIG_KEYS:
            fix = did_you_mean(key, CONFIG_KEYS)
            raise OnPremConfigError(
                f"unknown key {key!r}{fix} Valid keys: {', '.join(CONFIG_KEYS)}", file=source
            )
    try:
        config = OnPremConfig(**dict(data))
    except OnPremConfigError as exc:
        raise OnPremConfigError(exc.message, exc.field, source) from None
    defaulted = tuple(k for k in CONFIG_KEYS if k not in data)
    return LoadedConfig(config, defaulted, source)


def load_onprem_config(path: str | Path) -> LoadedConfig:
    """Read an on-prem config from a TOML file (see examples/onprem-dgx-h100.toml).

    The file must be a regular UTF-8 file of at most 1 MiB nested at most 16 deep
    (planner.io.validate); anything else is an OnPremConfigError naming the file."""
    from planner.io.validate import (
        MAX_CONFIG_BYTES,
        InputPathError,
        NestingError,
        loads_toml,
        read_text_file,
        shorten,
    )

    hint = "pass a TOML file such as examples/onprem-dgx-h100.toml"
    try:
        data = loads_toml(read_text_file(path, "on-prem config", MAX_CONFIG_BYTES, hint))
    except InputPathError as exc:
        raise OnPremConfigError(str(exc)) from None
    except NestingError as exc:
        raise OnPremConfigError(f"not a usable TOML file: {exc}", file=shorten(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise OnPremConfigError(f"not valid TOML: {exc}", file=shorten(path)) from None
    return config_from_mapping(data, shorten(Path(path)))


def defaults_frame() -> pd.DataFrame:
    """The defaults table (field, default, unit, source), for docs, the CLI and the app."""
    return pd.DataFrame(
        [
            {"field": k, "default": d.value, "unit": d.unit, "source": d.source}
            for k, d in DEFAULTS.items()
        ]
    )
