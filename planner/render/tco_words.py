"""Every word of a buy-or-rent answer (planner.onprem.answer.TcoAnswer), the same for the
CLI, the Cloud vs on-prem page and its HTML report: the verdict sentence, the line labels
and how each line was computed, payback months, the inputs that decide it, the notes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from edge.format import money, percent
from planner.onprem.answer import TcoAnswer, defaulted_lines
from planner.onprem.config import OnPremConfig
from planner.onprem.verdict import Verdict

LINE_LABELS: dict[str, str] = {
    "servers": "servers",
    "spares": "spares",
    "network": "network fabric",
    "storage": "storage",
    "installation": "installation",
    "site_capex": "site capex",
    "resale": "resale (credit)",
    "financing": "financing",
    "support": "support",
    "energy": "energy",
    "colocation": "colocation",
    "facility": "facility",
    "staff": "staff",
    "total": "total",
}
INPUT_LABELS: dict[str, str] = {
    "capex_usd_per_server": "server price",
    "network_usd_per_server": "network per server",
    "storage_usd_per_server": "storage per server",
    "installation_usd_per_server": "installation per server",
    "spares_fraction": "spares",
    "lifetime_years": "life",
    "cost_of_capital_rate": "cost of capital",
    "resale_fraction": "resale value",
    "maintenance_fraction_per_year": "support",
    "power_kw_per_server": "power per server",
    "idle_power_fraction": "idle power",
    "pue": "PUE",
    "usd_per_kwh": "electricity price",
    "colocation_usd_per_kw_month": "colocation price",
    "staff_usd_per_fte_year": "cost per engineer",
    "servers_per_fte": "servers per engineer",
    "utilization": "utilization",
}
VERDICT_WORDS: dict[Verdict, str] = {
    Verdict.BUY: "buy",
    Verdict.RENT: "rent",
    Verdict.CLOSE: "too close to call",
}


def months_text(months: float, lifetime_years: float) -> str:
    """'22 months (1.9 years)', '105 months (8.8 years, after life)', 'never'."""
    if months is None or not np.isfinite(months):
        return "never"
    shown = f"{months:,.1f}" if months < 100 else f"{months:,.0f}"
    late = ", after life" if after_life(months, lifetime_years) else ""
    return f"{shown} months ({months / 12:,.1f} years{late})"


def months_short(months: float, lifetime_years: float) -> str:
    """'26.8 mo (2.2 y)', '105 mo (after life)', 'never': for narrow table cells."""
    if months is None or not np.isfinite(months):
        return "never"
    shown = f"{months:,.1f}" if months < 100 else f"{months:,.0f}"
    if after_life(months, lifetime_years):
        return f"{shown} mo (after life)"
    return f"{shown} mo ({months / 12:,.1f} y)"


def after_life(months: float, lifetime_years: float) -> bool:
    """Payback later than the server's life (it never pays back in use)."""
    return bool(months is not None and np.isfinite(months) and months > lifetime_years * 12)


def months_band(low: float, high: float, unit: str = "months") -> str:
    """P10-P90 payback: '24-45 months', '86 months-never', 'never' (unit 'mo' in tables)."""
    if pd.isna(low) or not np.isfinite(low):
        return "never"
    if pd.isna(high) or not np.isfinite(high):
        return f"{low:,.0f} {unit}-never"
    return f"{low:,.0f}-{high:,.0f} {unit}"


def offer_label(row: pd.Series) -> str:
    """'aws p5.48xlarge on-demand'."""
    return f"{row['provider']} {row['instance_type']} {row['pricing']}"


def _share(p: float) -> str:
    return f"{p * 100:.0f}%"


def _what(row: pd.Series) -> str:
    return f"{offer_label(row)} ({money(row['usd_per_gpu_hour'])})"


def _cheaper_clause(row: pd.Series, first: bool) -> str:
    p = float(row["p_buy_cheaper"])
    cases = "all cases" if p >= 0.995 else (f"{_share(p)} of cases" if first else _share(p))
    payback = ""
    if Verdict(row["verdict"]) is Verdict.BUY:
        band = months_band(row["payback_months_p10"], row["payback_months_p90"])
        payback = f" (pays back in {band})"
    lead = "buying is cheaper than" if first else "than"
    return f"{lead} {_what(row)} in {cases}{payback}"


def offer_clauses(cloud: pd.DataFrame) -> list[str]:
    """'buying is cheaper than A in 97% of cases (pays back in 24-37 months), than B in
    2%' and 'it is not cheaper than C or D in any case', in the offers' order."""
    some = [r for _, r in cloud.iterrows() if float(r["p_buy_cheaper"]) > 0.005]
    none = [r for _, r in cloud.iterrows() if float(r["p_buy_cheaper"]) <= 0.005]
    clauses = []
    if some:
        clauses.append(", ".join(_cheaper_clause(r, i == 0) for i, r in enumerate(some)))
    if none:
        names = [_what(r) for r in none]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        subject = "it" if some else "buying"
        clauses.append(f"{subject} is not cheaper than {listed} in any case")
    return clauses


def work_text(answer: TcoAnswer) -> str:
    """'43% utilization (10,000 GPU-hours a month on 32 H100-SXM)'."""
    config = answer.config
    return (
        f"{percent(config.utilization, 0)} utilization ({answer.monthly_gpu_hours:,.0f} "
        f"GPU-hours a month on {config.gpus} {config.gpu_name})"
    )


def verdict_sentence(answer: TcoAnswer) -> str:
    """The answer in one sentence a decision-maker can quote: the cost at the utilization of
    the work with its P10-P90 band, then against each offer, the probability that buying
    is cheaper over the server's life."""
    p10, _, p90 = answer.band
    own = (
        f"At {work_text(answer)}, owning costs {money(answer.onprem['usd_per_gpu_hour'])} per "
        f"GPU-hour (P10-P90 {money(p10)}-{money(p90)})"
    )
    clauses = offer_clauses(answer.cloud)
    if not clauses:
        return own + "."
    return f"{own}; " + "; ".join(clauses) + "."


def sizing_note(answer: TcoAnswer) -> str | None:
    """Said when the work needs more servers than the config has; None otherwise."""
    s = answer.sizing
    if not s.resized:
        return None
    return (
        f"{s.monthly_gpu_hours:,.0f} GPU-hours a month need {s.servers} servers "
        f"({s.servers * answer.config.gpus_per_server} GPUs, at most "
        f"{percent(s.max_utilization, 0)} of their hours after failures), not the "
        f"{s.servers_configured} configured: every figure is for {s.servers} servers."
    )


def line_basis(config: OnPremConfig, component: str) -> str:
    """How a line was computed, with this config's numbers."""
    life = f"/ {config.lifetime_years:g} years"
    kw = config.server_power_kw * config.servers
    idle = config.idle_power_fraction
    drawn = idle + (1 - idle) * config.utilization
    rate = config.cost_of_capital_rate
    bases = {
        "servers": f"{config.servers} x {money(config.server_capex_usd)} {life}",
        "spares": f"{percent(config.spares_fraction, 0)} of server capex {life}",
        "network": f"{config.servers} x {money(config.network_usd)} ({config.fabric}) {life}",
        "storage": f"{config.servers} x {money(config.storage_usd_per_server)} {life}",
        "installation": f"{config.servers} x {money(config.installation_usd_per_server)} {life}",
        "site_capex": f"{money(config.extra_capex_usd)} {life}",
        "resale": f"{percent(config.resale_fraction, 0)} of server capex back at end of life",
        "financing": (
            f"annuity at {percent(rate, 1)} a year over {config.lifetime_years:g} years"
            if rate > 0
            else "none (straight-line)"
        ),
        "support": f"{percent(config.maintenance_fraction_per_year, 0)} of server capex a year",
        "energy": f"{kw:,.1f} kW x {percent(drawn, 0)} x 8760 h x PUE {config.pue:g} x "
        f"${config.usd_per_kwh:g}/kWh",
        "colocation": f"{kw:,.1f} kW x ${config.colocation_usd_per_kw_month:g}/kW-month x 12",
        "facility": "configured",
        "staff": (
            "configured"
            if "staff_usd_per_year" in config.model_fields_set
            else f"{config.servers} / {config.servers_per_fte:g} servers per engineer x "
            f"{money(config.staff_usd_per_fte_year)}"
        ),
        "total": f"{config.gpus} GPUs x 8760 h x {percent(config.utilization, 0)} = "
        f"{config.gpus * 8760 * config.utilization:,.0f} GPU-h a year",
    }
    return bases[component]


def worded_breakdown(answer: TcoAnswer) -> pd.DataFrame:
    """The cost lines as shown: label, $/year, $/GPU-h, share, how, and whether the line's
    inputs came from the defaults ('typical default' / 'yours')."""
    out = answer.breakdown.copy()
    out["basis"] = [line_basis(answer.config, c) for c in out["component"]]
    out["source"] = np.where(out["defaulted"] != "", "typical default", "yours")
    out.loc[out["component"] == "total", "source"] = ""
    out["component"] = out["component"].map(LINE_LABELS)
    return out


def deciding_inputs(swing: pd.DataFrame, count: int = 3) -> list[str]:
    """The inputs that move the $/GPU-hour most over their ranges: 'server price
    ($199k-$317k): $4.20-$5.10'."""
    lines = []
    for row in swing.head(count).itertuples():
        field = str(row.field)
        spread = input_range_text(field, row.low_value, row.high_value)
        lines.append(
            f"{INPUT_LABELS.get(field, field)} {spread} -> "
            f"{money(row.low_usd_per_gpu_hour)}-{money(row.high_usd_per_gpu_hour)} per GPU-hour"
        )
    return lines


def input_range_text(field: str, low: float, high: float) -> str:
    """An input's range in its unit: '$199k-$317k', '3.0-6.0 years', '34%-47%'."""
    if field.endswith("_usd_per_server") or field == "staff_usd_per_fte_year":
        return f"{money(low, short=True)}-{money(high, short=True)}"
    units = {
        "usd_per_kwh": ("${:.3f}", "/kWh"),
        "colocation_usd_per_kw_month": ("${:,.0f}", "/kW-month"),
        "lifetime_years": ("{:.1f}", " years"),
        "power_kw_per_server": ("{:.1f}", " kW"),
        "pue": ("{:.2f}", ""),
        "servers_per_fte": ("{:.0f}", " servers"),
    }
    if field in units:
        fmt, unit = units[field]
        return f"{fmt.format(low)}-{fmt.format(high)}{unit}"
    return f"{percent(low, 0)}-{percent(high, 0)}"


def defaulted_text(answer: TcoAnswer) -> str:
    """'9 of 13 lines from typical defaults: servers, network fabric, ...'."""
    lines = defaulted_lines(answer.defaulted)
    labels = [LINE_LABELS[line] for line in lines]
    if not labels:
        return "every line from your configuration"
    return (
        f"{len(labels)} of {len(LINE_LABELS) - 1} lines from typical defaults (cited ranges, "
        f"reference/onprem-tco.md): {', '.join(labels)}"
    )


def band_note(answer: TcoAnswer) -> str:
    """How the band was found."""
    trend = (
        f", cloud prices changing {percent(answer.trend_per_year, 0)} a year (+/-50%)"
        if answer.trend_per_year
        else ", cloud prices flat"
    )
    return (
        f"P10-P90 and the share of cases: {answer.draws:,} Monte Carlo draws (seed "
        f"{answer.seed}) over the ranges of the defaulted lines, the utilization (x 0.8-1.1), "
        f"the life and the resale value{trend}; buying counts as cheaper where its cost per "
        "GPU-hour over the server's life is below the cloud's."
    )


def assumptions(answer: TcoAnswer) -> list[str]:
    """The assumptions behind every figure, in words."""
    config = answer.config
    return [
        f"Power: {config.power_basis}; idle draw {percent(config.idle_power_fraction, 0)} of it.",
        "Capital: everything paid up front, less the resale value, as an annuity at the cost "
        "of capital over the life (straight-line at 0); a year is 8760 h, a month 730 h.",
        f"Utilization: monthly GPU-hours x 12 / (GPUs x 8760 h); at most "
        f"{percent(config.max_utilization, 0)} after the hours lost to failures.",
        "Break-even utilization: where owning costs the cloud's price per GPU-hour; payback: "
        "when the cloud spend saved (less the running cost), discounted at the cost of "
        "capital, covers the upfront cost (resale left out).",
        band_note(answer),
    ]


def break_even_note(row: pd.Series, config: OnPremConfig) -> str:
    """Both break-even figures of one offer in words."""
    u = row["break_even_utilization"]
    if pd.isna(u):
        first = (
            f"owning is never cheaper: it would need more than "
            f"{percent(config.max_utilization, 0)} utilization"
        )
    else:
        first = f"owning is cheaper above {percent(u, 1)} utilization"
    m = row["break_even_months"]
    if pd.isna(m):
        second = "never pays back at this work"
    else:
        second = f"pays back in {months_text(m, config.lifetime_years)}"
    return f"{first}; {second}"


def worded_tco(answer: TcoAnswer) -> pd.DataFrame:
    """The answer's rows as written out (JSON, CSV, the app's download): with
    break_even_note and verdict_words per offer; an on-prem row without a source is
    'on-prem config'."""
    out = answer.rows.copy()
    bare = (out["option"] == "on-prem") & (out["price_source"].astype(str) == "")
    out.loc[bare, "price_source"] = "on-prem config"
    notes = [""] + [break_even_note(r, answer.config) for _, r in answer.cloud.iterrows()]
    out["break_even_note"] = notes
    out["verdict_words"] = [""] + [VERDICT_WORDS[Verdict(v)] for v in answer.cloud["verdict"]]
    return out
