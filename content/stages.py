"""The stage registry: every page and topic of Operator Lab, written down once.

Navigation (app.py), the pipeline strip and page scaffold (ui/page.py), the overview, the explanations
(content/texts.py), practice (content/practice.py) and the at-scale costs (ops/arith/costs.py) all read it.
A stage with a `page` is a page of the app (app_pages/<page>.py at URL /<page>); one without is a topic
explained inside another page (`parent`). `number` is its place in the pipeline strip (1..9).
"""
from __future__ import annotations

from dataclasses import dataclass

from content.words import catalogue, say


@dataclass(frozen=True)
class Stage:
    key: str                     # explanation file assets/explain/<key>.<lang>.md, practice tag
    zh: str                      # title in the navigation and strip (assets/words/stages: <key>_title)
    en: str
    icon: str
    page: str | None = None      # app_pages/<page>.py, URL path /<page>
    number: int | None = None    # position in the pipeline strip
    heading_zh: str = ""         # the page's own title, a sentence that says what the stage does (<key>_heading)
    heading_en: str = ""
    io: tuple = ()               # (input, output): trace-contract names, whose live shapes the page shows
    reads: tuple = ()            # trace-contract names the page reads ("layers.{i}.attn.probs")
    costs: str | None = None     # ops.arith.costs.operator_costs stage for the at-scale section
    explain: bool = True         # has an explanation file
    parent: str | None = None    # for a topic: the page that shows it

    def title(self, lang: str) -> str:
        label = say(f"stages.{self.key}_title", lang)
        return f"{self.number} {label}" if self.number else label

    def heading(self, lang: str) -> str:
        if f"{self.key}_heading" in catalogue("stages", "en"):
            return say(f"stages.{self.key}_heading", lang)
        return self.title(lang)


_LAYER_ATTN = tuple(f"layers.{{i}}.attn.{p}" for p in ("q", "k", "v", "q_rope", "k_rope", "scores", "probs",
                                                      "context", "out"))
_LAYER_MLP = tuple(f"layers.{{i}}.{p}" for p in ("mlp_norm.out", "mlp.gate", "mlp.up", "mlp.act", "mlp.out"))

def _stage(key: str, icon: str, **fields) -> Stage:
    """A stage whose title (and heading, where it has one) are assets/words/stages.<lang>.json's <key>_title and
    <key>_heading."""
    heading = f"{key}_heading" in catalogue("stages", "en")
    return Stage(key, say(f"stages.{key}_title", "zh"), say(f"stages.{key}_title", "en"), icon,
                 heading_zh=say(f"stages.{key}_heading", "zh") if heading else "",
                 heading_en=say(f"stages.{key}_heading", "en") if heading else "", **fields)


STAGES = (
    _stage("overview", "🗺️", page="overview",
          io=("tokens.ids", "logits")),
    _stage("tokenize", "✂️", page="tokenize", number=1,
          io=("text", "tokens.ids"), reads=("tokens.ids",)),
    _stage("embedding", "📖", page="embedding", number=2,
          io=("tokens.ids", "embed.out"), reads=("tokens.ids", "embed.out"), costs="embedding"),
    _stage("rmsnorm", "📏", page="rmsnorm", number=3,
          io=("layers.{i}.attn_norm.out", "layers.{i}.attn_norm.out"),
          reads=("layers.{i}.attn_norm.out", "layers.{i}.mlp_norm.out", "final_norm.out"), costs="rmsnorm"),
    _stage("attention", "👀", page="attention", number=4,
          io=("layers.{i}.attn_norm.out", "layers.{i}.attn.out"), reads=_LAYER_ATTN, costs="attention"),
    _stage("residual", "➕", page="residual", number=5,
          io=("layers.{i}.attn.out", "layers.{i}.resid_mid"),
          reads=("embed.out", "layers.{i}.attn.out", "layers.{i}.resid_mid", "layers.{i}.mlp.out",
                 "layers.{i}.resid_out"), costs="residual"),
    _stage("mlp", "🧮", page="mlp", number=6,
          io=("layers.{i}.mlp_norm.out", "layers.{i}.mlp.out"), reads=_LAYER_MLP, costs="mlp"),
    _stage("moe", "🧩", parent="mlp", costs="moe",
          reads=("layers.{i}.moe.router_probs", "layers.{i}.moe.topk_idx", "layers.{i}.moe.topk_weight")),
    _stage("final_norm", "📏", parent="rmsnorm", reads=("final_norm.out",)),
    _stage("lm_head", "🎯", page="lm_head", number=7,
          io=("final_norm.out", "logits"), reads=("final_norm.out", "logits"), costs="lm_head"),
    _stage("sampling", "🎲", page="sampling", number=8,
          io=("logits", "next id"), reads=("logits",), costs="sampling"),
    _stage("decode", "🔁", page="generate", number=9,
          io=("prompt ids", "text")),
    _stage("experiments", "🧪", page="experiments",
          io=("tokens.ids", "logits")),
    _stage("compare", "⚖️", page="compare",),
    _stage("models", "👥", page="models",),
    _stage("atlas", "🗂️", page="atlas",),
    _stage("precision", "🎚️", page="precision",),
    _stage("serving", "🚀", page="serving", costs="attention",
          io=("layers.{i}.attn.scores", "layers.{i}.attn.context"),
          reads=("layers.{i}.attn.scores", "layers.{i}.attn.v", "layers.{i}.attn.context")),
    _stage("interview", "🎤", page="interview",
          io=("layers.{i}.attn.q_rope", "layers.{i}.attn.context"),
          reads=("layers.{i}.attn.q_rope", "layers.{i}.attn.k_rope", "layers.{i}.attn.v", "layers.{i}.attn.context",
                 "layers.{i}.resid_out", "layers.{i}.attn_norm.out", "layers.{i}.mlp.act")),
    _stage("tour", "🎓", page="tour", explain=False,),
    _stage("scale", "📐", page="scale", explain=False,),
    _stage("practice", "📝", page="practice", explain=False,),
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
