"""A short run of bench/load_protocol.py against a live server: three students on Streamlit's own websocket
protocol, each opening a page with their own prompt, following a link, moving the layer slider and running a
generation. No errors (a run that never reaches script_finished is one), no student sees another's prompt, and
every student's stream carries its own. Loopback only."""
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.real]
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def test_students_on_the_protocol_stay_apart():
    pytest.importorskip("websockets")
    import load_protocol

    actions = 5                    # open, link, layer slider, Generate page, generate: every kind of message once
    s = load_protocol.run(students=3, actions=actions, think_s=0, timeout_s=120, gen_tokens=2)
    assert s["error_list"] == [] and s["errors"] == 0, s["error_list"]
    assert s["leaks"] == 0
    assert s["own_missing"] == []
    assert s["actions"] == 3 * actions
    assert {k for k in s["by_kind"]} == {"open", "page", "layer", "generate"}
