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

from content import serving_page, stages
from content.words import say
from ops.arith import costs
from ops.engine import sampling as smp
from ops.lab import atlas, checks, online_softmax, precision, stage_data
from viz import bars, heatmap, use_lab_template
from viz.embedding import gather_figure
from viz.labels import pieces, token_color, visible
from viz.mlp import swiglu_diagram
from viz.precision import error_lines
from viz.residual import stream_norms
from viz.rmsnorm import before_after
from viz.sampling import candidates_chart
from viz.serving import online_softmax as online_softmax_chart

from . import lessons

FORMULAS = ("tokenize", "embedding", "rmsnorm", "attention", "residual", "mlp", "lm_head", "sampling", "atlas",
            "precision", "serving")     # the pages with a view and a formula (export.formula_<page>, plain Unicode)
PAGE = Path(__file__).resolve().parents[1] / "assets" / "export" / "lesson.html"    # the page around the steps
MLP_THRESHOLD = 0.01       # the MLP page's starting "near zero" threshold


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


def said(key: str, **fields) -> str:
    """export.<key> in English, then in Chinese (once where both say the same): a figure's words."""
    en, zh = say(f"export.{key}", "en", **fields), say(f"export.{key}", "zh", **fields)
    return en if en == zh else f"{en} · {zh}"


def _labels(model, trace, b: int = 0) -> list[str]:
    n = trace.lengths[b]
    return [visible(p) for p in pieces(model.tokenizer, trace.token_ids[b, :n].tolist())]


def _clip(value: int, hi: int) -> int:
    return max(0, min(int(value), hi - 1))


def view(step, model, trace):
    """(figure or None, {name: array}) for one step: the page's own main picture, from the page's own view data
    (ops/lab) and figure builder (viz/), at the lesson's pickers (else the page's starting ones), on the real trace
    (row 0: the lesson's first prompt). Nothing is computed here."""
    c, p = model.config, step.pickers
    n, L = trace.lengths[0], c.num_hidden_layers
    labels = _labels(model, trace)
    layer = _clip(p.get("layer", 0), L)
    draw = VIEWS.get(step.page)
    return draw(model, trace, p, n, L, labels, layer) if draw else (None, {})


def _tokenize(model, trace, p, n, L, labels, layer):
    ids = trace.token_ids[0, :n]
    return (bars(ids.tolist(), [f"{i}: {s}" for i, s in enumerate(labels)], title=said("tokenize"), ylabel="id",
                 text_fmt=".0f"), {"tokens.ids": ids})


def _embedding(model, trace, p, n, L, labels, layer):
    c, emb = model.config, trace.embeddings[0, :n]
    V = c.vocab_size
    fig = gather_figure(trace.token_ids[0, :n].tolist(), labels, emb, V, model.tokenizer.vocab_size,
                        pad_text=said("padding_rows"), title=said("embedding", n=n, V=f"{V:,}"))
    return fig, {"embed.out": emb}


def _rmsnorm(model, trace, p, n, L, labels, layer):
    s = _clip(p.get("pos", 0), n)                                  # the RMSNorm page starts on token 0
    x, y, gamma, _, yname = checks.norm_io(model, trace, "attn_norm", layer)
    one = stage_data.rmsnorm_steps(x[0, s], gamma, model.config.rms_norm_eps)
    fig = before_after(one["x"], y[0, s], xlabel="hidden dimension · 隐藏维度", color=token_color(s),
                       title=said("rmsnorm", i=layer, s=s, tok=labels[s]),
                       x_name=said("rmsnorm_x", rms=f"{one['rms']:.3f}"), y_name=said("rmsnorm_y"))
    return fig, {f"{yname}[{s}]": y[0, s], f"{yname}[{s}].rms_in": [one["rms"]]}


def _attention(model, trace, p, n, L, labels, layer):
    head = _clip(p.get("head", 0), model.config.num_attention_heads)
    one = stage_data.attention_head(trace, layer, 0, head)          # the page's map: masked cells blank
    fig = heatmap(one["probs"][:n, :n], x=labels, y=labels, zmin=0, zmax=1, colorscale="Viridis",
                  title=said("attention", i=layer, h=head), xlabel="key · 被看的 token", ylabel="query · 提问的 token")
    return fig, {f"layers.{layer}.attn.probs[head {head}]": trace.attention_probs(layer)[0, head, :n, :n]}


def _atlas(model, trace, p, n, L, labels, layer):
    scores = atlas.atlas_view(model)["scores"]["induction"]        # the Head atlas page's data, (L, nh)
    return (heatmap(scores, zmin=0, zmax=1, title=said("atlas"), xlabel="head", ylabel="layer"),
            {"atlas.induction": scores})


def _residual(model, trace, p, n, L, labels, layer):
    norms = stage_data.stream_norms(trace, 0)                        # (L + 1, n), as the Residual page
    s = _clip(p.get("pos", 0), n)
    first = f"0:{labels[0]}"
    if n <= RESIDUAL_LINES:
        series = {f"{k}:{lab}": norms[:, k] for k, lab in enumerate(labels)}
        colors = [token_color(k) for k in range(n)]
    else:
        median, q90 = stage_data.norm_summary(norms)
        series = {first: norms[:, 0], f"{s}:{labels[s]}": norms[:, s], said("median", n=n): median,
                  said("q90"): q90}
        colors = [token_color(0), token_color(s), "#555555", "#999999"]
    fig = stream_norms(series, ["embed"] + [f"L{k}" for k in range(L)], colors=colors, first=first,
                       title=said("residual"), xlabel="after layer · 经过的层", ylabel="‖x‖₂")
    return fig, {"resid_stream.norm": norms}


def _mlp(model, trace, p, n, L, labels, layer):
    c = model.config
    s = _clip(p.get("pos", n - 1), n)                              # the MLP page starts on the last token
    m = stage_data.mlp_token(trace, layer, 0, s, MLP_THRESHOLD)
    fig = swiglu_diagram(m["x"], m["gate"], m["up"], m["act"], m["out"],
                         names=dict(widen=said("widen"), narrow=said("narrow"), off=said("gate_off")),
                         title=said("mlp", i=layer, s=s, tok=labels[s], H=c.hidden_size, I=c.intermediate_size))
    return fig, {f"layers.{layer}.mlp.act[{s}]": m["act"], f"layers.{layer}.mlp.out[{s}]": m["out"]}


def _lm_head(model, trace, p, n, L, labels, layer):
    k = max(1, min(int(p.get("top", 10)), 50))
    top = stage_data.next_token_top(trace, 0, n - 1, k)          # the LM head page's own numbers
    names = [f"{visible(s)} ({i})" for s, i in zip(pieces(model.tokenizer, top["ids"].tolist()),
                                                    top["ids"].tolist())]
    return (bars(top["probs"], names, horizontal=True, title=said("lm_head", tok=labels[-1], k=k),
                 xlabel="probability", text_fmt=".3f"), {"logits.last": trace.logits[0, n - 1]})


def _sampling(model, trace, p, n, L, labels, layer):
    return sampling_view(model, trace, n, labels, min(max(int(p.get("top", 10)), 5), 30))


def _precision(model, trace, p, n, L, labels, layer):
    rep = precision.precision_report(model, trace.prompts[0])        # the Precision page's report and chart
    errs = rep["resid_rel_err"]
    fig = error_lines(errs, ["embed"] + [f"L{k}" for k in range(L)], ylabel="‖x_d − x_32‖ / ‖x_32‖",
                      title=said("precision"))
    return fig, {f"resid_rel_err.{d}": e for d, e in errs.items()}


def _serving(model, trace, p, n, L, labels, layer):
    """The Serving page's main picture: one query's softmax·V folded a block of keys at a time (its starting
    pickers: the last token, blocks of a third of the prompt)."""
    head = _clip(p.get("head", 0), model.config.num_attention_heads)
    s, block = _clip(p.get("pos", n - 1), n), max(1, -(-n // 3))
    v = online_softmax.online_softmax_view(trace, layer, 0, head, s, block)
    en, zh = serving_page.labels("en"), serving_page.labels("zh")
    word = lambda k: f"{en[k]} · {zh[k]}"      # noqa: E731
    fig = online_softmax_chart(v, _labels(model, trace) + [""] * (trace.S - n),
                               title=f"{en['online'].format(n=block)} · {zh['online'].format(n=block)}",
                               score_label=word("score"), max_label=word("run_max"), sum_label=word("run_sum"))
    kv = {name: costs.kv_bytes_per_token(model.config, size) for name, size in (("float32", 4), ("bfloat16", 2),
                                                                              ("int8", 1))}
    return fig, {f"layers.{layer}.attn.scores[head {head}, {s}]": v["scores"], "online.out": v["out"],
                 "kv_bytes_per_token": list(kv.values())}


RESIDUAL_LINES = 24        # the Residual page's: one line per token up to this many
VIEWS = {"tokenize": _tokenize, "embedding": _embedding, "rmsnorm": _rmsnorm, "attention": _attention,
         "atlas": _atlas, "residual": _residual, "mlp": _mlp, "lm_head": _lm_head, "sampling": _sampling,
         "precision": _precision, "serving": _serving}


def sampling_view(model, trace, n: int, labels: list[str], N: int):
    """The Sampling page's chart (viz.sampling.candidates_chart on ops.lab.stage_data.sampling_view) at the settings
    its sliders start on (ops.engine.sampling.SHOWN), with the stage tensors it is drawn from."""
    params = smp.SHOWN
    sv = stage_data.sampling_view(trace, 0, params, N)
    stages_, cand = sv["stages"], sv["cand"].tolist()
    names = [f"{visible(s)} ({i})" for s, i in zip(pieces(model.tokenizer, cand), cand)]
    setting = f"T = {params.temperature:g}, k = {params.top_k}, p = {params.top_p:g}"
    fig = candidates_chart(stages_, cand, names, title=said("sampling", tok=labels[-1]),
                           words=dict(raw=said("raw"), now=said("now", setting=setting), chosen=said("chosen"),
                                      cut_k=said("cut_k"), cut_p=said("cut_p")))
    return fig, {k: v for k, v in stages_.items() if k != "chosen"}


def build(lesson, model=None) -> tuple[str, dict]:
    """(the HTML text, {name: numpy array}) for a lesson, computed by the real model."""
    if model is None:
        from ops import load_model

        model = load_model()
    trace = model.trace(list(lesson.prompts))
    c = model.config
    parts = [f"<h1>{esc(lesson.title['zh'])}<br>{esc(lesson.title['en'])}</h1>",
             f"<p>{esc(said('model_line', name=c.name, L=c.num_hidden_layers, H=c.hidden_size))}</p>",
             f"<h2>{esc(said('prompts'))}</h2>", *[f'<pre class="prompt">{esc(p)}</pre>' for p in lesson.prompts]]
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
            parts.append(f'<p class="formula">{esc(said("formula_" + step.page))}</p>')
        parts.append(both(step.notes["zh"], step.notes["en"]))
        if step.question:
            q = step.question
            options = "".join(f"<li>{option(o)}</li>" for o in q.options)
            parts.append(f"<details><summary>{esc(said('question'))}</summary>{both(q.zh, q.en)}<ul>{options}</ul>"
                         f"<details><summary>{esc(said('answer'))}</summary><p>{option(q.answer)}</p></details>"
                         "</details>")
    title = f"{lesson.title['en']} · {lesson.title['zh']}"
    return PAGE.read_text(encoding="utf-8").format(title=esc(title), body="\n".join(parts)), arrays


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
    ex = sub.add_parser("export", help=said("cli"))
    ex.add_argument("lesson")
    ex.add_argument("out")
    args = ap.parse_args(argv)
    use_lab_template()             # the figures as the app draws them (app.py does the same at start)
    try:
        html_path, npz = export(args.lesson, args.out)
    except lessons.LessonError as e:
        print("\n".join(say("export.cli_error", lang, path=args.lesson, error=e.text(lang)) for lang in ("en", "zh")),
              file=sys.stderr)
        return 2
    print(f"{html_path} ({html_path.stat().st_size:,} bytes), {npz}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
