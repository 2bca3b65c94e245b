"""Long context, live: the loaded model run twice on one long prompt, as its config says and with a YaRN rope_scaling
(transformers' parameters; on a CPU a small pretended original window, so a prompt of a few hundred tokens is
already "long"), and what changes: every pair's frequency, the attention the last token pays to far keys, the next
token. The scaled run is the same forward pass on a copy of the config (no weights are copied)."""
from __future__ import annotations

import torch

from ..engine.model import Model
from .stage_data import rope_frequencies

# Qwen2.5's model cards add {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}; the Serving
# page keeps the factor and pretends the original window is 64 tokens, so its CPU run stays short
PRETEND = dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=64)


def scaled_model(model: Model, params: dict = PRETEND) -> Model:
    """The loaded model with `params` as its RoPE scaling: the same weight tensors, another config."""
    config = model.config.replace(rope_scaling=tuple(sorted(params.items())))
    return Model(config, dict(model.weights), model.tokenizer, device=model.device, dtype=model.dtype)


def far_mass(probs: torch.Tensor, n: int, window: int) -> float:
    """Attention the last real query (position n - 1) pays, averaged over heads, to keys more than `window` back."""
    row = probs[0, :, n - 1, :n].float().mean(0)                          # (n,)
    far = torch.arange(n) < n - 1 - window
    return float(row[far].sum())


def long_context_run(model: Model, ids: list[int], params: dict = PRETEND, top: int = 5,
                     keep_logits: bool = False) -> dict:
    """Both runs of one prompt (ids longer than the pretended window): per-pair frequencies (unscaled, YaRN's),
    per layer the last token's attention mass on keys beyond the window, the last layer's head-mean attention row,
    the next-token candidates of each run; keep_logits: also the scaled run's logits (n, V) (a test compares them with
    transformers'; a page keeps the rest, a few kB, not 0.6 MB per token)."""
    scaled = scaled_model(model, params)
    window, n, L = params["original_max_position_embeddings"], len(ids), model.config.num_hidden_layers
    keep = ["logits", "rope.*", "layers.*.attn.probs"]
    plain_t, yarn_t = model.trace_ids([ids], capture=keep), scaled.trace_ids([ids], capture=keep)
    fq = rope_frequencies(yarn_t)
    layers = [dict(layer=i, plain=far_mass(plain_t.attention_probs(i), n, window),
                   yarn=far_mass(yarn_t.attention_probs(i), n, window)) for i in range(L)]
    last = L - 1
    rows = {k: t.attention_probs(last)[0, :, n - 1, :n].float().mean(0) for k, t in (("plain", plain_t),
                                                                                       ("yarn", yarn_t))}
    p_plain = torch.softmax(plain_t.logits[0, n - 1].double(), -1)
    p_yarn = torch.softmax(yarn_t.logits[0, n - 1].double(), -1)
    tok = model.tokenizer

    def candidates(p):
        v, i = torch.topk(p, top)
        # pieces, not decode: a partial UTF-8 byte reads '<0xE5>', not '�' (SmolLM2 on a Chinese prompt)
        return [dict(id=int(t), piece=tok.pieces([int(t)])[0] if tok else str(int(t)), prob=float(x))
                for x, t in zip(v, i)]
    return dict(n=n, window=window, factor=params["factor"], freq=fq, layers=layers, last_layer=last, rows=rows,
                top_plain=candidates(p_plain), top_yarn=candidates(p_yarn),
                kl=float((p_plain * (p_plain.clamp_min(1e-300).log() - p_yarn.clamp_min(1e-300).log())).sum()),
                max_logit_change=float((plain_t.logits[0, :n] - yarn_t.logits[0, :n]).abs().max()),
                logits=yarn_t.logits[0, :n] if keep_logits else None)
