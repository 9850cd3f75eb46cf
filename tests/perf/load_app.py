"""The app under many users: N concurrent sessions over Streamlit's websocket, on loopback.

    python tests/perf/load_app.py --sessions 1,20,50 --seconds 120 --warm

For each N (one invocation can compare several: a table per N, then one line per N side
by side), starts a fresh app (`streamlit run app.py` from the checkout, 127.0.0.1 only, an
empty results folder and user snapshot folder), then opens N sessions as a browser does
(Streamlit's websocket protocol: a BackMsg asking a page's script to run, ForwardMsgs back
until the script finishes). Each session renders the five pages in turn, starting at a
different one, for `--seconds`; a render is timed from the request to the server's "script
finished". Between renders a session pauses `--think` seconds on average (drawn from 0.5x
to 1.5x, as a user reads a page before the next click), and with a think time the sessions
arrive spread over the first one (session i opens after a pause drawn from 0 to `--think`
seconds: users do not all click in the same millisecond); 0, the default, never pauses:
the server saturated, where every render waits for the N - 1 others. `--warm` first has one
session render each page once, untimed (the caches filled, as after the first user).

The queueing bound: one Streamlit server runs one script at a time per core at best, and
Python's GIL keeps its script threads to about one core. With no think time N sessions each
wait for the N - 1 others, so p95 grows about N x one user's mean render whatever a render
costs; the summary prints that bound and the demand (renders done x one user's mean render
/ run seconds: at 1 the server is busy all the time and renders queue).
Prints p50/p95/max render time per page and over all, the errors (an exception drawn on a
page, a script that did not finish, a dropped connection), the server's memory (RSS of the
server process) and the machine's load average sampled every few seconds, and how long the
health check took. Bounded: at most MAX_SESSIONS sessions and MAX_SECONDS per N; nothing
leaves the machine. Not a test: it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("", "scaling", "onprem", "benchmarks", "prices")  # "" is the Plan page
MAX_SESSIONS = 100
MAX_SECONDS = 900
RENDER_TIMEOUT_S = 300.0
RSS_EVERY_S = 5.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mib(pid: int) -> float:
    """Resident memory of a process in MiB (/proc/PID/status VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_app(port: int, folder: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.update(
        GPUPLAN_RESULTS_DIR=str(folder / "results"),
        XDG_DATA_HOME=str(folder / "data"),
        PYTHONPATH=str(ROOT),
    )
    (folder / "results").mkdir()
    command = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.address", "127.0.0.1", "--server.port", str(port),
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    # From the checkout, as `streamlit run app.py` is run: its .streamlit/config.toml applies
    # (no file watcher polling the source tree); results and snapshots go to `folder`.
    return subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip


def wait_healthy(port: int, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the app did not answer its health check within {timeout_s:.0f} s")


def health_s(port: int) -> float:
    """Seconds the health check took to answer (inf when it did not within 30 s)."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=30):
            return time.monotonic() - start
    except OSError:
        return float("inf")


class Tally:
    """Render times per page, errors in words, samples over time (seconds since start,
    server RSS MiB, 1-minute load average, health-check seconds)."""

    def __init__(self, sessions: int) -> None:
        self.sessions = sessions
        self.times: dict[str, list[float]] = {page or "plan": [] for page in PAGES}
        self.errors: list[str] = []
        self.rss: list[tuple[float, float]] = []
        self.load: list[float] = []
        self.health: list[float] = []
        self.warm_rss = float("nan")  # after the untimed warm-up pass (--warm)

    def every(self) -> list[float]:
        return [t for times in self.times.values() for t in times]


async def session(
    port: int,
    index: int,
    deadline: float,
    tally: Tally,
    renders: int | None = None,
    think_s: float = 0.0,
) -> None:
    """One user: render the pages in turn (starting at page `index` mod 5) until `deadline`
    (or `renders` renders, when given), pausing about `think_s` between renders."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.asyncio.client import connect

    pauses = random.Random(index)  # the same pauses on every run
    if think_s > 0 and renders is None:
        await asyncio.sleep(think_s * pauses.uniform(0.0, 1.0))  # arrivals spread out
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    try:
        connection = await connect(
            url, subprotocols=["streamlit"], max_size=None, open_timeout=RENDER_TIMEOUT_S
        )  # type: ignore[list-item]
    except Exception as exc:  # counted, the run goes on
        tally.errors.append(f"session {index}: cannot connect ({exc})")
        return
    turn = index
    try:
        while time.monotonic() < deadline and (renders is None or turn - index < renders):
            if think_s > 0 and turn > index:
                await asyncio.sleep(think_s * pauses.uniform(0.5, 1.5))
                if time.monotonic() >= deadline:
                    break
            page = PAGES[turn % len(PAGES)]
            turn += 1
            ask = BackMsg()
            ask.rerun_script.query_string = ""
            ask.rerun_script.page_name = page
            ask.rerun_script.widget_states.SetInParent()
            start = time.monotonic()
            await connection.send(ask.SerializeToString())
            while True:
                raw = await asyncio.wait_for(connection.recv(), RENDER_TIMEOUT_S)
                if isinstance(raw, str):
                    continue
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                kind = msg.WhichOneof("type")
                element = msg.delta.new_element if kind == "delta" else None
                if element is not None and element.WhichOneof("type") == "exception":
                    text = element.exception.message
                    tally.errors.append(f"{page or 'plan'}: exception {text[:200]}")
                if kind == "script_finished":
                    if msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                        tally.times[page or "plan"].append(time.monotonic() - start)
                    elif msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                        tally.errors.append(f"{page or 'plan'}: script ended {msg.script_finished}")
                    break
    except TimeoutError:
        tally.errors.append(f"session {index}: no answer within {RENDER_TIMEOUT_S:.0f} s")
    except Exception as exc:  # a dropped connection is counted
        tally.errors.append(f"session {index}: connection lost ({type(exc).__name__}: {exc})")
    finally:
        await connection.close()


async def sample(port: int, pid: int, deadline: float, started: float, tally: Tally) -> None:
    """Every RSS_EVERY_S: the server's RSS, the load average and the health check's time."""
    while time.monotonic() < deadline:
        tally.rss.append((time.monotonic() - started, rss_mib(pid)))
        tally.load.append(os.getloadavg()[0])
        tally.health.append(await asyncio.to_thread(health_s, port))
        await asyncio.sleep(RSS_EVERY_S)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def row(label: str, times: list[float]) -> str:
    return (f"{label:<12}{len(times):>8}{statistics.median(times):>8.2f}"
            f"{percentile(times, 0.95):>8.2f}{max(times):>8.2f}")  # fmt: skip


def report(tally: Tally, seconds: float) -> None:
    """One N's table: render times per page and over all, errors, samples over time."""
    print(f"\n{tally.sessions} sessions for {seconds:.0f} s on 127.0.0.1")
    print(f"{'page':<12}{'renders':>8}{'p50 s':>8}{'p95 s':>8}{'max s':>8}")
    for page, times in tally.times.items():
        if times:
            print(row(page, times))
    if tally.every():
        print(row("all", tally.every()))
    print(f"errors: {len(tally.errors)}")
    for line in tally.errors[:20]:
        print(f"  {line}")
    print("server RSS MiB over time: " + ", ".join(f"{t:.0f}s {m:.0f}" for t, m in tally.rss))
    print("load average (1 min): " + ", ".join(f"{v:.2f}" for v in tally.load))
    print(f"health check: max {max(tally.health, default=float('nan')):.2f} s")


def summary(tallies: list[Tally], seconds: float) -> None:
    """The Ns side by side; p95 also as a multiple of the fewest sessions' p95, the queueing
    bound (N x the fewest sessions' mean render) and the demand on the server."""
    print(f"\n{'sessions':>8}{'renders':>8}{'p50 s':>8}{'p95 s':>8}{'max s':>8}{'p95 x':>7}"
          f"{'errors':>7}{'RSS warm':>9}{'RSS peak':>9}{'RSS end':>8}{'load avg':>9}"
          f"{'health':>7}{'N x mean':>9}{'demand':>7}")  # fmt: skip
    base = percentile(tallies[0].every(), 0.95) if tallies else float("nan")
    one = statistics.mean(tallies[0].every()) if tallies and tallies[0].every() else float("nan")
    for tally in tallies:
        times = tally.every() or [float("nan")]
        rss = [m for _, m in tally.rss] or [float("nan")]
        load = statistics.mean(tally.load) if tally.load else float("nan")
        demand = len(tally.every()) * one / seconds
        print(f"{tally.sessions:>8}{len(tally.every()):>8}{statistics.median(times):>8.2f}"
              f"{percentile(times, 0.95):>8.2f}{max(times):>8.2f}"
              f"{percentile(times, 0.95) / base:>7.1f}{len(tally.errors):>7}"
              f"{tally.warm_rss:>9.0f}{max(rss):>9.0f}{rss[-1]:>8.0f}{load:>9.2f}"
              f"{max(tally.health, default=float('nan')):>7.2f}"
              f"{tally.sessions * one:>9.2f}{demand:>7.2f}")  # fmt: skip
    print(
        "RSS in MiB (warm: after the warm-up pass); load avg: mean 1-minute load average "
        "during the run; health: slowest health check, s; N x mean: the queueing bound, s "
        f"(N x the {tallies[0].sessions if tallies else 1}-session mean render: with no think "
        "time each render waits for the N - 1 others, one script at a time); demand: renders "
        "x that mean / run seconds (at 1 one server process is busy all the time)"
    )


async def load(port: int, pid: int, sessions: int, seconds: float, think_s: float) -> Tally:
    tally = Tally(sessions)
    started = time.monotonic()
    deadline = started + seconds
    await asyncio.gather(
        sample(port, pid, deadline, started, tally),
        *(session(port, i, deadline, tally, think_s=think_s) for i in range(sessions)),
    )
    return tally


async def warm_up(port: int) -> None:
    """One session renders each page once, untimed (raises on an error)."""
    tally = Tally(1)
    await session(port, 0, time.monotonic() + RENDER_TIMEOUT_S, tally, renders=len(PAGES))
    if tally.errors:
        raise SystemExit(f"the warm-up pass failed: {tally.errors[0]}")


def measure(sessions: int, seconds: float, warm: bool, think_s: float) -> Tally:
    """Start a fresh app, optionally warm it, load it with `sessions` sessions, stop it."""
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        app = start_app(port, Path(folder))
        try:
            wait_healthy(port)
            warm_rss = float("nan")
            if warm:
                asyncio.run(warm_up(port))
                warm_rss = rss_mib(app.pid)
            tally = asyncio.run(load(port, app.pid, sessions, seconds, think_s))
            tally.warm_rss = warm_rss
        finally:
            app.terminate()
            app.wait(timeout=30)
    return tally


def session_counts(text: str) -> list[int]:
    """'1,20,50' -> [1, 20, 50], each within 1..MAX_SESSIONS."""
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--sessions takes whole numbers separated by commas (e.g. 1,20,50), not {text!r}"
        ) from None
    if not counts or not all(1 <= n <= MAX_SESSIONS for n in counts):
        raise argparse.ArgumentTypeError(
            f"--sessions: each count must be 1 to {MAX_SESSIONS}, got {text!r}"
        )
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sessions", type=session_counts, default=[20],
        help="session counts, comma-separated (1,20,50): a fresh app for each",
    )  # fmt: skip
    parser.add_argument("--seconds", type=float, default=120.0, help="per session count")
    parser.add_argument("--warm", action="store_true", help="one session's pass first, untimed")
    parser.add_argument(
        "--think", type=float, default=0.0,
        help="mean pause between a session's renders, s (0: none, the server saturated)",
    )  # fmt: skip
    args = parser.parse_args()
    seconds = max(1.0, min(args.seconds, MAX_SECONDS))
    think_s = max(0.0, min(args.think, MAX_SECONDS))
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"think time {think_s:g} s")  # fmt: skip
    tallies = []
    for sessions in args.sessions:
        tally = measure(sessions, seconds, args.warm, think_s)
        report(tally, seconds)
        tallies.append(tally)
    summary(tallies, seconds)


if __name__ == "__main__":
    main()
