"""The page table: what each page must show (check_page's expectations) and the runs it is opened in.

tests/pages/test_page_table.py opens every page in each of its runs (a model, a prompt, a language) and checks it
with these expectations; a page's own tests/pages/test_<page>.py reads its EXPECT here and tests what is particular
to the page (a number against a reference, a widget, a message).
"""
from __future__ import annotations

from apptest_utils import BATCH

RANDOM = ("随机权重", "random weights")      # the MoE demo on a dense model says so in a red box: allowed

# page -> check_page's expectations; "en": what differs in English (a green check's name is in the page's language)
EXPECT = {
    "overview": dict(pictures=1, checks=1),        # the pipeline diagram (SVG) and the live shape check
    "tokenize": dict(checks=2, passing=("encode()", "decode(encode(text)) == NFC(text)"), text=("tokens.ids",)),
    "embedding": dict(charts=1, tables=1, passing=("fn.embedding vs F.embedding",)),
    "rmsnorm": dict(charts=3, checks=1, passing=("F.rms_norm",), text=("mean(x²)", "RMSNorm(")),
    "attention": dict(charts=4, checks=1, passing=("F.scaled_dot_product_attention",)),
    "residual": dict(charts=3, checks=2, passing=("resid_mid == layer_input", "resid_out == resid_mid + mlp.out"),
                     text=("resid_out − resid_mid − mlp.out",)),
    "atlas": dict(charts=5, tables=1, checks=1),
    "precision": dict(charts=2, tables=2, checks=1, passing=("bfloat16 嵌入",),
                      en=dict(passing=("bfloat16 embedding",))),
    "mlp": dict(allow_errors=RANDOM),
    "lm_head": {},
    "sampling": {},
    "generate": {},
    "tour": dict(allow_errors=RANDOM),
}

# a run: (model, prompt, language); model "tiny" / "moe" are the tiny random Qwen2 / Qwen2-MoE with the real
# vocabulary, "real" the bundled Qwen2.5 (marked real); prompt None is the app's default prompt
RUNS = {
    "tiny": ("tiny", None, "zh"),
    "tiny-batch-en": ("tiny", BATCH, "en"),          # two rows, Chinese, an emoji; the English page
    "tiny-one-token": ("tiny", "a", "zh"),           # S = 1: every S x S map is 1 x 1
    "tiny-one-token-en": ("tiny", "a", "en"),
    "moe-batch": ("moe", BATCH, "zh"),
    "real": ("real", None, "zh"),
    "real-batch-en": ("real", BATCH, "en"),
    "real-two-rows": ("real", "I like shanghai\nHi", "zh"),
    "real-one-token": ("real", "Hi", "zh"),
}

# page -> the runs it is opened in
ROWS = {
    "overview": ("tiny-one-token", "moe-batch", "real", "real-batch-en"),
    "tokenize": ("tiny", "tiny-batch-en", "tiny-one-token", "real"),
    "embedding": ("tiny-one-token", "real-batch-en"),
    "rmsnorm": ("tiny", "tiny-batch-en", "tiny-one-token", "moe-batch", "real", "real-batch-en"),
    "attention": ("tiny", "tiny-batch-en", "tiny-one-token", "real", "real-batch-en"),
    "residual": ("tiny", "tiny-batch-en", "tiny-one-token", "moe-batch", "real", "real-batch-en"),
    "atlas": ("tiny", "tiny-one-token-en"),
    "precision": ("tiny",),
    "mlp": ("real-two-rows", "real-one-token"),
    "lm_head": ("real-two-rows", "real-one-token"),
    "sampling": ("real-two-rows", "real-one-token"),
    "generate": ("real-two-rows", "real-one-token"),
    "tour": ("real-two-rows", "real-one-token"),
}


def expect(page: str, lang: str = "zh") -> dict:
    """check_page's keyword arguments for `page` in `lang`."""
    e = dict(EXPECT[page])
    en = e.pop("en", {})
    return dict(e, **en) if lang == "en" else e
