"""The stage registry: every page and topic of Operator Lab, written down once.

Navigation (app.py), the pipeline strip and page scaffold (ui/page.py), the overview, the explanations
(content/texts.py), practice (content/practice.py) and the at-scale costs (ops/arith/costs.py) all read it.
A stage with a `page` is a page of the app (app_pages/<page>.py at URL /<page>); one without is a topic
explained inside another page (`parent`). `number` is its place in the pipeline strip (1..9).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    key: str                     # explanation file assets/explain/<key>.<lang>.md, practice tag
    zh: str                      # title in the navigation and strip
    en: str
    icon: str
    page: str | None = None      # app_pages/<page>.py, URL path /<page>
    number: int | None = None    # position in the pipeline strip
    heading_zh: str = ""         # the page's own title (a sentence that says what the stage does)
    heading_en: str = ""
    io: tuple = ()               # (input, output): trace-contract names, whose live shapes the page shows
    reads: tuple = ()            # trace-contract names the page reads ("layers.{i}.attn.probs")
    costs: str | None = None     # ops.arith.costs.operator_costs stage for the at-scale section
    explain: bool = True         # has an explanation file
    parent: str | None = None    # for a topic: the page that shows it

    def title(self, lang: str) -> str:
        label = self.zh if lang == "zh" else self.en
        return f"{self.number} {label}" if self.number else label

    def heading(self, lang: str) -> str:
        return (self.heading_zh if lang == "zh" else self.heading_en) or self.title(lang)


_LAYER_ATTN = tuple(f"layers.{{i}}.attn.{p}" for p in ("q", "k", "v", "q_rope", "k_rope", "scores", "probs",
                                                      "context", "out"))
_LAYER_MLP = tuple(f"layers.{{i}}.{p}" for p in ("mlp_norm.out", "mlp.gate", "mlp.up", "mlp.act", "mlp.out"))

STAGES = (
    Stage("overview", "总览", "Overview", "🗺️", page="overview",
          heading_zh="总览：一句话如何穿过模型", heading_en="Overview: how a prompt travels through the model",
          io=("tokens.ids", "logits")),
    Stage("tokenize", "分词", "Tokenize", "✂️", page="tokenize", number=1,
          heading_zh="1 · 分词：文字变成编号", heading_en="1 · Tokenize: text becomes ids",
          io=("text", "tokens.ids"), reads=("tokens.ids",)),
    Stage("embedding", "嵌入", "Embedding", "📖", page="embedding", number=2,
          heading_zh="2 · 嵌入：按编号查表", heading_en="2 · Embedding: look rows up by id",
          io=("tokens.ids", "embed.out"), reads=("tokens.ids", "embed.out"), costs="embedding"),
    Stage("rmsnorm", "RMSNorm", "RMSNorm", "📏", page="rmsnorm", number=3,
          heading_zh="3 · RMSNorm：把每个向量缩放到统一大小",
          heading_en="3 · RMSNorm: every vector rescaled to one size",
          io=("layers.{i}.attn_norm.out", "layers.{i}.attn_norm.out"),
          reads=("layers.{i}.attn_norm.out", "layers.{i}.mlp_norm.out", "final_norm.out"), costs="rmsnorm"),
    Stage("attention", "注意力", "Attention", "👀", page="attention", number=4,
          heading_zh="4 · 注意力：每个位置回看前文", heading_en="4 · Attention: every position looks back",
          io=("layers.{i}.attn_norm.out", "layers.{i}.attn.out"), reads=_LAYER_ATTN, costs="attention"),
    Stage("residual", "残差相加", "Residual add", "➕", page="residual", number=5,
          heading_zh="5 · 残差相加：每层只往上加一点", heading_en="5 · Residual add: each layer adds a little",
          io=("layers.{i}.attn.out", "layers.{i}.resid_mid"),
          reads=("embed.out", "layers.{i}.attn.out", "layers.{i}.resid_mid", "layers.{i}.mlp.out",
                 "layers.{i}.resid_out"), costs="residual"),
    Stage("mlp", "MLP / MoE", "MLP / MoE", "🧮", page="mlp", number=6,
          heading_zh="6 · MLP（SwiGLU）与 MoE：先变宽、门控、再变窄",
          heading_en="6 · MLP (SwiGLU) and MoE: widen, gate, narrow back",
          io=("layers.{i}.mlp_norm.out", "layers.{i}.mlp.out"), reads=_LAYER_MLP, costs="mlp"),
    Stage("moe", "混合专家", "Mixture of experts", "🧩", parent="mlp", costs="moe",
          reads=("layers.{i}.moe.router_probs", "layers.{i}.moe.topk_idx", "layers.{i}.moe.topk_weight")),
    Stage("final_norm", "最终 RMSNorm", "Final RMSNorm", "📏", parent="rmsnorm", reads=("final_norm.out",)),
    Stage("lm_head", "LM Head", "LM head", "🎯", page="lm_head", number=7,
          heading_zh="7 · LM Head：给词表里每个 token 打分", heading_en="7 · LM head: a score for every vocabulary row",
          io=("final_norm.out", "logits"), reads=("final_norm.out", "logits"), costs="lm_head"),
    Stage("sampling", "采样", "Sampling", "🎲", page="sampling", number=8,
          heading_zh="8 · 采样：从分数到下一个 token", heading_en="8 · Sampling: from scores to the next token",
          io=("logits", "next id"), reads=("logits",), costs="sampling"),
    Stage("decode", "生成", "Generate", "🔁", page="generate", number=9,
          heading_zh="9 · 生成：一个 token 接一个 token", heading_en="9 · Generate: one token at a time",
          io=("prompt ids", "text")),
    Stage("experiments", "实验", "Experiments", "🧪", page="experiments",
          heading_zh="实验：消融、修补、引导，看模型怎么变",
          heading_en="Experiments: ablate, patch, steer, and watch the model change",
          io=("tokens.ids", "logits")),
    Stage("compare", "对比", "Compare two prompts", "⚖️", page="compare",
          heading_zh="对比两个提示词：差别出现在哪一层、哪个位置",
          heading_en="Compare two prompts, layer by layer"),
    Stage("models", "两个模型", "Two models", "👥", page="models",
          heading_zh="两个模型并排：同一个提示词，配置差在哪里",
          heading_en="Two models side by side: one prompt, where their configs differ"),
    Stage("atlas", "注意力头图谱", "Head atlas", "🗂️", page="atlas",
          heading_zh="注意力头图谱：每个头在做什么", heading_en="Head atlas: what each attention head does"),
    Stage("precision", "精度", "Precision", "🎚️", page="precision",
          heading_zh="精度：float32、bfloat16、int8 差多少",
          heading_en="Precision: float32, bfloat16 and int8 side by side"),
    Stage("serving", "部署与优化", "Serving", "🚀", page="serving", costs="attention",
          heading_zh="部署与优化：服务端怎样把模型跑得又快又省",
          heading_en="Serving and optimisation: running the model fast and lean",
          io=("layers.{i}.attn.scores", "layers.{i}.attn.context"),
          reads=("layers.{i}.attn.scores", "layers.{i}.attn.v", "layers.{i}.attn.context")),
    Stage("interview", "推理面试实战", "Inference interview", "🎤", page="interview",
          heading_zh="推理面试实战：在真模型上跑一遍",
          heading_en="Inference interview: the 2026 questions, run on the real model",
          io=("layers.{i}.attn.q_rope", "layers.{i}.attn.context"),
          reads=("layers.{i}.attn.q_rope", "layers.{i}.attn.k_rope", "layers.{i}.attn.v", "layers.{i}.attn.context",
                 "layers.{i}.resid_out", "layers.{i}.attn_norm.out", "layers.{i}.mlp.act")),
    Stage("tour", "课堂演示", "Classroom tour", "🎓", page="tour", explain=False,
          heading_zh="课堂演示", heading_en="Classroom tour"),
    Stage("scale", "规模", "Scale", "📐", page="scale", explain=False,
          heading_zh="规模：从 0.5B 到 32B", heading_en="Scale: from 0.5B to 32B"),
    Stage("practice", "面试练习", "Interview practice", "📝", page="practice", explain=False,
          heading_zh="面试练习", heading_en="Interview practice"),
)

BY_KEY = {s.key: s for s in STAGES}
BY_PAGE = {s.page: s for s in STAGES if s.page}


def get(key: str) -> Stage:
    """A stage by its key ("attention", "decode") or its page ("generate")."""
    try:
        return BY_KEY[key] if key in BY_KEY else BY_PAGE[key]
    except KeyError:
        raise KeyError(f"no stage {key!r}; one of {', '.join(BY_KEY)}") from None


def pages() -> list[Stage]:
    """The app's pages in navigation order."""
    return [s for s in STAGES if s.page]


def pipeline() -> list[Stage]:
    """The numbered stages, in the order a prompt meets them (the strip at the top of each page)."""
    return sorted((s for s in STAGES if s.number), key=lambda s: s.number)


def explained() -> list[str]:
    """Keys that have an explanation file."""
    return [s.key for s in STAGES if s.explain]
