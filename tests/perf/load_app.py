"""The app under many users: N concurrent sessions over Streamlit's websocket, on loopback.

    python tests/perf/load_app.py --sessions 20 --seconds 120

Starts the app (`streamlit run app.py`, 127.0.0.1 only, an empty results folder and user
snapshot folder), then opens N sessions as a browser does (Streamlit's websocket
protocol: a BackMsg asking a page's script to run, ForwardMsgs back until the script
finishes). Each session renders the five pages in turn, starting at a different one, for
`--seconds`; a render is timed from the request to the server's "script finished". Prints
p50/p95/max render time per page and over all, the errors (an exception drawn on a page,
a script that did not finish, a dropped connection) and the server's memory (RSS of the
server process, sampled every few seconds). Bounded: at most MAX_SESSIONS sessions and
MAX_SECONDS; nothing leaves the machine. Not a test: it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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
    return subprocess.Popen(command, env=env, cwd=folder, stdout=subprocess.DEVNULL,
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


class Tally:
    """Render times per page, errors in words, RSS samples (seconds since start, MiB)."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {page or "plan": [] for page in PAGES}
        self.errors: list[str] = []
        self.rss: list[tuple[float, float]] = []


async def session(port: int, index: int, deadline: float, tally: Tally) -> None:
    """One user: render the pages in turn (starting at page `index` mod 5) until `deadline`."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.asyncio.client import connect

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
        while time.monotonic() < deadline:
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


async def sample_rss(pid: int, deadline: float, started: float, tally: Tally) -> None:
    while time.monotonic() < deadline:
        tally.rss.append((time.monotonic() - started, rss_mib(pid)))
        await asyncio.sleep(RSS_EVERY_S)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(tally: Tally, sessions: int, seconds: float) -> None:
    print(f"{sessions} sessions for {seconds:.0f} s on 127.0.0.1")
    print(f"{'page':<12}{'renders':>8}{'p50 s':>8}{'p95 s':>8}{'max s':>8}")
    every: list[float] = []
    for page, times in tally.times.items():
        every += times
        if times:
            print(f"{page:<12}{len(times):>8}{statistics.median(times):>8.2f}"
                  f"{percentile(times, 0.95):>8.2f}{max(times):>8.2f}")  # fmt: skip
    if every:
        print(f"{'all':<12}{len(every):>8}{statistics.median(every):>8.2f}"
              f"{percentile(every, 0.95):>8.2f}{max(every):>8.2f}")  # fmt: skip
    print(f"errors: {len(tally.errors)}")
    for line in tally.errors[:20]:
        print(f"  {line}")
    print("server RSS MiB over time: " + ", ".join(f"{t:.0f}s {m:.0f}" for t, m in tally.rss))


async def load(port: int, pid: int, sessions: int, seconds: float) -> Tally:
    tally = Tally()
    started = time.monotonic()
    deadline = started + seconds
    await asyncio.gather(
        sample_rss(pid, deadline, started, tally),
        *(session(port, i, deadline, tally) for i in range(sessions)),
    )
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--warm", action="store_true", help="one session's pass first, untimed")
    args = parser.parse_args()
    sessions = max(1, min(args.sessions, MAX_SESSIONS))
    seconds = max(1.0, min(args.seconds, MAX_SECONDS))
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        app = start_app(port, Path(folder))
        try:
            wait_healthy(port)
            if args.warm:
                asyncio.run(load(port, app.pid, 1, 1.0))
            tally = asyncio.run(load(port, app.pid, sessions, seconds))
        finally:
            app.terminate()
            app.wait(timeout=30)
    report(tally, sessions, seconds)


if __name__ == "__main__":
    main()
