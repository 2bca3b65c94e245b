"""The engine: one forward pass configured by name, one decode step, derived weights built once, analyses
cached on the trace."""
from __future__ import annotations

import threading

import pytest
import torch

from ops import InputError, SamplingParams, load_model
from ops.arith import costs
from ops.engine.decode import KVCache
from ops.engine.model import Model
from ops.lab import lm_head_lens
from ops.models import tiny
from tests.parity.test_parity_tiny import tiny_pair


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory):
    """A tiny random Qwen2 with a tokenizer (so prompts, chat templates and EOS work)."""
    from tests.conftest import make_tiny_hf_folder

    return load_model(str(make_tiny_hf_folder(tmp_path_factory.mktemp("engine_tiny"), "qwen2")), device="cpu")


# ---- derived weights: built once, shared by every thread ---------------------------------------------
def test_two_threads_get_one_fast_copy(monkeypatch):
    model, _ = tiny_pair("qwen2")
    built, build = [], Model._fast_copy

    class Watched:
        """The model's lock, counting who has come to it: the build waits until the other thread is at the door."""
        def __init__(self):
            self.lock, self.came, self.cond = threading.Lock(), 0, threading.Condition()

        def __enter__(self):
            with self.cond:
                self.came += 1
                self.cond.notify_all()
            self.lock.acquire()

        def __exit__(self, *exc):
            self.lock.release()

    door = Watched()

    def slow_build(self, dtype, on_part=None):  # both threads have asked before the copy exists
        built.append(dtype)
        with door.cond:
            assert door.cond.wait_for(lambda: door.came == 2, timeout=60), "the second thread never asked"
        return build(self, dtype, on_part)

    monkeypatch.setattr(Model, "_fast_copy", slow_build)
    monkeypatch.setattr(model, "_lock", door)
    start, got = threading.Barrier(2), [None, None]

    def ask(j):
        start.wait()
        got[j] = model.fast_weights()

    threads = [threading.Thread(target=ask, args=(j,)) for j in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == [torch.bfloat16], f"the copy was built {len(built)} times"
    assert got[0] is got[1]
    for name in got[0]:
        assert got[0][name].data_ptr() == got[1][name].data_ptr(), name
    assert got[0]["model.layers.0.self_attn.qkv_proj.weight"].data_ptr() != model.w(
        "model.layers.0.self_attn.q_proj.weight").data_ptr()      # a real copy, fused


def test_loaded_weights_are_read_only():
    model, _ = tiny_pair("qwen2")
    with pytest.raises(TypeError):
        model.weights["model.norm.weight"] = torch.zeros(1)      # shared by every session: no writes
    assert model.w("model.norm.weight") is model.weights["model.norm.weight"]


# ---- the decoding path by name -------------------------------------------------------------------------
@pytest.mark.parametrize("fast", ["int9", "fp8", 2, "BF16 "])
def test_unknown_fast_path_raises(chat_model, fast):
    with pytest.raises(InputError, match="not a decoding path"):
        chat_model.generate("the cat", max_new_tokens=1, fast=fast)
    with pytest.raises(InputError, match="not a decoding path"):
        chat_model.decoder("the cat", fast=fast)


@pytest.mark.parametrize("fast, path, dtype", [(False, "eager", "float32"), (None, "eager", "float32"),
                                               (True, "bf16", "bfloat16"), ("bf16", "bf16", "bfloat16"),
                                               ("int8", "int8", "float32")])
def test_generation_says_which_path_ran(chat_model, fast, path, dtype):
    g = chat_model.generate("the cat", max_new_tokens=2, stop_at_eos=False, fast=fast)
    assert (g.path, g.fast, g.compute_dtype) == (path, path != "eager", dtype)
    assert chat_model.decoder("the cat", fast=fast).compute_dtype == dtype


@pytest.mark.parametrize("fast", [False, True, "int8"])
def test_decoder_steps_equal_generate(chat_model, fast):
    params = SamplingParams(temperature=0.8, top_k=20, seed=3)
    g = chat_model.generate("the cat", max_new_tokens=6, temperature=0.8, top_k=20, seed=3, stop_at_eos=False,
                            fast=fast)
    dec = chat_model.decoder("the cat", max_new_tokens=6, params=params, fast=fast, stop_at_eos=False)
    assert dec.steps == [] and not dec.done and dec.budget == 6 and dec.stopped == ""
    first = dec.step()
    assert first.phase == "prefill" and first.processed == len(dec.prompt_ids) == len(g.prompt_ids)
    while not dec.done:
        step = dec.step()
        assert step.phase == "decode" and step.processed == 1
    assert dec.token_ids == g.token_ids and dec.prompt_ids == g.prompt_ids
    assert dec.stopped == g.stopped == "max_new_tokens" and len(dec.steps) == 6
    assert dec.text == g.text == chat_model.tokenizer.decode(g.token_ids, skip_special_tokens=True)
    assert [s.kv_tokens for s in dec.steps] == [s.kv_tokens for s in g.steps]
    with pytest.raises(InputError, match="finished"):
        dec.step()


def test_decoder_stops_at_eos(chat_model):
    dec = chat_model.decoder("the cat", max_new_tokens=5)
    token = dec.step().token_id
    dec = chat_model.decoder("the cat", max_new_tokens=5)
    dec.eos = {token}                                    # the EOS set lives on the decoder: make the first pick one
    dec.step()
    assert dec.done and dec.stopped == "eos" and dec.token_ids == [token]
    assert chat_model.tokenizer.eos_token_ids[0] in chat_model.decoder("the cat").eos


def test_budget_is_clamped_by_the_context(chat_model):
    n = len(chat_model.decoder("the cat", chat=False).prompt_ids)
    ctx = chat_model.config.max_position_embeddings
    dec = chat_model.decoder("the cat", chat=False, max_new_tokens=min(64, ctx))
    assert dec.budget == min(64, ctx - n)


def test_kv_cache_bytes_use_the_cost_formula():
    model, _ = tiny_pair("qwen2")
    c = model.config
    for dtype, size in ((torch.float32, 4), (torch.bfloat16, 2)):
        cache = KVCache(c, 2, 10, "cpu", dtype)
        cache.advance(7)
        assert cache.nbytes == costs.kv_cache_bytes(c, 2 * 7, size) == 14 * costs.kv_bytes_per_token(c, size)
    assert costs.kv_bytes_per_token(c, 2) == 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * 2


# ---- the one forward pass, configured ------------------------------------------------------------------
def test_record_none_and_record_all_give_the_same_logits():
    model, _ = tiny_pair("qwen2_moe")
    ids = torch.tensor([[3, 1, 4, 1, 5, 9]])
    pos, valid = torch.arange(6)[None], torch.ones(1, 6, dtype=torch.bool)
    seen = []
    a = model.forward(ids, pos, valid, record=lambda n, t: seen.append(n))
    b = model.forward(ids, pos, valid)
    assert torch.equal(a, b) and "layers.0.moe.router_probs" in seen and "layers.0.attn.probs" in seen


def test_sdpa_on_the_model_weights_matches_eager():
    """Attention by name: eager and SDPA are the same function on the same weights (float32)."""
    model, _ = tiny_pair("qwen3")
    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    pos, valid = torch.arange(8)[None], torch.ones(1, 8, dtype=torch.bool)
    eager = model.forward(ids, pos, valid)
    sdpa = model.forward(ids, pos, valid, attention="sdpa")
    torch.testing.assert_close(sdpa, eager, atol=1e-4, rtol=1e-4)
    padded = torch.tensor([[True] * 5 + [False] * 3])          # padding: SDPA gets the explicit mask
    torch.testing.assert_close(model.forward(ids, pos, padded, attention="sdpa")[0, :5],
                               model.forward(ids, pos, padded)[0, :5], atol=1e-4, rtol=1e-4)


# ---- analyses cached on the trace ------------------------------------------------------------------------
def test_lens_cache_lives_on_the_trace():
    model, _ = tiny_pair("qwen2")
    trace = model.trace_ids([[1, 2, 3, 4, 5], [6, 7]])
    ids, probs = lm_head_lens.top_next(trace, 1)
    assert ids.shape == probs.shape == (2,)
    assert torch.equal(ids, trace.logits[1, :2].argmax(-1))
    torch.testing.assert_close(probs, trace.logits[1, :2].softmax(-1).max(-1).values)
    assert trace.memos()[("top_next", 1)] is lm_head_lens.top_next(trace, 1)
    lids, lprobs = lm_head_lens.logit_lens(model, trace, 0)
    assert lids.shape == (model.config.num_hidden_layers + 1, 5)
    assert torch.equal(lids[-1], trace.logits[0, :5].argmax(-1))          # the last state is the model's own
    assert trace.memos()[("logit_lens", 0)] is lm_head_lens.logit_lens(model, trace, 0)
    assert all(isinstance(k, tuple) and isinstance(k[0], str) for k in trace.memos())    # (name, row), never id()
    again = model.trace_ids([[1, 2, 3, 4, 5], [6, 7]])
    assert again.memos() == {}                                                  # a new trace starts empty


def test_tiny_moe_trace_cached_on_the_trace():
    model, _ = tiny_pair("qwen2")
    trace = model.trace_ids([[1, 2, 3, 300]])
    mt, m, real = tiny.moe_trace(trace, model)
    assert not real and m is tiny.tiny_moe_model() and mt.has_moe(0)
    assert tiny.moe_trace(trace, model)[0] is mt and trace.memos()[("tiny_moe", None)] is mt
    assert mt.token_ids[0].tolist() == [1, 2, 3, 300]
    moe_model, _ = tiny_pair("qwen2_moe")
    t2 = moe_model.trace_ids([[1, 2]])
    assert tiny.moe_trace(t2, moe_model) == (t2, moe_model, True)


def test_greedy_pick_is_torch_argmax_the_first_largest():
    from ops.engine.sampling import SamplingParams, sample_stages
    x = torch.randn(151_936)
    x[[900, 77_000]] = x.max() + 1                      # a tie for the largest: the first index wins
    assert sample_stages(x, [], SamplingParams())["chosen"] == int(torch.argmax(x)) == 900
