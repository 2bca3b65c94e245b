"""Generate page: one token per click (prefill, then decode steps) on ops.engine.decode.Decoder, the KV cache growing, the
bf16 fast path."""
from __future__ import annotations

import json

import pytest
from apptest_utils import no_exception, page_ok

PAGE = "generate"


def button(at, key):
    return [b for b in at.button if b.key == key][0]


def check_generate(at):
    button(at, "gen_next").click()
    at.run()
    no_exception(at)
    assert len(at.dataframe[0].value) == 1
    button(at, "gen_next").click()
    at.run()
    no_exception(at)
    df = at.dataframe[0].value
    assert len(df) == 2
    assert list(df.iloc[:, 3]) == ["prefill", "decode"]        # phase
    assert int(df.iloc[1, 4]) == 1                             # a decode step processes 1 token
    button(at, "gen_reset").click()
    at.run()
    no_exception(at)
    assert len(at.dataframe) == 0


def check_preview(at):
    """Before any click the page shows the prompt and previews the first step from the trace: 8 candidates, the
    greedy one (T = 0) red; the first "Next token" click then takes exactly that token."""
    assert len(at.dataframe) == 0
    at.number_input(key="gen_temp").set_value(0.0).run()          # the shared default T (0.8) samples: greedy here
    no_exception(at)
    bar = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    assert len(bar["y"]) == 8 and bar["marker"]["color"][0] == "#d62728" and "#d62728" not in bar["marker"]["color"][1:]
    button(at, "gen_next").click()
    at.run()
    no_exception(at)
    first = at.session_state["_gen"]["decoder"].token_ids[0]
    assert bar["y"][0].endswith(f"({first})"), (bar["y"][0], first)


@pytest.mark.real
def test_generate_real_preview():
    check_preview(page_ok(PAGE))


def test_generate_tiny_preview(tiny_app_dense):
    check_preview(page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend"))


@pytest.mark.real
def test_generate_real():
    check_generate(page_ok(PAGE))


@pytest.mark.real
def test_generate_real_batch_and_single_token():
    page_ok(PAGE, prompt="I like shanghai\nHi")
    page_ok(PAGE, prompt="Hi")


@pytest.mark.real
def test_generate_page_fast_path_runs_to_the_end(bundled):
    """The bfloat16 path: "Run to the end" decodes with the fast path, says so, and stores bf16 KV bytes."""
    at = page_ok(PAGE, lang="en", chat=True)
    at.run()
    at.number_input(key="gen_max").set_value(6)
    at.radio(key="gen_fast").set_value("bf16")
    at.run()
    button(at, "gen_run").click()
    at.run()
    no_exception(at)
    df = at.dataframe[0].value
    assert 1 <= len(df) <= 6
    assert any("fast path bf16" in c.value and "bfloat16" in c.value for c in at.caption)
    d = at.session_state["_gen"]["decoder"]                   # the page's ops.engine.decode.Decoder
    assert d.compute_dtype == "bfloat16" and d.done
    per_token_bf16 = 2 * 24 * 2 * 64 * 2                     # 2 (K, V) x L x nkv x hd x 2 bytes
    assert int(df.iloc[0, 7]) == per_token_bf16 * int(df.iloc[0, 6])   # KV bytes = entries x bf16 bytes


def test_generate_tiny(tiny_app_dense):
    check_generate(page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend"))


def test_every_decode_step_takes_a_decode_slot(tiny_app_dense, monkeypatch):
    """Decode steps run inside ui.jobs.DECODE_SLOTS, the semaphore that bounds a server's concurrent decode steps:
    a class's generations take turns instead of all crawling at once."""
    import threading

    from ui import jobs

    class Counting:
        def __init__(self):
            self.entered, self.inside, self.most, self.lock = 0, 0, 0, threading.Lock()

        def __enter__(self):
            with self.lock:
                self.entered += 1
                self.inside += 1
                self.most = max(self.most, self.inside)

        def __exit__(self, *exc):
            with self.lock:
                self.inside -= 1

    at = page_ok(PAGE, source=tiny_app_dense)
    slots = Counting()
    monkeypatch.setattr(jobs, "DECODE_SLOTS", slots)
    button(at, "gen_next").click()
    at.run()
    no_exception(at)
    assert slots.entered == 1 and slots.inside == 0
    button(at, "gen_run").click()
    at.run()
    no_exception(at)
    steps = len(at.dataframe[0].value)
    assert steps > 2 and slots.entered == steps and slots.most == 1


def test_generate_tiny_moe(tiny_app_moe):
    check_generate(page_ok(PAGE, source=tiny_app_moe))


@pytest.mark.real
def test_generate_page_int8_path(bundled):
    """The int8 choice: labelled with its bytes per token (fewer than bf16's), decodes with int8 weights, says so."""
    at = page_ok(PAGE, lang="en", chat=True)
    at.run()
    radio = at.radio(key="gen_fast")
    assert list(radio.options)[2].startswith("int8") and "MiB" in list(radio.options)[2]
    at.number_input(key="gen_max").set_value(3)
    radio.set_value("int8")
    at.run()
    button(at, "gen_run").click()
    at.run()
    no_exception(at)
    d = at.session_state["_gen"]["decoder"]
    assert d.path == "int8" and d.weight_dtype == "int8" and d.done
    assert any("fast path int8" in c.value and "int8 weights" in c.value for c in at.caption)


def test_generate_tiny_int8(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense, lang="en")
    at.radio(key="gen_fast").set_value("int8")
    at.run()
    check_generate(at)


@pytest.mark.parametrize("on", [False, True], ids=["normal", "classroom"])
def test_classroom_starts_on_int8(tiny_app_dense, monkeypatch, on):
    """In classroom mode a class's generations share the server's cores, so the page starts on int8 where the
    native kernel runs; otherwise on the traced path."""
    from ops.fast import native
    from ui import classroom

    if on:
        monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
        monkeypatch.setenv("OPERATOR_LAB_ALLOWED_MODELS", str(tiny_app_dense))
    else:
        monkeypatch.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    want = "int8" if on and native.load() is not None else "eager"
    assert classroom.default_decode_path() == want
    at = page_ok(PAGE, source=tiny_app_dense, lang="en")
    assert at.radio(key="gen_fast").value == want
    check_generate(at)
    assert at.session_state["_gen"]["decoder"].path == want


def test_sampling_settings_are_shared_with_the_sampling_page(tiny_app_dense):
    """One set of sampling settings: what is set on Sampling opens on Generate, and back (ui.pickers.SAMPLING)."""
    at = page_ok("sampling", source=tiny_app_dense)
    at.slider(key="smp_temp").set_value(1.25)
    at.slider(key="smp_topk").set_value(7)
    at.slider(key="smp_topp").set_value(0.55)
    at.slider(key="smp_rp").set_value(1.3)
    at.number_input(key="smp_seed").set_value(42)
    at.run()
    no_exception(at)
    at.switch_page("app_pages/generate.py").run()
    no_exception(at)
    got = [at.number_input(key=k).value for k in ("gen_temp", "gen_topk", "gen_topp", "gen_rp", "gen_seed")]
    assert got == [1.25, 7, 0.55, 1.3, 42], got
    assert at.session_state["_gen"]["decoder"].params.temperature == 1.25        # and the decoder uses them
    at.number_input(key="gen_temp").set_value(0.4)
    at.number_input(key="gen_topk").set_value(3)
    at.run()
    at.switch_page("app_pages/sampling.py").run()
    no_exception(at)
    assert at.slider(key="smp_temp").value == 0.4 and at.slider(key="smp_topk").value == 3
    assert at.slider(key="smp_topp").value == 0.55 and at.number_input(key="smp_seed").value == 42
