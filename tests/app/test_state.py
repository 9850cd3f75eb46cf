"""Inputs in the URL: widgets start from the query string, write back, reject bad values."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from planner.ui.state import (
    ParamError,
    encode_number,
    parse_bool,
    parse_choice,
    parse_number,
)
from tests.app.conftest import plain


def inputs_page() -> None:
    import streamlit as st

    from planner.ui.state import PageState

    ps = PageState("t")
    choice = ps.selectbox("Pick", ["a", "b", "H100-SXM"], name="pick", default="b")
    many = ps.multiselect("Many", ["x", "y", "z"], name="many", default=["x"])
    n = ps.number_input("N", name="n", default=8, min_value=1, max_value=64, step=1)
    f = ps.number_input("F", name="f", default=0.5, min_value=0.0, max_value=1.0)
    opt = ps.number_input("Opt", name="opt", default=None, min_value=0.0)
    flag = ps.toggle("Flag", name="flag", default=False)
    s = ps.slider("S", name="s", default=3, min_value=1, max_value=10)
    st.text(repr((choice, many, n, f, opt, flag, s)))
    ps.sync()


def hiding_page() -> None:
    import streamlit as st

    from planner.ui.state import PageState

    ps = PageState("h")
    if st.checkbox("show", value=True, key="show"):
        st.text(ps.selectbox("Pick", ["a", "b", "c"], name="pick", default="a"))
    ps.sync()


def dependent_page() -> None:
    import streamlit as st

    from planner.ui.state import PageState

    ps = PageState("d")
    family = ps.radio("Family", ["small", "big"], name="family", default="small")
    options = ["s1", "s2", "s3"] if family == "small" else ["b1", "b2"]
    chosen = ps.multiselect("Items", options, name="items", default=options[-1:], depends_on=family)
    st.text(repr(chosen))
    ps.sync()


def shown(at: AppTest) -> str:
    return at.text[-1].value


def test_defaults_are_written_to_the_url() -> None:
    at = AppTest.from_function(inputs_page).run()
    assert not at.exception
    assert shown(at) == repr(("b", ["x"], 8, 0.5, None, False, 3))
    assert at.query_params == {
        "pick": "b",
        "many": "x",
        "n": "8",
        "f": "0.5",
        "flag": "false",
        "s": "3",
    }


def test_a_link_reproduces_the_view() -> None:
    at = AppTest.from_function(inputs_page)
    at.query_params.update(
        {
            "pick": "H100-SXM",
            "many": ["y", "z"],
            "n": "16",
            "f": "0.25",
            "opt": "3.5",
            "flag": "true",
            "s": "7",
        }
    )
    at.run()
    assert not at.exception and not at.warning
    assert shown(at) == repr(("H100-SXM", ["y", "z"], 16, 0.25, 3.5, True, 7))
    assert at.selectbox(key="t.pick").value == "H100-SXM"
    assert at.query_params["many"] == ["y", "z"]
    assert at.query_params["opt"] == "3.5"


def test_a_changed_widget_writes_back() -> None:
    at = AppTest.from_function(inputs_page).run()
    at.number_input(key="t.n").set_value(32).run()
    at.multiselect(key="t.many").set_value(["z", "x"]).run()
    at.toggle(key="t.flag").set_value(True).run()
    assert at.query_params["n"] == "32"
    assert at.query_params["many"] == ["z", "x"]
    assert at.query_params["flag"] == "true"
    assert shown(at) == repr(("b", ["z", "x"], 32, 0.5, None, True, 3))


def test_bad_url_values_are_named_and_ignored() -> None:
    at = AppTest.from_function(inputs_page)
    at.query_params.update(
        {"pick": "H100-SMX", "many": ["y", "q"], "n": "100", "f": "lots", "flag": "maybe"}
    )
    at.run()
    assert not at.exception
    warnings = plain(" ".join(w.value for w in at.warning))
    assert "pick='H100-SMX' is not a choice; did you mean 'H100-SXM'?" in warnings
    assert "many='q' is not a choice" in warnings
    assert "n='100' is out of range; valid: 1 to 64" in warnings
    assert "f='lots' is not a number" in warnings
    assert "flag='maybe' is not true or false" in warnings
    assert shown(at) == repr(("b", ["y"], 8, 0.5, None, False, 3))
    assert at.query_params["pick"] == "b"  # the URL now holds what is shown


def test_a_hidden_widget_keeps_its_value_in_the_session() -> None:
    at = AppTest.from_function(hiding_page).run()
    at.selectbox(key="h.pick").set_value("c").run()
    at.checkbox(key="show").uncheck().run()
    assert "pick" not in at.query_params
    at.checkbox(key="show").check().run()
    assert at.selectbox(key="h.pick").value == "c"
    assert at.query_params["pick"] == "c"


def test_new_choices_start_from_their_default() -> None:
    at = AppTest.from_function(dependent_page).run()
    at.multiselect(key="d.items").set_value(["s1", "s2"]).run()
    assert shown(at) == repr(["s1", "s2"])
    at.radio(key="d.family").set_value("big").run()
    assert shown(at) == repr(["b2"])
    at.multiselect(key="d.items").set_value([]).run()
    at.radio(key="d.family").set_value("small").run()
    assert shown(at) == repr(["s3"])


def test_number_text() -> None:
    assert [encode_number(v) for v in (8, 8.0, 0.7, 199000.0, 0.1194)] == [
        "8",
        "8",
        "0.7",
        "199000",
        "0.1194",
    ]
    assert parse_number("n", "8", True, 1, 64) == 8
    assert parse_number("f", "0.1194", False, 0, None) == pytest.approx(0.1194)
    for raw, message in (
        ("8.5", "not a whole number"),
        ("nan", "not a finite number"),
        ("0", "out of range"),
    ):
        with pytest.raises(ParamError, match=message):
            parse_number("n", raw, True, 1, 64)


def test_choice_and_bool_text() -> None:
    assert parse_choice("x", "2", [1, 2, 3]) == 2
    with pytest.raises(ParamError, match="did you mean 'aws'"):
        parse_choice("providers", "awz", ["aws", "gcp", "azure"])
    assert parse_bool("flag", "TRUE") is True and parse_bool("flag", "0") is False
