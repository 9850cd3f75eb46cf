"""edge.console: warnings and errors on stderr, outside text as written, exit codes."""

from __future__ import annotations

import pytest
import typer

from edge.console import abort, error, shorten, warn, warn_lines


def test_warn_and_error_print_markup_and_emoji_codes_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    warn("a :b: [red]x[/red] " + "w" * 300)
    error("no file ':FINLAND: [bold]'")
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "warning: a :b: [red]x[/red] " + "w" * 300 + "\nerror: no file ':FINLAND: [bold]'\n"
    )


def test_abort_exits_with_its_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as stopped:
        abort("interrupted", 130)
    assert stopped.value.exit_code == 130
    assert capsys.readouterr().err == "error: interrupted\n"
    with pytest.raises(typer.Exit) as stopped:
        abort("bad flag")
    assert stopped.value.exit_code == 2


def test_warn_lines_folds_and_cuts_each_line(capsys: pytest.CaptureFixture[str]) -> None:
    warn_lines(["two\nlines\tand  spaces", "x" * 30], limit=10)
    assert capsys.readouterr().err == (
        f"warning: two lines ... (20 characters)\nwarning: {'x' * 10}... (30 characters)\n"
    )


def test_shorten_names_the_full_length() -> None:
    assert shorten("abc", 5) == "abc"
    assert shorten("a" * 1234, 3) == "aaa... (1,234 characters)"
