"""Hostile uploads, results folders and shared links against the app (AppTest)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from benchmarks.safe_paths import MAX_RESULT_BYTES
from planner.ui.state import MAX_PARAM_CHARS
from tests.app.conftest import PAGES, plain
from tests.test_hostile_inputs import GOOD, HOSTILE_NAMES, fill_hostile, tree

Open = Callable[..., AppTest]
MARKDOWN = MarkdownIt("commonmark")


def upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.file_uploader(key="benchmarks.upload").set_value(
        [(name, content, "application/json") for name, content in files]
    )
    return at.run()


def shown_html(at: AppTest) -> str:
    """What every text element of the page renders to, as CommonMark HTML."""
    elements = [*at.error, *at.warning, *at.success, *at.info, *at.markdown, *at.caption]
    return "\n".join(MARKDOWN.render(e.value) for e in elements)


@pytest.mark.parametrize(
    "rid", ["../../evil", "/tmp/evil-abs", "a/b/c", "evil.json/x", "[click](http://evil)"]
)
def test_a_hostile_upload_is_refused_and_writes_nothing(
    open_page: Open, results_dir: Path, tmp_path: Path, rid: str
) -> None:
    before = tree(tmp_path)
    name = "[click](http://evil).json"
    at = upload(open_page("benchmarks"), (name, json.dumps({**GOOD, "id": rid}).encode()))
    errors = plain(" ".join(e.value for e in at.error))
    assert f"{name}: field 'id'" in errors and "not a valid result id" in errors
    assert "Nothing was saved" in errors
    assert all(b.key != "benchmarks.save" for b in at.button)
    html = shown_html(at)
    assert "<a " not in html and "<img" not in html
    assert tree(tmp_path) == before
    assert not Path("/tmp/evil-abs.json").exists()
    assert not (results_dir.parent.parent / "evil.json").exists()


def test_an_upload_over_the_size_limit_is_refused(open_page: Open, results_dir: Path) -> None:
    big = json.dumps({**GOOD, "notes": "x" * MAX_RESULT_BYTES}).encode()
    at = upload(open_page("benchmarks"), ("big.json", big))
    assert f"the limit is {MAX_RESULT_BYTES:,} bytes" in plain(" ".join(e.value for e in at.error))
    assert list(results_dir.iterdir()) == []


def test_a_hostile_results_folder_still_serves_every_page(
    open_page: Open, results_dir: Path, tmp_path: Path
) -> None:
    fill_hostile(results_dir, tmp_path)
    for name in PAGES:
        at = open_page(name)  # asserts no exception
        if name in ("benchmarks", "scaling"):
            warned = plain(" ".join(w.value for w in at.warning))
            for entry in HOSTILE_NAMES:
                assert entry in warned, (name, entry)
        if name == "plan":
            notes = plain(" ".join(m.value for m in at.markdown))
            for entry in HOSTILE_NAMES:
                assert entry in notes, (name, entry)
        if name == "benchmarks":
            assert int(at.metric[0].value) >= 1  # the good file is among own results


def test_a_hostile_shared_link_renders_as_text(open_page: Open) -> None:
    at = AppTest.from_file(
        str(Path(__file__).parent.parent.parent / "planner/ui/pages/page_prices.py"),
        default_timeout=90,
    )
    at.query_params["providers"] = ["[click](http://evil)", "![x](http://evil/img.png)"]
    at.query_params["top"] = "x" * 100_000
    at.run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    text = plain(" ".join(warnings))
    assert "providers='[click](http://evil)' is not a choice" in text
    assert "providers='![x](http://evil/img.png)' is not a choice" in text
    assert f"URL parameter top is 100,000 characters long (at most {MAX_PARAM_CHARS:,})" in text
    assert sum(len(w) for w in warnings) < 3000  # the long value is never echoed
    html = shown_html(at)
    assert "<a " not in html and "<img" not in html
    assert "x" * 300 not in at.query_params.get("top", [""])[0]
