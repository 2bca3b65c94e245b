"""The classroom tour's script: one large step per click, the prompt through the whole model and back around.

Each step names what it shows (its `key`: ops.lab.overview_data.tour_data computes it, viz/tour.py draws it), the
registry stage lit in the pipeline strip, its title and what the presenter says, and the result the picture
shows (said only once it is revealed, so a class can guess first), with live numbers filled in by `words` and
`result` (str.format fields: name L H V Vtok n nh nkv hd I groups piece p; a field ending in _zh / _en is one
language's text, used without the suffix). Never imports streamlit.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from content import facts
from content.texts import in_lang
from ops.arith.costs import ASSETS


@dataclass(frozen=True)
class TourStep:
    key: str          # what the step shows
    stage: str        # the stage lit in the pipeline strip ("tour": none)
    zh: str           # title
    en: str
    words_zh: str     # what the presenter says, a str.format template
    words_en: str
    result_zh: str = ""   # what the picture shows, said only after it (the presenter reveals it): "" for none
    result_en: str = ""

    def title(self, lang: str, numbers: dict) -> str:
        return (self.zh if lang == "zh" else self.en).format(**in_lang(numbers, lang))

    def words(self, lang: str, numbers: dict) -> str:
        return (self.words_zh if lang == "zh" else self.words_en).format(**in_lang(numbers, lang))

    def result(self, lang: str, numbers: dict) -> str:
        return (self.result_zh if lang == "zh" else self.result_en).format(**in_lang(numbers, lang))


# the script itself is data: assets/tour.json, one object per step with the fields above
STEPS = tuple(TourStep(**step) for step in json.loads((ASSETS / "tour.json").read_text("utf-8")))


def numbers(config, n: int, piece: str, p: float, tokenizer_vocab: int | None = None) -> dict:
    """The str.format fields of the steps' words for this model, a row of n tokens and the top next token.
    tokenizer_vocab: the loaded tokenizer's size (ids stop below it; the embedding's padding rows are never
    produced); None: the Qwen2.5 tokenizer's for a Qwen2.5 config, else the embedding's row count."""
    c = config
    if tokenizer_vocab is None:
        qwen25 = c.model_type == "qwen2" and c.vocab_size >= facts.QWEN25_TOKENIZER["size"]
        tokenizer_vocab = facts.QWEN25_TOKENIZER["size"] if qwen25 else c.vocab_size
    if c.is_moe:
        mlp = dict(mlp_title_en="MoE (SwiGLU experts)", mlp_title_zh="MoE（SwiGLU 专家）",
                   mlp_words_en=f"Each token on its own: a router picks {c.num_experts_per_tok} of {c.num_experts} "
                                "experts, "
                                f"each a SwiGLU ({c.hidden_size} → {c.moe_intermediate_size} → {c.hidden_size}), and "
                                "mixes "
                                "their outputs by its weights. Most of the parameters live here, but each token uses "
                                "few.",
                   mlp_words_zh=f"每个 token 独自走一遍：路由器从 {c.num_experts} 个专家里选 {c.num_experts_per_tok} 个"
                                "，"
                                f"每个专家是一个 SwiGLU（{c.hidden_size} → {c.moe_intermediate_size} "
                                f"→ {c.hidden_size}），"
                                "再按路由权重把结果混合。模型的大部分参数在这里，但每个 token 只用到一小部分。")
    else:
        I, H = c.intermediate_size, c.hidden_size
        mlp = dict(mlp_title_en="MLP (SwiGLU)", mlp_title_zh="MLP（SwiGLU）",
                   mlp_words_en=f"Each token on its own: {H} dims widened to {I}, gated by silu, narrowed back to {H}. "
                                "Most of the parameters live here.",
                   mlp_words_zh=f"每个 token 独自走一遍：{H} 维放大到 {I} 维，silu 门控，再压回 {H} 维。模型的大部分参"
                                "数在这里。")
    return dict(name=c.name or c.model_type, L=c.num_hidden_layers, Lm1=c.num_hidden_layers - 1, H=c.hidden_size,
                V=c.vocab_size, Vm1=c.vocab_size - 1, Vtok=tokenizer_vocab, Vtok1=tokenizer_vocab - 1, n=n, n1=n + 1,
                nh=c.num_attention_heads, nkv=c.num_key_value_heads,
                groups=c.num_attention_heads // c.num_key_value_heads,
                hd=c.head_dim, I=c.intermediate_size, piece=piece, p=p, **mlp)


# the lesson replay's sentences (ui/lesson_replay.py): key -> (zh, en), str.format templates
REPLAY = {
    "start_note": ("开始后会换上课程的提示词，并打开投影模式（侧栏里可以关掉）。",
                   "Starting puts in the lesson's prompts and turns projector mode on (the sidebar turns it off)."),
    "upload_help": ("由“课程”工具保存的 JSON 文件，最大 {kib} KiB。",
                    "A JSON file saved by the lesson tools, at most {kib} KiB."),
    "refused": ("课程文件 {name} 无法打开，什么都没有运行。问题：{why}",
                "The lesson file {name} cannot be opened, and nothing ran. What is wrong: {why}"),
}


def replay_text(key: str, lang: str, **fields) -> str:
    """One of the lesson replay's sentences in `lang`, its fields filled in."""
    zh, en = REPLAY[key]
    return (zh if lang == "zh" else en).format(**fields)

