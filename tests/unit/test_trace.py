"""The trace contract: golden names in order, shapes, and the residual identities."""
import pytest
import torch
from conftest import MINI

from ops.engine.trace import contract_names, contract_shapes
from tests.parity.test_parity_tiny import tiny_pair

# written out by hand on purpose: the contract in ops/engine/trace.py must produce exactly this list
LAYER_NAMES = ["attn_norm.out", "attn.q", "attn.k", "attn.v", "attn.q_rope", "attn.k_rope", "attn.scores",
               "attn.probs", "attn.context", "attn.out", "resid_mid", "mlp_norm.out", "mlp.gate", "mlp.up",
               "mlp.act", "mlp.out", "resid_out"]


def golden_names(L):
    return (["tokens.ids", "embed.out", "rope.inv_freq_base", "rope.inv_freq"] + [f"layers.{i}.{n}" for i in range(L) for n in LAYER_NAMES]
            + ["final_norm.out", "logits"])


def test_contract_is_the_golden_list():
    from ops.engine.config import ModelConfig
    c = ModelConfig(model_type="qwen2", **MINI)
    assert contract_names(c) == golden_names(3)


def check_trace(trace, c):
    B, S = trace.token_ids.shape
    H, nh, nkv, hd, I, V = (c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim,
                            c.intermediate_size, c.vocab_size)
    assert trace.names() == golden_names(c.num_hidden_layers) == contract_names(c)
    for name, (shape, _) in contract_shapes(c, B, S).items():       # every tensor has its contract shape
        assert tuple(trace[name].shape) == shape, name
    expect = {"tokens.ids": (B, S), "embed.out": (B, S, H), "final_norm.out": (B, S, H), "logits": (B, S, V),
              "layers.0.attn.q": (B, nh, S, hd), "layers.0.attn.k": (B, nkv, S, hd), "layers.0.attn.v": (B, nkv, S, hd),
              "layers.0.attn.q_rope": (B, nh, S, hd), "layers.0.attn.scores": (B, nh, S, S),
              "layers.0.attn.probs": (B, nh, S, S), "layers.0.attn.context": (B, S, nh * hd),
              "layers.0.attn.out": (B, S, H), "layers.0.mlp.act": (B, S, I), "layers.0.resid_out": (B, S, H)}
    for name, shape in expect.items():
        assert tuple(trace[name].shape) == shape, name
    for i in range(c.num_hidden_layers):
        x = trace.layer_input(i)
        assert torch.equal(trace.layer(i, "resid_mid"), x + trace.layer(i, "attn.out")), f"layer {i} resid_mid"
        assert torch.equal(trace.layer(i, "resid_out"), trace.layer(i, "resid_mid") + trace.layer(i, "mlp.out"))
        probs = trace.attention_probs(i)
        torch.testing.assert_close(probs.sum(-1), torch.ones(probs.shape[:-1]))
        assert probs.triu(1).abs().max() == 0
    for n in trace.names():
        assert trace[n].device.type == "cpu" and not trace[n].requires_grad, n


def test_tiny_trace_contract():
    model, _ = tiny_pair("qwen2")
    trace = model.trace_ids([[1, 2, 3, 4, 5], [6, 7]])
    check_trace(trace, model.config)
    assert trace.lengths == [5, 2] and trace.attention_mask.tolist()[1] == [True, True, False, False, False]


def test_capture_filter_keeps_only_what_is_asked():
    model, _ = tiny_pair("qwen2")
    full = model.trace_ids([[1, 2, 3]])
    small = model.trace_ids([[1, 2, 3]], capture=["layers.1.attn.*", "logits"])
    assert set(small.names()) == {n for n in full.names() if n.startswith("layers.1.attn.")} | {"logits"}
    assert torch.equal(small.logits, full.logits)
    only_logits = model.trace_ids([[1, 2, 3]], capture=lambda n: n == "logits")
    assert only_logits.names() == ["logits"]


def check_recomputed(model, rows):
    """A trace holding recipes gives back exactly the tensors a trace keeping everything holds."""
    from ops.engine import inputs

    kept, lean = model.trace_ids(rows, recompute=False), model.trace_ids(rows)
    assert lean.names() == kept.names() and lean.shapes() == kept.shapes()
    recomputed = [n for n in lean.names() if lean.is_recomputed(n)]
    L = model.config.num_hidden_layers
    dense = [i for i in range(L) if not model.config.is_moe_layer(i)]
    assert len(recomputed) == 2 * L + 3 * len(dense)      # scores and probs everywhere, gate/up/act if dense
    for n in kept.names():                                 # in reverse too, so the recent-cache order varies
        assert torch.equal(lean[n], kept[n]), n
    for n in reversed(recomputed):
        assert torch.equal(lean[n], kept[n]), n
    assert lean.full_nbytes == kept.nbytes
    held = sum(lean[n].numel() * lean[n].element_size() for n in lean.names() if n not in recomputed)
    assert lean.nbytes == held < kept.nbytes
    B, S = kept.token_ids.shape
    assert inputs.estimate_trace_bytes(model.config, B, S) == lean.nbytes
    assert inputs.estimate_trace_bytes(model.config, B, S, recompute=False) == kept.nbytes
    return lean, kept


@pytest.mark.parametrize("kind", ["qwen2", "qwen2_moe", "qwen3", "llama"])
def test_recomputed_tensors_equal_the_recorded_ones(kind):
    model, _ = tiny_pair(kind)
    check_recomputed(model, [[1, 2, 3, 4, 5, 6], [7, 8, 9]])


def test_recipe_needs_its_inputs_captured():
    model, _ = tiny_pair("qwen2")
    only = model.trace_ids([[1, 2, 3]], capture=["layers.0.attn.scores", "layers.0.mlp.act", "layers.0.mlp.gate"])
    assert not any(only.is_recomputed(n) for n in only.names())      # inputs not kept: the tensors are held
    full = model.trace_ids([[1, 2, 3]], recompute=False)
    for n in only.names():
        assert torch.equal(only[n], full[n])


@pytest.mark.real
def test_real_recomputed_tensors(real_model):
    lean, kept = check_recomputed(real_model, [list(range(1000, 1064))])
    assert lean.nbytes < 0.5 * kept.nbytes


@pytest.mark.real
def test_real_trace_contract(real_model):
    trace = real_model.trace(["I like shanghai", "你好，世界！今天天气很好"])
    check_trace(trace, real_model.config)
    assert trace.token_ids[0, :4].tolist() == [40, 1075, 557, 30070]


# ---- Trace.memo: what pages keep with a trace ------------------------------------------------------------
def _small_trace():
    from ops.engine.config import ModelConfig
    from ops.engine.trace import Trace
    c = ModelConfig(model_type="qwen2", **dict(MINI, num_hidden_layers=1))
    return Trace(c, ["a"], ["a"], torch.zeros(1, 1, dtype=torch.long), [1])


def test_memo_computes_once_per_key():
    tr, calls = _small_trace(), []
    make = lambda k: (lambda: calls.append(k) or [k])            # noqa: E731
    first = tr.memo(("x", 1), make(1))
    assert tr.memo(("x", 1), make(1)) is first and calls == [1]  # the same object, not computed again
    assert tr.memo(("x", 2), make(2)) == [2] and calls == [1, 2]


def test_memo_lives_in_the_store_and_leaves_with_it(monkeypatch):
    """Trace.memo keeps its results in the one store, counted there; the store's budget lets the least recently
    used go (the rest of the store's behaviour: tests/unit/test_cache.py)."""
    from ops.engine import store as store_mod
    monkeypatch.setattr(store_mod.STORE, "budget", store_mod.STORE.budget)       # restored after the test
    tr = _small_trace()
    store_mod.STORE.clear()
    big = lambda: torch.zeros(1000)                                  # noqa: E731  4000 bytes each
    for k in range(5):
        tr.memo(("m", k), big)
    assert set(tr.memos()) == {("m", k) for k in range(5)} and store_mod.STORE.nbytes >= 5 * 4000
    tr.memo(("m", 0), lambda: pytest.fail("recomputed"))             # used again: now the newest
    store_mod.STORE.set_budget(3 * 4000 + 1000)                      # room for three (and the dict overheads)
    assert set(tr.memos()) == {("m", 0), ("m", 3), ("m", 4)}


def test_memo_is_not_copied_by_replace():
    import dataclasses
    tr = _small_trace()
    tr.memo("k", lambda: 1)
    assert tr.memos() == {("k",): 1} and dataclasses.replace(tr).memos() == {}    # a changed trace starts empty
