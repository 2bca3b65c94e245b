"""Bad input everywhere it can enter: the API (Model.trace / generate), the CLI (python -m ops), the app.

Broken model files through the API are mostly in test_loading.py; the extra cases here are the ones it
does not have (a wrong-kind file, random bytes, a corrupted header) and the app's handling of them.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from ops import InputError, SamplingError, SamplingParams, configure, load_model
from ops.engine import inputs
from ops.engine.trace import contract_shapes
from ops.errors import LoadError, PromptTooLong, TraceTooBig

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tests.conftest import make_tiny_hf_folder

    folder = make_tiny_hf_folder(tmp_path_factory.mktemp("bad_input_tiny"), "qwen2")
    return load_model(str(folder), device="cpu")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for k in ("OPERATOR_LAB_MAX_TOKENS", "OPERATOR_LAB_CLASSROOM", "OPERATOR_LAB_CLASSROOM_MAX_TOKENS",
              "OPERATOR_LAB_CLASSROOM_MAX_NEW_TOKENS", "OPERATOR_LAB_CLASSROOM_MAX_BATCH", "OPERATOR_LAB_SESSION_MB"):
        monkeypatch.delenv(k, raising=False)


def limit(n: int):
    """The server's prompt limit as the app hands it to ops (ops.configure)."""
    configure(limits=inputs.Limits(max_tokens=n, max_new_tokens=n))


# ---- the sanitiser ------------------------------------------------------------------------------
def test_sanitize_policy():
    s = inputs.sanitize("a\x00b\x1bc\td\r\ne\rf\x7fg\x85h\u200dі")
    assert s.text == "abc\td\ne\nfgh\u200dі"         # \t \n kept, \r\n and \r -> \n, ZWJ kept
    assert s.controls == 4 and s.control_names == ("U+0000", "U+001B", "U+007F", "U+0085")
    assert "U+0000" in s.message() and "removed" in s.message() and "删除" in s.message("zh")
    lone = inputs.sanitize("x\ud800y\udfff")
    assert lone.text == "x\ufffdy\ufffd" and lone.surrogates == 2 and "U+FFFD" in lone.message()
    assert not inputs.sanitize("שלום עולם 👩‍👩‍👧 مرحبا").changed   # RTL and ZWJ sequences are left alone
    assert inputs.sanitize("one\n\n  \ntwo\x00\r\nthree").lines == ("one", "two", "three")


# ---- API -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("prompt", ["", "   ", "\n\t\n", "\x00\x01"])
def test_empty_prompt(tiny, prompt):
    with pytest.raises(InputError, match="empty"):
        tiny.trace(prompt)
    with pytest.raises(InputError, match="empty"):
        tiny.generate(prompt, max_new_tokens=1)


def test_no_prompts(tiny):
    with pytest.raises(InputError, match="no prompt"):
        tiny.trace([])


def test_too_long_message_and_truncate(tiny, monkeypatch):
    limit(12)
    text = "the cat sat on the mat and then the dog ran"
    with pytest.raises(PromptTooLong) as e:
        tiny.trace(text)
    assert "12 tokens" in str(e.value) and "truncate" in str(e.value) and e.value.limit == 12
    with pytest.warns(UserWarning, match="truncated"):
        tr = tiny.trace(text, truncate=True)
    assert tr.lengths[0] == 12 and text.startswith(tr.prompts[0])
    with pytest.warns(UserWarning, match="truncated"):           # chat: the template counts toward the limit
        limit(40)
        tr = tiny.trace(text * 3, chat=True, truncate=True, system=None)   # no system turn: 40 leaves room
    assert tr.lengths[0] <= 40 and tr.texts[0].endswith("<|im_start|>assistant\n")


def test_truncate_never_splits_a_character(bundled_tokenizer):
    tok = bundled_tokenizer
    text = "你好世界" * 50 + "😀" * 50
    for n in (1, 7, 33, 101):
        cut = inputs.truncate_text(tok, text, n)
        assert text.startswith(cut) and len(tok.encode(cut)) <= n and "\ufffd" not in cut


def test_too_many_characters(tiny):
    with pytest.raises(PromptTooLong, match="characters"):
        tiny.trace("ab " * (inputs.MAX_CHARS // 3 + 10))


def test_controls_removed_with_warning(tiny):
    with pytest.warns(UserWarning, match="control"):
        tr = tiny.trace("the\x00 cat\x1b[31m sat\tdown")
    assert tr.prompts[0] == "the cat[31m sat\tdown" and "\x00" not in tiny.tokenizer.decode(tr.token_ids[0].tolist())


def test_lone_surrogate_replaced(tiny):
    with pytest.warns(UserWarning, match="surrogate"):
        tr = tiny.trace("a\ud83db")
    assert tr.prompts[0] == "a\ufffdb"
    assert tiny.tokenizer.decode(tr.token_ids[0, :tr.lengths[0]].tolist()) == "a\ufffdb"


@pytest.mark.real
@pytest.mark.parametrize("text", ["مرحبا بالعالم", "שלום עולם", "abc \u202eRTL override\u202c def",
                                  "👩‍👩‍👧‍👦 family", "🏳️‍🌈 flag", "e\u0301 combining"])
def test_rtl_and_emoji_just_work(bundled_tokenizer, text):
    import unicodedata

    tok = bundled_tokenizer
    ids = tok.encode(text)
    assert ids and tok.decode(ids) == unicodedata.normalize("NFC", text)
    assert not inputs.sanitize(text).changed


@pytest.mark.real
@pytest.mark.parametrize("ch", ["a", "😀", " ", "你", "\n"])
def test_ten_thousand_repeats_round_trip(bundled_tokenizer, ch):
    tok = bundled_tokenizer
    ids = tok.encode(ch * 10_000)
    assert tok.decode(ids) == ch * 10_000


@pytest.mark.real
def test_ten_thousand_repeats_limit_message(real_model, monkeypatch):
    limit(512)

    def forward(*a, **k):
        raise AssertionError("a forward pass ran for a prompt over the limit")

    monkeypatch.setattr(real_model, "trace_ids", forward)      # refused before any forward pass
    with pytest.raises(inputs.PromptTooLong, match="512 tokens"):
        real_model.trace("a" * 10_000)


def test_batch_of_100_refused_by_api(tiny):
    with pytest.raises(InputError, match="at most 8"):
        tiny.trace([f"line {i}" for i in range(100)])


@pytest.mark.parametrize("kw, word", [
    (dict(temperature=-1), "temperature"), (dict(temperature="hot"), "temperature"),
    (dict(temperature=float("nan")), "temperature"), (dict(top_k=-3), "top_k"), (dict(top_k=2.5), "top_k"),
    (dict(top_p=0.0), "top_p"), (dict(top_p=1.5), "top_p"), (dict(top_p="x"), "top_p"),
    (dict(repetition_penalty=0), "repetition_penalty"), (dict(seed=-1), "seed"), (dict(seed=None), "seed")])
def test_sampling_out_of_range(tiny, kw, word):
    with pytest.raises(SamplingError, match=word):
        SamplingParams(**kw)
    with pytest.raises(SamplingError, match=word):
        tiny.generate("the cat", max_new_tokens=1, **kw)


@pytest.mark.parametrize("n", [0, -1, 10**9, 2.5, "ten"])
def test_max_new_tokens_out_of_range(tiny, n):
    with pytest.raises(InputError, match="max_new_tokens"):
        tiny.generate("the cat", max_new_tokens=n)


# ---- model sources not covered by test_loading.py ----------------------------------------------------
def test_wrong_kind_of_file(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello")
    with pytest.raises(LoadError, match="not a GGUF"):
        load_model(str(p))


def test_random_bytes_named_gguf(tmp_path):
    p = tmp_path / "model.gguf"
    p.write_bytes(b"\x13\x37" * 500)
    with pytest.raises((LoadError, ValueError)) as e:
        load_model(str(p))
    assert "model.gguf" in str(e.value)


def test_gguf_magic_then_garbage(tmp_path):
    p = tmp_path / "model.gguf"
    p.write_bytes(b"GGUF" + b"\xff" * 4000)
    with pytest.raises((LoadError, ValueError)) as e:
        load_model(str(p))
    assert "model.gguf" in str(e.value)


def test_corrupted_safetensors_header(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    f = folder / "model.safetensors"
    data = bytearray(f.read_bytes())
    data[8:40] = b"{" * 32                          # the JSON header, scrambled; the length stays right
    f.write_bytes(bytes(data))
    with pytest.raises(LoadError, match="model.safetensors"):
        load_model(str(folder))


def test_folder_without_config(tmp_path):
    (tmp_path / "weights").mkdir()
    with pytest.raises(LoadError, match="config.json"):
        load_model(str(tmp_path / "weights"))


def test_nothing_written_but_the_cache(tiny_hf_folder, tmp_path):
    """A failed load leaves the model folder exactly as it was."""
    folder = tiny_hf_folder("qwen2")
    (folder / "model.safetensors").write_bytes(b"\x00" * 100)
    before = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    with pytest.raises(LoadError):
        load_model(str(folder))
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == before


# ---- memory budget ---------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["qwen2", "qwen2_moe"])
def test_estimate_matches_trace(tiny_hf_folder, arch):
    model = load_model(str(tiny_hf_folder(arch)), device="cpu")
    for capture in (None, ["layers.0.*"], ["logits", "*.attn.probs"]):
        tr = model.trace(["the cat sat", "a"], capture=capture)
        assert inputs.estimate_trace_bytes(model.config, tr.B, tr.S, capture) == tr.nbytes
        assert set(contract_shapes(model.config, tr.B, tr.S)) >= set(tr.names())


def test_trace_over_budget_refused(tiny):
    need = inputs.estimate_trace_bytes(tiny.config, 1, len(tiny.tokenizer.encode("the cat sat")))
    with pytest.raises(TraceTooBig, match="shorter prompt"):
        tiny.trace("the cat sat", max_bytes=need // 2)
    tiny.trace("the cat sat", max_bytes=need * 2)
    tiny.trace("the cat sat", max_bytes=need // 2, capture=["logits"])     # a smaller capture fits


@pytest.mark.real
def test_estimate_real_model_before_running(bundled):
    config = bundled[0]
    big = inputs.estimate_trace_bytes(config, 8, 2048)
    logits = 8 * 2048 * config.vocab_size * 4
    assert big > 2 * logits > 16 * 2**30   # an 8 x 2048 trace of the 0.5B model: refused on any budget here
    probs = 8 * config.num_attention_heads * 2048 ** 2 * 4 * config.num_hidden_layers
    assert big < probs                  # attention maps (42 GiB) are recipes, like the MLP parts
    assert inputs.estimate_trace_bytes(config, 8, 2048, recompute=False) > 100 * 2**30


# ---- classroom limits in the API -----------------------------------------------------------------------
def test_classroom_limits(tiny, monkeypatch):
    """The classroom's limits, read from the environment (settings.py) and handed to ops, as app.py does."""
    import settings

    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
    settings.apply()
    assert inputs.token_limit(tiny.config) == min(512, tiny.config.max_position_embeddings)
    assert inputs.batch_limit() == 4 and inputs.max_new_tokens_limit(tiny.config) == 64
    with pytest.raises(InputError, match="at most 4"):
        tiny.trace(["a", "b", "c", "d", "e"])
    with pytest.raises(InputError, match="max_new_tokens"):
        tiny.generate("the cat", max_new_tokens=65)
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM_MAX_TOKENS", "5")
    settings.apply()
    with pytest.raises(PromptTooLong, match="5 tokens"):
        tiny.trace("the cat sat on the mat")
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM_MAX_TOKENS", "not a number")   # refused, by name: not ignored
    with pytest.raises(settings.SettingError, match="OPERATOR_LAB_CLASSROOM_MAX_TOKENS='not a number'"):
        settings.apply()


# ---- CLI -------------------------------------------------------------------------------------------------
def _cli(argv, capsys):
    from ops.__main__ import main

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        rc = main(argv)
    return rc, capsys.readouterr()


def test_cli_bad_inputs(tiny_hf_folder, capsys, monkeypatch):
    folder = str(tiny_hf_folder("qwen2"))
    rc, out = _cli(["--model", folder, "trace", "   "], capsys)
    assert rc == 2 and "empty" in out.err
    limit(4)
    rc, out = _cli(["--model", folder, "trace", "the cat sat on the mat"], capsys)
    assert rc == 2 and "4 tokens" in out.err
    rc, out = _cli(["--model", folder, "generate", "the cat", "--top-p", "7"], capsys)
    assert rc == 2 and "top_p" in out.err
    rc, out = _cli(["--model", str(Path(folder) / "nope"), "trace", "x"], capsys)
    assert rc == 2 and "no such file" in out.err
    configure()
    rc, out = _cli(["--model", folder, "trace", "a\x00b"], capsys)
    assert rc == 0 and "control" in out.err


# ---- the app (AppTest) ---------------------------------------------------------------------------------
def _app(prompt="I like shanghai", page=None):
    """The app with ?lang=en&prompt=..., on its default page (overview) or switched to `page`."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = "en"
    at.query_params["prompt"] = prompt
    at.run()
    if page:
        at.switch_page(f"app_pages/{page}.py")
        at.run()
    return at


def _held(at):
    """Session at's newest trace, from the one store (the session holds only its key)."""
    from ops.engine.store import STORE
    return STORE.peek(list(at.session_state.traces.values())[-1])


def _texts(at, kind):
    return " ".join(x.value for x in getattr(at, kind))


@pytest.mark.real
def test_app_empty_prompt():
    at = _app()
    assert not at.exception and len(at.session_state.traces) == 1
    at.session_state["prompt_text"] = "   \n\t"
    at.run()
    assert not at.exception and "Type a prompt" in _texts(at, "warning")
    assert len(at.session_state.traces) == 1                     # the good trace is kept


@pytest.mark.real
def test_app_too_long_then_truncate_button(monkeypatch):
    monkeypatch.setenv("OPERATOR_LAB_MAX_TOKENS", "8")
    at = _app()
    good = list(at.session_state.traces)
    at.session_state["prompt_text"] = "a" * 10_000
    at.run()
    assert not at.exception
    assert "8 tokens" in _texts(at, "error") and "truncate" in _texts(at, "error")
    assert list(at.session_state.traces) == good                 # state unchanged
    assert "last prompt that worked" in _texts(at, "info")       # and the page still shows the good trace
    button = [b for b in at.button if "truncate to the first 8 tokens" in b.label]
    assert button, [b.label for b in at.button]
    button[0].click().run()
    assert not at.exception and not at.error, _texts(at, "error")
    assert at.session_state.prompt_text == "a" * 64              # 'aaaaaaaa' is one token: 8 of them
    assert _held(at).lengths == [8]


@pytest.mark.real
def test_app_controls_and_surrogates():
    # lone surrogates cannot reach the app: a browser's text box cannot send one and Streamlit decodes the URL
    # with replacement (AppTest cannot even encode one); the API tests above cover them
    at = _app("I like\x00 shang\x1bhai \ufffd 👩‍👩‍👧 שלום")
    assert not at.exception, [e.value for e in at.exception]
    assert "control" in _texts(at, "info") and "U+0000" in _texts(at, "info")
    tr = _held(at)
    assert tr.prompts == ["I like shanghai \ufffd 👩‍👩‍👧 שלום"]


@pytest.mark.real
def test_app_batch_of_100_capped():
    at = _app()
    at.session_state["prompt_text"] = "\n".join(f"line {i}" for i in range(100))
    at.run()
    assert not at.exception and not at.error
    assert "only the first 8" in _texts(at, "warning")
    assert _held(at).B == 8


def _broken_sources(tmp_path, tiny_hf_folder):
    import shutil

    no_config = tmp_path / "no_config"
    no_config.mkdir()
    (no_config / "model.safetensors").write_bytes(b"\x00" * 64)
    pickle = tiny_hf_folder("qwen2")
    (pickle / "model.safetensors").unlink()
    (pickle / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    truncated = tiny_hf_folder("qwen2")
    f = truncated / "model.safetensors"
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
    wrong_kind = tmp_path / "notes.txt"
    wrong_kind.write_text("hello")
    bad_gguf = tmp_path / "model.gguf"
    bad_gguf.write_bytes(b"GGUF" + b"\xff" * 100)
    shutil.rmtree(tmp_path / "gone", ignore_errors=True)
    return {"no such file": tmp_path / "gone", "config.json": no_config, "pickle": pickle,
            "truncated": truncated, "not a GGUF": wrong_kind, "model.gguf": bad_gguf}


@pytest.mark.real
def test_app_bad_model_keeps_previous(tmp_path, tiny_hf_folder):
    at = _app()
    traces = list(at.session_state.traces)
    for word, path in _broken_sources(tmp_path, tiny_hf_folder).items():
        at.session_state["source"] = str(path)
        at.run()
        assert not at.exception, (word, [e.value for e in at.exception])
        errors = _texts(at, "error")
        assert "Could not load the model" in errors and word in errors, (word, errors)
        assert "Still showing the last model" in _texts(at, "warning")
        assert at.session_state.source == "default"             # back on the model that loaded
        assert any("Overview" in x.value for x in at.title)     # and the page still works
        assert list(at.session_state.traces) == traces
        at.run()
        assert not at.error                                     # the next rerun is clean
