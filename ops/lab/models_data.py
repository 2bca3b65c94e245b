"""Two models side by side: what their configs change in the operators and in bytes, how their tokenizers cut the
same text, their next-token distributions over the union of their top tokens, and their attention at the same
relative depth. Pure functions of configs, tokenizers, logits and traces (the Models page and the Scale page's
comparison of reference configs both call them); nothing here loads a model except source_config(), which reads a
config alone (a config.json, or a GGUF header) so a page can check memory before loading the weights.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from ..arith import costs
from ..engine.config import ModelConfig
from ..errors import LoadError
from ..models import bundled, gguf
from ..models.tokenizer import bytes_to_raw, readable

# ---- the config rows --------------------------------------------------------------------------------------------
# key -> what the bytes column counts for that row ("kv": KV-cache bytes per token; "params": parameters, shown with
# their bytes at `dtype_bytes` each; None: the row changes numerics, not sizes)
ROWS = ("model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "n_rep",
        "head_dim", "intermediate_ratio", "rope_theta", "rms_norm_eps", "qkv_bias", "tie_word_embeddings",
        "vocab_size", "special_tokens", "total_params", "kv_per_token")


def _per_layer(c: ModelConfig, *operators: str) -> int:
    """Parameters per layer of the named param_table rows (ops/arith/costs.py)."""
    return sum(r["per_layer"] for r in costs.param_table(c) if r["operator"] in operators)


def _params_of(c: ModelConfig, operator: str) -> int:
    return sum(r["params"] for r in costs.param_table(c) if r["operator"] == operator)


def slowest_wavelength(c: ModelConfig) -> float:
    """Tokens for one full turn of RoPE's slowest pair: 2π · θ^((hd−2)/hd) (inv_freq = θ^(−2j/hd), j = hd/2 − 1)."""
    return 2 * math.pi * c.rope_theta ** ((c.head_dim - 2) / c.head_dim)


def _cost(c: ModelConfig, key: str, dtype_bytes: int):
    """(kind, amount) a row's value drives; kind "kv" amounts are bytes already, "params" amounts are counts."""
    kv = costs.kv_bytes_per_token(c, dtype_bytes)
    if key in ("num_hidden_layers", "num_key_value_heads", "head_dim", "kv_per_token"):
        return "kv", kv
    if key == "n_rep":                       # what the KV cache would be with one KV head per query head (MHA)
        return "kv", costs.kv_bytes_per_token(c.replace(num_key_value_heads=c.num_attention_heads), dtype_bytes)
    if key == "hidden_size":
        return "params", sum(r["per_layer"] for r in costs.param_table(c) if r["layers"] == c.num_hidden_layers)
    if key == "num_attention_heads":
        return "params", _per_layer(c, "attention q_proj", "attention o_proj")
    if key == "intermediate_ratio":
        return "params", _per_layer(c, "mlp (SwiGLU)")
    if key == "qkv_bias":                    # every bias tensor: the model less the same model without them
        return "params", costs.total_params(c) - costs.total_params(c.replace(attention_bias=False))
    if key == "tie_word_embeddings":
        return "params", _params_of(c, "lm_head")
    if key == "vocab_size":
        return "params", _params_of(c, "embedding")
    if key == "total_params":
        return "params", costs.total_params(c)
    return None, None


def _value(c: ModelConfig, key: str, tok=None):
    if key == "intermediate_ratio":
        return round(c.intermediate_size / c.hidden_size, 3)
    if key == "qkv_bias":
        return bool(c.attention_bias)
    if key == "special_tokens":
        return None if tok is None else len(tok.special_tokens)
    if key == "total_params":
        return costs.total_params(c)
    if key == "kv_per_token":
        return costs.kv_bytes_per_token(c)
    return getattr(c, key)


def config_rows(a: ModelConfig, b: ModelConfig, tok_a=None, tok_b=None, dtype_bytes: int = 2) -> list[dict]:
    """One row per config field that shapes the operators: key, a, b (the two values), same, and the size it
    drives (kind "kv" = KV-cache bytes per token, "params" = parameters; cost_a/cost_b, bytes_a/bytes_b at
    dtype_bytes per value), plus details a row's explanation needs (I and H, RoPE's slowest wavelength, the
    special tokens' names). The special-tokens row needs both tokenizers; without them it is left out."""
    rows = []
    for key in ROWS:
        if key == "special_tokens" and (tok_a is None or tok_b is None):
            continue
        va, vb = _value(a, key, tok_a), _value(b, key, tok_b)
        kind, ca = _cost(a, key, dtype_bytes)
        _, cb = _cost(b, key, dtype_bytes)
        row = dict(key=key, a=va, b=vb, same=va == vb, kind=kind, cost_a=ca, cost_b=cb)
        if kind is not None:
            row["bytes_a"], row["bytes_b"] = (ca, cb) if kind == "kv" else (ca * dtype_bytes, cb * dtype_bytes)
        if key == "intermediate_ratio":
            row.update(I_a=a.intermediate_size, I_b=b.intermediate_size, H_a=a.hidden_size, H_b=b.hidden_size)
        if key == "rope_theta":
            row.update(wave_a=slowest_wavelength(a), wave_b=slowest_wavelength(b))
        if key == "vocab_size" and tok_a is not None and tok_b is not None:
            row.update(tok_a=tok_a.vocab_size, tok_b=tok_b.vocab_size)
        if key == "special_tokens":
            na, nb = set(tok_a.special_tokens), set(tok_b.special_tokens)
            row.update(both=sorted(na & nb), only_a=sorted(na - nb), only_b=sorted(nb - na))
        rows.append(row)
    return rows


# ---- tokenization -----------------------------------------------------------------------------------------------
def _cut(tok, text: str) -> list[dict]:
    """The text's pieces as the tokenizer cuts it: text, bytes, start and end byte offsets."""
    out, at = [], 0
    for p in tok.piece_info(tok.encode(text)):
        out.append(dict(piece=p["piece"], id=p["id"], start=at, end=at + len(p["bytes"])))
        at += len(p["bytes"])
    return out


def tokenization(tok_a, tok_b, samples: dict[str, str]) -> list[dict]:
    """Each sample through both tokenizers: characters, UTF-8 bytes, token counts, tokens per character, and each
    side's pieces with `shared` True where the other tokenizer cut exactly the same byte span (where they differ is
    every piece with shared False; cuts_a / cuts_b: the byte offsets where only one of them cuts)."""
    rows = []
    for name, text in samples.items():
        pa, pb = _cut(tok_a, text), _cut(tok_b, text)
        spans_a, spans_b = {(p["start"], p["end"]) for p in pa}, {(p["start"], p["end"]) for p in pb}
        for p in pa:
            p["shared"] = (p["start"], p["end"]) in spans_b
        for p in pb:
            p["shared"] = (p["start"], p["end"]) in spans_a
        ends_a, ends_b = {p["end"] for p in pa}, {p["end"] for p in pb}
        chars = max(1, len(text))
        rows.append(dict(name=name, text=text, chars=len(text), bytes=len(text.encode("utf-8")), n_a=len(pa),
                         n_b=len(pb), per_char_a=len(pa) / chars, per_char_b=len(pb) / chars, pieces_a=pa,
                         pieces_b=pb, cuts_a=sorted(ends_a - ends_b), cuts_b=sorted(ends_b - ends_a),
                         shared=len(spans_a & spans_b)))
    return rows


# ---- next token ---------------------------------------------------------------------------------------------------
def _token_bytes(tok, i: int) -> bytes:
    return tok.piece_info([i])[0]["bytes"]


def id_of(tok, piece: bytes) -> int | None:
    """The id whose token is exactly these bytes in this tokenizer, or None (both sides are byte-level BPE with the
    same byte alphabet, so the spelling is shared; an added token is spelled as its text)."""
    for raw in (bytes_to_raw(piece), piece.decode("utf-8", "replace")):
        i = tok.backend.token_to_id(raw)
        if i is not None and _token_bytes(tok, i) == piece:
            return int(i)
    return None


def next_token(tok_a, logits_a: torch.Tensor, tok_b, logits_b: torch.Tensor, k: int = 8) -> list[dict]:
    """Both next-token distributions (softmax of one position's logits, every row) over the union of each side's
    top-k tokens, matched by their bytes: text (readable), id_a/id_b (None when that text is not one token of that
    vocabulary), p_a/p_b (None likewise), rank_a/rank_b (1 = most likely). A's top tokens first, then B's."""
    sides = []
    for tok, logits in ((tok_a, logits_a), (tok_b, logits_b)):
        p = torch.softmax(logits.double(), -1)
        order = torch.argsort(p[:tok.vocab_size], descending=True)      # padding rows are never produced
        rank = torch.empty_like(order)
        rank[order] = torch.arange(1, len(order) + 1)
        sides.append((tok, p, order[:k].tolist(), rank))
    pieces = list(dict.fromkeys(_token_bytes(tok_a, i) for i in sides[0][2]))
    pieces += [b for b in dict.fromkeys(_token_bytes(tok_b, i) for i in sides[1][2]) if b not in pieces]
    rows = []
    for piece in pieces:
        row = dict(text=readable(piece)[0], bytes=piece)
        for tag, (tok, p, _, rank) in zip("ab", sides):
            i = id_of(tok, piece)
            row.update({f"id_{tag}": i, f"p_{tag}": None if i is None else float(p[i]),
                        f"rank_{tag}": None if i is None else int(rank[i])})
        rows.append(row)
    return rows


# ---- attention ----------------------------------------------------------------------------------------------------
def same_depth(L: int, fraction: float) -> int:
    """The layer at this relative depth (0 = first, 1 = last) of an L-layer model."""
    return int(min(max(fraction, 0.0), 1.0) * (L - 1) + 0.5)        # halves round up, not to even


def mean_attention(trace, layer: int, row: int = 0) -> torch.Tensor:
    """(n, n) attention probabilities of one layer, averaged over its query heads, on row `row`'s real tokens."""
    n = trace.lengths[row]
    return trace.attention_probs(layer)[row, :, :n, :n].float().mean(0)


def atlas_rows(counts_a: dict[str, int], counts_b: dict[str, int]) -> list[dict]:
    """The head atlas's label counts of both models (ops/lab/atlas.py label_counts), with each label's share of the
    model's heads: kind, a, b, share_a, share_b."""
    ta, tb = max(1, sum(counts_a.values())), max(1, sum(counts_b.values()))
    kinds = list(dict.fromkeys([*counts_a, *counts_b]))
    return [dict(kind=k, a=counts_a.get(k, 0), b=counts_b.get(k, 0), share_a=counts_a.get(k, 0) / ta,
                 share_b=counts_b.get(k, 0) / tb) for k in kinds]


def compare(model_a, trace_a, model_b, trace_b, samples: dict[str, str], row: int = 0, k: int = 8) -> dict:
    """The Models page's tables from two loaded models and their traces of the same prompt: the config rows, the
    samples through both tokenizers, and the next token after row `row` of each trace."""
    ta, tb = model_a.tokenizer, model_b.tokenizer
    na, nb = trace_a.lengths[row], trace_b.lengths[row]
    return dict(rows=config_rows(model_a.config, model_b.config, ta, tb), tokens=tokenization(ta, tb, samples),
                next=next_token(ta, trace_a.logits[row, na - 1], tb, trace_b.logits[row, nb - 1], k))


def attention(trace_a, trace_b, fraction: float, row: int = 0, percent: bool = False) -> dict:
    """Both models' head-averaged attention on row `row` at the same relative depth (a fraction 0..1 of the way
    through, or 0..100 with percent=True): layers (i_a, i_b), maps, ids."""
    fraction = fraction / 100 if percent else fraction
    la = same_depth(trace_a.config.num_hidden_layers, fraction)
    lb = same_depth(trace_b.config.num_hidden_layers, fraction)
    return dict(layers=(la, lb), maps=(mean_attention(trace_a, la, row), mean_attention(trace_b, lb, row)),
                ids=(trace_a.token_ids[row, :trace_a.lengths[row]].tolist(),
                     trace_b.token_ids[row, :trace_b.lengths[row]].tolist()))


# ---- will a second model fit? -----------------------------------------------------------------------------------
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def source_config(source) -> ModelConfig:
    """A model source's config without its weights: config.json of a folder (or of the bundled model's prepared
    cache), or a GGUF file's header. Raises LoadError."""
    if source is None or str(source).strip() in ("", "default"):
        path = bundled.bundled_dir() / "config.json"
        if not path.exists():
            raise LoadError("the bundled model is not prepared yet (open any page with it first)")
        return ModelConfig.from_dict(json.loads(path.read_text("utf-8")))
    path = Path(str(source)).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise LoadError(f"{path}: no config.json (a Hugging Face model folder needs one)")
        return ModelConfig.from_dict(json.loads((path / "config.json").read_text("utf-8")))
    if path.is_file():
        try:
            return gguf.gguf_config(gguf.open_gguf(path))
        except gguf.GGUFError as e:
            raise LoadError(f"{path.name}: {e}") from e
    raise LoadError(f"{path}: no such file or folder")


def load_need_bytes(c: ModelConfig, dtype: str = "float32") -> int:
    """Memory a load takes: every parameter as float32 as it is read (ops/models/checkpoints.py converts to float32),
    plus
    the copy in `dtype` the model keeps when that is not float32."""
    n = costs.total_params(c)
    return n * 4 + (n * DTYPE_BYTES.get(dtype, 4) if dtype != "float32" else 0)


def fits(need: int, available: int) -> bool:
    """need <= available; an unknown `available` (0: no /proc/meminfo) does not refuse."""
    return available <= 0 or need <= available
