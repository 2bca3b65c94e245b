"""Many LoRA adapters in one batch (S-LoRA, Punica): every row of a batch runs the shared base weights, and its own
low-rank update on top, in the same forward pass.

An adapter changes a projection W (out, in) by scale * B A, A (r, in) and B (out, r), r much smaller than in and
out. Merged into the weights it is a new model per adapter; unmerged, the base product x W^T is computed once for
the whole batch and each row adds scale * (x A_a^T) B_a^T with its own adapter a (Punica's batched gather
matrix-vector product). Here the update is added where the pass records a projection's output, from the input it
recorded just before: v_proj (from attn_norm.out), o_proj (from attn.context), down_proj (from mlp.act).
"""
from __future__ import annotations

import torch

from ..engine.decode import KVCache
from ..engine.model import Model
from ..errors import InputError

TARGETS = {"v_proj": ("attn_norm.out", "attn.v", "self_attn"), "o_proj": ("attn.context", "attn.out", "self_attn"),
           "down_proj": ("mlp.act", "mlp.out", "mlp")}          # projection -> (its input, its output, module)


def make_adapters(model, n: int = 2, rank: int = 8, strength: float = 0.3, seed: int = 0,
                  targets=("v_proj", "o_proj", "down_proj")) -> list[dict]:
    """n seeded adapters: each (layer, projection) -> (A (r, in), B (out, r)), with B A's root-mean-square
    `strength` times W's, so the texts change. Dense layers only take down_proj (a MoE layer has no single one)."""
    c, out = model.config, []
    for a in range(n):
        g = torch.Generator().manual_seed(seed + 1000 * a)
        ad = {}
        for i in range(c.num_hidden_layers):
            for t in targets:
                if t == "down_proj" and c.is_moe_layer(i):
                    continue
                W = model.weights[f"model.layers.{i}.{TARGETS[t][2]}.{t}.weight"].float()
                A = torch.randn(rank, W.shape[1], generator=g)
                B = torch.randn(W.shape[0], rank, generator=g) * (strength * float(W.pow(2).mean().sqrt()) / rank ** 0.5
                                                                  / W.shape[1] ** 0.5)
                ad[(i, t)] = (A, B)
        out.append(ad)
    return out


def merged(model, adapter: dict):
    """The reference: a Model whose weights are W + B A for every adapted projection (the rest shared)."""
    W = dict(model.weights)
    for (i, t), (A, B) in adapter.items():
        name = f"model.layers.{i}.{TARGETS[t][2]}.{t}.weight"
        W[name] = (W[name].float() + B @ A).to(W[name].dtype)
    return Model(model.config, W, model.tokenizer, device=model.device, dtype=model.dtype)


def lora_edits(model, adapters: list[dict], rows: list[int]) -> dict:
    """Edits that add row b's adapter rows[b] (-1: none) to each adapted projection's output: the input is kept
    when the pass records it, the update added when it records the output."""
    c, kept, edits = model.config, {}, {}
    idx = torch.tensor(rows)
    on = (idx >= 0).float()[:, None, None]                              # (B, 1, 1)
    keys = sorted({k for ad in adapters for k in ad})
    for (i, t) in keys:
        inp, outp, _ = TARGETS[t]
        A = torch.stack([ad[(i, t)][0] for ad in adapters])             # (n, r, in)
        B = torch.stack([ad[(i, t)][1] for ad in adapters])             # (n, out, r)

        def keep(x, name=f"{i}.{inp}"):
            kept[name] = x
            return x

        def add(y, name=f"{i}.{inp}", A=A, B=B, t=t):
            x = kept[name].float()                                      # (B, S, in)
            a = idx.clamp(min=0)
            d = torch.einsum("bsr,bor->bso", torch.einsum("bsi,bri->bsr", x, A[a]), B[a]) * on   # (B, S, out)
            if t == "v_proj":                                           # the pass records v as (B, nkv, S, hd)
                d = d.view(y.shape[0], y.shape[2], c.num_key_value_heads, c.head_dim).transpose(1, 2)
            return y + d.to(y.dtype)
        edits[f"layers.{i}.{inp}"] = keep
        edits[f"layers.{i}.{outp}"] = add
    return edits


@torch.inference_mode()
def batched_greedy(model, rows: list[list[int]], adapter_of: list[int], adapters: list[dict], new_tokens: int):
    """Greedy decoding of right-padded rows in one batch, row b with adapter adapter_of[b]: (tokens per row,
    first-step logits per row (V,))."""
    if len(rows) != len(adapter_of) or any(not -1 <= a < len(adapters) for a in adapter_of):
        raise InputError("one adapter number (or -1 for none) per row, each naming an adapter")
    edits = lora_edits(model, adapters, adapter_of)
    Bn, S = len(rows), max(len(r) for r in rows)
    ids = torch.full((Bn, S), model.pad_id(), dtype=torch.long)
    for b, r in enumerate(rows):
        ids[b, :len(r)] = torch.tensor(r)
    lengths = torch.tensor([len(r) for r in rows])
    valid = torch.arange(S)[None] < lengths[:, None]
    cache = KVCache(model.config, Bn, S + new_tokens, model.cache_devices, model.weights.dtype)
    logits = model.forward(ids, torch.arange(S)[None].expand(Bn, S), valid, cache=cache, edits=edits)
    first = logits[torch.arange(Bn), lengths - 1].float()
    nxt = first.argmax(-1)
    out = [[int(t)] for t in nxt]
    for step in range(new_tokens - 1):
        valid = torch.cat([valid, torch.ones(Bn, 1, dtype=torch.bool)], 1)
        nxt = model.forward(nxt[:, None], (lengths + step)[:, None], valid, cache=cache, edits=edits)[:, -1]
        nxt = nxt.float().argmax(-1)
        for b in range(Bn):
            out[b].append(int(nxt[b]))
    return out, first


def lora_batch(model, prompts: list[str], adapter_of: list[int], n_adapters: int = 2, rank: int = 8,
               new_tokens: int = 16, seed: int = 0, progress=None) -> dict:
    """The batch with each row's adapter against each row alone on its merged model (the base model for -1):
    per row, the greedy tokens of both, whether they are the same, and the first logits' max |diff|."""
    adapters = make_adapters(model, n_adapters, rank, seed=seed)
    _, _, rows = model.encode_prompts(prompts, False)
    toks, first = batched_greedy(model, rows, adapter_of, adapters, new_tokens)
    out, refs = [], {}
    for b, a in enumerate(adapter_of):
        if progress:
            progress(b, len(adapter_of))
        if a not in refs:
            refs[a] = model if a < 0 else merged(model, adapters[a])
        ref = refs[a]
        alone = ref.forward(torch.tensor([rows[b]]), torch.arange(len(rows[b]))[None],
                            torch.ones(1, len(rows[b]), dtype=torch.bool), last_only=True)[0, -1].float()
        gen = ref.generate(prompts[b], chat=False, max_new_tokens=new_tokens, stop_at_eos=False).token_ids
        tok = model.tokenizer
        out.append(dict(row=b, adapter=a, tokens=toks[b], merged_tokens=gen, same=toks[b] == gen,
                        logits_max_diff=float((first[b] - alone).abs().max()), scale=float(alone.abs().max()),
                        text=tok.decode(toks[b], skip_special_tokens=True) if tok else str(toks[b])))
    params = sum(A.numel() + B.numel() for A, B in adapters[0].values())
    return dict(rows=out, rank=rank, adapter_params=params, model_params=model.num_parameters,
                targets=sorted({t for (_, t) in adapters[0]}))
