"""Malformed and hostile inputs at every CLI command and loader: exit 1 or 2, a message
naming the input, no traceback, nothing written outside the folder it belongs in.

Kinds thrown: result ids that are paths, folders where files are expected, dangling
links, 10,000-deep JSON and TOML, files over the size limit, inf/nan/1e309 numbers in
flags, results, configs and reference CSVs, rich markup in ids, Markdown in URL values.
"""

from __future__ import annotations

import html as htmllib
import json
import math
import os
import re
import string
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from benchmarks.results import (
    BenchmarkResult,
    ResultFileError,
    load_results,
    parse_result,
    result_path,
    write_result,
)
from benchmarks.safe_paths import (
    MAX_JSON_DEPTH,
    MAX_RESULT_BYTES,
    RESULT_ID_PATTERN,
    UnsafeInputError,
    check_result_id,
    loads_bounded,
    path_under,
    read_text_bounded,
)
from planner.cli.main import app
from planner.io.validate import FLAG_RANGES, InputPathError, RangeError, check_flag, read_text_file
from planner.onprem.tco import OnPremConfigError, load_onprem_config
from planner.ui.text import WORD_JOINER, md_text
from tests.conftest import GOOD_RESULT as GOOD
from tests.conftest import ROOT

runner = CliRunner()
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HOSTILE_IDS = [
    "../../evil",
    "/tmp/evil",
    "a/b/c",
    "evil.json/x",
    "..",
    ".hidden",
    "x..y",
    "run.json",
    "[/bogus]",
    "[click](http://evil)",
    "a\x00b",
    "a b",
    "C:\\evil",
    "",
    "x" * 129,
]
EXAMPLE_TOML = ROOT / "examples" / "onprem-dgx-h100.toml"


def tree(root: Path) -> set[str]:
    """Every path under `root` (files, folders, links), relative."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def clean_exit(done: object, codes: tuple[int, ...] = (1, 2)) -> str:
    """Assert a CliRunner result ended with one of `codes`, no exception; its output."""
    assert done.exit_code in codes, done.output  # type: ignore[attr-defined]
    exc = done.exception  # type: ignore[attr-defined]
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    output = done.output  # type: ignore[attr-defined]
    assert "Traceback" not in output
    return str(output)


def result_file(path: Path, **changes: object) -> Path:
    path.write_text(json.dumps({**GOOD, **changes}))
    return path


@pytest.fixture()
def hostile_folder(tmp_path: Path) -> Path:
    """A results folder holding one good result and one of each hostile entry."""
    folder = tmp_path / "results"
    folder.mkdir()
    return fill_hostile(folder, tmp_path)


def fill_hostile(folder: Path, tmp_path: Path) -> Path:
    """Put one good result and each of HOSTILE_NAMES into `folder`."""
    result_file(folder / "good.json")
    (folder / "evil.json").mkdir()  # what an id of 'evil.json/x' made
    (folder / "evil.json" / "x.json").write_text(json.dumps(GOOD))
    (folder / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    (folder / "deep.json").write_text("[" * 10_000 + "]" * 10_000)
    (folder / "huge-number.json").write_text(
        json.dumps({**GOOD, "id": "huge"}).replace("2500.0", "1e309")
    )
    (folder / "infinite-batch.json").write_text(
        json.dumps({**GOOD, "id": "inf-batch"})[:-1] + ', "batch_size_per_device": Infinity}'
    )
    result_file(folder / "bad-id.json", id="../../evil")
    result_file(folder / "markup-id.json", id="[/bogus]")
    (folder / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    (folder / "too-large.json").write_text(" " * (MAX_RESULT_BYTES + 1))
    return folder


HOSTILE_NAMES = (
    "evil.json",
    "dangling.json",
    "deep.json",
    "huge-number.json",
    "infinite-batch.json",
    "bad-id.json",
    "markup-id.json",
    "binary.json",
    "too-large.json",
)


# ---------------------------------------------------------------- ids and paths


@pytest.mark.parametrize("rid", HOSTILE_IDS)
def test_a_hostile_id_is_refused_by_the_schema(rid: str) -> None:
    with pytest.raises(ResultFileError) as caught:
        parse_result({**GOOD, "id": rid}, "upload.json")
    assert caught.value.field == "id"
    with pytest.raises(UnsafeInputError):
        check_result_id(rid)


@FUZZ
@given(rid=st.text(min_size=0, max_size=140))
def test_any_id_is_refused_or_stays_inside_its_folder(rid: str, tmp_path: Path) -> None:
    try:
        check_result_id(rid)
    except UnsafeInputError:
        assert (
            not rid
            or ".." in rid
            or not __import__("re").fullmatch(RESULT_ID_PATTERN, rid)
            or rid.lower().endswith(".json")
        )
        return
    result = BenchmarkResult(**{**GOOD, "id": rid})
    target = result_path(result, tmp_path)
    assert target.resolve().parent == tmp_path.resolve()
    assert target.name == f"{rid}.json"


def test_write_result_refuses_a_link_that_leads_outside(tmp_path: Path) -> None:
    folder, outside = tmp_path / "results", tmp_path / "outside.json"
    folder.mkdir()
    outside.write_text("precious")
    (folder / "my-h100-run.json").symlink_to(outside)
    with pytest.raises(UnsafeInputError, match="outside"):
        write_result(BenchmarkResult(**GOOD), folder)
    assert outside.read_text() == "precious"
    assert sorted(p.name for p in folder.iterdir()) == ["my-h100-run.json"]  # no temp file


def test_write_result_refuses_a_results_folder_link_escape_by_name(tmp_path: Path) -> None:
    for name in ("../x.json", "a/b.json", "", ".", ".."):
        with pytest.raises(UnsafeInputError):
            path_under(tmp_path, name)


# ---------------------------------------------------------------- readers


def test_a_hostile_results_folder_loads_the_good_file_and_names_every_other(
    hostile_folder: Path,
) -> None:
    results, problems = load_results(hostile_folder)
    assert [r.id for r in results] == ["my-h100-run"]
    text = "\n".join(problems)
    for name in HOSTILE_NAMES:
        assert name in text, name
    assert "nested deeper than 64 levels" in text
    assert "dangling link" in text and "a folder named *.json" in text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[" * 10_000 + "]" * 10_000, "nested deeper"),
        ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), "nested deeper"),
        ('{"a": NaN}', "not a JSON number"),
        ('{"a": -Infinity}', "not a JSON number"),
        ('{"a": 1e309}', "too large"),
    ],
)
def test_json_beyond_its_limits_is_refused(text: str, why: str) -> None:
    with pytest.raises(UnsafeInputError, match=why):
        loads_bounded(text)


@FUZZ
@given(
    field=st.sampled_from(
        ["throughput", "batch_size_per_device", "mfu", "peak_memory_gib", "samples_per_s"]
    ),
    value=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([math.inf, -math.inf])
    ),
)
def test_a_result_never_holds_a_number_that_is_not_finite(field: str, value: float) -> None:
    try:
        result = parse_result({**GOOD, field: value}, "r.json")
    except ResultFileError as exc:
        assert exc.field == field
        return
    assert math.isfinite(getattr(result, field))


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("a = " + "[" * 5000 + "]" * 5000, "nested deeper"),
        ("utilization = inf\n", "utilization"),
        ("utilization = nan\n", "utilization"),
        ("servers = 1e400\n", "servers"),
        ("\xff", "not valid TOML"),
    ],
)
def test_a_hostile_onprem_config_is_an_error_naming_it(
    tmp_path: Path, content: str, why: str
) -> None:
    path = tmp_path / "site.toml"
    path.write_text(content)
    with pytest.raises(OnPremConfigError, match=why):
        load_onprem_config(path)


@pytest.fixture()
def odd_files(tmp_path: Path) -> Path:
    (tmp_path / "big.txt").write_text("x" * 100)
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "sub").mkdir()
    return tmp_path


FIX = "give a CSV file"  # what read_text_file is told to suggest
# An odd file's name in odd_files: what read_text_bounded says, what read_text_file adds.
ODD_FILE_WORDS = {
    "big.txt": ("100 bytes; the limit is 10 bytes", ": 100 bytes, more than the 10 allowed"),
    "latin1.txt": ("not a UTF-8 text file", ": not a UTF-8 text file"),
    "dangling": ("a dangling link", f": no such file; {FIX}"),
    "missing": ("no such file", f": no such file; {FIX}"),
    "fifo": ("not a regular file", f" is not a regular file; {FIX}"),
    "sub": ("a folder, not a file", f" is a folder; {FIX}"),
}


@pytest.mark.parametrize("name", list(ODD_FILE_WORDS))
def test_both_file_readers_refuse_the_same_files_each_in_its_words(
    odd_files: Path, name: str
) -> None:
    bounded, named = ODD_FILE_WORDS[name]
    path = odd_files / name
    with pytest.raises(UnsafeInputError) as refused:
        read_text_bounded(path, 10)
    assert str(refused.value) == bounded
    with pytest.raises(InputPathError) as named_error:
        read_text_file(path, "table file", 10, FIX)
    assert str(named_error.value) == f"table file {path}{named}"


@FUZZ
@given(
    flag=st.sampled_from(sorted(FLAG_RANGES)),
    value=st.floats(allow_nan=True, allow_infinity=True),
)
def test_a_flag_value_is_accepted_only_finite_and_in_range(flag: str, value: float) -> None:
    valid = FLAG_RANGES[flag]
    try:
        check_flag(flag, value)
    except RangeError as exc:
        assert flag in str(exc) and "must be" in str(exc)
        assert not valid.holds(value)
        return
    assert math.isfinite(value) and valid.holds(value)


# ---------------------------------------------------------------- text shown in the app

MARKDOWN = MarkdownIt("commonmark")
# The dotted hosts GitHub-style Markdown links by themselves (http://evil it never does).
AUTOLINKED = ("https://evil.example.com/login", "www.evil.example.com", "x@host.example.com")
# mdast-util-gfm-autolink-literal (remark-gfm, Streamlit's Markdown): what it links in text.
_GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE | re.ASCII)
_GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)
_GFM_TRAIL = re.compile(r"[!\"&'),.:;<>?\]}]+$")


def _after_boundary(text: str, index: int, email: bool = False) -> bool:
    """remark-gfm's test of the character before a literal link: none, a space, or
    punctuation or a symbol (not '/' before an e-mail address)."""
    if index == 0:
        return True
    before = text[index - 1]
    if email and before == "/":
        return False
    return before.isspace() or unicodedata.category(before)[0] in "PS"


def _gfm_domain(domain: str) -> bool:
    parts = domain.split(".")
    if len(parts) < 2:
        return False
    return all(
        not part or ("_" not in part and re.search("[a-zA-Z0-9]", part)) for part in parts[-2:]
    )


def _gfm_links_in(text: str) -> list[str]:
    """The literal links remark-gfm makes in one run of text (its transform, in Python)."""
    found = []
    pos = 0
    while match := _GFM_URL.search(text, pos):
        protocol, domain, path = match.groups()
        if protocol.lower().startswith("w"):
            protocol, domain = "", protocol + domain
        url = _GFM_TRAIL.sub("", domain + path)
        if _after_boundary(text, match.start()) and _gfm_domain(domain) and url:
            found.append(protocol + url)
            pos = match.end()
        else:
            pos = match.start() + 1
    pos = 0
    while match := _GFM_EMAIL.search(text, pos):
        if _after_boundary(text, match.start(), email=True) and not re.search(
            r"[-\d_]$", match.group(2)
        ):
            found.append(match.group(0))
            pos = match.end()
        else:
            pos = match.start() + 1
    return found


def gfm_autolinks(markdown: str) -> list[str]:
    """The links Streamlit's Markdown would show for `markdown`: CommonMark links, and the
    literal ones remark-gfm finds in each run of text once escapes and entities are read."""
    found = []
    for block in MARKDOWN.parse(markdown):
        run: list[str] = []
        for token in [*(block.children or []), None]:
            if token is not None and token.type in ("text", "text_special", "softbreak"):
                run.append(token.content if token.type != "softbreak" else "\n")
                continue
            found += _gfm_links_in("".join(run))
            run = []
            if token is not None and token.type in ("link_open", "image"):
                found.append(str(token.attrGet("href") or token.attrGet("src")))
    return found


def test_the_gfm_port_finds_what_remark_gfm_links() -> None:
    for text in AUTOLINKED:
        assert gfm_autolinks(f"see {text}.") == [text]
        # Backslash escapes alone leave the link: the text is searched after they are read.
        escaped = "".join("\\" + c if c in string.punctuation else c for c in text)
        assert gfm_autolinks(escaped) == [text]
    assert gfm_autolinks("http://evil and [x](http://a.b)") == ["http://a.b"]
    assert gfm_autolinks("xwww.evil.com, /x@y.com, a@b.c1") == []


@FUZZ
@given(
    text=st.text(
        alphabet=st.sampled_from(list("[]()!<>:/\\`*_~$#&;\"'=.@ \nhttpevilwxyz")), max_size=80
    )
)
def test_escaped_text_never_renders_a_link_image_or_tag(text: str) -> None:
    html = MARKDOWN.render(md_text(text))
    assert "<a " not in html and "<img" not in html and "<code" not in html
    assert "<script" not in html and "<em>" not in html
    assert gfm_autolinks(md_text(text)) == []


@FUZZ
@given(
    parts=st.lists(
        st.text(alphabet=st.sampled_from(list(":/.@-_ wWhtps3xy")), min_size=1, max_size=30),
        max_size=4,
    ),
    joints=st.sampled_from(["", " ", ". ", ": ", ", ", " · ", "w"]),
    end=st.sampled_from(["", ".", ":", "@", "://"]),
)
def test_escaped_values_never_autolink_next_to_each_other_or_to_text(
    parts: list[str], joints: str, end: str
) -> None:
    """Values put into one message side by side, between the message's own words, or
    before its closing punctuation. (A message never puts a host name right after a value's
    '.', ':' or '@': no joiner is added at a value's end but after a final 'w', so that a
    name copied from the page is the name itself. Values are not empty: empty ones joined by
    the word "w" leave the message's own text alone, "www.", which no escaping can change.)"""
    markdown = joints.join(md_text(p) for p in parts) + end
    assert gfm_autolinks(markdown) == [], markdown


def test_a_value_copied_from_the_page_is_the_value_itself() -> None:
    """Joiners go only where a link or code could form: ordinary text keeps none."""
    for name in (
        "us-east-1", "p5.48xlarge", "gpu_1x_gh200", "lambda gpu_1x_gh200 in us-east-1",
        "Prices as of: aws (catalog extract, not before 2025-06)", "ratio 3:2, 10:30",
    ):  # fmt: skip
        assert WORD_JOINER not in md_text(name), name
    assert md_text("www.x.com").count(WORD_JOINER) == 1
    assert md_text("see https://x.com or a@b.com").count(WORD_JOINER) == 2
    # a final 'w' before a message's own '.': "W" "W" "W" side by side would read www.
    assert md_text("W").endswith(WORD_JOINER) and md_text("a-www").endswith(WORD_JOINER)
    assert gfm_autolinks("".join(md_text(p) for p in ("W", "W", "W")) + ".") == []
    assert gfm_autolinks(f"see {md_text('a-www')}.") == []
    assert gfm_autolinks("see a-www.") == ["www"]  # what the joiner stops


@pytest.mark.parametrize(
    "text",
    ["[click](http://evil)", "![x](http://evil/img.png)", "<img src=http://evil/x.png>",
     "<http://evil>", "http://evil.example/x", "www.evil.example", *AUTOLINKED,
     "mailto:x@host.example.com", "WWW.EVIL.EXAMPLE.COM", ":b: :material/home:"],
)  # fmt: skip
def test_a_link_or_image_in_a_value_renders_as_its_text(text: str) -> None:
    html = MARKDOWN.render(md_text(text))
    assert "<a " not in html and "<img" not in html
    assert gfm_autolinks(md_text(text)) == []
    assert gfm_autolinks(f"value {md_text(text)}.") == []
    shown = html_text(html).replace(WORD_JOINER, "")
    assert shown.strip() == text  # what is shown is the text as written


def html_text(html: str) -> str:
    """The characters an HTML fragment shows: tags dropped, entities read."""
    return htmllib.unescape(re.sub(r"<[^>]+>", "", html))


# ---------------------------------------------------------------- the CLI


@pytest.fixture()
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A clean folder to run commands in; its tree is compared before and after."""
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(here)


def test_bench_list_names_every_skipped_entry_on_stderr_with_json(
    hostile_folder: Path,
) -> None:
    done = runner.invoke(app, ["bench", "list", str(hostile_folder), "--format", "json"])
    clean_exit(done, (0,))
    assert [r["id"] for r in json.loads(done.stdout)] == ["my-h100-run"]
    lines = done.stderr.splitlines()
    assert all(line.startswith("warning: skipped: ") for line in lines)
    for name in HOSTILE_NAMES:
        assert sum(name in line for line in lines) >= 1, name


def test_bench_list_shows_markup_in_a_name_as_text(tmp_path: Path) -> None:
    result_file(tmp_path / "a.json", id="run-1", workload="[/bogus][bold]x", source="[red]y")
    clean_exit(runner.invoke(app, ["bench", "list", str(tmp_path)]), (0,))
    done = runner.invoke(app, ["bench", "list", str(tmp_path), "--wide"])  # every column
    out = clean_exit(done, (0,))
    assert "[/bogus][bold]x" in out and "[red]y" in out


def test_bench_add_refuses_every_hostile_file_and_writes_nothing(
    workdir: Path, hostile_folder: Path
) -> None:
    out = workdir / "out"
    before = tree(workdir)
    files = [
        hostile_folder / name
        for name in HOSTILE_NAMES
        if not (hostile_folder / name).is_dir() or name == "evil.json"
    ]
    for path in [*files, workdir / "missing.json", workdir]:
        done = runner.invoke(app, ["bench", "add", str(path), "--dir", str(out)])
        output = clean_exit(done, (2,))
        assert "nothing was added" in output
        assert path.name[:20] in output
    assert tree(workdir) == before
    assert not (workdir.parent / "evil.json").exists()


def test_bench_add_is_all_or_nothing_and_never_overwrites(workdir: Path) -> None:
    good = result_file(workdir / "good.json")
    evil = result_file(workdir / "evil.json", id="../../evil")
    out = workdir / "out"
    done = runner.invoke(app, ["bench", "add", str(good), str(evil), "--dir", str(out)])
    assert "evil.json: field 'id'" in clean_exit(done, (2,))
    assert not out.exists()
    done = runner.invoke(app, ["bench", "add", str(good), "--dir", str(out)])
    clean_exit(done, (0,))
    assert sorted(p.name for p in out.iterdir()) == ["my-h100-run.json"]
    other = result_file(workdir / "other.json", throughput=1.0)
    done = runner.invoke(app, ["bench", "add", str(other), "--dir", str(out)])
    assert "a different result with id 'my-h100-run'" in clean_exit(done, (2,))
    assert json.loads((out / "my-h100-run.json").read_text())["throughput"] == 2500.0
    again = runner.invoke(app, ["bench", "add", str(good), "--dir", str(out)])
    assert "already in" in clean_exit(again, (0,))


def test_bench_add_refuses_a_link_in_the_folder_that_leads_outside(workdir: Path) -> None:
    out, outside = workdir / "out", workdir / "outside.json"
    out.mkdir()
    outside.write_text("precious")
    (out / "my-h100-run.json").symlink_to(outside)
    done = runner.invoke(
        app, ["bench", "add", str(result_file(workdir / "g.json")), "--dir", str(out)]
    )
    assert "outside" in clean_exit(done, (2,))
    assert outside.read_text() == "precious"


@FUZZ
@given(content=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_bench_add_fuzz_never_writes_a_bad_file(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.json"
    path.write_bytes(content)
    out = tmp_path / "out-fuzz"
    done = runner.invoke(app, ["bench", "add", str(path), "--dir", str(out)])
    clean_exit(done, (2,))
    assert not out.exists()


@pytest.mark.parametrize(
    "arg",
    ["", "   ", "../../etc/passwd", "[/bogus]", "a/../../b", "x" * 100_000, "evil.json"],
)
def test_bench_show_refuses_hostile_names(arg: str, hostile_folder: Path) -> None:
    done = runner.invoke(app, ["bench", "show", arg, "--dir", str(hostile_folder)])
    output = clean_exit(done, (2,))
    assert "error:" in output and len(output) < 2000


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_bench_show_names_a_hostile_file(name: str, hostile_folder: Path) -> None:
    done = runner.invoke(app, ["bench", "show", str(hostile_folder / name)])
    assert name in clean_exit(done, (2,))


@pytest.fixture()
def deep_toml(tmp_path: Path) -> Path:
    path = tmp_path / "deep.toml"
    path.write_text("a = " + "[" * 10_000 + "]" * 10_000)
    return path


PLAN = ["plan", "-w", "resnet50-imagenet-90ep"]
LLM_PLAN = ["plan", "-w", "llm-7b-140b"]
TINY_BENCH = ["bench", "run", "-w", "gpt", "--size", "tiny"]
ESTIMATE = ["estimate", "--reference", "{ref}", "--queries", "{q}"]
TCO = ["tco", "--config", str(EXAMPLE_TOML)]


def flag_named(command: list[str], flag: str, value: str) -> tuple[list[str], str]:
    """`command` given `flag value`, and the refusal's words: the flag and value as given."""
    return [*command, flag, value], f"{flag} {value}"


BAD_COMMANDS = {
    "checkpoint inf": flag_named(PLAN, "--checkpoint-minutes", "inf"),
    "restart nan": flag_named(PLAN, "--restart-minutes", "nan"),
    "batch tokens inf": flag_named(LLM_PLAN, "--global-batch-tokens", "inf"),
    "tco monthly inf": flag_named(TCO, "--monthly-gpu-hours", "inf"),
    "tco utilization nan": flag_named(TCO, "--utilization", "nan"),
    "bench run peak inf": flag_named([*TINY_BENCH, "--device", "cpu"], "--peak-tflops", "inf"),
    "bench run memory nan": flag_named(TINY_BENCH, "--memory-budget-gib", "nan"),
    "estimate network nan": flag_named(ESTIMATE, "--network-gbps", "nan"),
    "estimate overlap inf": flag_named(ESTIMATE, "--overlap", "inf"),
    "batch tokens 1e400": (
        [*LLM_PLAN, "--global-batch-tokens", "1e400"],
        "--global-batch-tokens inf",
    ),
    "batch tokens under one sequence": (
        [*LLM_PLAN, "--global-batch-tokens", "1000"],
        "--global-batch-tokens 1,000: less than one sequence of 2,048 tokens (--seq-len); "
        "give at least 2,048",
    ),
    "seq len 1e11": (
        [*LLM_PLAN, "--seq-len", "100000000000"],
        "--seq-len 1e+11: must be a whole number from 1 to 10,000,000 tokens",
    ),
    "d model 1e12": (
        [*LLM_PLAN, "--d-model", "1000000000000"],
        "--d-model 1e+12: must be a whole number from 1 to 1,000,000",
    ),
    "deadline inf": ([*PLAN, "--deadline-hours", "inf"], "deadline inf hours"),
    "onprem folder": ([*PLAN, "--onprem", "{tmp}"], "is a folder"),
    "onprem empty": ([*PLAN, "--onprem", ""], "an empty path"),
    "onprem deep": ([*PLAN, "--onprem", "{deep}"], "nested deeper than 16"),
    "tco folder": (["tco", "--config", "{tmp}"], "is a folder"),
    "tco deep": (["tco", "--config", "{deep}"], "nested deeper than 16"),
    "bench run out is a file": ([*TINY_BENCH, "--device", "cpu", "--out", "{ref}"], "not a folder"),
    "estimate reference folder": (
        ["estimate", "--reference", "{tmp}", "--queries", "{q}"],
        "is a folder",
    ),
    "estimate 1e308": (
        ["estimate", "--reference", "{huge}", "--queries", "{q}"],
        "line 2, field 'throughput': '1e308' must be a finite number",
    ),
    "estimate output folder": ([*ESTIMATE, "--output", "{tmp}"], "is a folder"),
    "estimate output no folder": ([*ESTIMATE, "--output", "{tmp}/no/p.csv"], "does not exist"),
}


@pytest.mark.parametrize("case", sorted(BAD_COMMANDS))
def test_bad_numbers_and_paths_exit_2_naming_them(
    case: str, workdir: Path, deep_toml: Path, results_dir: Path
) -> None:
    args, expected = BAD_COMMANDS[case]
    ref = workdir / "ref.csv"
    ref.write_text(
        "gpu_model,num_gpus,model,precision,throughput\n"
        "A100 SXM4 40GB,1,resnet50,fp16_amp,1000\nA100 SXM4 40GB,2,resnet50,fp16_amp,1900\n"
    )
    huge = workdir / "huge.csv"
    huge.write_text(ref.read_text().replace("1000", "1e308").replace("1900", "1e308"))
    queries = workdir / "q.csv"
    queries.write_text("gpu_model,num_gpus,model,precision\nA100 SXM4 40GB,4,resnet50,fp16_amp\n")
    names = {"tmp": str(workdir), "deep": str(deep_toml), "ref": str(ref), "q": str(queries)}
    names["huge"] = str(huge)
    before = tree(workdir)
    done = runner.invoke(app, [a.format(**names) for a in args])
    assert expected in clean_exit(done, (2,))
    assert tree(workdir) == before


def test_plan_on_a_hostile_results_folder_plans_and_names_every_skipped_entry(
    hostile_folder: Path,
) -> None:
    done = runner.invoke(
        app,
        [*PLAN, "--results", str(hostile_folder), "--format", "csv", "--top", "3"],
    )
    clean_exit(done, (0,))
    assert done.stdout.startswith("rank,")
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    for name in HOSTILE_NAMES:
        assert any(name in line for line in warnings), name


def test_tco_json_keeps_its_warnings_on_stderr() -> None:
    done = runner.invoke(
        app,
        ["tco", "--config", str(EXAMPLE_TOML), "--compare", "A100", "--format", "json"],
    )
    clean_exit(done, (0,))
    json.loads(done.stdout)
    assert any(
        line.startswith("warning: ") and "not H100-SXM" in line for line in done.stderr.splitlines()
    )
