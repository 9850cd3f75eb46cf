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
from planner.ui.uploads import MAX_UPLOAD_MB
from tests.app.conftest import PAGES, plain
from tests.test_hostile_inputs import (
    AUTOLINKED,
    GOOD,
    HOSTILE_NAMES,
    fill_hostile,
    gfm_autolinks,
    tree,
)

Open = Callable[..., AppTest]
MARKDOWN = MarkdownIt("commonmark")


def upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.file_uploader(key="benchmarks.upload").set_value(
        [(name, content, "application/json") for name, content in files]
    )
    return at.run()


TEXT_ELEMENTS = ("title", "header", "subheader", "markdown", "caption", "error", "warning",
                 "info", "success")  # fmt: skip
LABELLED = ("metric", "selectbox", "multiselect", "radio", "number_input", "slider", "toggle",
            "text_input", "button", "file_uploader", "expander", "tab")  # fmt: skip


def shown_markdown(at: AppTest) -> list[str]:
    """The Markdown of every element of the page that Streamlit renders as Markdown: text
    elements, and the labels, help and deltas of widgets and metrics."""
    bodies = [str(e.value) for kind in TEXT_ELEMENTS for e in at.get(kind)]
    for kind in LABELLED:
        for element in at.get(kind):
            proto = getattr(element, "proto", None)
            for field in ("label", "help", "delta", "body"):
                value = getattr(proto, field, "") if proto is not None else ""
                if isinstance(value, str) and value:
                    bodies.append(value)
    return bodies


def shown_html(at: AppTest) -> str:
    """What every text element of the page renders to, as CommonMark HTML."""
    return "\n".join(MARKDOWN.render(body) for body in shown_markdown(at))


def assert_no_link(at: AppTest) -> None:
    """No element of the page shows a link or an image: none in CommonMark, none that
    remark-gfm would make of a bare URL, www. host or e-mail address."""
    html = shown_html(at)
    assert "<a " not in html and "<img" not in html
    links = {body: found for body in shown_markdown(at) if (found := gfm_autolinks(body))}
    assert links == {}


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


def test_the_uploader_refuses_what_the_intake_would_in_whole_megabytes(open_page: Open) -> None:
    at = open_page("benchmarks")
    (uploader,) = at.get("file_uploader")
    limit_mb = uploader.proto.max_upload_size_mb
    assert limit_mb == MAX_UPLOAD_MB
    assert (limit_mb - 1) * 1024 * 1024 < MAX_RESULT_BYTES <= limit_mb * 1024 * 1024
    said = plain(" ".join(c.value for c in at.caption))
    assert f"at most 2 MiB ({MAX_RESULT_BYTES:,} bytes)" in said


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


@pytest.mark.parametrize("page", PAGES)
def test_a_url_value_that_markdown_would_autolink_is_shown_as_text_on_every_page(
    open_page: Open, page: str
) -> None:
    names = sorted(open_page(page).query_params.keys())  # every input the page keeps in the URL
    assert names
    query = {name: AUTOLINKED[i % len(AUTOLINKED)] for i, name in enumerate(names)}
    at = open_page(page, query)
    warned = plain(" ".join(w.value for w in at.warning))
    for name, value in query.items():
        assert f"{name}='{value}'" in warned, (page, name)
    assert_no_link(at)


def test_names_in_a_results_file_that_markdown_would_autolink_are_shown_as_text(
    open_page: Open, results_dir: Path
) -> None:
    """Own results are outside text too: a workload, size, device or unit that is a URL,
    a www. host or an e-mail address is named on the pages that choose it, never linked."""
    host, url, mail = "www.evil.example.com", AUTOLINKED[0], AUTOLINKED[2]
    shared = {"device_name": mail, "gpu_name": "H100-SXM", "throughput_unit": f"{host}/s"}
    for i, (workload, size) in enumerate([(host, "full"), ("resnet50", url)]):
        (results_dir / f"r{i}.json").write_text(
            json.dumps({**GOOD, **shared, "id": f"r{i}", "workload": workload, "model_size": size})
        )
    chosen = {"benchmarks": {"model": f"{host} full"}, "scaling": {"model": host}}
    for page in PAGES:
        at = open_page(page, chosen.get(page))
        assert_no_link(at)
        if page in chosen:
            assert at.selectbox(key=f"{page}.model").value == chosen[page]["model"]
            assert any(host in plain(body) for body in shown_markdown(at)), page


def test_streamlit_run_refuses_uploads_at_the_limit_the_page_says() -> None:
    """`make app` / `streamlit run app.py` read .streamlit/config.toml; `gpuplan app` passes
    --server.maxUploadSize: both the app's own MAX_UPLOAD_MB, as the uploader says."""
    import tomllib

    from planner.cli.app import streamlit_argv
    from tests.conftest import ROOT

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == MAX_UPLOAD_MB
    argv = streamlit_argv("app.py", "127.0.0.1", 8501)
    assert argv[argv.index("--server.maxUploadSize") + 1] == str(MAX_UPLOAD_MB)
