"""ui.session.set_query: a URL parameter is sent to the browser only when its value changes.

Every st.query_params write enqueues a page_info_changed message (a history pushState in the browser); the
sidebar and the pickers call set_query on every run, so an unchanged value must send nothing."""
import streamlit as st
from streamlit.runtime.state.query_params import QueryParams

from ui import session


def _counting_params(monkeypatch) -> tuple[QueryParams, list[str]]:
    qp = QueryParams()
    sent = []
    monkeypatch.setattr(qp, "_send_query_param_msg", lambda: sent.append(str(qp)))
    monkeypatch.setattr(st, "query_params", qp)
    return qp, sent


def test_unchanged_value_sends_nothing(monkeypatch):
    qp, sent = _counting_params(monkeypatch)
    session.set_query("lang", "en")
    assert len(sent) == 1 and qp.get_all("lang") == ["en"]
    session.set_query("lang", "en")
    session.set_query("lang", "en")
    assert len(sent) == 1
    session.set_query("lang", "zh")
    assert len(sent) == 2 and qp.get_all("lang") == ["zh"]


def test_repeated_parameter_is_written_as_one(monkeypatch):
    qp, sent = _counting_params(monkeypatch)
    qp._query_params["lang"] = ["zh", "en"]     # a link with ?lang=zh&lang=en: get() alone would see "en"
    session.set_query("lang", "en")
    assert len(sent) == 1 and qp.get_all("lang") == ["en"]
