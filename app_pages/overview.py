"""Overview: the whole pipeline with live shapes, the cheat sheet, and a door into every stage."""
import streamlit as st

from content import texts
from ui import components as ui
from ui.state import require_trace, t
from viz.diagrams import pipeline_diagram

st.title(t("总览：一句话如何穿过 Qwen2.5", "Overview: how a prompt travels through Qwen2.5"))
st.markdown(t(
    "**算子实验室**把一个*真实的* Qwen2.5 模型拆成一个个算子：分词 → 嵌入 → 每层（RMSNorm → 注意力 → 残差 → "
    "RMSNorm → MLP → 残差）→ 最终 RMSNorm → LM Head → 采样。每一页都展示这一步的**真实张量**、精确形状、公式、"
    "真正运行的代码，并与 PyTorch 自带算子逐元素对照。左侧输入提示词（每行一个 = 批大小 B），所有形状随之变化。",
    "**Operator Lab** takes a *real* Qwen2.5 model apart operator by operator: tokenize → embedding → per layer "
    "(RMSNorm → attention → residual → RMSNorm → MLP → residual) → final RMSNorm → LM head → sampling. Every page "
    "shows the step's **live tensors**, exact shapes, the formula, the code that actually ran, and a check against "
    "PyTorch's own operator. Type prompts in the sidebar (one per line = batch B); every shape follows."))

model, trace = require_trace()
c = model.config
B, S, H, L, V = trace.B, trace.S, c.hidden_size, c.num_hidden_layers, c.vocab_size
nh, nkv, hd, I = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.intermediate_size
nums = texts.numbers(c, model.tokenizer.vocab_size, B, S)

ui.pipeline_strip("", f"text × {B}", f"next id [{B}, 1]")
ui.explanation("overview", nums)

# ---- the diagram ------------------------------------------------------------------------------
st.header(t("整条流水线（形状为当前输入的真实值）", "The whole pipeline (shapes are your live values)"))
mlp_name = "MoE" if c.is_moe else "MLP (SwiGLU)"
steps = [
    (t("文本 × B", "text × B"), ""),
    (t("分词 Tokenizer", "Tokenizer"), f"tokens.ids [{B}, {S}]"),
    (t("嵌入 Embedding", "Embedding"), f"[{B}, {S}, {H}]"),
    (t(f"{L} × 解码层", f"{L} × decoder layers"), f"[{B}, {S}, {H}]"),
    (t("最终 RMSNorm", "final RMSNorm"), f"[{B}, {S}, {H}]"),
    ("LM head", f"logits [{B}, {S}, {V}]"),
    (t("采样（取最后一位）", "sampling (last position)"), f"[{B}, 1]"),
    (t("下一个 token id → 解码", "next token id → decode"), ""),
]
layer_steps = [
    ("RMSNorm (input_layernorm)", f"[{B}, {S}, {H}]"),
    (t("注意力 q/k/v + RoPE", "attention q/k/v + RoPE"), f"q [{B}, {nh}, {S}, {hd}] · k,v [{B}, {nkv}, {S}, {hd}]"),
    ("softmax(QKᵀ/√d + mask) V, o_proj", f"[{B}, {S}, {H}]"),
    (t("+ 残差", "+ residual"), f"resid_mid [{B}, {S}, {H}]"),
    ("RMSNorm (post_attention_layernorm)", f"[{B}, {S}, {H}]"),
    (mlp_name, f"[{B}, {S}, {H}]  (via [{B}, {S}, {I}])"),
    (t("+ 残差", "+ residual"), ""),
]
fig = pipeline_diagram(steps, layer_steps, layer_index=3,
                       title=t(f"B = {B}, S = {S}, H = {H}, L = {L}, V = {V:,}（{c.name or c.model_type}）",
                               f"B = {B}, S = {S}, H = {H}, L = {L}, V = {V:,} ({c.name or c.model_type})"))
st.plotly_chart(fig, width="stretch", key="pipeline", theme=None)
st.caption(t("右侧是左边橙色方框里的一层；它被重复 L 次，每层输入输出都是 [B, S, H]。生成时会把新 id 接到末尾再走一遍（见“9 生成”）。",
             "The right column is one layer of the orange box, repeated L times; each layer maps [B, S, H] to [B, S, H]. "
             "Generation appends the new id and goes around again (see “9 Generate”)."))

# the diagram's shapes against the live trace
expected = {"tokens.ids": (B, S), "embed.out": (B, S, H), "final_norm.out": (B, S, H), "logits": (B, S, V)}
for i in range(L):
    expected.update({f"layers.{i}.attn_norm.out": (B, S, H), f"layers.{i}.attn.q": (B, nh, S, hd),
                     f"layers.{i}.attn.k": (B, nkv, S, hd), f"layers.{i}.attn.v": (B, nkv, S, hd),
                     f"layers.{i}.attn.out": (B, S, H), f"layers.{i}.resid_mid": (B, S, H),
                     f"layers.{i}.mlp.out": (B, S, H), f"layers.{i}.resid_out": (B, S, H)})
shapes = trace.shapes()
present = {n: s for n, s in expected.items() if n in shapes}
wrong = [n for n, s in present.items() if tuple(shapes[n]) != s]
if wrong:
    st.error(t("形状与图不符：", "Shapes differ from the diagram: ") + ", ".join(f"{n} {shapes[n]}" for n in wrong[:8]))
else:
    st.success(t(f"✓ 本次运行记录的 {len(present)} 个张量的形状全部与上图一致（共记录 {len(shapes)} 个张量）。",
                 f"✓ All {len(present)} traced tensors checked have exactly the shapes drawn above "
                 f"({len(shapes)} tensors recorded in this run)."))

# ---- the cheat sheet --------------------------------------------------------------------------
st.header(t("速查表", "Cheat sheet"))
try:
    rows = texts.cheatsheet(nums)
    table = [{"#": r.get("step", k + 1), t("算子", "operator"): r["operator"],
              t("输入形状", "input shape"): r["input_shape"], t("输出形状", "output shape"): r["output_shape"],
              t("作用", "purpose"): r.get("purpose_zh" if t("zh", "en") == "zh" else "purpose_en", "")}
             for k, r in enumerate(rows)]
except Exception:   # no cheat sheet file: build the table from the trace itself
    table = [{t("张量", "tensor"): n, t("形状", "shape"): ui.shape_str(s)} for n, s in shapes.items()
             if not n.startswith("layers.") or n.startswith("layers.0.")]
import pandas as pd  # noqa: E402
st.table(pd.DataFrame(table).set_index(list(table[0])[0]) if table else [])
st.caption(t(f"形状中的数字来自当前模型与输入：B = {B}, S = {S}, H = {H}, nh = {nh}, nkv = {nkv}, hd = {hd}, I = {I}, V = {V:,}。",
             f"Numbers in the shapes come from the loaded model and your prompts: B = {B}, S = {S}, H = {H}, "
             f"nh = {nh}, nkv = {nkv}, hd = {hd}, I = {I}, V = {V:,}."))

# ---- into each stage ----------------------------------------------------------------------------
st.header(t("进入每一步", "Step into each stage"))
links = [("tokenize", "✂️", "1 分词", "1 Tokenize"), ("embedding", "📖", "2 嵌入", "2 Embedding"),
         ("rmsnorm", "📏", "3 RMSNorm", "3 RMSNorm"), ("attention", "👀", "4 注意力", "4 Attention"),
         ("residual", "➕", "5 残差相加", "5 Residual add"), ("mlp", "🧮", "6 MLP / MoE", "6 MLP / MoE"),
         ("lm_head", "🎯", "7 LM Head", "7 LM head"), ("sampling", "🎲", "8 采样", "8 Sampling"),
         ("generate", "🔁", "9 生成", "9 Generate"), ("scale", "📐", "规模", "Scale")]
cols = st.columns(5)
for k, (page, icon, zh, en) in enumerate(links):
    with cols[k % 5]:
        st.page_link(f"app_pages/{page}.py", label=t(zh, en), icon=icon)
