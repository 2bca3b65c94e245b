"""AppTest for the MLP/MoE, LM head, sampling, generate and tour pages: real model and tiny random ones."""
from __future__ import annotations

import pytest

from apptest_utils import APP, open_page

PAGES = ["app_pages/mlp.py", "app_pages/lm_head.py", "app_pages/sampling.py", "app_pages/generate.py", "app_pages/tour.py"]


def _open(page: str, source: str | None = None, prompt: str | None = None):
    at = open_page(page, source, prompt)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _texts(at) -> str:
    parts = [m.value for m in at.markdown] + [h.value for h in at.title] + [h.value for h in at.header]
    parts += [h.value for h in at.subheader] + [x.value for x in at.caption] + [x.value for x in at.info]
    parts += [x.value for x in at.warning] + [x.value for x in at.error] + [x.value for x in at.success]
    return "\n".join(str(p) for p in parts)


def _check_mlp(at, moe_real: bool):
    txt = _texts(at)
    assert "MoE" in txt
    assert "Qwen2.5-32B" in txt
    if moe_real:
        assert any("MoE" in s.value for s in at.success)
    else:
        assert any("random weights" in e.value or "随机权重" in e.value for e in at.error)
        assert all("max |diff|" in s.value for s in at.success if "diff" in s.value)
    assert len(at.dataframe) >= 2                           # the MoE facts table and the top-k table


def _check_generate(at):
    nxt = [b for b in at.button if b.key == "gen_next"][0]
    nxt.click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.dataframe[0].value) == 1
    [b for b in at.button if b.key == "gen_next"][0].click()
    at.run()
    assert not at.exception
    df = at.dataframe[0].value
    assert len(df) == 2
    assert list(df.iloc[:, 3]) == ["prefill", "decode"]        # phase
    assert int(df.iloc[1, 4]) == 1                             # a decode step processes 1 token
    [b for b in at.button if b.key == "gen_reset"][0].click()
    at.run()
    assert not at.exception
    assert len(at.dataframe) == 0


@pytest.mark.real
def test_generate_page_fast_path_runs_to_the_end(bundled):
    """The bfloat16 toggle: "Run to the end" decodes with the fast path, says so, and stores bf16 KV bytes."""
    at = open_page("generate", lang="en", chat=True)
    at.run()
    at.number_input(key="gen_max").set_value(6)
    at.toggle(key="gen_fast").set_value(True)
    at.run()
    [b for b in at.button if b.key == "gen_run"][0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    df = at.dataframe[0].value
    assert 1 <= len(df) <= 6
    assert any("fast path" in c.value and "bfloat16" in c.value for c in at.caption)
    c = at.session_state["_gen"]
    assert c["dtype"] == "bfloat16"
    per_token_bf16 = 2 * 24 * 2 * 64 * 2                     # 2 (K, V) x L x nkv x hd x 2 bytes
    assert int(df.iloc[0, 7]) == per_token_bf16 * int(df.iloc[0, 6])   # KV bytes = entries x bf16 bytes


def _check_tour(at):
    assert at.session_state["tour_step"] == 0
    [b for b in at.button if b.key == "tour_next"][0].click()
    at.run()
    assert not at.exception
    assert at.session_state["tour_step"] == 1
    [b for b in at.button if b.key == "tour_next"][0].click()
    at.run()
    assert at.session_state["tour_step"] == 2
    [b for b in at.button if b.key == "tour_back"][0].click()
    at.run()
    assert not at.exception
    assert at.session_state["tour_step"] == 1
    for _ in range(40):                                       # walk to the end: every step renders
        nxt = [b for b in at.button if b.key == "tour_next"][0]
        if nxt.proto.disabled:
            break
        nxt.click()
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["tour_step"] >= 19
    step = at.query_params["step"]
    assert (step if isinstance(step, str) else step[0]) == str(at.session_state["tour_step"])


def _check_sampling(at):
    assert not at.error
    at.number_input(key="smp_temp").set_value(-1.0)
    at.run()
    assert not at.exception
    assert at.error and "temperature" in at.error[0].value
    at.number_input(key="smp_temp").set_value(0.0)
    at.run()
    assert not at.exception and not at.error
    at.number_input(key="smp_topp").set_value(1.5)
    at.run()
    assert not at.exception
    assert at.error and "top_p" in at.error[0].value


def _run_all(source=None, prompt=None, moe_real=False):
    for page in PAGES:
        at = _open(page, source, prompt)
        assert at.title, page
        if page.endswith("mlp.py"):
            _check_mlp(at, moe_real)
        elif page.endswith("generate.py"):
            _check_generate(at)
        elif page.endswith("tour.py"):
            _check_tour(at)
        elif page.endswith("sampling.py"):
            _check_sampling(at)
        elif page.endswith("lm_head.py"):
            assert any("lens" in s.value for s in at.success)
            assert not any("✗" in e.value for e in at.error)


@pytest.mark.real
def test_pages_real_model():
    _run_all()


@pytest.mark.real
def test_pages_real_model_batch_and_single_token():
    for page in PAGES:
        at = _open(page, prompt="I like shanghai\nHi")
        assert not at.exception
    for page in PAGES:
        at = _open(page, prompt="Hi")
        assert not at.exception


def test_pages_tiny_app_dense(tiny_app_dense):
    _run_all(tiny_app_dense, prompt="I like shanghai\nHello there, friend")


def test_pages_tiny_app_moe(tiny_app_moe):
    _run_all(tiny_app_moe, moe_real=True)


def test_tour_step_from_url(tiny_app_dense):
    """A shared link ?step=7 opens the tour at step 8 (0-based 7)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.session_state["source"] = tiny_app_dense
    at.query_params["step"] = "7"
    at.switch_page("app_pages/tour.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["tour_step"] == 7
