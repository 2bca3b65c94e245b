"""Generate page: one token per click (prefill, then decode steps) on ops.engine.decode.Decoder, the KV cache growing, the
bf16 fast path; min-p, chunked prefill, prompt-lookup drafts and predict first (ui/generate_state.py). References for
those: plain greedy decoding run beside the page, ceil(S / C) prefill passes by hand, min-p's rule p_i >= min_p * p_max
by hand, lookup_draft replayed on the greedy tokens for the acceptance count."""
from __future__ import annotations

import json
import math

import pytest
import torch
from apptest_utils import no_exception, open_page, page_ok

from ops.engine.speculate import lookup_draft
from ops.models import bundled as bundled_models

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
    assert list(df.iloc[:, 6]) == ["prefill", "decode"]        # phase (after the candidates and the two p's)
    assert int(df.iloc[1, 7]) == 1                             # a decode step processes 1 token
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
    assert int(df.iloc[0, 10]) == per_token_bf16 * int(df.iloc[0, 9])   # KV bytes = entries x bf16 bytes


def test_generate_tiny(tiny_app_dense):
    check_generate(page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend"))


class Counting:
    """Stands in for classroom.jobs.DECODE_SLOTS: counts the steps that enter it, and the most inside at once."""

    def __init__(self):
        import threading

        self.entered, self.inside, self.most, self.lock = 0, 0, 0, threading.Lock()

    def __enter__(self):
        with self.lock:
            self.entered += 1
            self.inside += 1
            self.most = max(self.most, self.inside)

    def __exit__(self, *exc):
        with self.lock:
            self.inside -= 1


def test_every_decode_step_takes_a_decode_slot_with_the_batcher_off(tiny_app_dense, monkeypatch):
    """With no batcher (OPERATOR_LAB_DECODE_BATCH=0), decode steps run inside classroom.jobs.DECODE_SLOTS, the semaphore
    that bounds a server's concurrent decode steps: a class's generations take turns instead of all crawling at once."""
    from classroom import jobs

    at = page_ok(PAGE, source=tiny_app_dense)
    slots = Counting()
    monkeypatch.setattr(jobs, "DECODE_SLOTS", slots)
    monkeypatch.setattr(jobs, "batcher", lambda: None)
    button(at, "gen_next").click()
    at.run()
    no_exception(at)
    assert slots.entered == 1 and slots.inside == 0
    button(at, "gen_run").click()
    at.run()
    no_exception(at)
    steps = len(at.dataframe[0].value)
    assert steps > 2 and slots.entered == steps and slots.most == 1


def test_decode_steps_go_to_the_batcher_and_the_prefill_to_a_slot(tiny_app_dense, monkeypatch):
    """With the batcher on (the default), the prefill runs in a decode slot and every later step in the process's
    batcher (classroom/batcher.py), which records each step it ran; the text is the one stepped alone (tests/unit/test_batch.py
    checks the tokens)."""
    from classroom import jobs

    b = jobs.batcher()
    before = sum(r.rows for r in b.records())
    at = page_ok(PAGE, source=tiny_app_dense)
    slots = Counting()
    monkeypatch.setattr(jobs, "DECODE_SLOTS", slots)
    button(at, "gen_run").click()
    at.run()
    no_exception(at)
    steps = len(at.dataframe[0].value)
    assert steps > 2 and slots.entered == 1
    assert sum(r.rows for r in b.records()) - before == steps - 1


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
    from classroom import mode as class_mode
    from ops.fast import native

    if on:
        monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
        monkeypatch.setenv("OPERATOR_LAB_ALLOWED_MODELS", str(tiny_app_dense))
    else:
        monkeypatch.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    want = "int8" if on and native.load() is not None else "eager"
    assert class_mode.default_decode_path() == want
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


# ---- min-p, chunked prefill, prompt-lookup drafts, predict first ----------------------------------------------
CODE = "x = [1, 2, 3, 4, 5, 6, 7, 8]; y = [1, 2, 3, 4, 5, 6, 7, 8]; z = [1, 2, 3, 4,"      # repeats itself
N = 40


@pytest.fixture(scope="module")
def echo_app(tmp_path_factory):
    """A tiny Qwen2 that repeats its last token: attention and MLP write nothing (o_proj, down_proj zero) and the
    LM head is the embedding, so the logits are e_t · e_j and the largest is j = t (random rows of 64 numbers: the
    row's own square beats its dot with every other row). Greedy text repeats itself, so drafts copied from it pass."""
    import shutil

    import transformers as tf

    tok = bundled_models.cache_dir() / "qwen2.5-coder-0.5b-instruct" / "tokenizer.json"
    if not tok.exists():
        pytest.skip("the bundled tokenizer.json is not prepared")
    torch.manual_seed(0)
    model = tf.Qwen2ForCausalLM(tf.Qwen2Config(vocab_size=151936, hidden_size=64, intermediate_size=64,
                                               num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                                               max_position_embeddings=512, tie_word_embeddings=True))
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
    folder = tmp_path_factory.mktemp("tiny_echo")
    model.save_pretrained(str(folder))
    shutil.copy(tok, folder / "tokenizer.json")
    return str(folder)


def run_to_end(at):
    button(at, "gen_run").click()
    at.run()
    no_exception(at)
    return at.session_state["_gen"]["decoder"]


def page_text(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def greedy_page(source, lang, **settings):
    at = open_page(PAGE, source=source, prompt=CODE, lang=lang, folds=False)
    at.number_input(key="gen_temp").set_value(0.0)
    at.number_input(key="gen_max").set_value(N).run()          # greedy first: the draft is greedy only
    for key, value in settings.items():
        at.radio(key=key).set_value(value)
    at.run()
    no_exception(at)
    return at


def replayed_acceptance(prompt_ids, greedy, budget, max_ngram=3, max_draft=8):
    """(proposed, accepted) of prompt lookup given plain greedy's tokens: at each pass after the prefill the draft
    is lookup_draft of the text so far, kept while it matches the greedy tokens; the pass yields accepted + 1."""
    proposed = accepted = 0
    k = 1                                                     # the prefill made the first token
    while k < len(greedy):
        draft = lookup_draft(prompt_ids + greedy[:k], max_ngram, min(max_draft, budget - k - 1))
        ok = 0
        while ok < len(draft) and k + ok < len(greedy) and draft[ok] == greedy[k + ok]:
            ok += 1
        ok = min(ok, len(greedy) - k - 1)                     # the pass's own token closes it
        proposed, accepted, k = proposed + len(draft), accepted + ok, k + ok + 1
    return proposed, accepted


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_prompt_lookup_gives_greedy_tokens_and_reports_them(echo_app, lang):
    """The drafted decoding's tokens are plain greedy's; its proposed / accepted counts equal lookup_draft replayed
    on plain greedy's tokens; the page shows them, the acceptance rate and the passes saved."""
    at = greedy_page(echo_app, lang, gen_draft="prompt-lookup")
    d = run_to_end(at)
    plain = d.model.generate(CODE, chat=False, max_new_tokens=N)
    assert d.draft == "prompt-lookup" and d.token_ids == plain.token_ids
    assert (d.proposed, d.accepted) == replayed_acceptance(d.prompt_ids, plain.token_ids, N)
    assert d.accepted > 0 and len(set(d.token_ids)) == 1, "the echo model repeats: its drafts should pass"
    assert len(d.token_ids) == N and d.stopped == "max_new_tokens"
    df = at.dataframe[0].value
    assert list(df.iloc[:, -1]) == sorted(df.iloc[:, -1]) and df.iloc[-1, -1] == d.result().forward_passes   # pass
    g = d.result()
    assert g.passes_saved == d.accepted and g.forward_passes == len(d.token_ids) - d.accepted
    body = page_text(at)
    rate = f"{d.accepted / d.proposed:.0%}"
    words = {"en": ("drafted", "accepted", "passes saved", "Prompt lookup proposed"),
             "zh": ("草稿 token", "被接受的", "省下的前向次数", "提示词查找提出了")}[lang]
    assert all(w in body for w in words), body
    assert f"{d.proposed}" in body and rate in body and f"{g.passes_saved}" in body


@pytest.mark.real
def test_prompt_lookup_on_the_bundled_model(bundled):
    """The bundled Qwen2.5 on a self-repeating line of code: drafts pass, the tokens are plain greedy's."""
    at = open_page(PAGE, prompt=CODE, lang="en", folds=False)
    at.number_input(key="gen_temp").set_value(0.0)
    at.number_input(key="gen_max").set_value(24).run()
    at.radio(key="gen_draft").set_value("prompt-lookup").run()
    d = run_to_end(at)
    plain = d.model.generate(CODE, chat=False, max_new_tokens=24)
    assert d.token_ids == plain.token_ids and d.accepted > 0
    assert (d.proposed, d.accepted) == replayed_acceptance(d.prompt_ids, plain.token_ids, 24)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chunked_prefill_gives_greedy_tokens_and_counts_passes(tiny_app_dense, lang):
    """Greedy tokens equal plain (one-pass) greedy decoding's; ceil(S / 4) prefill passes, the largest of 4."""
    at = greedy_page(tiny_app_dense, lang, gen_chunk=4)
    d = run_to_end(at)
    plain = d.model.generate(CODE, chat=False, max_new_tokens=N)
    S = len(d.prompt_ids)
    assert d.token_ids == plain.token_ids
    assert d.prefill_passes == math.ceil(S / 4) and d.prefill_largest == 4 and S > 8
    body = page_text(at)
    words = {"en": ("prefill passes", "largest prefill pass", f"{math.ceil(S / 4)} of them for the prefill"),
             "zh": ("预填充次数", "预填充最大一次", f"其中预填充 {math.ceil(S / 4)} 次")}[lang]
    assert all(w in body for w in words), body
    assert "drafted" not in body and "草稿 token" not in body     # no draft chosen, no draft figures


def test_min_p_is_on_the_page_and_trims_the_draw(tiny_app_dense):
    """min-p = 0.5 at T = 1: a candidate keeps probability iff exp(z_i - z_max) >= 0.5 on the tempered logits."""
    at = open_page(PAGE, source=tiny_app_dense, prompt=CODE, lang="en", folds=False)
    assert at.number_input(key="gen_minp").label == "min-p"
    at.number_input(key="gen_temp").set_value(1.0)
    at.number_input(key="gen_minp").set_value(0.5)
    at.number_input(key="gen_max").set_value(6)
    at.run()
    d = run_to_end(at)
    assert d.params.min_p == 0.5 and d.params.temperature == 1.0
    for s in d.steps:
        z = s.stages["top_p"]                                  # tempered logits before min-p, at the candidates
        kept = [p > 0 for p in s.stages["probs"]]
        assert kept == [math.exp(zi - max(z)) >= 0.5 for zi in z], (z, s.stages["probs"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_draft_is_greedy_only(tiny_app_dense, lang):
    at = greedy_page(tiny_app_dense, lang, gen_draft="prompt-lookup")
    at.number_input(key="gen_temp").set_value(0.8).run()
    no_exception(at)
    assert at.radio(key="gen_draft").disabled and at.session_state["_gen"]["decoder"].draft == ""
    note = {"en": "greedy decoding only", "zh": "只用于贪心解码"}[lang]
    assert any(note in c.value for c in at.caption)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_predict_first_hides_the_generation_until_a_guess(tiny_app_dense, lang):
    """Generated first, then the switch on: the text, table and buttons are gone until a guess is committed; the
    options are the first step's top candidates and the answer is the token plain greedy takes first."""
    switch, commit = {"en": ("Predict first", "Commit and reveal"), "zh": ("先猜再看", "确定，揭晓")}[lang]
    at = greedy_page(tiny_app_dense, lang)
    d = run_to_end(at)
    assert at.dataframe and d.text and d.text in page_text(at).replace("<br>", "\n")
    [toggle] = [x for x in at.toggle if x.label == switch]
    toggle.set_value(True).run()
    no_exception(at)
    assert not at.dataframe and not [b for b in at.button if b.key in ("gen_next", "gen_run")]
    assert d.text not in "\n".join(m.value for m in at.markdown), "the generation shown before the guess"
    [radio] = [r for r in at.radio if r.label in ("Your guess", "你的猜测")]
    first = d.model.generate(CODE, chat=False, max_new_tokens=1).token_ids[0]
    [right] = [o for o in radio.options if o.endswith(f"({first})")]
    assert len(radio.options) >= 5 and list(radio.options) == sorted(radio.options)
    radio.set_value(right)
    [b for b in at.button if b.label == commit][0].click().run()
    no_exception(at)
    assert at.dataframe and any(right in s.value for s in at.success)
    assert d.text in "\n".join(m.value for m in at.markdown).replace("<br>", "\n")


def test_predict_first_before_any_generation(tiny_app_dense):
    """Switch on from the start (?predict=1): the question comes before the buttons and the preview; a wrong guess
    is told the model's answer, and the first click then takes exactly that token."""
    at = open_page(PAGE, source=tiny_app_dense, prompt=CODE, lang="en", folds=False, predict="1")
    at.number_input(key="gen_temp").set_value(0.0).run()
    no_exception(at)
    assert not [b for b in at.button if b.key == "gen_next"] and not at.get("plotly_chart")
    [radio] = [r for r in at.radio if r.label == "Your guess"]
    first = at.session_state["_gen"]["first"].token_id
    wrong = [o for o in radio.options if not o.endswith(f"({first})")][0]
    radio.set_value(wrong)
    [b for b in at.button if b.label == "Commit and reveal"][0].click().run()
    no_exception(at)
    assert any(f"({first})" in w.value and "the model's answer" in w.value for w in at.warning)
    assert at.get("plotly_chart") and not at.session_state["_gen"]["decoder"].steps
    button(at, "gen_next").click()
    at.run()
    no_exception(at)
    assert at.session_state["_gen"]["decoder"].token_ids == [first]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_step_shows_its_candidates_after_the_sampling_stages(tiny_app_dense, lang):
    """After each click the preview's place shows the step's top candidates: their probabilities after the sampling
    stages (T = 0.8, top-k 50, top-p 0.9, the shared defaults) equal transformers' own logits warpers applied to its
    logits for the prompt and the tokens taken so far; the table's row marks the chosen one (✓) with that p."""
    import transformers as tf
    from predict_utils import transformers_run

    prompt = "我明天要去北京参加面试，我觉得"
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, folds=False)
    at.radio(key="gen_fast").set_value("eager").run()
    _, hf = transformers_run(tiny_app_dense, prompt)
    d = at.session_state["_gen"]["decoder"]
    for k in (1, 2, 3):
        button(at, "gen_next").click()
        at.run()
        no_exception(at)
        ids = list(d.prompt_ids) + d.token_ids[:k - 1]
        with torch.no_grad():
            z = hf(torch.tensor([ids])).logits[:, -1].float()
        w = tf.TopPLogitsWarper(0.9)(None, tf.TopKLogitsWarper(50)(None, tf.TemperatureLogitsWarper(0.8)(None, z)))
        ref = torch.softmax(w, -1)[0]
        [chart] = [c for c in at.get("plotly_chart") if c.proto.id.endswith("-gen-step")]
        raw, now = json.loads(chart.proto.spec)["data"][:2]
        shown = [int(y.rsplit("(", 1)[1].rstrip(")")) for y in now["y"]]
        want = torch.softmax(z[0], -1).topk(len(shown)).indices.tolist()
        if d.token_ids[k - 1] not in want:                # drawn from further down: shown in the last place
            want[-1] = d.token_ids[k - 1]
        assert shown == want, (k, shown, want)
        # float32 logits of a tiny random model: transformers and the engine agree within ~1e-6 in p; 1e-5 of room
        assert max(abs(a - float(ref[i])) for a, i in zip(now["x"], shown)) < 1e-5, (k, now["x"])
        assert max(abs(a - float(torch.softmax(z[0], -1)[i])) for a, i in zip(raw["x"], shown)) < 1e-5
        row = at.dataframe[0].value.iloc[k - 1, 3]
        [mark] = [c for c in row.split(" · ") if c.startswith("✓")]
        assert abs(float(mark.rsplit(" ", 1)[1]) - float(ref[d.token_ids[k - 1]])) <= 0.005 + 1e-6, (row, k)


def test_the_page_says_when_the_run_uses_other_weights_than_the_preview(tiny_app_dense):
    """Decoding with bfloat16 weights: before the first click the preview says its weights are the loaded float32
    ones and the run's are not; after it, the first token's model probability both ways, the preview's equal to
    transformers' float32 softmax (to the 4 decimals shown) and the run's to the bf16 step's own."""
    from apptest_utils import texts
    from predict_utils import transformers_run

    prompt = "我明天要去北京参加面试，我觉得"
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang="en", folds=False)
    at.radio(key="gen_fast").set_value("bf16").run()
    no_exception(at)
    assert "generating uses bfloat16 weights" in texts(at)
    button(at, "gen_next").click()
    at.run()
    no_exception(at)
    d = at.session_state["_gen"]["decoder"]
    out, _ = transformers_run(tiny_app_dense, prompt)
    token = d.token_ids[0]
    step = d.steps[0]
    preview = float(torch.softmax(out.logits[0, -1].float(), -1)[token])
    run = step.stages["raw_probs"][step.candidates.index(token)]
    [note] = [c.value for c in at.caption if "decodes with bfloat16 weights" in c.value]
    import re
    shown_preview, shown_run = map(float, re.search(r"([\d.]+) in the preview and ([\d.]+) here", note).groups())
    # shown to 4 decimals: half a unit of the last place, plus ~1e-6 for float32 between the two implementations
    assert abs(shown_preview - preview) <= 5e-5 + 1e-6 and abs(shown_run - run) <= 5e-5 + 1e-9, note
