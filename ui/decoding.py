"""Helpers for the MLP/MoE, LM head, sampling, generate and tour pages (kept out of the shared modules)."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st
import torch

import ops
from ops import functional as fn
from ops.config import ModelConfig
from viz.figures import base_layout


def short(piece: str, n: int = 8) -> str:
    """A token piece fit for an axis label: whitespace made visible, cut to n characters."""
    s = str(piece).replace("\n", "↵").replace("\t", "⇥").replace(" ", "␣")
    if s == "":
        s = "∅"
    return s if len(s) <= n else s[: n - 1] + "…"


def pieces(model, ids) -> list[str]:
    ids = [int(i) for i in ids]
    try:
        return model.tokenizer.pieces(ids)
    except Exception:
        return [str(i) for i in ids]


def short_labels(model, ids, n: int = 8) -> list[str]:
    return [short(p, n) for p in pieces(model, ids)]


# ---- a tiny random-weight MoE, only to show the mechanism on a dense model ---------------------------
TINY_MOE = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                shared_expert_intermediate_size=64, max_position_embeddings=4096)


@st.cache_resource(show_spinner=False)
def tiny_moe_model(seed: int = 0):
    """ops.Model of a 2-layer qwen2_moe with seeded random weights under the Hugging Face names."""
    c = ModelConfig(model_type="qwen2_moe", name="tiny random MoE (8 experts, top-2)", **TINY_MOE)
    from ops.loading import expected_shapes
    g = torch.Generator().manual_seed(seed)
    weights = {}
    for name, shape in expected_shapes(c).items():
        if name.endswith("layernorm.weight") or name == "model.norm.weight":
            weights[name] = torch.ones(shape)
        elif name.endswith(".bias"):
            weights[name] = torch.zeros(shape)
        else:
            weights[name] = torch.randn(shape, generator=g) * (1.0 / shape[-1] ** 0.5)
    return ops.Model(c, weights, tokenizer=None, device="cpu", dtype="float32")


def moe_trace(trace, model):
    """(trace with MoE tensors, the model that made it, real?) for the MoE section; tiny one cached per trace."""
    if any(trace.has_moe(i) for i in range(trace.config.num_hidden_layers)):
        return trace, model, True
    key = ("_moe_tiny", id(trace))
    if key not in st.session_state:
        tiny = tiny_moe_model()
        rows = [[int(v) % tiny.config.vocab_size for v in trace.token_ids[b, :trace.lengths[b]].tolist()]
                for b in range(trace.B)]
        st.session_state[key] = tiny.trace_ids(rows)
    return st.session_state[key], tiny_moe_model(), False


# ---- logit lens ----------------------------------------------------------------------------------
LENS_WINDOW = 32   # positions: each costs (L + 1) LM-head products of width V, seconds each on a CPU
LENS_ROWS = 160    # rows per LM-head product in the lens: a (160, V) float32 buffer is 97 MB


def lens_start(trace, b: int) -> int:
    """First position the logit lens covers: the last LENS_WINDOW real tokens of row b."""
    return max(0, trace.lengths[b] - LENS_WINDOW)


def top_of_rows_(buf: torch.Tensor):
    """(ids, p_max) of each row of logits in buf (rows, V), in place (buf is overwritten): the top token and
    its softmax probability p_max = 1 / sum_j exp(l_j - l_max), with no (rows, V) temporaries."""
    best = buf.max(-1)
    p = 1.0 / buf.sub_(best.values[:, None]).exp_().sum(-1)
    return best.indices, p


def _per_row(name: str, trace, b: int, compute):
    """compute() once per (trace, row), kept in session_state[name] (cleared beyond 16 entries)."""
    store = st.session_state.setdefault(name, {})
    key = (id(trace), b)
    if key not in store:
        if len(store) > 16:
            store.clear()
        store[key] = compute()
    return store[key]


def _top_in_blocks(x: torch.Tensor, block: int, V: int, logits_into):
    """(ids, p_max) for every row of x, `block` rows at a time through one reused (block, V) buffer:
    logits_into(rows, out) writes those rows' logits into out and returns it."""
    buf = torch.empty(min(block, len(x)), V)
    ids, probs = [], []
    for rows in x.split(block):
        top = top_of_rows_(logits_into(rows, buf[:len(rows)]))
        ids.append(top[0])
        probs.append(top[1])
    return torch.cat(ids), torch.cat(probs)


def top_next(trace, b: int):
    """The most likely next token and its probability at every real position of row b: (ids [n], probs [n]).
    Computed once per (trace, row) in blocks of 64 positions, kept in session_state."""
    logits = trace.logits[b, :trace.lengths[b]]                                   # (n, V)
    return _per_row("_top_next", trace, b,
                    lambda: _top_in_blocks(logits, 64, logits.shape[1], lambda rows, out: out.copy_(rows)))


def logit_lens(model, trace, b: int):
    """Top token and its probability at every residual-stream state (embed + each layer) for the last
    LENS_WINDOW positions of row b (from lens_start).

    Returns (ids [L+1, w], probs [L+1, w]); computed once per (trace, row), kept in session_state.
    All states' positions go through the LM head LENS_ROWS rows at a time (one 32-row product per state read the
    0.5 GB head 25 times), into one reused buffer: allocating a (w, V) product per state left ~0.5 GB resident."""
    def compute():
        n, start = trace.lengths[b], lens_start(trace, b)
        w_norm = model.w("model.norm.weight").float().cpu()
        w_head = model.w("lm_head.weight").float().cpu()
        states = trace.residual_stream()
        with torch.inference_mode():
            h = torch.cat([fn.rms_norm(x[b, start:n].float(), w_norm, model.config.rms_norm_eps) for x in states])
            ids, probs = _top_in_blocks(h, LENS_ROWS, w_head.shape[0],                  # lm_head: h W^T
                                        lambda rows, out: torch.matmul(rows, w_head.T, out=out))
        return ids.view(len(states), n - start), probs.view(len(states), n - start)

    return _per_row("_lens", trace, b, compute)


# ---- figures not in viz/figures.py ---------------------------------------------------------------
def silu_curve(gate_values, title="", xlabel="gate z", ylabel="silu(z)") -> go.Figure:
    g = gate_values.float()
    lo, hi = min(-6.0, float(g.min()) - 0.5), max(3.0, float(g.max()) + 0.5)   # the curve where the gates are
    z = torch.linspace(lo, hi, 400)
    data = [go.Scatter(x=z.numpy(), y=torch.nn.functional.silu(z).numpy(), mode="lines", name="silu(z) = z·σ(z)",
                       line=dict(width=3)),
            go.Scatter(x=g.numpy(), y=torch.nn.functional.silu(g).numpy(), mode="markers", name="gate",
                       marker=dict(size=9, opacity=0.35, color="#d62728"))]
    return go.Figure(data, layout=base_layout(title, xlabel, ylabel, 420, legend=dict(orientation="h", y=1.12)))


def bar_pair(labels, a, b, name_a, name_b, title="", xlabel="", ylabel="", height=440) -> go.Figure:
    fig = go.Figure([go.Bar(x=labels, y=[float(v) for v in a], name=name_a, text=[f"{float(v):.3f}" for v in a],
                            textposition="auto"),
                     go.Bar(x=labels, y=[float(v) for v in b], name=name_b, text=[f"{float(v):.3f}" for v in b],
                            textposition="auto")])
    fig.update_layout(base_layout(title, xlabel, ylabel, height, dict(type="category", tickangle=-45), barmode="group",
                              legend=dict(orientation="h", y=1.12)))
    return fig


def text_heatmap(z, text, x, y, title="", xlabel="", ylabel="", height=600, colorscale="Viridis") -> go.Figure:
    """Heatmap with a string per cell (e.g. the logit lens: color = probability, text = token piece)."""
    z = z.float().tolist() if hasattr(z, "tolist") else z
    show = len(x) * len(y) <= 600
    hm = go.Heatmap(z=z, x=x, y=y, colorscale=colorscale, zmin=0, zmax=1, text=text,
                    texttemplate="%{text}" if show else None, textfont=dict(size=13),
                    hovertemplate="%{y}<br>%{x}<br>%{text}: p = %{z:.3f}<extra></extra>")
    return go.Figure([hm], layout=base_layout(title, xlabel, ylabel, height, dict(type="category", tickangle=-45),
                                          dict(type="category", autorange="reversed")))


def html_escape(s: str) -> str:
    import html
    return html.escape(str(s)).replace("\n", "<br>")
