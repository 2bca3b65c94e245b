"""Classroom tour (presenter mode): the whole pipeline for the current prompt, one large step per click.

The script is content/tour.py, each step's numbers ops.lab.overview_data.tour_data, its picture viz/tour.py."""
import plotly.graph_objects as go
import streamlit as st

from content import stages, tour as script
from content.words import say
from ops.lab import overview_data, stage_data
from ui import lesson_replay
from ui.blocks import chart, picture, pipeline_strip, shape_str, tensor_view
from ui.session import lang, projector, query_int, set_query, t
from ui.sidebar import page_prompt
from ui.state import require_trace
from viz import labels as lbl, tour as vt
from viz.overview import pipeline_picture

st.markdown(vt.css(), unsafe_allow_html=True)            # the app's own CSS comes from app.py
st.title(f"{stages.get('tour').icon} " + say("page_tour.classroom_tour_one_sentence", lang()))
model, trace = require_trace()
tok = model.tokenizer
N = len(script.STEPS)

if "tour_step" not in st.session_state:
    st.session_state.tour_step = query_int("step", 0, 0, N - 1)
st.session_state.tour_step = max(0, min(N - 1, st.session_state.tour_step))


def go_to(delta):
    st.session_state.tour_step = max(0, min(N - 1, st.session_state.tour_step + delta))
    st.session_state.tour_shown = False          # each step's result waits for its own reveal


k = st.session_state.tour_step
set_query("step", str(k))
step = script.STEPS[k]

# ---- row 0 of the batch: its labels and the top next tokens (the last steps' words need them) ------------
b = 0
n = trace.lengths[b]
top = stage_data.next_token_top(trace, b, n - 1, 10)
chosen = int(top["ids"][0])
piece = lbl.pieces(tok, [chosen])[0]
ctx = dict(prompt=trace.prompts[b], pieces=[lbl.visible(p) for p in lbl.row_labels(tok, trace, b, None)],
           short=lbl.row_labels(tok, trace, b), top=top, chosen=chosen, piece=lbl.visible(piece),
           piece_short=lbl.short(piece), new_text=tok.decode([chosen]),
           top_labels=[lbl.short(p, 10) for p in lbl.pieces(tok, top["ids"].tolist())],
           raw=lbl.row_labels(tok, trace, b, None), vocab=model.config.vocab_size,
           pipeline=lambda: pipeline_picture(model.config, trace.shapes(), trace.B, trace.S, lang(),
                                             **vt.pipeline_size(projector())))
nums = script.numbers(model.config, n, lbl.short(piece, 12), float(top["probs"][0]), tok.vocab_size)
data = overview_data.tour_data(trace, b, step.key)
if step.key == "pick":
    data = dict(name="next id", tensor=top["ids"][:1])
tname, tensor = data.get("name"), data.get("tensor")

c1, c2, cp, cl, c3 = st.columns([1, 1, 1, 1, 2])
with cp:                                           # the class's own sentence, without opening the sidebar
    page_prompt("tour")
with cl.popover("📚 " + t("课程", "Lesson")):        # a saved lesson, replayed step by step (ui/lesson_replay.py)
    lesson_replay.chooser()
c1.button(t("◀ 上一步", "◀ Back"), key="tour_back", on_click=go_to, args=(-1,), width="stretch",
          disabled=k == 0, shortcut="left")
c2.button(t("下一步 ▶", "Next ▶"), key="tour_next", on_click=go_to, args=(1,), type="primary", width="stretch",
          disabled=k == N - 1, shortcut="right")
c3.markdown(f'<div class="tour-step">{t("步骤", "Step")} {k + 1} / {N} · {t("键盘：← →", "keys: ← →")}</div>',
            unsafe_allow_html=True)
hidden = bool(step.result_zh) and not st.session_state.get("tour_shown")   # the shape would give the count away
with c3:                                           # where this step is in the pipeline, and what it shows
    pipeline_strip(step.stage, f"{tname} {'' if hidden else shape_str(tensor.shape)}" if tensor is not None else "")
lesson_replay.upload_error()                       # a refused lesson file says what is wrong; the tour goes on
st.progress((k + 1) / N)
st.markdown(f'<div class="tour-title">{k + 1}. {vt.esc(step.title(lang(), nums))}</div>', unsafe_allow_html=True)
st.markdown(f'<div class="tour-big">{vt.esc(step.words(lang(), nums))}</div>', unsafe_allow_html=True)
out = vt.view(step.key, data, ctx, lang())
if isinstance(out, str):                           # the HTML view (prompt, chips), then a figure: every step has one
    st.markdown(out, unsafe_allow_html=True)
    out = vt.companion(step.key, data, ctx, lang())
if isinstance(out, str):                           # a drawn picture (the pipeline, as SVG)
    picture(out)
    out = None
if tensor is not None:
    tensor_view(tname, tensor, out if isinstance(out, go.Figure) else None, key=f"tour-{k}")
elif out is not None:
    chart(out, f"tour-{k}")
if hidden:                                         # the result after the picture, once the class has guessed
    st.button(t("显示结果（↓）", "Show the result (↓)"), key="tour_reveal", shortcut="Down",
              on_click=lambda: st.session_state.update(tour_shown=True))
elif step.result_zh:
    st.markdown(f'<div class="tour-big tour-result">{vt.esc(step.result(lang(), nums))}</div>', unsafe_allow_html=True)
if trace.B > 1:
    st.caption(t(f"演示使用第 0 行（共 {trace.B} 行）。", f"The tour uses row 0 (of {trace.B})."))
