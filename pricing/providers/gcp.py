"""GCP GPU offers from the Cloud Billing catalog and the Compute Engine API.

fetch_gcp is the only I/O (google-cloud-billing CloudCatalogClient and google-cloud-
compute MachineTypesClient / AcceleratorTypesClient, REST transport; credentials from
Application Default Credentials unless given) and returns the records as the APIs give
them (GcpPayload, REST JSON field names); parse_gcp turns them into offers:

- prices: Compute Engine SKUs (service 6F81-5844-456A) per region and pricing model
  (category.usageType: OnDemand, Preemptible = spot, Commit1Yr / Commit3Yr = committed
  use), per vCPU-hour and GiB-hour for each machine series and per GPU-hour for each
  GPU (pricing.aliases.GCP_SKU_COMPONENTS says which SKU prices what);
- shapes: machine types (vCPUs, memory, attached accelerators) and accelerator types
  (which GPUs each zone has, and how many fit) from the Compute API;
- a GPU machine's price = vCPUs x core rate + GiB x RAM rate + its GPUs x GPU rate
  (cloud.google.com/compute/vm-instance-pricing, /compute/gpus-pricing), composed by
  pricing.providers.composition, the same rule as for the SkyPilot extract.
GPU memory is not in these APIs and stays missing (the planner uses the spec table).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pricing.aliases import (
    GCP_ACCELERATOR_GPU,
    GCP_GPU_SERIES,
    GCP_N1_HOST_PREFIX,
    GCP_SKU_COMPONENTS,
    GCP_SKU_UNITS,
)
from pricing.catalog import PRICE_COLUMNS
from pricing.providers import http
from pricing.providers.common import (
    Fix,
    MalformedPayload,
    ParsedCatalog,
    api_catalog,
    fix,
    wide_prices,
)
from pricing.providers.composition import (
    compose_gpu_machines,
    n1_gpu_counts,
    n1_instance_name,
)
from pricing.providers.regions import DEFAULT_DEADLINES_S
from pricing.providers.regions import DEFAULT_REGIONS as PROVIDER_DEFAULT_REGIONS
from pricing.providers.retry import FetchError, RefreshClock, RetryPolicy, describe

# Page budget per list call; a page token seen before also ends it (a loop).
MAX_PAGES = 500
DEFAULT_REGIONS = PROVIDER_DEFAULT_REGIONS["gcp"]
COMPUTE_ENGINE_SERVICE = "services/6F81-5844-456A"
KIND_BY_USAGE_TYPE: dict[str, str] = {
    "OnDemand": "usd_per_hour",
    "Preemptible": "spot_usd_per_hour",
    "Commit1Yr": "reserved_1y_usd_per_hour",
    "Commit3Yr": "reserved_3y_usd_per_hour",
}
# "Spot Preemptible Nvidia L4 GPU running in Americas" -> label "Nvidia L4 GPU";
# "Commitment v1: A2 Cpu in Americas for 1 Year" -> label "A2 Cpu".
SKU_DESCRIPTION = re.compile(
    r"^(?:Commitment v1: )?(?:Spot Preemptible |Preemptible )?(?P<label>.+?)"
    r"(?: attached to Spot Preemptible VMs)?(?: running)? in (?P<where>.+?)"
    r"(?: for (?P<years>\d+) Years?)?$"
)
MACHINE_FILTER = (
    f"name eq '({'|'.join(s for s in GCP_GPU_SERIES if s != 'n1')})-.*|{GCP_N1_HOST_PREFIX}.*'"
)
SOURCE = (
    "GCP Cloud Billing catalog (Compute Engine SKUs) + Compute Engine machine and accelerator types"
)

Progress = Callable[[str], None]


@dataclass(frozen=True)
class GcpPayload:
    """What the GCP APIs returned (REST JSON field names: skuId, serviceRegions, ...)."""

    regions: tuple[str, ...]
    skus: list[dict[str, Any]]
    machine_types: list[dict[str, Any]]
    accelerator_types: list[dict[str, Any]]


# ---------------------------------------------------------------------------- fetch


def fetch_gcp(
    regions: Sequence[str] = DEFAULT_REGIONS,
    *,
    project: str | None = None,
    credentials: Any = None,
    billing_endpoint: str | None = None,
    compute_endpoint: str | None = None,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> GcpPayload:
    """Read Compute Engine SKUs, machine types and accelerator types for `regions`.

    Credentials default to Application Default Credentials; the project (needed by the
    Compute API) to `project`, $GOOGLE_CLOUD_PROJECT, then the credentials' project.
    Endpoints default to Google's. Pages come from the clients' pagers, each request
    retried by google-api-core's Retry (_sdk_retry); the whole fetch stops after
    retry.deadline_s seconds (checked between pages). Raises FetchError with what
    failed and what to do.
    """
    retry = retry or RetryPolicy(deadline_s=DEFAULT_DEADLINES_S["gcp"])
    say = progress or (lambda _message: None)
    billing_v1, compute_v1 = _client_modules()
    credentials, project = _credentials_and_project(credentials, project)

    def client(kind: Any, endpoint: str | None) -> Any:
        """A REST client of `kind` with the credentials, at `endpoint` if given."""
        options = {"api_endpoint": endpoint} if endpoint else None
        return kind(credentials=credentials, transport="rest", client_options=options)

    try:
        catalog = client(billing_v1.CloudCatalogClient, billing_endpoint)
        machines = client(compute_v1.MachineTypesClient, compute_endpoint)
        accelerators = client(compute_v1.AcceleratorTypesClient, compute_endpoint)
        lister = _Lister(retry, retry.refresh_clock(), say)
        pages = lister.pages(
            catalog.list_skus,
            {"parent": COMPUTE_ENGINE_SERVICE, "page_size": 5000},
            "Cloud Billing list_skus (Compute Engine)",
        )
        skus = [
            billing_v1.Sku.to_dict(sku, preserving_proto_field_name=False)
            for page in pages
            for sku in page.skus
        ]
        machine_types = lister.aggregated(
            machines.aggregated_list,
            {"project": project, "filter": MACHINE_FILTER, "max_results": 500},
            compute_v1.MachineTypesScopedList,
            "machineTypes",
            regions,
        )
        accelerator_types = lister.aggregated(
            accelerators.aggregated_list,
            {"project": project, "max_results": 500},
            compute_v1.AcceleratorTypesScopedList,
            "acceleratorTypes",
            regions,
        )
    except FetchError:
        raise
    except Exception as exc:
        raise FetchError(_explain(exc, project)) from exc
    return GcpPayload(tuple(regions), skus, machine_types, accelerator_types)


def _client_modules() -> tuple[Any, Any]:
    """google.cloud's billing_v1 and compute_v1; FetchError saying what to install."""
    try:
        from google.cloud import billing_v1, compute_v1
    except ImportError:
        raise FetchError(
            "google-cloud-billing and google-cloud-compute are not installed: "
            "pip install 'gpuplan[gcp]' to refresh GCP prices"
        ) from None
    return billing_v1, compute_v1


def _credentials_and_project(credentials: Any, project: str | None) -> tuple[Any, str]:
    """Given credentials, or Application Default Credentials, and the project to use."""
    default_project = None
    if credentials is None:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError

        try:
            credentials, default_project = google.auth.default(
                scopes=["https://www.googleapis.com/auth/cloud-platform"]
            )
        except DefaultCredentialsError as exc:
            raise FetchError(
                "no GCP credentials found: run `gcloud auth application-default login` or "
                "set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file "
                f"({describe(exc)})"
            ) from None
    project = project or os.environ.get("GOOGLE_CLOUD_PROJECT") or default_project
    if not project:
        raise FetchError(
            "no GCP project: pass --project or set GOOGLE_CLOUD_PROJECT (the Compute API "
            "lists machine types through a project)"
        )
    return credentials, project


def _retryable(exc: BaseException) -> bool:
    """429, 5xx and timeouts are worth another try; other errors are not."""
    import requests
    from google.api_core import exceptions as api

    retry_types = (
        api.TooManyRequests,
        api.ResourceExhausted,
        api.InternalServerError,
        api.BadGateway,
        api.ServiceUnavailable,
        api.GatewayTimeout,
        requests.exceptions.Timeout,
        requests.exceptions.ConnectionError,
    )
    return isinstance(exc, retry_types)


def _explain(exc: BaseException, project: str) -> str:
    """A FetchError message for a google-cloud error that is not worth retrying."""
    from google.api_core import exceptions as api
    from google.protobuf.json_format import ParseError

    if isinstance(exc, api.Unauthenticated):
        return (
            f"GCP rejected the credentials ({exc.message}); run "
            "`gcloud auth application-default login`"
        )
    if isinstance(exc, api.PermissionDenied | api.Forbidden):
        return (
            f"GCP denied the request for project {project!r} ({exc.message}); enable the "
            "Cloud Billing and Compute Engine APIs and allow compute.machineTypes.list and "
            "compute.acceleratorTypes.list"
        )
    if isinstance(exc, api.RetryError):
        return (
            f"a GCP list call was still failing when its retry deadline passed "
            f"({describe(exc.cause or exc)}); try again later"
        )
    if isinstance(exc, ParseError):
        return f"a GCP API page is not the JSON the API documents ({describe(exc)})"
    if isinstance(exc, api.GoogleAPICallError):
        return f"GCP API error: {describe(exc)}"
    return f"GCP request failed: {describe(exc)}"


class _Tries:
    """google-api-core's Retry has a deadline but no try count: this on_error callback
    counts the failed tries of one page and stops the Retry after `attempts` of them."""

    def __init__(self, attempts: int, what: str) -> None:
        self.attempts = attempts
        self.what = what
        self.page = 1
        self.failed = 0

    def start(self, page: int) -> None:
        """A new page: its tries start from zero."""
        self.page, self.failed = page, 0

    def __call__(self, exc: Exception) -> None:
        self.failed += 1
        if self.failed >= self.attempts:
            raise FetchError(
                f"{self.what}, page {self.page}: still failing after {self.attempts} tries "
                f"({describe(exc)}); try again later"
            ) from exc


def _sdk_retry(retry: RetryPolicy, tries: _Tries) -> Any:
    """google-api-core's Retry for one list call and its pages: _retryable errors, waits
    drawn uniformly below base_delay_s x 2**n (capped at max_delay_s; the library's
    truncated exponential backoff with jitter), at most retry.attempts tries per page
    (tries), and no page retried past retry.deadline_s (the whole refresh's deadline)."""
    from google.api_core.retry import Retry

    return Retry(
        predicate=_retryable,
        initial=retry.base_delay_s,
        maximum=retry.max_delay_s,
        multiplier=2.0,
        timeout=retry.deadline_s,
        on_error=tries,
    )


def _pages(
    first_page: Callable[[], Any], tries: _Tries, clock: RefreshClock, say: Progress
) -> Iterable[Any]:
    """Each page of a list call, from the client's pager (its Retry on every page).

    At most MAX_PAGES pages; a page token seen before ends the fetch (a loop), and so
    does the refresh's deadline, both checked before the pager asks for the next page.
    """
    budget = http.Pages(tries.what, MAX_PAGES)
    budget.follow("<first page>")
    clock.check(f"{tries.what}, page 1")
    pages = iter(first_page().pages)
    page = 1
    while True:
        try:
            response = next(pages)
        except StopIteration:
            return
        say(f"gcp: {tries.what} page {page}")
        yield response
        token = response.next_page_token
        if not token:
            return
        page = budget.follow(token)
        clock.check(f"{tries.what}, page {page}")
        tries.start(page)


@dataclass(frozen=True)
class _Lister:
    """The list calls of one refresh: each page retried by google-api-core's Retry
    (_sdk_retry, at most retry.attempts tries, retry.timeout_s per request), all of them
    within the refresh's deadline (`clock`), each page said to `say`."""

    retry: RetryPolicy
    clock: RefreshClock
    say: Progress

    def pages(self, call: Callable[..., Any], request: dict[str, Any], what: str) -> Iterable[Any]:
        """Each page of `call(request=...)` (a client's list method), named `what`."""
        tries = _Tries(self.retry.attempts, what)

        def first_page() -> Any:
            retry = _sdk_retry(self.retry, tries)
            return call(request=request, retry=retry, timeout=self.retry.timeout_s)

        return _pages(first_page, tries, self.clock, self.say)

    def aggregated(
        self,
        call: Callable[..., Any],
        request: dict[str, Any],
        scoped_list: Any,
        field_name: str,
        regions: Sequence[str],
    ) -> list[dict[str, Any]]:
        """The `field_name` records in `regions` of every page of an aggregatedList call
        (REST JSON field names), named 'Compute <field_name>.aggregatedList'."""
        what = f"Compute {field_name}.aggregatedList"
        records: list[dict[str, Any]] = []
        for page in self.pages(call, request, what):
            items = {
                str(scope): scoped_list.to_dict(scoped, preserving_proto_field_name=False)
                for scope, scoped in page.items.items()
            }
            records += flatten_aggregated(items, field_name, regions)
        return records


def flatten_aggregated(
    items: dict[str, Any], field_name: str, regions: Sequence[str]
) -> list[dict[str, Any]]:
    """Records of an aggregatedList page's `items` ({"zones/Z": {field: [...]}}) in `regions`.

    Each record gets `zone` set to the zone name of its scope; scopes with only a warning
    (NO_RESULTS_ON_PAGE) contribute nothing.
    """
    records: list[dict[str, Any]] = []
    for scope, scoped in items.items():
        zone = scope.rsplit("/", 1)[-1]
        if zone.rsplit("-", 1)[0] not in regions:
            continue
        for record in scoped.get(field_name) or []:
            records.append({**record, "zone": zone})
    return records


# ---------------------------------------------------------------------------- parse


def parse_gcp(payload: GcpPayload, priced_at: str) -> ParsedCatalog:
    """Offers (on-demand, spot, committed use) and fixes from GCP's API records."""
    fixes: list[Fix] = []
    rates = sku_rates(payload.skus, payload.regions, fixes)
    machines = machine_rows(payload.machine_types)
    host_prices = _host_prices(machines, rates)
    attachments = attachment_rows(machines, payload.accelerator_types)
    gpus = _gpu_prices(attachments, rates)
    composed = compose_gpu_machines(
        host_prices,
        attachments.drop_duplicates(
            ["host_type", "accelerator", "gpu_count", "instance_type"]
        ).drop(columns=["zone", "region"]),
        gpus,
    )
    available = attachments.loc[:, ["region", "instance_type"]].drop_duplicates()
    offers = composed.merge(available, on=["region", "instance_type"], how="inner")
    unpriced = available.merge(
        offers.loc[:, ["region", "instance_type"]], how="left", indicator=True
    ).query("_merge == 'left_only'")
    for row in unpriced.itertuples():
        fixes.append(
            fix(
                "gcp",
                str(row.region),
                str(row.instance_type),
                "usd_per_hour",
                "dropped",
                "no host or GPU SKU for this region in the Cloud Billing catalog",
            )
        )
    return api_catalog(offers, "gcp", SOURCE, priced_at, fixes)


def _unit_price_usd(sku: dict[str, Any], fixes: list[Fix], component: str) -> float | None:
    """USD per unit of a SKU's current price (first tier), None if not usable."""
    info = sku["pricingInfo"][0]["pricingExpression"]
    unit = info.get("usageUnit", "")
    if unit != GCP_SKU_UNITS[component]:
        fixes.append(
            fix(
                "gcp",
                "*",
                sku["description"],
                "",
                "ignored SKU",
                f"priced per {unit!r}, expected {GCP_SKU_UNITS[component]!r}",
            )
        )
        return None
    rate = info["tieredRates"][0]["unitPrice"]
    if rate.get("currencyCode", "USD") != "USD":
        fixes.append(fix("gcp", "*", sku["description"], "", "ignored SKU", "not priced in USD"))
        return None
    return int(rate.get("units") or 0) + int(rate.get("nanos") or 0) / 1e9


def sku_rates(
    skus: Iterable[dict[str, Any]], regions: Sequence[str], fixes: list[Fix]
) -> pd.DataFrame:
    """Per region and pricing kind, the USD rate of each component SKU.

    Columns: component ("core", "ram", "gpu"), key (machine series or accelerator type),
    region, kind (a PRICE_COLUMNS name), usd. Zero rates are placeholders and two SKUs
    pricing the same thing differently are ambiguous: both set missing, on record.
    """
    rows = []
    for sku in skus:
        try:
            kind = KIND_BY_USAGE_TYPE.get(sku["category"]["usageType"])
            match = SKU_DESCRIPTION.match(sku["description"])
            if kind is None or match is None:
                continue
            component = GCP_SKU_COMPONENTS.get(match["label"])
            if component is None:
                continue
            usd = _unit_price_usd(sku, fixes, component[0])
            if usd is None:
                continue
            for region in sku.get("serviceRegions", []):
                if region in regions:
                    rows.append((component[0], component[1], region, kind, usd))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise MalformedPayload(
                f"Cloud Billing SKU {sku.get('skuId', '?') if isinstance(sku, dict) else '?'} "
                f"is not in the documented shape ({describe(exc)})"
            ) from None
    frame = pd.DataFrame(rows, columns=["component", "key", "region", "kind", "usd"])
    frame = frame.drop_duplicates()
    keys = ["component", "key", "region", "kind"]
    ambiguous = frame.duplicated(keys, keep=False)
    zero = frame["usd"] <= 0
    for row in frame.loc[ambiguous | zero].drop_duplicates(keys).itertuples():
        fixes.append(
            fix(
                "gcp",
                str(row.region),
                f"{row.component} {row.key}",
                str(row.kind),
                "set missing",
                "placeholder price 0" if row.usd <= 0 else "two SKUs price it differently",
            )
        )
    frame.loc[ambiguous | zero, "usd"] = np.nan
    return frame.drop_duplicates(keys).reset_index(drop=True)


def machine_rows(machine_types: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """Machine types of the GPU series, one row per zone: host_type, zone, region, series,
    vcpus, memory_gib, accelerators (list of (type, count))."""
    rows = []
    for record in machine_types:
        try:
            name = str(record["name"])
            series = name.split("-", 1)[0]
            if series not in GCP_GPU_SERIES or (
                series == "n1" and not name.startswith(GCP_N1_HOST_PREFIX)
            ):
                continue
            zone = str(record["zone"]).rsplit("/", 1)[-1]
            rows.append(
                {
                    "host_type": name,
                    "zone": zone,
                    "region": zone.rsplit("-", 1)[0],
                    "series": series,
                    "vcpus": float(record["guestCpus"]),
                    "memory_gib": float(record["memoryMb"]) / 1024,
                    "accelerators": [
                        (
                            str(a["guestAcceleratorType"]),
                            int(a["guestAcceleratorCount"]),
                        )
                        for a in record.get("accelerators", [])
                    ],
                }
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedPayload(
                f"Compute machine type {record.get('name', '?')} lacks guestCpus/memoryMb/zone "
                f"({describe(exc)})"
            ) from None
    columns = ["host_type", "zone", "region", "series", "vcpus", "memory_gib", "accelerators"]
    return pd.DataFrame(rows, columns=columns)


def attachment_rows(machines: pd.DataFrame, accelerator_types: Iterable[dict]) -> pd.DataFrame:
    """GPU machines per zone: host_type, zone, region, accelerator, gpu_count, instance_type.

    A2/A3/A4/G2 machine types carry their GPUs (the API's `accelerators`); N1 hosts take
    the zone's T4, V100 or P100 in the counts their vCPUs allow.
    """
    fixed = machines.loc[
        machines["accelerators"].str.len() > 0, ["host_type", "zone", "region", "accelerators"]
    ]
    fixed = fixed.explode("accelerators")
    fixed["accelerator"] = fixed["accelerators"].str[0]
    fixed["gpu_count"] = fixed["accelerators"].str[1].astype(int)
    fixed["instance_type"] = fixed["host_type"]
    zone_gpus = pd.DataFrame(
        [
            {
                "zone": str(a.get("zone", "")).rsplit("/", 1)[-1],
                "accelerator": str(a.get("name", "")),
                "max_cards": float(a.get("maximumCardsPerInstance") or 0),
            }
            for a in accelerator_types
        ],
        columns=["zone", "accelerator", "max_cards"],
    )
    n1 = machines.loc[machines["series"] == "n1", ["host_type", "zone", "region", "vcpus"]]
    pairs = n1.merge(zone_gpus, on="zone")
    combos = [
        (
            p.host_type,
            p.zone,
            p.region,
            p.accelerator,
            n,
            n1_instance_name(p.host_type, n, p.accelerator),
        )
        for p in pairs.itertuples()
        for n in n1_gpu_counts(GCP_ACCELERATOR_GPU.get(p.accelerator, ""), p.vcpus, p.max_cards)
    ]
    columns = ["host_type", "zone", "region", "accelerator", "gpu_count", "instance_type"]
    n1_rows = pd.DataFrame(combos, columns=columns)
    return pd.concat([fixed.loc[:, columns], n1_rows], ignore_index=True)


def _wide(rates: pd.DataFrame, component: str) -> pd.DataFrame:
    """(key, region) x PRICE_COLUMNS table of one component's rates."""
    return wide_prices(rates.loc[rates["component"] == component], ["key", "region"])


def _host_prices(machines: pd.DataFrame, rates: pd.DataFrame) -> pd.DataFrame:
    """Per (host_type, region): vcpus, memory_gib and the host's USD/h per pricing kind."""
    hosts = machines.drop_duplicates(["host_type", "region"]).loc[
        :, ["host_type", "region", "series", "vcpus", "memory_gib"]
    ]
    core = _wide(rates, "core").rename(columns={"key": "series"})
    ram = _wide(rates, "ram").rename(columns={"key": "series"})
    priced = hosts.merge(core, on=["series", "region"], how="left").merge(
        ram, on=["series", "region"], how="left", suffixes=("_core", "_ram")
    )
    for column in PRICE_COLUMNS:
        priced[column] = (
            priced["vcpus"] * priced[f"{column}_core"]
            + priced["memory_gib"] * priced[f"{column}_ram"]
        )
    return priced.loc[:, ["host_type", "region", "vcpus", "memory_gib", *PRICE_COLUMNS]]


def _gpu_prices(attachments: pd.DataFrame, rates: pd.DataFrame) -> pd.DataFrame:
    """Per (accelerator, gpu_count, region): that many GPUs' USD/h per pricing kind."""
    counts = attachments.loc[:, ["accelerator", "gpu_count"]].drop_duplicates()
    per_gpu = _wide(rates, "gpu").rename(columns={"key": "accelerator"})
    gpus = counts.merge(per_gpu, on="accelerator")
    for column in PRICE_COLUMNS:
        gpus[column] = gpus[column] * gpus["gpu_count"]
    return gpus
