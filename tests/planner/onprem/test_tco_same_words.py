"""One buy-or-rent answer reads the same in the CLI, the app and the HTML report: the same
verdict sentence (band and share of cases), the same lines from typical defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli.main import app
from planner.onprem.answer import tco_answer
from planner.onprem.compare import compared_offers
from planner.render.tco_words import defaulted_text, verdict_sentence
from pricing.catalog import load_offers

ROOT = Path(__file__).resolve().parents[3]
OFFERS = ["aws:us-east-1:p5.48xlarge", "lambda:us-west-2:gpu_8x_h100_sxm5"]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_cli_app_and_report_say_the_same_verdict(results_dir: Path) -> None:
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    from planner.ui.export import report_html
    from planner.ui.onprem_page import config_from_inputs, onprem_report
    from tests.app.conftest import page_script, plain

    loaded = config_from_inputs({"servers": 4})
    offers = compared_offers(load_offers(), "H100-SXM", OFFERS, "on-demand")
    answer = tco_answer(loaded.config, offers, loaded.defaulted, 10_000)
    sentence = verdict_sentence(answer)
    assert "P10-P90" in sentence and "% of cases" in sentence

    toml = results_dir / "site.toml"
    toml.write_text('name = "own-servers"\nservers = 4\n')
    done = CliRunner().invoke(
        app,
        ["tco", "--config", str(toml), *[a for ref in OFFERS for a in ("--compare", ref)],
         "--monthly-gpu-hours", "10000"],
        env={"COLUMNS": "100"},
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert sentence in flat(done.stdout)
    assert defaulted_text(answer) in flat(done.stderr)

    at = AppTest.from_file(str(page_script("onprem")), default_timeout=90)
    at.query_params.update({"servers": "4", "monthly_gpu_hours": "10000", "offers": OFFERS})
    at.run()
    assert not at.exception
    assert plain(at.markdown[0].value).strip("*") == sentence

    page = report_html(onprem_report(answer))
    assert sentence in page.replace("&#x27;", "'")
