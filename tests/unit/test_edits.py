"""Edits in the one forward pass, the edit helpers, attribution and sweeps, on tiny random models
(their real-model counterparts against transformers are in tests/parity/test_edits_real.py)."""
from __future__ import annotations

import pytest
import torch

from ops.errors import Cancelled, InputError
from ops.lab import experiments_edits as E, experiments_sweeps
from ops.lab.experiments_attribution import logit_attribution, top_parts
from tests.parity.test_parity_tiny import tiny_pair

IDS = [[5, 17, 3, 99, 42, 7]]


@pytest.fixture(scope="module")
def pair():
    return tiny_pair("qwen2")


@pytest.fixture(scope="module")
def model(pair):
    return pair[0]


@pytest.fixture(scope="module")
def base(model):
    return model.trace_ids(IDS)


def test_plain_trace_lists_no_edits(base):
    assert base.edits == ()


def test_identity_edit_everywhere_is_bitwise(model, base):
    from ops.engine.trace import contract_names

    everything = {n: (lambda t: t) for n in contract_names(model.config)}
    edited = model.trace_ids(IDS, edits=everything)
    assert torch.equal(edited.logits, base.logits)
    assert edited.edits == tuple(contract_names(model.config))
    for n in ("layers.1.attn.probs", "layers.2.mlp.act"):      # edited names are kept, not recomputed
        assert not edited.is_recomputed(n) and torch.equal(edited[n], base[n])


def test_edit_reaches_downstream_and_is_recorded(model, base):
    c = model.config
    t = model.trace_ids(IDS, edits=E.zero_attention(c, 1))
    assert t["layers.1.attn.out"].abs().max() == 0
    assert torch.equal(t["layers.1.resid_mid"], t.layer_input(1))
    assert torch.equal(t["layers.0.resid_out"], base["layers.0.resid_out"])        # upstream untouched
    assert not torch.equal(t.logits, base.logits)
    assert t.edits == ("layers.1.attn.out",)


def test_edited_scores_recomputed_probs_follow(model):
    """An edit of attn.scores keeps the edited scores; probs (a recipe) is the softmax of them."""
    def bump(t):
        t = t.clone()
        t[..., 0] += 3.0
        return t
    t = model.trace_ids(IDS, edits={"layers.0.attn.scores": bump})
    torch.testing.assert_close(t["layers.0.attn.probs"], torch.softmax(t["layers.0.attn.scores"], -1))
    plain = model.trace_ids(IDS)
    assert not torch.equal(t["layers.0.attn.probs"], plain["layers.0.attn.probs"])


def test_zero_edits_match_transformers_hooks(pair):
    """Our zero-attention / one-head ablation against forward hooks on transformers' o_proj."""
    model, ref = pair
    c = model.config
    ids = torch.tensor(IDS)
    o = ref.model.layers[1].self_attn.o_proj
    h = o.register_forward_hook(lambda mod, inp, out: torch.zeros_like(out))
    with torch.no_grad():
        want = ref(ids).logits
    h.remove()
    got = model.trace_ids(IDS, edits=E.zero_attention(c, 1)).logits
    assert (got - want).abs().max() <= 1e-4

    hd = c.head_dim

    def pre(mod, args):
        x = args[0].clone()
        x[..., 2 * hd:3 * hd] = 0
        return (x,)
    h = o.register_forward_pre_hook(pre)
    with torch.no_grad():
        want = ref(ids).logits
    h.remove()
    got = model.trace_ids(IDS, edits=E.ablate_heads(c, 1, [2])).logits
    assert (got - want).abs().max() <= 1e-4


def test_patch_whole_residual_reproduces_source(model):
    a, b = model.trace_ids([[1, 2, 3, 4, 5, 6]]), [[9, 8, 7, 6, 5, 4]]
    t = model.trace_ids(b, edits=E.patch(a, "layers.0.resid_out"))
    assert (t.logits - a.logits).abs().max() <= 1e-6
    one = model.trace_ids(b, edits=E.patch(a, "layers.0.resid_out", positions=[2]))
    assert torch.equal(one["layers.0.resid_out"][0, 2], a["layers.0.resid_out"][0, 2])
    plain_b = model.trace_ids(b)
    assert torch.equal(one["layers.0.resid_out"][0, 3], plain_b["layers.0.resid_out"][0, 3])


def test_steer_no_rope_combine_mean(model, base):
    c = model.config
    a, b = model.trace_ids([[1, 2, 3]]), model.trace_ids([[4, 5, 6]])
    vec = E.steering_vector(a, b, 1)
    t = model.trace_ids(IDS, edits=E.steer(a, b, 1, 2.0))
    torch.testing.assert_close(t["layers.1.resid_out"], base["layers.1.resid_out"] + 2.0 * vec)
    t = model.trace_ids(IDS, edits=E.no_rope(c, 0))
    assert torch.equal(t["layers.0.attn.q_rope"], t["layers.0.attn.q"])
    assert torch.equal(t["layers.0.attn.k_rope"], t["layers.0.attn.k"])
    both = model.trace_ids(IDS, edits=E.combine(E.zero_mlp(c, 0), E.zero_attention(c, 2)))
    assert both.edits == ("layers.0.mlp.out", "layers.2.attn.out")
    m = model.trace_ids(IDS, edits=E.ablate_heads(c, 0, [1], "mean", reference=base))
    hd = c.head_dim
    want = base["layers.0.attn.context"][0, :, hd:2 * hd].mean(0)
    torch.testing.assert_close(m["layers.0.attn.context"][0, 3, hd:2 * hd], want)


# ---- bad input: each names the problem ------------------------------------------------------------
def test_bad_edits_name_the_problem(model, base):
    c = model.config
    cases = [({"layers.0.attn.oot": lambda t: t}, "unknown trace name 'layers.0.attn.oot'"),
             ({"nonsense": lambda t: t}, "unknown trace name 'nonsense'"),
             ({"layers.7.attn.out": lambda t: t}, "layer 7 is out of range"),
             ({"layers.0.attn.out": lambda t: t[:, :2]}, "changed its shape from (1, 6, 64) to (1, 2, 64)"),
             ({"layers.0.attn.out": lambda t: 0}, "not a tensor"),
             ({"layers.0.attn.out": "zero"}, "not a function"),
             ({"layers.0.moe.router_probs": lambda t: t}, "unknown trace name")]
    for edits, words in cases:
        with pytest.raises(InputError, match=None) as e:
            model.trace_ids(IDS, edits=edits)
        assert words in str(e.value), (words, str(e.value))
    with pytest.raises(InputError, match="equal token lengths: the source run has 6 tokens, this run has 3"):
        model.trace_ids([[1, 2, 3]], edits=E.patch(base, "layers.1.resid_out"))
    with pytest.raises(InputError, match="layer 3 is out of range"):
        E.zero_attention(c, 3)
    with pytest.raises(InputError, match="head 4 is out of range: this model has 4 heads"):
        E.ablate_heads(c, 0, [4])
    with pytest.raises(InputError, match="layer -1 is out of range"):
        E.ablate_heads(c, -1, [0])
    with pytest.raises(InputError, match="mode"):
        E.ablate_heads(c, 0, [0], mode="half")
    with pytest.raises(InputError, match="equal token lengths"):
        experiments_sweeps.patch_sweep(model, base, model.trace_ids([[1, 2]]), 3)
    with pytest.raises(InputError, match="position 9 is out of range"):
        logit_attribution(model, base, 0, 9, 3)
    with pytest.raises(InputError, match="token id 100000 is out of range"):
        experiments_sweeps.head_sweep(model, base, 0, -1, 100000)


# ---- attribution ------------------------------------------------------------------------------------
def test_attribution_parts_sum_to_the_logit(model, base):
    c = model.config
    for pos, tok in [(-1, 7), (2, 200), (0, 5)]:
        attr = logit_attribution(model, base, 0, pos, tok)
        p = base.lengths[0] - 1 if pos == -1 else pos
        logit = float(base.logits[0, p, tok])
        assert abs(sum(attr.values()) - logit) <= 1e-5 * max(1.0, abs(logit))
    assert list(attr)[:2] == ["embed", "L0.attn.h0"] and len(attr) == 1 + c.num_hidden_layers * (c.num_attention_heads + 1)
    top = top_parts(attr, 3)
    assert len(top) == 3 and abs(top[0][1]) >= abs(top[1][1]) >= abs(top[2][1])


def test_attribution_moe_parts():
    model, _ = tiny_pair("qwen2_moe")
    t = model.trace_ids(IDS)
    attr = logit_attribution(model, t, 0, -1, 11)
    assert "L0.moe" in attr and "L1.mlp" in attr           # layer 1 is an mlp_only layer in this tiny model
    assert abs(sum(attr.values()) - float(t.logits[0, -1, 11])) <= 1e-4


# ---- sweeps: batched results equal one edited trace per variant -------------------------------------
def test_head_sweep_equals_one_trace_per_variant(model, base):
    c = model.config
    seen = []
    r = experiments_sweeps.head_sweep(model, base, 0, -1, 7, progress=lambda d, t: seen.append((d, t)))
    total = c.num_hidden_layers * (c.num_attention_heads + 2)
    assert seen[-1] == (total, total) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert r["heads"].shape == (c.num_hidden_layers, c.num_attention_heads)
    for layer in range(c.num_hidden_layers):
        for h in (0, 3):
            t = model.trace_ids(IDS, edits=E.ablate_heads(c, layer, [h]))
            assert abs(float(t.logits[0, -1, 7]) - r["base_logit"] - float(r["heads"][layer, h])) <= 1e-4
        t = model.trace_ids(IDS, edits=E.zero_mlp(c, layer))
        assert abs(float(t.logits[0, -1, 7]) - r["base_logit"] - float(r["mlp"][layer])) <= 1e-4
        t = model.trace_ids(IDS, edits=E.zero_attention(c, layer))
        p = torch.softmax(t.logits[0, -1], -1)[7]
        assert abs(float(p) - r["base_prob"] - float(r["attn_prob"][layer])) <= 1e-5


def test_patch_sweep_equals_one_trace_per_patch(model, base):
    corrupted = [[5, 17, 3, 12, 42, 7]]
    ps = experiments_sweeps.patch_sweep(model, base, model.trace_ids(corrupted), 7)
    assert ps["restored"].shape == (model.config.num_hidden_layers, 6)
    for layer, s in [(0, 3), (1, 3), (1, 0), (2, 5)]:
        t = model.trace_ids(corrupted, edits=E.patch(base, f"layers.{layer}.resid_out", [s]))
        v = (float(t.logits[0, -1, 7]) - ps["corrupted_logit"]) / (ps["clean_logit"] - ps["corrupted_logit"])
        assert abs(v - float(ps["restored"][layer, s])) <= 1e-3
    assert abs(float(ps["restored"][-1, -1]) - 1) <= 1e-4       # the last state at the last position is the answer
    assert ps["restored"][:, :3].abs().max() <= 1e-4             # positions before the change restore nothing


def test_sweeps_cancel(model, base):
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 3
    with pytest.raises(Cancelled):
        experiments_sweeps.head_sweep(model, base, 0, -1, 7, cancel=cancel)
    with pytest.raises(Cancelled):
        experiments_sweeps.patch_sweep(model, base, model.trace_ids([[5, 17, 3, 12, 42, 7]]), 7, cancel=lambda: True)
