"""An exported lesson's numbers are the pages' numbers (classroom/lesson_export.py draws each step with the page's own
view data and figure builder, and computes nothing itself): each step's arrays and figure checked against the
trace's tensors with an independent reference (torch.nn.functional, a norm, a hand count), on a tiny model."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from classroom import lessons

PAGES = ("tokenize", "embedding", "rmsnorm", "attention", "atlas", "residual", "mlp", "lm_head", "sampling",
         "precision", "serving")
PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def exported(tiny_app_dense):
    from classroom import lesson_export
    from ops import load_model

    model = load_model(tiny_app_dense)
    data = {"version": 1, "title": {"zh": "全部", "en": "All"}, "prompts": [PROMPT],
            "steps": [{"page": p, "pickers": {"layer": 1, "head": 1}, "notes": {"zh": "看", "en": "look"}}
                      for p in PAGES]}
    lesson = lessons.parse(data, "all")
    text, arrays = lesson_export.build(lesson, model=model)
    trace = model.trace([PROMPT])
    figures = {p: lesson_export.view(s, model, trace)[0] for p, s in zip(PAGES, lesson.steps)}
    return model, trace, text, arrays, figures


def step(arrays, page: str, name: str) -> np.ndarray:
    return arrays[f"step{PAGES.index(page) + 1}/{name}"]


def test_every_step_has_its_figure_and_formula(exported):
    from content.words import say

    _, _, text, _, figures = exported
    assert text.count('class="plotly-graph-div"') == len(PAGES)
    assert all(figures[p] is not None for p in PAGES)
    for p in PAGES:
        assert say(f"export.formula_{p}", "en").replace("&", "&amp;")[:20] in text.replace("&#x27;", "'")


def test_rmsnorm_step_is_one_token_before_and_after(exported):
    model, trace, _, arrays, figures = exported
    x = trace["layers.0.resid_out"][0, 0].float()                   # layer 1's input, token 0 (the page's start)
    rms = x.pow(2).mean().sqrt()                                    # by hand: √(mean(x²))
    # float32 mean of a few dozen squares: ~1e-7 relative; 1e-5 leaves room for other CPUs' summation order
    assert abs(float(step(arrays, "rmsnorm", "layers.1.attn_norm.out[0].rms_in")[0]) - float(rms)) < 1e-5 * float(rms)
    ref = F.rms_norm(x, (x.numel(),), model.w("model.layers.1.input_layernorm.weight").float(),
                     model.config.rms_norm_eps)
    got = torch.as_tensor(step(arrays, "rmsnorm", "layers.1.attn_norm.out[0]"))
    assert torch.allclose(got, ref, atol=1e-5), float((got - ref).abs().max())
    after = figures["rmsnorm"].data[1].y                            # the lower panel: y, every dimension
    assert np.allclose(after, got.numpy(), atol=1e-6)


def test_attention_step_is_the_pages_map(exported):
    _, trace, _, arrays, figures = exported
    n = trace.lengths[0]
    probs = torch.as_tensor(step(arrays, "attention", "layers.1.attn.probs[head 1]"))
    q, k = trace["layers.1.attn.q_rope"][0, 1, :n].float(), trace["layers.1.attn.k_rope"][0, :, :n].float()
    g = 1 // (trace["layers.1.attn.q_rope"].shape[1] // k.shape[0])          # the KV head query head 1 reads
    scores = q @ k[g].T / q.shape[-1] ** 0.5
    ref = F.softmax(scores.masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf")), -1)
    assert torch.allclose(probs, ref, atol=1e-5), float((probs - ref).abs().max())    # float32 softmax: ~1e-7
    z = np.asarray(figures["attention"].data[0].z, dtype=float)
    shown = ~np.isnan(z)                                            # masked cells are blank, as on the page
    assert np.allclose(z[shown], probs.numpy()[shown], atol=1e-6) and shown.sum() == n * (n + 1) // 2


def test_residual_step_is_each_tokens_norm_through_the_layers(exported):
    model, trace, _, arrays, figures = exported
    n, L = trace.lengths[0], model.config.num_hidden_layers
    ref = torch.stack([torch.linalg.vector_norm(trace["embed.out"][0, :n].float(), dim=-1)]
                      + [torch.linalg.vector_norm(trace[f"layers.{i}.resid_out"][0, :n].float(), dim=-1)
                         for i in range(L)])
    got = torch.as_tensor(step(arrays, "residual", "resid_stream.norm"))
    assert got.shape == (L + 1, n) and torch.allclose(got, ref, rtol=1e-6)
    lines = [t for t in figures["residual"].data if t.y is not None and len(t.y) == L + 1]
    assert len(lines) == n and np.allclose(lines[0].y, ref[:, 0].numpy(), rtol=1e-6)


def test_mlp_step_is_the_last_tokens_swiglu(exported):
    _, trace, _, arrays, _ = exported
    s = trace.lengths[0] - 1
    gate, up = trace["layers.1.mlp.gate"][0, s].float(), trace["layers.1.mlp.up"][0, s].float()
    got = torch.as_tensor(step(arrays, "mlp", f"layers.1.mlp.act[{s}]"))
    assert torch.allclose(got, F.silu(gate) * up, atol=1e-6)


def test_precision_step_is_the_precision_pages_report(exported):
    model, trace, _, arrays, figures = exported
    from ops.lab import precision

    rep = precision.precision_report(model, PROMPT)
    for d, e in rep["resid_rel_err"].items():
        assert np.array_equal(step(arrays, "precision", f"resid_rel_err.{d}"), e.float().numpy())
    assert not step(arrays, "precision", "resid_rel_err.float32").any()          # float32 against itself: 0
    assert 0 < step(arrays, "precision", "resid_rel_err.bfloat16")[0] <= 2 ** -8  # the embedding: one rounding


def test_serving_step_is_online_softmax_and_kv_bytes(exported):
    model, trace, _, arrays, _ = exported
    c, n = model.config, trace.lengths[0]
    # by hand: 2 (K and V) x layers x KV heads x head dim x bytes per value
    per_value = (4, 2, 1)
    want = [2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * b for b in per_value]
    assert step(arrays, "serving", "kv_bytes_per_token").tolist() == want
    hd = c.head_dim
    ref = trace["layers.1.attn.context"][0, n - 1, hd:2 * hd].float()      # head 1's softmax·V at the last token
    got = torch.as_tensor(step(arrays, "serving", "online.out"))
    assert torch.allclose(got, ref, atol=3e-5), float((got - ref).abs().max())   # ops/lab/online_softmax.ONLINE_TOL


def test_lm_head_step_is_the_softmax_of_the_last_logits(exported):
    _, trace, _, arrays, figures = exported
    z = torch.as_tensor(step(arrays, "lm_head", "logits.last"))
    top = F.softmax(z.double(), -1).topk(10).values
    assert np.allclose(figures["lm_head"].data[0].x, top.numpy(), atol=1e-6)
