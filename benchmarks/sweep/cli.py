"""`gpuplan sweep`: plan, run, status, resume, cleanup, list and export benchmark sweeps.

`make_app(data)` builds the command group; `data()` returns the prices and expected
throughput (SweepData) for previews. planner.cli.main mounts it with the planner's catalog
and throughput model, so this package never imports the planner or pricing.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from benchmarks.sweep import lock as sweep_lock
from benchmarks.sweep import state as st
from benchmarks.sweep.preview import NoData, SweepData, SweepPreview, preview_sweep
from benchmarks.sweep.spec import SpecError, SweepSpec, check_cloud_targets, load_spec, parse_spec
from edge.console import abort, text_console
from edge.format import money

if TYPE_CHECKING:
    from benchmarks.runners.cleanup import CleanupReport

FORMATS = ("table", "json")


def _money(value: float | None) -> str:
    """Dollars to the cent (edge.format.money), "-" when unknown."""
    return "-" if value is None else money(value, cents=True)


def preview_table(preview: SweepPreview, width: int) -> RenderableType:
    """One row per target, then the totals against max_usd, fitting `width`
    (benchmarks.tables.PREVIEW_COLUMNS: the least needed columns left out first)."""
    from benchmarks.tables import PREVIEW_COLUMNS, PREVIEW_TITLE, SWEEP_MORE, preview_frame
    from edge.tables import fit_table

    frame = preview_frame(preview)
    return fit_table(frame, PREVIEW_COLUMNS, width, PREVIEW_TITLE, more=SWEEP_MORE)


def _indented(text: str, width: int, style_head: str = "") -> Text:
    """`text` indented two spaces, wrapped at words to `width` (further lines four);
    `style_head` styles the text's first word ("note:")."""
    from edge.tables import cut

    lines = textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ",
                          break_long_words=False, break_on_hyphens=False)  # fmt: skip
    out = Text("\n".join(cut(line, width) for line in lines))
    if style_head and lines:
        head = len(text.split(" ", 1)[0])
        out.stylize(style_head, 2, 2 + head)
    return out


def print_preview(preview: SweepPreview, console: Console) -> None:
    """The preview table, each run's expected minutes and where they came from, each
    target's notes and price source, and the worst case against max_usd, wrapped at words
    to the console's width. Where the table leaves the price date out, the price line
    says it."""
    from benchmarks.tables import PREVIEW_COLUMNS, date_label, preview_frame
    from edge.tables import left_out_columns

    width = console.width
    console.print(preview_table(preview, width))
    dated = "priced_at" in left_out_columns(preview_frame(preview), PREVIEW_COLUMNS, width)
    for t in preview.targets:
        for run in t.runs:
            console.print(
                _indented(f"{t.label} {run.key}: {run.minutes:.1f} min ({run.how})", width)
            )
        for note in t.notes:
            console.print(_indented(f"note: {t.label}: {note}", width, "yellow"))
        if t.usd_per_hour is not None and t.priced_at:
            when = f" ({date_label(t.priced_at, t.price_date_basis)})" if dated else ""
            console.print(_indented(f"{t.label} price{when}: {t.price_source}", width))
    verdict = "within" if preview.within_cap else "OVER"
    console.print(
        Text(
            f"worst case {_money(preview.worst_usd)} (expected {_money(preview.expected_usd)}) "
            f"is {verdict} max_usd {_money(preview.max_usd)}; every cloud machine ends itself "
            f"after {preview.max_minutes_per_target:g} min (its dead-man switch)"
        )
    )


def preview_json(preview: SweepPreview) -> dict[str, Any]:
    import dataclasses

    out = dataclasses.asdict(preview)
    out["within_cap"] = preview.within_cap
    return out


def _load(spec_path: Path, data: SweepData) -> tuple[SweepSpec, SweepPreview]:
    try:
        spec = load_spec(spec_path)
        check_cloud_targets(spec, data.known_instances)
    except SpecError as exc:
        abort(str(exc))
    return spec, preview_sweep(spec, data)


def _refuse_over_cap(preview: SweepPreview) -> None:
    if preview.problems:
        abort("; ".join(preview.problems) + " (add the price, or drop the target)")
    if not preview.within_cap:
        per_target = ", ".join(
            f"{t.label} {_money(t.worst_usd)}" for t in preview.targets if t.worst_usd
        )
        abort(
            f"worst case {_money(preview.worst_usd)} ({per_target}) exceeds limits.max_usd "
            f"{_money(preview.max_usd)}: raise max_usd, lower max_minutes_per_target, or drop "
            "targets; nothing was started"
        )


def _refuse_resume_over_cap(data: dict[str, Any], preview: SweepPreview) -> None:
    """`resume` as `run`: a target left to run with an unknown price, or spent + the worst
    case of what is left over max_usd, is refused before anything starts."""
    left = [
        (t, p) for t, p in zip(data["targets"], preview.targets, strict=True)
        if t["state"] != st.DONE
    ]  # fmt: skip
    unpriced = [p.label for _, p in left if p.worst_usd is None]
    if unpriced:
        abort(
            f"not resumed: no price for {', '.join(unpriced)} in the catalog now, so the worst "
            "case cannot be bounded (refresh prices, or drop the target); nothing was started"
        )
    spent = sum(st.spend_usd(t) for t in data["targets"])
    worst = sum(p.worst_usd or 0.0 for _, p in left)
    if spent + worst > preview.max_usd + 1e-9:
        abort(
            f"not resumed: {_money(spent)} already spent + worst case {_money(worst)} of what "
            f"is left exceeds limits.max_usd {_money(preview.max_usd)}; nothing was started"
        )


def status_table(
    data: dict[str, Any], live_line: dict[int, str] | None = None, width: int | None = None
) -> RenderableType:
    """target, state, elapsed, dollars so far, and why a target failed (its first line and
    its failing step's last lines, remote_output.why_lines) or its last output line,
    fitting `width` (default: the terminal's), the reason wrapped at words."""
    from benchmarks.tables import STATUS_COLUMNS, SWEEP_MORE, status_frame
    from edge.tables import console_width, fit_table

    title = f"sweep {data['id']} ({data.get('status')})"
    frame = status_frame(data, live_line)
    return fit_table(frame, STATUS_COLUMNS, width or console_width(), title, more=SWEEP_MORE)


def _execute(
    spec: SweepSpec, preview: SweepPreview, state: st.StateFile, results_dir: Path,
    ssh_options: list[str] | None,
) -> int:  # fmt: skip
    from benchmarks.sweep.orchestrate import SweepRun

    console = text_console(stderr=True)
    sweep = SweepRun(spec, state, preview, results_dir, ssh_options=ssh_options)
    sweep.on_notice = lambda text: console.print(f"[yellow]{escape(text)}[/]", highlight=False)
    if console.is_terminal:
        live = Live(
            get_renderable=lambda: Group(
                status_table(state.data, sweep.live_line, console.width)
            ),
            console=console, refresh_per_second=2,
        )  # fmt: skip
        with live:
            code = sweep.run()
    else:

        def event(index: int, text: str) -> None:
            label = state.target(index)["label"]
            console.print(f"{escape(label)}: {escape(text)}", highlight=False)

        sweep.on_event = event
        code = sweep.run()
    console.print(status_table(state.data, width=console.width))
    spent = sum(st.spend_usd(t) for t in state.data["targets"])
    console.print(
        f"sweep {state.data['id']}: {state.data['status']}; spent about {_money(spent)}; "
        f"results in {results_dir / state.data['id']}; state {state.path}",
        highlight=False,
    )
    _print_teardown(sweep, console, interrupted=code == 130)
    return code


def _print_teardown(sweep: Any, console: Console, interrupted: bool) -> None:
    """What the teardown confirmed, never more: the machines confirmed gone, and every
    machine that may still run with the cleanup command."""
    from benchmarks.sweep import teardown as td

    gone = sorted(str(o.machine) for o in sweep.outcomes.values() if o.status == td.CONFIRMED)
    left = sweep.still_running()
    if interrupted:
        confirmed = f"{len(gone)} machine(s) confirmed terminated" if gone else "no cloud machine"
        console.print(f"interrupted: {confirmed}" + (f" ({', '.join(gone)})" if gone else ""),
                      highlight=False)  # fmt: skip
    if left:
        console.print(
            f"[bold red]may still be running:[/] {escape(', '.join(left))}; run "
            f"`gpuplan sweep cleanup {sweep.sweep_id}` to find and terminate them",
            highlight=False,
        )


SpecPath = Annotated[Path, typer.Argument(help="sweep spec (TOML)")]
SweepFormat = Annotated[str, typer.Option("--format", help="table | json")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="start without asking")]


def make_app(
    data_factory: Callable[[], SweepData] = NoData,
    spec_file: Callable[[str], str] = str,
) -> typer.Typer:
    """The `gpuplan sweep` command group, previews priced by `data_factory()`; `spec_file`
    turns a spec argument into the file to read (a shipped example's name into its path)."""
    app = typer.Typer(
        help="Benchmark sweeps on SSH servers and cloud instances: preview, run, clean up.",
        no_args_is_help=True,
    )
    priced = PricedCommands(data_factory, spec_file)
    app.command("plan")(priced.plan)
    app.command("run")(priced.run)
    app.command("resume")(priced.resume)
    app.command("status")(priced.status)
    app.command("list")(list_sweeps)
    app.command("cleanup")(cleanup)
    app.command("export")(priced.export)
    return app


class PricedCommands:
    """The commands that price a preview (plan, run, resume), with prices and expected
    throughput from `data_factory()`, called when a command needs them."""

    def __init__(
        self, data_factory: Callable[[], SweepData], spec_file: Callable[[str], str] = str
    ) -> None:
        self.data_factory = data_factory
        self.spec_file = spec_file

    def _spec(self, spec_path: Path) -> Path:
        """The spec file an argument names (spec_file: a shipped example's path)."""
        try:
            return Path(self.spec_file(str(spec_path)))
        except ValueError as exc:
            abort(str(exc))

    def export(
        self,
        spec_path: SpecPath,
        skypilot: Annotated[Path, typer.Option("--skypilot", help="folder for task YAML files")],
    ) -> None:
        """One SkyPilot task YAML per cloud target, running the same benchmarks, and the
        gpuplan wheel they install (no package index needs to carry gpuplan)."""
        export(self._spec(spec_path), skypilot)

    def status(
        self,
        sweep_id: Annotated[
            str | None, typer.Argument(help="sweep id (default: the latest)")
        ] = None,
        fmt: SweepFormat = "table",
    ) -> None:
        """Each target's state, elapsed time and dollars so far, and each result's measured
        figure beside what gpuplan predicts for it without it."""
        status(sweep_id, fmt, self.data_factory)

    def plan(self, spec_path: SpecPath, fmt: SweepFormat = "table") -> None:
        """Dry run: each target's expected minutes and dollars, and the total against max_usd."""
        if fmt not in FORMATS:
            abort(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
        _, preview = _load(self._spec(spec_path), self.data_factory())
        if fmt == "json":
            print(json.dumps(preview_json(preview), indent=2))
        else:
            print_preview(preview, text_console())
        if preview.problems:
            abort("; ".join(preview.problems), 1)

    def run(
        self,
        spec_path: SpecPath,
        yes: Yes = False,
        results: Annotated[
            Path | None,
            typer.Option(
                "--results", help="results folder (default $GPUPLAN_RESULTS_DIR or ./results)"
            ),
        ] = None,
        ssh_option: Annotated[
            list[str] | None,
            typer.Option("--ssh-option", help="extra ssh option, e.g. UserKnownHostsFile=/tmp/kh"),
        ] = None,
    ) -> None:
        """Preview, ask, then run every target; results go into the results folder."""
        from benchmarks.folders import default_results_dir

        spec_path = self._spec(spec_path)
        spec, preview = _load(spec_path, self.data_factory())
        print_preview(preview, text_console())
        _refuse_over_cap(preview)
        _confirm(yes, "start this sweep?", "not started")
        results_dir = (results or default_results_dir()).resolve()
        sweep_id = st.new_sweep_id(spec.name)
        with _lock(sweep_id, "run"):
            state = _new_state(sweep_id, spec, spec_path, preview, results_dir)
            code = _execute(spec, preview, state, results_dir, _ssh_options(ssh_option))
        raise typer.Exit(code)

    def resume(
        self,
        sweep_id: Annotated[str, typer.Argument(help="sweep id (see `gpuplan sweep list`)")],
        yes: Yes = False,
        ssh_option: Annotated[list[str] | None, typer.Option("--ssh-option")] = None,
        takeover: Annotated[
            bool,
            typer.Option(
                "--takeover",
                help="continue a sweep whose controller is gone (killed or crashed); "
                "never one whose controller still runs",
            ),
        ] = False,
    ) -> None:
        """Run again only what did not finish (runs already collected are kept), under the
        same checks as `run`: every price known, and what was spent plus the worst case of
        what is left within max_usd. Refused while another controller runs the sweep."""
        sid = _state(sweep_id).data["id"]
        with _lock(sid, "resume", takeover=takeover) as held:
            self._resume(sid, yes, ssh_option, held)

    def _resume(
        self, sweep_id: str, yes: bool, ssh_option: list[str] | None,
        held: sweep_lock.ControllerLock,
    ) -> None:  # fmt: skip
        """`resume` under the sweep's lock: the state read again now that no other
        controller can write it."""
        from benchmarks.sweep.orchestrate import SweepRun

        state = _state(sweep_id)
        if held.previous is not None:
            text_console(stderr=True).print(
                f"taking over from {held.previous.describe()}, which is gone", highlight=False
            )
        spec = _saved_spec(state)
        data = self.data_factory()
        try:
            check_cloud_targets(spec, data.known_instances)
        except SpecError as exc:
            abort(f"not resumed: {exc}")
        preview = preview_sweep(spec, data)
        print_preview(preview, text_console())
        _refuse_resume_over_cap(state.data, preview)
        _confirm(yes, "resume this sweep?", "not resumed")
        results_dir = Path(state.data["results_dir"])
        _end_leftovers(SweepRun(spec, state, preview, results_dir), text_console(stderr=True))
        _reset_unfinished(state, preview)
        raise typer.Exit(_execute(spec, preview, state, results_dir, _ssh_options(ssh_option)))


def status(
    sweep_id: Annotated[str | None, typer.Argument(help="sweep id (default: the latest)")] = None,
    fmt: SweepFormat = "table",
    data_factory: Callable[[], SweepData] = NoData,
) -> None:
    """Each target's state, elapsed time and dollars so far, and each result's measured
    figure beside what gpuplan predicts for it without it."""
    seen = sweep_lock.as_seen(_state(sweep_id).data)
    checked = _predicted_vs_measured(seen, data_factory)
    if fmt == "json":
        print(json.dumps({**seen, "predicted_vs_measured": checked}, indent=2))
        return
    from benchmarks.tables import checked_table
    from edge.tables import wrap_words

    console = text_console()
    console.print(status_table(seen, width=console.width))
    if seen.get("controller_gone"):
        gone = f"{seen['controller_gone']}; `gpuplan sweep resume {seen['id']} --takeover` "
        gone += f"continues it, `gpuplan sweep cleanup {seen['id']}` ends its machines"
        console.print(Text("\n".join(wrap_words(gone, console.width))))
    for t in seen["targets"]:
        for key, r in t["runs"].items():
            if r.get("error"):
                console.print(Text("\n".join(wrap_words(f"{t['label']} {key}: {r['error']}",
                                                          console.width))))  # fmt: skip
    if checked:
        console.print(checked_table(checked, console.width))


def _predicted_vs_measured(
    data: dict[str, Any], data_factory: Callable[[], SweepData]
) -> list[dict[str, str]]:
    """The sweep's results (in its folder under the results folder) predicted without
    each, by `data_factory()` (the planner); [] when the sweep has none."""
    ids = [i for t in data["targets"] for r in t["runs"].values() for i in r["result_ids"]]
    folder = Path(str(data.get("results_dir", ""))) / str(data["id"])
    if not ids or not folder.is_dir():
        return []
    return data_factory().predicted_vs_measured(folder, ids)


def list_sweeps() -> None:
    """Every sweep with a state file: id, status, when created, targets done, results and
    dollars spent; ids are never cut (other commands take them)."""
    from benchmarks.tables import print_cells

    rows = []
    for path in st.list_state_paths():
        try:
            data = sweep_lock.as_seen(st.load_state(str(path)).data)
        except st.StateError as exc:
            text_console(stderr=True).print(f"[yellow]skipped:[/] {escape(str(exc))}")
            continue
        targets = data["targets"]
        done = sum(1 for t in targets if t["state"] == st.DONE)
        results = sum(len(r["result_ids"]) for t in targets for r in t["runs"].values())
        spent = sum(st.spend_usd(t, sweep_lock.as_of(data)) for t in targets)
        created = str(data.get("created_at", "")).replace("T", " ")[:16]  # to the minute
        rows.append([data["id"], str(data.get("status")), created, f"{done}/{len(targets)}",
                     str(results), _money(spent)])  # fmt: skip
    if not rows:
        text_console().print(f"no sweeps yet in {escape(str(st.sweeps_dir()))}", highlight=False)
        return
    headers = ["id", "status", "created (UTC)", "targets done", "results", "spent"]
    print_cells(
        headers, rows, f"sweeps in {st.sweeps_dir()}", optional=("results", "created (UTC)")
    )


def cleanup(
    sweep_id: Annotated[str | None, typer.Argument(help="sweep id (default: every sweep)")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="only list what would go")] = False,
) -> None:
    """Terminate every machine gpuplan launched (by tag/label) still running. Refused
    while a controller runs the sweep (it would end machines in use); a sweep whose
    controller is gone is cleaned up."""
    import contextlib

    states = _cleanup_states(sweep_id)
    with contextlib.ExitStack() as held:
        if not dry_run:
            if sweep_id is not None:
                for data in states:
                    held.enter_context(_lock(data["id"], "cleanup", stale_ok=True))
            else:
                _refuse_live(states)
        _cleanup(states, sweep_id, dry_run)


def _refuse_live(states: list[dict[str, Any]]) -> None:
    """`cleanup` of every sweep ends every tagged machine: refused while any sweep has a
    live controller, naming it (cleanup of one sweep by id still works)."""
    live = []
    for data in states:
        lock = sweep_lock.holder(str(data["id"]))
        if lock.held:
            who = lock.holder.describe() if lock.holder else "another process"
            live.append(f"{data['id']} (run by {who})")
    if live:
        abort(
            f"not cleaned up: {'; '.join(live)} still runs and its machines are in use; "
            "clean up other sweeps by id (`gpuplan sweep cleanup ID`)",
            1,
        )


def _cleanup(states: list[dict[str, Any]], sweep_id: str | None, dry_run: bool) -> None:
    from benchmarks.sweep.orchestrate import cleanup as do_cleanup
    from benchmarks.sweep.orchestrate import cleanup_regions

    regions = cleanup_regions(states)
    console = text_console()
    if not regions:
        console.print("no cloud machines were launched by these sweeps; nothing to clean up")
        return
    from benchmarks.sweep.cleanup_report import DOWN, UNCHECKED, UP, verdicts

    reports = do_cleanup(regions, sweep_id, dry_run)
    found = verdicts(states, reports, dry_run)
    _print_cleanup(reports, regions, dry_run, console, found)
    unchecked = [v for v in found if v.verdict == UNCHECKED]
    up = [v for v in found if v.verdict == UP and not dry_run]
    searched = [r for r in reports if r.error]
    if found:
        counts = [f"{sum(v.verdict == k for v in found)} {k}" for k in (DOWN, UP, UNCHECKED)]
        console.print(f"recorded machines: {', '.join(counts)}", highlight=False)
    if unchecked or up or searched or any(report.failed for report in reports):
        if unchecked or searched:
            console.print(
                "exit 1: some machines could not be checked; they may still run (and bill) "
                "until their dead-man switch", highlight=False,
            )  # fmt: skip
        raise typer.Exit(1)


def export(
    spec_path: SpecPath,
    skypilot: Annotated[Path, typer.Option("--skypilot", help="folder for task YAML files")],
) -> None:
    """One SkyPilot task YAML per cloud target, running the same benchmarks, and the
    gpuplan wheel they install (no package index needs to carry gpuplan)."""
    from benchmarks.runners.ship import ShipError
    from benchmarks.sweep.skypilot import write_tasks

    try:
        spec = load_spec(spec_path)
        paths = write_tasks(spec, skypilot)
    except (SpecError, ShipError) as exc:
        abort(str(exc))
    for path in paths:
        print(path)


def _confirm(yes: bool, question: str, refusal: str) -> None:
    """Go on with --yes, or when the user at the terminal answers yes; otherwise exit with
    `refusal` (2 when not at a terminal, 1 when the answer is no)."""
    if yes:
        return
    if not sys.stdin.isatty():
        abort(f"{refusal}: confirm with --yes when not at a terminal")
    if not typer.confirm(question, default=False):
        abort(refusal, 1)


def _new_state(
    sweep_id: str, spec: SweepSpec, spec_path: Path, preview: SweepPreview, results_dir: Path
) -> st.StateFile:
    """A new sweep's state file, saved before anything starts: every target pending at
    the price its preview found."""
    prices = [t.usd_per_hour for t in preview.targets]
    state = st.StateFile(st.new_state(
        sweep_id, str(spec_path.resolve()), spec.raw, str(results_dir),
        [t.label for t in spec.targets], [r.key for r in spec.runs], prices,
    ))  # fmt: skip
    state.save()
    return state


def _saved_spec(state: st.StateFile) -> SweepSpec:
    """The spec a sweep was started with, as its state file keeps it; exit 2 when it no
    longer validates."""
    try:
        return parse_spec(state.data["spec"], state.data.get("spec_path", "<state>"))
    except SpecError as exc:
        abort(f"the sweep's saved spec no longer validates: {exc}")


def _reset_unfinished(state: st.StateFile, preview: SweepPreview) -> None:
    """Every target and run not done set pending again (what a target spent so far kept
    in spent_before_usd, its price the preview's), and the state saved."""
    for t, p in zip(state.data["targets"], preview.targets, strict=True):
        if t["state"] != st.DONE:
            t["spent_before_usd"] = st.spend_usd(t)
            t.update(state=st.PENDING, detail="", reason=None, launched_at=None,
                     terminated_at=None, usd_per_hour=p.usd_per_hour)  # fmt: skip
            for r in t["runs"].values():
                if r["status"] != st.DONE:
                    r.update(status=st.PENDING, error=None)
    state.save()


def _cleanup_states(sweep_id: str | None) -> list[dict[str, Any]]:
    """The state of the sweep named, or of every sweep whose state file still reads."""
    if sweep_id is not None:
        return [_state(sweep_id).data] if sweep_id else []
    states = []
    for path in st.list_state_paths():
        try:
            states.append(st.load_state(str(path)).data)
        except st.StateError:
            continue
    return states


def _print_cleanup(
    reports: list[CleanupReport], regions: dict[str, list[str]], dry_run: bool,
    console: Console, found: list[Any],
) -> None:  # fmt: skip
    """One line per recorded machine (confirmed down, still up, or could not check and
    why), then one per other machine the search found: would terminate, terminated, or
    why it failed."""
    places = "; ".join(f"{c}: {', '.join(r)}" for c, r in regions.items())
    for report in reports:
        if report.error:
            console.print(f"{report.backend}: search failed: {report.error}", highlight=False)
    if not any(report.found for report in reports) and not any(r.error for r in reports):
        console.print(f"no gpuplan machines running in {places}", highlight=False)
    for v in found:
        why = f" ({v.why})" if v.why else ""
        console.print(f"{v.cloud} {v.where} {v.machine}: {v.verdict}{why}", highlight=False)
    recorded = {v.machine for v in found}
    for report in reports:
        failed = {id(m): why for m, why in report.failed}
        for machine in report.found:
            if {machine.instance_id, machine.name} & recorded:
                continue
            what = (
                "would terminate"
                if dry_run
                else (f"failed: {failed[id(machine)]}" if id(machine) in failed else "terminated")
            )
            console.print(
                f"{report.backend} {machine.zone or machine.region} {machine.instance_id}: {what}",
                highlight=False,
            )


def _lock(
    sweep_id: str, command: str, *, takeover: bool = False, stale_ok: bool = False
) -> sweep_lock.ControllerLock:
    """The sweep's controller lock for this process (benchmarks.sweep.lock), or exit 1
    naming the process that holds it."""
    try:
        return sweep_lock.acquire(sweep_id, command, takeover=takeover, stale_ok=stale_ok)
    except sweep_lock.SweepLocked as exc:
        abort(f"not {command if command != 'run' else 'started'}: {exc}", 1)


def _end_leftovers(sweep: Any, console: Console) -> None:
    """Before a resume: end every machine a previous controller left running (see
    SweepRun.end_leftovers); exit 1, starting nothing, when one is not confirmed gone."""
    from benchmarks.sweep import teardown as td

    for outcome in sweep.end_leftovers():
        if outcome.status == td.CONFIRMED:
            console.print(f"ended {outcome.machine} ({outcome.where}), left running by an "
                          "earlier controller", highlight=False)  # fmt: skip
    left = sweep.still_running()
    if left:
        abort(
            f"not resumed: {', '.join(left)} left by an earlier controller may still run; "
            f"run `gpuplan sweep cleanup {sweep.sweep_id}` first; nothing was started",
            1,
        )


def _ssh_options(given: list[str] | None) -> list[str] | None:
    if not given:
        return None
    from benchmarks.runners.ssh import extra_options

    options = extra_options()
    for option in given:
        options += ["-o", option]
    return options


def _state(sweep_id: str | None) -> st.StateFile:
    try:
        if sweep_id is None:
            paths = st.list_state_paths()
            if not paths:
                abort(f"no sweeps yet in {st.sweeps_dir()}")
            return st.load_state(str(paths[-1]))
        return st.load_state(sweep_id)
    except st.StateError as exc:
        abort(str(exc))
        raise
