"""Property tests (Hypothesis): round trips and invariants that must hold for any input."""
from __future__ import annotations

import unicodedata

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from ops.engine import functional as fn, inputs
from ops.engine.sampling import apply_top_k, apply_top_p

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.real
@SETTINGS
@given(st.text(max_size=60))
def test_decode_encode_is_nfc(bundled_tokenizer, text):
    """decode(encode(text)) == NFC(text) once the sanitiser has run (surrogates -> U+FFFD, controls removed)."""
    clean = inputs.sanitize(text).text
    tok = bundled_tokenizer
    assert tok.decode(tok.encode(clean)) == unicodedata.normalize("NFC", clean)


@SETTINGS
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_sanitize_is_idempotent_and_encodable(text):
    once = inputs.sanitize(text).text
    assert inputs.sanitize(once).text == once and not inputs.sanitize(once).changed
    once.encode("utf-8")


@pytest.fixture(scope="module")
def tiny_model():
    from tests.parity.test_parity_tiny import tiny_pair

    return tiny_pair("qwen2")[0]


@SETTINGS
@given(st.lists(st.lists(st.integers(0, 319), min_size=1, max_size=12), min_size=1, max_size=3))
def test_attention_rows_sum_to_one_and_causal(tiny_model, rows):
    tr = tiny_model.trace_ids(rows)
    for i in range(tiny_model.config.num_hidden_layers):
        p = tr.attention_probs(i)                                   # (B, nh, S, S)
        S = p.shape[-1]
        sums = p.sum(-1)
        assert torch.allclose(sums, torch.ones_like(sums), atol=1e-5), (sums - 1).abs().max()
        above = torch.triu(torch.ones(S, S, dtype=torch.bool), diagonal=1)
        assert p[..., above].abs().max().item() == 0 if above.any() else True


@SETTINGS
@given(st.integers(1, 50), st.integers(0, 2**31 - 1), st.integers(1, 60))
def test_top_k_keeps_exactly_the_top_k(V, seed, k):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(V, generator=g)                           # continuous: ties have probability 0
    out = apply_top_k(logits, k)
    kept = torch.isfinite(out)
    want = min(k, V)
    assert kept.sum().item() == want
    assert set(torch.nonzero(kept).flatten().tolist()) == set(torch.topk(logits, want).indices.tolist())
    assert torch.equal(out[kept], logits[kept])


@SETTINGS
@given(st.integers(1, 50), st.integers(0, 2**31 - 1), st.floats(0.01, 1.0))
def test_top_p_keeps_the_smallest_set(V, seed, p):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(V, generator=g) * 3
    out = apply_top_p(logits, p)
    kept = torch.isfinite(out)
    probs = logits.softmax(-1)
    order = torch.argsort(probs, descending=True)
    n = kept.sum().item()
    assert set(torch.nonzero(kept).flatten().tolist()) == set(order[:n].tolist())   # a top set
    if p < 1.0:
        mass = probs[order].cumsum(0)
        assert mass[n - 1] >= p - 1e-5                               # it reaches p ...
        assert n == 1 or mass[n - 2] < p + 1e-5                      # ... and one fewer would not


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 5), st.integers(2, 64), st.floats(1e-3, 1e3), st.integers(0, 2**31 - 1))
def test_rms_norm_has_unit_rms(B, S, H, scale, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, S, H, generator=g) * scale
    y = fn.rms_norm(x, torch.ones(H), 1e-6)
    rms = y.double().pow(2).mean(-1).sqrt()
    ms = x.double().pow(2).mean(-1)
    want = (ms / (ms + 1e-6)).sqrt()                 # = 1 up to eps: tiny inputs sit just under 1
    assert torch.allclose(rms, want, atol=1e-4), (rms - want).abs().max()
    big = ms > 1e-2
    assert torch.allclose(rms[big], torch.ones_like(rms[big]), atol=1e-4)
