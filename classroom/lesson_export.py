"""A lesson (classroom/lessons.py) as one standalone HTML file a student opens with no app, no server, no network.

    python -m classroom.lesson_export export assets/lessons/first-lesson.json first-lesson.html

runs the real model on the lesson's prompts, draws each step's view with the viz/ builders (Plotly's own JavaScript
inlined once, so the figures stay interactive offline), writes both languages, the notes, the questions with their
answers folded in <details>, formulas in plain Unicode (no KaTeX from a CDN), and beside the HTML an .npz of every
tensor it shows. Every text that came from the lesson file or the prompt is HTML-escaped; figure data goes through
Plotly's JSON, which escapes < and / (a prompt can never become markup or script).
No Streamlit here: the app's download button (later) and this command share build().
"""
from __future__ import annotations

import argparse
import html
import io
import sys
from pathlib import Path

import numpy as np
import plotly.io as pio
import torch

from content import stages
from ops.engine import sampling as smp
from ops.lab import stage_data
from viz import bars, heatmap, histogram, lines, use_lab_template
from viz.labels import pieces, visible
from viz.sampling import candidates_chart

from . import lessons

FORMULAS = {        # plain Unicode, readable with no script at all
    "tokenize": "text → byte-level BPE pieces → ids ∈ [0, V)",
    "embedding": "x[s] = E[id[s]],  E ∈ ℝ^(V×H)",
    "rmsnorm": "y = g ⊙ x / √(mean(x²) + ε)",
    "attention": "A = softmax(q·kᵀ/√d + mask),  out = A·v;  q, k rotated by RoPE (θ = rope_theta)",
    "residual": "h = x + attn(norm₁(x));  x′ = h + mlp(norm₂(h))",
    "mlp": "mlp(x) = W_down (silu(W_gate x) ⊙ W_up x)",
    "lm_head": "logits = RMSNorm(x_L) · W_outᵀ;  p = softmax(logits)",
    "sampling": "z → z/T → top-k → top-p → min-p → p = softmax → draw;  T = 0: p = one-hot(argmax z)",
    "atlas": "induction score = mean over t in the second copy of A[t, t − n + 1]",
    "precision": "bf16(x) keeps 8 significant bits:  |bf16(x) − x| / |x| ≤ 2⁻⁸",
    "serving": "KV bytes per token = 2 (K and V) × layers × KV heads × head dim × bytes per value",
}
PAGE = """<!doctype html>
<html lang="zh-en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, "Noto Sans CJK SC", sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       font-size: 18px; line-height: 1.5; color: #222; }}
h1 {{ font-size: 1.8em; }} h2 {{ border-top: 1px solid #ccc; padding-top: 1em; }}
.formula {{ font-family: "DejaVu Sans Mono", monospace; background: #f4f4f8; padding: .4em .7em; }}
.zh, .en {{ margin: .4em 0; }} .lang {{ color: #888; font-size: .8em; margin-right: .5em; }}
details {{ margin: .6em 0; }} summary {{ cursor: pointer; font-weight: 600; }}
pre.prompt {{ white-space: pre-wrap; background: #f7f7f7; padding: .5em; }}
</style></head>
<body>
{body}
</body></html>
"""


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def both(zh: str, en: str, tag: str = "p") -> str:
    return (f'<{tag} class="zh" lang="zh"><span class="lang">中文</span>{esc(zh)}</{tag}>\n'
            f'<{tag} class="en" lang="en"><span class="lang">EN</span>{esc(en)}</{tag}>')


def option(o: dict) -> str:
    """A question's option (or answer) in both languages, as the notes are; once where both say the same."""
    if o["zh"] == o["en"]:
        return esc(o["en"])
    return f'<span lang="zh">{esc(o["zh"])}</span> · <span lang="en">{esc(o["en"])}</span>'


def _labels(model, trace, b: int = 0) -> list[str]:
    n = trace.lengths[b]
    return [visible(p) for p in pieces(model.tokenizer, trace.token_ids[b, :n].tolist())]


def _clip(value: int, hi: int) -> int:
    return max(0, min(int(value), hi - 1))


def view(step, model, trace):
    """(figure or None, {name: array}) for one step, from the real trace (row 0: the lesson's first prompt)."""
    c, p = model.config, step.pickers
    n, L = trace.lengths[0], c.num_hidden_layers
    labels = _labels(model, trace)
    layer = _clip(p.get("layer", 0), L)
    if step.page == "tokenize":
        ids = trace.token_ids[0, :n]
        return (bars(ids.float(), [f"{i}: {s}" for i, s in enumerate(labels)], title="token ids · 每个 token 的编号",
                     ylabel="id", text_fmt=".0f"), {"tokens.ids": ids})
    if step.page == "embedding":
        x = trace["embed.out"][0, :n, :64]
        return (heatmap(x, y=labels, title=f"embed.out [S, H] (first 64 of {c.hidden_size}) · 嵌入向量（前 64 维）",
                        xlabel="dim", ylabel="token"), {"embed.out": trace["embed.out"][0, :n]})
    if step.page == "rmsnorm":
        x = trace["embed.out"][0, :n] if layer == 0 else trace[f"layers.{layer - 1}.resid_out"][0, :n]
        y = trace[f"layers.{layer}.attn_norm.out"][0, :n]
        rms = lambda t: t.float().pow(2).mean(-1).sqrt()          # noqa: E731  (per-token RMS, for the plot)
        return (lines({"input · 输入": rms(x), "RMSNorm output · 输出": rms(y)}, x=labels,
                      title=f"layer {layer}: RMS of each token before and after · 第 {layer} 层 RMSNorm 前后",
                      xlabel="token", ylabel="RMS"), {f"layers.{layer}.attn_norm.out": y})
    if step.page == "attention":
        head = _clip(p.get("head", 0), c.num_attention_heads)
        probs = trace[f"layers.{layer}.attn.probs"][0, head, :n, :n]
        return (heatmap(probs, x=labels, y=labels, zmin=0, zmax=1,
                        title=f"layer {layer}, head {head}: attention probabilities · 注意力概率",
                        xlabel="key · 被看的 token", ylabel="query · 提问的 token"),
                {f"layers.{layer}.attn.probs[head {head}]": probs})
    if step.page == "atlas":
        from ops.lab import atlas

        scores = atlas.head_scores(model)["induction"]            # (L, nh)
        return (heatmap(scores, zmin=0, zmax=1, title="induction score of every head · 每个头的归纳分数", xlabel="head",
                        ylabel="layer"), {"atlas.induction": scores})
    if step.page == "residual":
        norms = torch.stack([trace[f"layers.{i}.resid_out"][0, n - 1].float().norm() for i in range(L)])
        return (lines({"‖resid_out‖": norms}, x=list(range(L)),
                      title="the last token's residual stream, layer by layer · 最后一个 token 的残差流大小",
                      xlabel="layer", ylabel="L2 norm"), {"resid_out.norm": norms})
    if step.page == "mlp":
        act = trace[f"layers.{layer}.mlp.act"][0, :n]
        title = f"layer {layer}: silu(gate) ⊙ up (first 64 of {c.intermediate_size})"
        return (heatmap(act[:, :64], y=labels, title=title, xlabel="neuron", ylabel="token"),
                {f"layers.{layer}.mlp.act": act})
    if step.page == "lm_head":
        k = max(1, min(int(p.get("top", 10)), 50))
        top = stage_data.next_token_top(trace, 0, n - 1, k)          # the LM head page's own numbers
        names = [f"{visible(s)} ({i})" for s, i in zip(pieces(model.tokenizer, top["ids"].tolist()),
                                                        top["ids"].tolist())]
        title = f"next token after “{labels[-1]}”: top {k} · 下一个 token"
        return (bars(top["probs"], names, horizontal=True, title=title,
                     xlabel="probability", text_fmt=".3f"), {"logits.last": trace.logits[0, n - 1]})
    if step.page == "sampling":
        return sampling_view(model, trace, n, labels, min(max(int(p.get("top", 10)), 5), 30))
    if step.page == "precision":
        x = trace[f"layers.{layer}.resid_out"][0, :n].float().flatten()
        x = x[x != 0]
        rel = ((x.to(torch.bfloat16).float() - x).abs() / x.abs())
        title = (f"layer {layer}: bfloat16's relative rounding error, {x.numel():,} values of resid_out"
                 " · bf16 相对舍入误差")
        return (histogram({"bf16": rel}, title=title, xlabel="|bf16(x) − x| / |x|  (≤ 2⁻⁸ = 0.0039)"),
                {f"layers.{layer}.resid_out.bf16_rel_error": rel})
    if step.page == "serving":
        per_value = {"float32": 4, "bfloat16": 2, "int8": 1}
        kv = {k: 2 * L * c.num_key_value_heads * c.head_dim * b for k, b in per_value.items()}
        title = "KV cache bytes per token of this model · 每个 token 的 KV 缓存字节"
        return (bars(list(kv.values()), list(kv), title=title,
                     ylabel="bytes", text_fmt=",.0f"), {"kv_bytes_per_token": np.array(list(kv.values()))})
    return None, {}


def sampling_view(model, trace, n: int, labels: list[str], N: int):
    """The Sampling page's chart (viz.sampling.candidates_chart on ops.lab.stage_data.sampling_view) at the settings
    its sliders start on (ops.engine.sampling.SHOWN), with the stage tensors it is drawn from."""
    params = smp.SHOWN
    sv = stage_data.sampling_view(trace, 0, params, N)
    stages, cand = sv["stages"], sv["cand"].tolist()
    names = [f"{visible(s)} ({i})" for s, i in zip(pieces(model.tokenizer, cand), cand)]
    setting = f"T = {params.temperature:g}, k = {params.top_k}, p = {params.top_p:g}"
    fig = candidates_chart(stages, cand, names, title=f"next token after “{labels[-1]}” · 下一个 token 的概率",
                           words=dict(raw="raw softmax (T = 1) · 原始", now=f"{setting} · 当前设置",
                                      chosen="chosen · 选中", cut_k="cut by top-k · 被 top-k 截掉",
                                      cut_p="cut by top-p · 被 top-p 截掉"))
    return fig, {k: v for k, v in stages.items() if k != "chosen"}


def build(lesson, model=None) -> tuple[str, dict]:
    """(the HTML text, {name: numpy array}) for a lesson, computed by the real model."""
    if model is None:
        from ops import load_model

        model = load_model()
    trace = model.trace(list(lesson.prompts))
    parts = [f"<h1>{esc(lesson.title['zh'])}<br>{esc(lesson.title['en'])}</h1>",
             f"<p>{esc(model.config.name)} · {model.config.num_hidden_layers} layers 层 · hidden 隐藏维度 "
             f"{model.config.hidden_size}</p>",
             "<h2>提示词 · Prompts</h2>", *[f'<pre class="prompt">{esc(p)}</pre>' for p in lesson.prompts]]
    arrays, plotly_js = {}, True
    for i, step in enumerate(lesson.steps):
        s = stages.get(step.page)
        parts.append(f"<h2>{i + 1}. {esc(s.zh)} · {esc(s.en)}</h2>")
        fig, tensors = view(step, model, trace)
        if fig is not None:
            fig.update_layout(width=1000)
            parts.append(pio.to_html(fig, include_plotlyjs=plotly_js, full_html=False,
                                     config={"displaylogo": False}))
            plotly_js = False                        # Plotly's JavaScript once, inline, for every figure after it
        for name, t in tensors.items():
            arrays[f"step{i + 1}/{name}"] = t.detach().float().numpy() if torch.is_tensor(t) else np.asarray(t)
        if step.page in FORMULAS:
            parts.append(f'<p class="formula">{esc(FORMULAS[step.page])}</p>')
        parts.append(both(step.notes["zh"], step.notes["en"]))
        if step.question:
            q = step.question
            options = "".join(f"<li>{option(o)}</li>" for o in q.options)
            parts.append(f"<details><summary>问题 · Question</summary>{both(q.zh, q.en)}<ul>{options}</ul>"
                         f"<details><summary>答案 · Answer</summary><p>{option(q.answer)}</p></details></details>")
    title = f"{lesson.title['en']} · {lesson.title['zh']}"
    return PAGE.format(title=esc(title), body="\n".join(parts)), arrays


def export(lesson_path, out_html, model=None) -> tuple[Path, Path]:
    """Write OUT.html and OUT.npz; a bad lesson file raises lessons.LessonError before the model runs."""
    lesson = lessons.load(lesson_path)
    text, arrays = build(lesson, model)
    out_html = Path(out_html)
    out_html.write_text(text, encoding="utf-8")
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    npz = out_html.with_suffix(".npz")
    npz.write_bytes(buf.getvalue())
    return out_html, npz


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m classroom.lesson_export", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="a lesson file -> one standalone HTML file (+ an .npz of its tensors)")
    ex.add_argument("lesson")
    ex.add_argument("out")
    args = ap.parse_args(argv)
    use_lab_template()             # the figures as the app draws them (app.py does the same at start)
    try:
        html_path, npz = export(args.lesson, args.out)
    except lessons.LessonError as e:
        print(f"lesson {args.lesson}: {e.text('en')}\n课程 {args.lesson}：{e.text('zh')}", file=sys.stderr)
        return 2
    print(f"{html_path} ({html_path.stat().st_size:,} bytes), {npz}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
