"""Every text the app shows is true of the model that is loaded, not only of the bundled Qwen.

Three models: the bundled GGUF as loaded (Qwen2.5-Coder-0.5B-Instruct, whose file stores its own LM head
although the published config ties it), SmolLM2-135M (llama, tied, no biases, its own tokenizer) and the
Qwen3-30B-A3B config (MoE, no q/k/v bias, no tokenizer). For each: every explanation (both levels, both
languages), the cheat sheet, the tour's script and every practice answer is rendered; then no placeholder
may be left and no statement may contradict the model's facts.
"""
import re

import pytest

from content import facts, practice, stages, texts, tour as script
from ops.arith import costs
from ops.engine import functional as fn
from ops.models.loading import load_source

MOE = "Qwen3-30B-A3B"


# ---- the three models -----------------------------------------------------------------------------
def _case(config, tokenizer=None, weights=None, B=2, S=7):
    kw = {} if tokenizer is None else dict(tokenizer_facts=facts.tokenizer_facts(tokenizer),
                                           lm_head_stored=facts.stores_lm_head(weights))
    nums = texts.numbers(config, B=B, S=S, **kw)
    tok_size = tokenizer.vocab_size if tokenizer is not None else None
    tour_nums = script.numbers(config, S, "x", 0.5, tokenizer_vocab=tok_size)
    return dict(config=config, nums=nums, tour=tour_nums, tok_size=tok_size,
                tied=not facts.stores_lm_head(weights) if weights is not None else config.tie_word_embeddings,
                params=sum({t.data_ptr(): t.numel() for t in weights.values()}.values()) if weights else None,
                specials=tokenizer.special_tokens if tokenizer is not None else None)


@pytest.fixture(scope="module", params=[pytest.param("bundled", marks=pytest.mark.real), "smollm2", "moe"])
def case(request):
    if request.param == "bundled":
        config, weights, tok = request.getfixturevalue("bundled")
        return dict(_case(config, tok, weights), name="bundled")
    if request.param == "smollm2":
        config, weights, tok = load_source(request.getfixturevalue("smollm2_gguf_path"))
        return dict(_case(config, tok, weights), name="smollm2")
    return dict(_case(costs.reference_config(MOE)), name="moe")


def explanations(case, stage=None, lang=None, level=None) -> dict:
    return {(s, lg, lv): texts.explain(s, lg, lv, case["nums"]) for s in texts.STAGES for lg in texts.LANGS
            for lv in texts.LEVELS if stage in (None, s) and lang in (None, lg) and level in (None, lv)}


def cheatsheet(case) -> dict:
    rows = texts.cheatsheet(case["nums"])
    return {("cheatsheet", r["step"], k): v for r in rows for k, v in r.items() if isinstance(v, str)}


def tour(case) -> dict:
    return {("tour", s.key, lg): s.title(lg, case["tour"]) + "\n" + s.words(lg, case["tour"])
            for s in script.STEPS for lg in texts.LANGS}


def answers(case) -> dict:
    return {("practice", q["id"], lg): "\n".join((q["question"], q["short"], q["long"]))
            for lg in texts.LANGS for q in practice.questions(case["nums"], lg)}


def everything(case) -> dict:
    return {**explanations(case), **cheatsheet(case), **tour(case), **answers(case)}


_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.S)
_LEFT = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:[:!][^{}]*)?\}|\{\{|\}\}")


# ---- no placeholder left ----------------------------------------------------------------------------
def test_nothing_left_unfilled(case):
    """Outside LaTeX (where braces are syntax), a '{name}' or a doubled brace is a placeholder that was not filled."""
    bad = {where: _LEFT.findall(_MATH.sub("", text)) for where, text in everything(case).items()}
    assert not {k: v for k, v in bad.items() if v}


# ---- vocabulary: the loaded tokenizer's own figures ---------------------------------------------------
def test_vocabulary_is_the_loaded_tokenizers(case):
    c, size = case["config"], case["tok_size"]
    allt = everything(case)
    tokenize = explanations(case, "tokenize")
    if size is not None and size != texts.QWEN_TOKENIZER_SIZE:   # not a Qwen2.5 tokenizer
        assert not [w for w, t in allt.items() if "151643" in t or "151,643" in t]
        own = {**explanations(case), **cheatsheet(case), **tour(case)}
        assert not [w for w, t in own.items() if re.search(r"Qwen tokenizer|Qwen 分词器(共|有)", t)]
    if size is not None:
        for where, t in tokenize.items():
            assert f"{size:,}" in t, where                  # states its own vocabulary size
        pad = c.vocab_size - size
        academic = explanations(case, "tokenize", level="academic")
        for (s, lang, lv), t in academic.items():
            if pad:
                assert f"{pad:,}" in t, (lang, "padding rows")
            else:
                assert re.search(r"no padding rows|没有填充行", t), lang
            assert not re.search(r"\b0 extra rows|多出的 0 行", t), lang
        for sp, i in list(case["specials"].items())[:3]:      # the loaded tokenizer's own special ids
            for where, t in academic.items():
                assert f"`{sp}` = {i}" in t, (where, sp)
    else:
        for (s, lang, lv), t in explanations(case, "tokenize", level="academic").items():
            assert re.search(r"No tokenizer is loaded|没有附带分词器", t), lang
    tour_ids = tour(case)[("tour", "ids", "en")]
    assert f"{(size or c.vocab_size) - 1:,}" in tour_ids
    if size is not None and size != c.vocab_size:             # padding rows are never produced: ids stop below them
        assert f"{c.vocab_size - 1:,}" not in tour_ids


# ---- tying: the loaded weights decide ---------------------------------------------------------------
TIE_MARK = {True: {"en": "ties them", "zh": "共享二者"}, False: {"en": "its own LM head matrix", "zh": "单独的 LM head 矩阵"}}


def test_tying_matches_the_loaded_weights(case):
    tied = case["tied"]
    for stage in ("embedding", "lm_head"):
        for (s, lang, lv), t in explanations(case, stage, level="academic").items():
            assert TIE_MARK[tied][lang] in t, (stage, lang)
            assert TIE_MARK[not tied][lang] not in t, (stage, lang)
    name = case["config"].name
    if not tied and "0.5B" in name:           # the bundled file: untied although Qwen2.5-0.5B's config ties
        wrong = re.compile(r"0\.5B (shares it|ties them)|0\.5B 是共用的|0\.5B 共享")
        assert not [w for w, t in everything(case).items() if wrong.search(t)]
    if case["params"] is not None:            # the parameter count is the loaded tensors' count
        for lang in texts.LANGS:
            assert f"{case['params']:,}" in explanations(case, "overview", lang, "academic")[("overview", lang, "academic")]


# ---- biases --------------------------------------------------------------------------------------------
def test_bias_claims_match_the_config(case):
    c = case["config"]
    for (s, lang, lv), t in explanations(case, "attention", level="academic").items():
        assert ("b_q" in t) == c.attention_bias, lang
        says_no_bias = re.search(r"no bias on any|都不带偏置", t) is not None
        assert says_no_bias == (not c.attention_bias), lang
    sheet = " ".join(cheatsheet(case).values())
    assert ("+bias" in sheet) == c.attention_bias
    items = practice.quiz_items(c, {"layers.0.attn.probs": (1, c.num_attention_heads, 4, 4)})
    q = " ".join(i["question"]["en"] + i["question"]["zh"] for i in items)
    assert ("with bias" in q or "含偏置" in q) == c.attention_bias


# ---- head counts ------------------------------------------------------------------------------------
def test_head_counts_match(case):
    """Every "<n> query heads" / "<n> KV heads" is the loaded model's, Qwen2.5-32B's, the MoE example's or, in a
    computed practice answer, its own config's; "serves <n> query heads", "<n> query heads share" and
    "每 <n> 个查询头", "<n> 个查询头共用" are group sizes."""
    c = case["config"]
    computed = {q["id"]: costs.reference_configs()[q["compute"]["config"]]
                for q in practice.load_questions() if practice.is_computed(q)}
    pat = re.compile(r"(serves )?(\d+) (query heads|KV heads)( share)?|(每 )?(\d+) 个(查询头|KV 头)(共用|共享)?")
    for where, t in everything(case).items():
        refs = [c, costs.reference_config(), costs.reference_config(MOE)] + \
            ([computed[where[1]]] if where[0] == "practice" and where[1] in computed else [])
        query = {r.num_attention_heads for r in refs}
        kv = {r.num_key_value_heads for r in refs} | query            # "MHA: as many KV heads as query heads"
        for m in pat.finditer(t):
            num, kind = int(m.group(2) or m.group(6)), m.group(3) or m.group(7)
            if m.group(1) or m.group(4) or m.group(5) or m.group(8):
                allowed = {r.n_rep for r in refs}
            else:
                allowed = query if kind in ("query heads", "查询头") else kv
            assert num in allowed, (where, m.group(0))
    for (s, lang, lv), t in explanations(case, "attention", level="academic").items():
        assert f"$n_h$ = {c.num_attention_heads}" in t and f"$n_{{kv}}$ = {c.num_key_value_heads}" in t, lang


# ---- MoE or dense ----------------------------------------------------------------------------------
def test_moe_or_dense_matches(case):
    c = case["config"]
    mlp = explanations(case, "mlp", level="academic")
    overview = explanations(case, "overview", level="academic")
    words = tour(case)
    if c.is_moe:
        for lang in texts.LANGS:
            assert f"{c.num_experts} " in mlp[("mlp", lang, "academic")] and f"$I_m$ = {c.moe_intermediate_size}" in \
                mlp[("mlp", lang, "academic")], lang
            assert re.search(rf"{c.num_experts_per_tok} of {c.num_experts}|{c.num_experts} 个 SwiGLU 专家选 "
                             rf"{c.num_experts_per_tok}", overview[("overview", lang, "academic")]), lang
            assert re.search(r"expert|专家", words[("tour", "mlp", lang)]), lang
    else:
        for lang in texts.LANGS:
            assert re.search(rf"{re.escape(c.name)} (is dense|是稠密模型)", mlp[("mlp", lang, "academic")]), lang
            assert not re.search(r"expert|专家", words[("tour", "mlp", lang)]), lang


# ---- the quiz's count of exact zeros: causal mask and padding -----------------------------------------
def test_quiz_zero_count_counts_padding():
    c = costs.reference_config("Qwen2.5-0.5B-Instruct")
    lengths, S = [3, 5], 5
    shapes = {"layers.0.attn.probs": (2, c.num_attention_heads, S, S)}
    item = next(i for i in practice.quiz_items(c, shapes, lengths) if "0" in i["question"]["en"]
                and "exactly" in i["question"]["en"])
    import torch
    valid = torch.arange(S)[None, :] < torch.tensor(lengths)[:, None]
    pos = torch.arange(S)[None, :].expand(2, S)
    mask = fn.attention_mask(valid, pos, pos)                 # what the forward pass adds: -inf where hidden
    assert item["answer"] == int(torch.isinf(mask[0, 0]).sum())


# ---- errors the content review found (each phrase was in the texts) -------------------------------------
WRONG = [r"8 bits of mantissa", r"8 位尾数", r"depends only on the offset", r"只依赖相对位置", r"below 4H",
         r"比 4H 小", r"A…B", r"also want the range", r"也需要足够的动态范围", r"the two are inverses", r"两者互逆"]


def test_reviewed_errors_are_gone(case):
    allt = everything(case)
    for pat in WRONG:
        assert not [w for w, t in allt.items() if re.search(pat, t)], pat


def test_prefill_bound_is_qualified(case):
    """A text that calls prefill compute-bound states when: from the crossover S the app's roofline computes."""
    cross = costs.prefill_crossover(costs.reference_config(), 1)
    for where, t in everything(case).items():
        if re.search(r"compute-bound|算力受限", t) and re.search(r"[Pp]refill|预填充", t):
            assert f"S = {cross:,}" in t, where


def test_swiglu_width_lists_are_computed():
    dense = [c for c in costs.reference_configs().values() if not c.is_moe]
    above = [c.name for c in dense if c.intermediate_size > 4 * c.hidden_size]
    below = [c.name for c in dense if c.intermediate_size < 4 * c.hidden_size]
    assert above and below
    n = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))
    assert [s.split(" (")[0] for s in n["swiglu_above_4h"].split(", ")] == above
    assert [s.split(" (")[0] for s in n["swiglu_below_4h"].split(", ")] == below
    swiglu = next(q for q in practice.load_questions() if q["id"] == "swiglu")
    for lang in texts.LANGS:
        t = practice.render(swiglu, n, lang)["long"]
        assert n["swiglu_above_4h"] in t and n["swiglu_below_4h"] in t
        assert n["swiglu_above_4h"] in texts.explain("mlp", lang, "academic", n)


# ---- practice: tags, and no hand-typed config arithmetic ---------------------------------------------------
def test_every_question_is_tagged():
    qs = practice.load_questions()
    ids = [q["id"] for q in qs]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
    for q in qs:
        assert q["stage"] in stages.BY_KEY, q["id"]
        assert q.get("difficulty") in (1, 2, 3), q["id"]
        for part in ("question", "short", "long"):
            assert q[part].get("zh") and q[part].get("en"), (q["id"], part)
    n = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))
    for r in practice.questions(n, "en"):
        assert r["difficulty"] in (1, 2, 3) and r["computed"] == (r["answer"] is not None), r["id"]


def test_no_hand_typed_config_numbers_in_answers():
    """A number in an answer that equals a reference config's field (width, heads, layers, rows) must come from a
    placeholder, so it follows the config (ids written as a list, like [40, 1075, 557, 30070], are token ids)."""
    fields = ("hidden_size", "intermediate_size", "vocab_size", "num_hidden_layers", "num_attention_heads",
              "num_key_value_heads", "head_dim", "num_experts", "moe_intermediate_size")
    values = {getattr(c, f) for c in costs.reference_configs().values() for f in fields} - {0}
    values = {v for v in values if v > 8} | {texts.QWEN_TOKENIZER_SIZE, 151_643}
    typed = {}
    for q in practice.load_questions():
        for part in ("short", "long"):
            for lang in texts.LANGS:
                # placeholders, token-id lists and the padding rule ("a multiple of 128") are not config arithmetic
                t = re.sub(r"\{[A-Za-z_]\w*\}|\[\d+(?:, \d+)+\]|multiple of 128|128 的倍数", "", q[part][lang])
                hits = {int(m.replace(",", "")) for m in re.findall(r"(?<![A-Za-z0-9_.])\d[\d,]*(?![A-Za-z0-9_.]| ?(?:GB|TB|GiB|ms|%))", t)} & values
                hits -= set(q.get("scenario", ()))     # what the question itself sets (a batch of 64, groups of 128)
                if hits:
                    typed[(q["id"], part, lang)] = sorted(hits)
    assert not typed
