"""Edits and attribution on the bundled model, against transformers' Qwen2ForCausalLM with forward hooks."""

import pytest
import torch

from ops.lab import experiments_edits as E
from ops.lab.experiments_attribution import logit_attribution

pytestmark = pytest.mark.real
PROMPT = "def fib(n):\n    return"
PAIR = ("The capital of France is", "The capital of Italy is")


@pytest.fixture(scope="module")
def base(real_model):
    return real_model.trace(PROMPT)


def maxdiff(a, b):
    return (a.float() - b.float()).abs().max().item()


def hooked_logits(reference, ids, layer, hook, pre=False):
    o_proj = reference.model.layers[layer].self_attn.o_proj
    handle = o_proj.register_forward_pre_hook(hook) if pre else o_proj.register_forward_hook(hook)
    try:
        with torch.no_grad():
            return reference(ids).logits
    finally:
        handle.remove()


def test_identity_edit_is_bitwise(real_model, base):
    t = real_model.trace(PROMPT, edits={"layers.7.attn.context": lambda x: x, "layers.12.resid_out": lambda x: x})
    assert torch.equal(t.logits, base.logits) and t.edits == ("layers.7.attn.context", "layers.12.resid_out")


def test_zero_attention_equals_transformers_hook(real_model, reference, base):
    layer = 5
    want = hooked_logits(reference, base.token_ids, layer, lambda mod, inp, out: torch.zeros_like(out))
    got = real_model.trace(PROMPT, edits=E.zero_attention(real_model.config, layer)).logits
    d = maxdiff(got, want)
    assert d <= 1e-3, f"zeroed attention of layer {layer}: ours vs transformers' o_proj hook differ by {d}"
    assert maxdiff(got, base.logits) > 1e-2          # and the edit did change something


def test_one_head_equals_transformers_pre_hook(real_model, reference, base):
    layer, head, hd = 3, 2, real_model.config.head_dim

    def zero_head(mod, args):
        x = args[0].clone()
        x[..., head * hd:(head + 1) * hd] = 0
        return (x,)
    want = hooked_logits(reference, base.token_ids, layer, zero_head, pre=True)
    got = real_model.trace(PROMPT, edits=E.ablate_heads(real_model.config, layer, [head])).logits
    d = maxdiff(got, want)
    assert d <= 1e-3, f"head {head} of layer {layer} zeroed: ours vs transformers' pre-hook differ by {d}"
    assert maxdiff(got, base.logits) > 1e-4


def test_patching_whole_residual_reproduces_source(real_model):
    a, b = real_model.trace(PAIR[0]), real_model.trace(PAIR[1])
    assert a.lengths == b.lengths, "the pair must tokenize to equal lengths"
    for layer in (0, 11, 23):
        t = real_model.trace(PAIR[1], edits=E.patch(a, f"layers.{layer}.resid_out"))
        d = maxdiff(t.logits, a.logits)
        assert d <= 1e-4, f"B with A's layers.{layer}.resid_out patched in differs from A by {d}"
    assert maxdiff(a.logits, b.logits) > 1e-1


def test_attribution_sums_to_the_logit(real_model, base):
    for pos in (-1, 3):
        p = base.lengths[0] - 1 if pos == -1 else pos
        for tok in base.logits[0, p].topk(2).indices.tolist() + [42]:
            attr = logit_attribution(real_model, base, 0, pos, tok)
            logit = float(base.logits[0, p, tok])
            rel = abs(sum(attr.values()) - logit) / max(abs(logit), 1e-6)
            assert rel <= 1e-4, f"position {p}, token {tok}: parts sum to {sum(attr.values())}, logit {logit}"
    c = real_model.config
    assert len(attr) == 1 + c.num_hidden_layers * (c.num_attention_heads + 1)
