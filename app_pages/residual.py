"""Stage 5 · Residual add: each sub-layer adds its output onto the running stream."""
import streamlit as st

from content.words import say
from ops.engine.model import Model
from ops.lab import checks, stage_data
from ui.page import StagePage
from ui.session import lang, t
from viz import heatmap, lines
from viz.diagrams import roomy
from viz.labels import token_color
from viz.residual import first_token_lead, log_ratio_map, stream_norms

MAX_LINES = 24          # one line per token up to this many; hundreds of lines read as a blur (and draw slowly)

page = StagePage("residual")
model, trace, c = page.model, page.trace, page.config
H, L = c.hidden_size, c.num_hidden_layers

i, b, s = page.layer_row_token()
n = trace.lengths[b]
labels = page.labels(b)

# ---- the main picture: the stream's norm through the layers, per token ---------------------------
norms = page.memo(("norms", b), lambda: stage_data.stream_norms(trace, b))        # (L + 1, n)
first = f"0:{labels[0]}"
if n <= MAX_LINES:
    series = {f"{k}:{lab}": norms[:, k] for k, lab in enumerate(labels)}
    colors = [token_color(k) for k in range(n)]
else:
    median, q90 = stage_data.norm_summary(norms)
    series = {first: norms[:, 0], f"{s}:{labels[s]}": norms[:, s],
              t(f"{n} 个 token 的中位数", f"median of the {n} tokens"): median, t("90% 分位", "90th percentile"): q90}
    colors = [token_color(0), token_color(s), "#555555", "#999999"]
lead = first_token_lead(norms)
where = t("嵌入", "at the embedding") if lead and lead[0] == 0 else \
    t(f"第 {lead[0] - 1} 层之后", f"after layer {lead[0] - 1}") if lead else ""
lead_note = say("page_residual.lead", lang(), times=f"{lead[1]:,.0f}", where=where) if lead else ""
stream = page.memo(("stream", b, s, i), lambda: stream_norms(
    series, [t("嵌入", "embed")] + [t(f"第 {k} 层", f"L{k}") for k in range(norms.shape[0] - 1)], colors=colors,
    first=first,
    title=say("page_residual.each_token_s_x", lang()),
    xlabel=t("经过的层", "after layer"), ylabel="‖x‖₂", height=460, mark=(i + 1, t(f"第 {i} 层", f"layer {i}"))))
page.view(t("残差流的 L2 范数", "residual stream L2 norm"), norms, stream, key="stream", projector_height=400,
          caption=say("page_residual.massive", lang(), lead=lead_note))

st.caption(say("agree.residual_layer", lang(), i=i, s=s, tok=labels[s], x_in=f"{float(norms[i, s]):,.2f}",
                x_out=f"{float(norms[i + 1, s]):,.2f}", name_in=trace.layer_input_name(i),
                name_out=f"layers.{i}.resid_out"))

page.explain([say("page_residual.formula_mid", lang()), say("page_residual.formula_out", lang())], Model.layer)

# ---- how much each sub-layer adds ----------------------------------------------------------------
st.subheader(say("page_residual.adds_heading", lang(), s=s, tok=labels[s]))
layers_ok, ratios = page.memo(("ratios", b), lambda: stage_data.update_ratios(trace, b))   # (2, L, n): attention, MLP
mlp_rel = ratios[1]
if layers_ok:
    rel = page.memo(("rel", b, s), lambda: roomy(lines(
        {"‖attn.out‖ / ‖x‖": ratios[0, :, s], "‖mlp.out‖ / ‖resid_mid‖": ratios[1, :, s]}, x=layers_ok,
        title=say("page_residual.size_of_what_is", lang()),
        xlabel=t("层", "layer"), ylabel=t("比值（对数轴）", "ratio (log axis)"), height=440)).update_yaxes(type="log"))
    page.view(t("相对增量", "relative update"), ratios[:, :, s], rel, key="rel")
    if box := page.more(say("page_residual.more_relmap", "zh"), say("page_residual.more_relmap", "en"),
                        "relmap"):
        with box:
            relmap = page.memo(("relmap", b), lambda: log_ratio_map(
                mlp_rel, labels, title=say("page_residual.log_mlp_out_resid", lang()),
                xlabel=t("层", "layer"), ylabel="token"))
            page.view(t("MLP 相对增量（层 × token）", "MLP relative update (layer × token)"), mlp_rel, relmap,
                      key="relmap")
else:
    st.info(say("page_residual.this_run_did_not", lang()))

# ---- the add itself, on one token (below the fold: drawn when unfolded) ---------------------------
try:
    rows = stage_data.layer_adds(trace, i, b, s, min(64, H))
except KeyError as e:
    st.info(t("这次运行没有记录：", "This run did not record: ") + str(e))
    st.stop()
if box := page.more(f"第 {i} 层的两次相加（token {s}，前 64 维）", f"Layer {i}'s two adds (token {s}, first 64 dims)",
                    "adds"):
    with box:
        page.view(f"layers.{i}.resid_out", trace.layer(i, "resid_out"),
                  heatmap(rows, y=[t("x（层输入）", "x (layer input)"), "+ attn.out", "= resid_mid", "+ mlp.out",
                             "= resid_out"],
                          title=t("逐元素相加：每一列 = 同一维", "Element-wise: each column is one dimension"),
                          xlabel=t("隐藏维度", "hidden dimension"), height=360), key="adds")

page.checks(page.memo(("checks", i), lambda: checks.residual(trace, i)),
            zh="对照：逐元素完全相等", en="Check: exactly equal, element by element")
st.caption(say("page_residual.exact_sum", lang(), layers=len(layers_ok),
               worst=format(stage_data.residual_worst(trace, layers_ok), "g")))
page.at_scale()
