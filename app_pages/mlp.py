"""Stage 6 · MLP (SwiGLU) and MoE: each token widened, gated, and narrowed back."""
import streamlit as st

from content import words as catalogue
from content.mlp import dense_warning, moe_table, say
from ops.engine import functional as fn
from ops.lab import checks, stage_data
from ops.models.tiny import moe_trace
from ui.page import StagePage
from ui.pickers import ranged
from ui.session import lang, t
from viz import bars, heatmap, histogram
from viz.labels import short, visible
from viz.mlp import silu_curve, swiglu_diagram

SILU_DOTS = 600        # every dot lies on the curve: a few hundred show the same picture and draw fast

page = StagePage("mlp")
model, trace, c = page.model, page.trace, page.config
H, I = c.hidden_size, c.intermediate_size

i, b, s = page.layer_row_token(default_last=True)
n = trace.lengths[b]
labels = page.labels(b)
tok = short(page.labels(b, None)[s], 12)

dense = f"layers.{i}.mlp.gate" in trace
if dense:
    thr = st.session_state.get("mlp_thr", 0.01)
    m = page.memo(("token", i, b, s, thr), lambda: stage_data.mlp_token(trace, i, b, s, thr))
    strips = page.memo(("strips", i, b, s, thr), lambda: swiglu_diagram(
        m["x"], m["gate"], m["up"], m["act"], m["out"],
        names=dict(widen=t("变宽", "widen"), narrow=t("变窄", "narrow"),
                   off=t("gate < 0（silu 几乎关掉）", "gate < 0 (silu nearly off)")),
        title=say("strips_title", lang(), tok=tok, s=s, i=i, H=H, I=I)))
    page.view(f"layers.{i}.mlp.act", trace.layer(i, "mlp.act"), strips, key="mlp-strips", caption=say("strips", lang()),
              projector_height=420)
else:
    st.info(say("moe_layer", lang(), i=i))

page.explain([catalogue.say("page_mlp.formula_swiglu", lang()),
              catalogue.say("page_mlp.formula_shapes", lang(), I=I, H=H)],
             fn.swiglu)

if dense and (box := page.more(f"所选 token 的 {I} 个中间神经元", f"The {I} hidden neurons of the chosen token",
                               "neurons")):
    with box:
        gate, up, act = (trace.layer(i, f"mlp.{p}") for p in ("gate", "up", "act"))   # (B, S, I)
        c1, c2 = st.columns(2)
        with c1:
            page.view(f"layers.{i}.mlp.gate / up", gate,
                      histogram({"gate = W_gate·x": m["gate"], "up = W_up·x": m["up"]},
                                title=t("gate 与 up 的分布", "gate and up distributions"),
                                xlabel=t("数值", "value"), ylabel=t("神经元个数", "neurons")), key="mlp-gu")
        with c2:
            page.view(f"layers.{i}.mlp.act", act,
                      histogram({"silu(gate)·up": m["act"]},
                                title=t("激活 silu(gate)·up 的分布", "activation silu(gate)·up"),
                                xlabel=t("数值", "value"), ylabel=t("神经元个数", "neurons")), key="mlp-act")

        levels = [0.001, 0.01, 0.05, 0.1, 0.5]
        st.select_slider(ranged(t("“接近 0”的阈值 |act| <", "“near zero” threshold |act| <"), levels[0],
                                levels[-1]),
                         options=levels, value=0.01, key="mlp_thr")
        page.metrics([(t(f"token “{tok}” 的稀疏度", f"sparsity of “{tok}”"), f"{float(m['sparsity'][s]):.1%}"),
                      (t("gate < 0 的比例（silu 几乎关掉）", "share with gate < 0 (silu nearly off)"),
                       f"{m['gate_off']:.1%}"),
                      (t("最大 |act|", "max |act|"), f"{m['max_act']:.3g}")])
        page.view("sparsity", m["sparsity"],
                  bars(100 * m["sparsity"], labels, title=t(f"每个 token 中 |act| < {thr} 的神经元占比 (%)",
                                                              f"Share of neurons with |act| < {thr}, per token (%)"),
                       xlabel="token", ylabel="%", text_fmt=".1f"), key="mlp-sparsity")

        c1, c2 = st.columns(2)
        with c1:
            page.view(f"layers.{i}.mlp.gate[{b}, {s}]", gate[b, s],
                      silu_curve(m["gate"], title=say("silu_title", lang(), tok=tok, I=I)
                                 + (say("silu_some", lang(), dots=SILU_DOTS) if I > SILU_DOTS else ""),
                                 xlabel="z = gate", ylabel="silu(z)", max_dots=SILU_DOTS), key="mlp-silu",
                      caption=say("silu", lang()))
        with c2:
            k = len(m["top_idx"])
            page.view(f"layers.{i}.mlp.act[{b}, {s}] top-{k}", m["top_act"],
                      bars(m["top_act"], [f"#{j}" for j in m["top_idx"].tolist()],
                           title=t(f"“{tok}” 最活跃的 {k} 个神经元", f"The {k} most active neurons of “{tok}”"),
                           xlabel=t("神经元编号", "neuron index"), ylabel="silu(gate)·up",
                           text_fmt=".1f").update_xaxes(tickangle=-45),
                      key="mlp-top")

# ---- MoE -----------------------------------------------------------------------------------------
st.header(t("MoE：混合专家", "MoE: mixture of experts"))
page.explain(key="moe")
st.warning(dense_warning(c, lang()))
st.dataframe(moe_table(stage_data.moe_reference_rows(), lang()), hide_index=True, width="stretch")

if box := page.more("路由：每个 token 选了哪些专家", "Routing: the experts each token picks", "routing"):
    with box:
        mt, mmodel, real = moe_trace(trace, model)
        mc = mmodel.config
        moe_layers = [j for j in range(mc.num_hidden_layers) if mt.has_moe(j)]
        if real:
            st.success(say("moe_real", lang(), E=mc.num_experts, k=mc.num_experts_per_tok))
        else:
            st.warning(say("moe_random", lang(), E=mc.num_experts, k=mc.num_experts_per_tok, H=mc.hidden_size))
        j = i if i in moe_layers else moe_layers[0]
        if len(moe_layers) > 1 and not real:
            j = st.radio(t("微型 MoE 的层", "tiny MoE layer"), moe_layers, horizontal=True, key="moe_layer")
        probs = mt.layer(j, "moe.router_probs")                    # (B, S, E)
        idx, wts = mt.layer(j, "moe.topk_idx"), mt.layer(j, "moe.topk_weight")
        E, k = probs.shape[-1], idx.shape[-1]
        page.view(f"layers.{j}.moe.router_probs", probs,
                  heatmap(probs[b, :n], x=[f"E{e}" for e in range(E)], y=labels, colorscale="Blues", zmid=None,
                          zmin=0, title=catalogue.say("page_mlp.router_probabilities_softmax_w", lang(), j=j),
                          xlabel=t("专家", "expert"), ylabel="token", text_fmt=".2f" if n * E <= 400 else None,
                          height=max(360, 40 * n + 140)), key="moe-probs")
        c1, c2 = st.columns(2)
        with c1:
            st.markdown(f"**`layers.{j}.moe.topk_idx / topk_weight`** {t('形状', 'shape')} `{list(idx.shape)}`")
            col_pos, col_exp, col_w = t("位置", "pos"), t("选中的专家", "experts chosen"), t("权重", "weights")
            full = [visible(p) for p in page.labels(b, None)]
            st.dataframe([{col_pos: q, "token": full[q], col_exp: ", ".join(f"E{e}" for e in ex),
                           col_w: ", ".join(f"{w:.3f}" for w in ws)}
                          for q, (ex, ws) in enumerate(zip(idx[b, :n].tolist(), wts[b, :n].tolist()))],
                         hide_index=True, width="stretch")
        with c2:
            load = stage_data.expert_load(idx[b, :n], E)
            page.view(t("专家负载", "expert load"), load,
                      bars(load, [f"E{e}" for e in range(E)],
                           title=t("每个专家接到多少个 token", "Tokens sent to each expert"),
                           xlabel=t("专家", "expert"), ylabel=t("token 数", "tokens"), text_fmt=".0f"), key="moe-load")
        st.caption(say("moe_cost", lang(), k=k, E=E))

if dense:
    page.checks(page.memo(("checks", i, b, s), lambda: checks.mlp(model, trace, i, b, s)))
page.at_scale()
