"""Issue 41 §1 and §2: every corrected figure re-derived by hand (or from the config files themselves) and read
back out of the text that states it, in both languages; every academic text ends with its references."""
import json
import math
import pathlib
import re

import pytest
import torch

from content import practice, stages, texts, tour
from ops.arith import costs

ROOT = pathlib.Path(__file__).resolve().parents[2]
CFG = {k: json.loads((ROOT / "assets/configs" / f).read_text()) for k, f in
       (("32b", "qwen2.5-32b-instruct.json"), ("0.5b", "qwen2.5-0.5b-instruct.json"))}
H200_BYTES, H200_BW = 141e9, 4.8e12                  # the H200's published memory and bandwidth


def params(c: dict) -> int:
    """Every tensor of a Qwen2 config counted by hand: embedding, per layer q/k/v (+bias), o, MLP, two norms;
    final norm; an LM head unless tied."""
    H, I, L, V = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"], c["vocab_size"]
    nh, nkv = c["num_attention_heads"], c["num_key_value_heads"]
    hd = H // nh
    layer = (H * nh * hd + nh * hd) + 2 * (H * nkv * hd + nkv * hd) + nh * hd * H + 3 * H * I + 2 * H
    return V * H + L * layer + H + (0 if c["tie_word_embeddings"] else V * H)


def kv_per_token(c: dict, nbytes: int = 2) -> int:
    return 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * (c["hidden_size"] // c["num_attention_heads"]) * nbytes


C32 = CFG["32b"]
P32 = params(C32)
W32 = 2 * P32                                         # bf16 weight bytes
KV32 = kv_per_token(C32)
REQ = int((H200_BYTES - W32) // (4096 * KV32))       # 4,096-token requests beside the weights


@pytest.fixture(scope="module")
def nums():
    return texts.numbers(costs.load_config(ROOT / "assets/configs/qwen2.5-0.5b-instruct.json"))


def text(stage, lang, level, nums):
    return texts.explain(stage, lang, level, nums)


def question(qid, lang, nums):
    q = next(q for q in practice.load_questions() if q["id"] == qid)
    return practice.render(q, nums, lang)


def number(pattern: str, s: str) -> float:
    m = re.search(pattern, s)
    assert m, f"{pattern!r} not in {s[:400]!r}"
    return float(m.group(1).replace(",", "").rstrip("."))


def test_hand_counts_match_the_published_figures():
    """The hand counts used below agree with FACTS.md (32,763,876,352 from the configs; KV 262,144 B/token)."""
    assert P32 == 32_763_876_352 and KV32 == 262_144 and REQ == 70


# ---- Q4_K ------------------------------------------------------------------------------------------------------
def test_q4k_overhead_is_one_fp16_per_32_weights(nums):
    # ggml's block_q4_K: fp16 d, fp16 dmin, 12 bytes of 6-bit scales/mins (8 sub-blocks), 256 x 4 bits
    block, nbytes = 256, 2 + 2 + 12 + 256 // 2
    over = nbytes - block // 2
    assert (nbytes, over, 8 * nbytes / block, 8 * over / block) == (144, 16, 4.5, 0.5)
    per_fp16 = 16 / (8 * over / block)                 # weights that one 16-bit number of overhead covers
    q40, q41 = 8 * (2 + 16) / 32, 8 * (2 + 2 + 16) / 32  # Q4_0: d + 32 nibbles; Q4_1: d, m + 32 nibbles
    en, zh = question("sv-q4k-bpw", "en", nums), question("sv-q4k-bpw", "zh", nums)
    assert en["answer"] == 4.5
    assert number(r"takes (\d+) bytes", en["long"]) == nbytes
    assert number(r"(\d+) bytes of overhead", en["long"]) == over
    assert number(r"4 \+ ([\d.]+) = ", en["long"]) == 0.5
    assert number(r"one fp16 per (\d+) weights", en["long"]) == per_fp16 == 32
    assert number(r"Q4_0's \(([\d.]+) bits\)", en["long"]) == q40 == 4.5
    assert number(r"pays ([\d.]+) bits", en["long"]) == q41 == 5
    assert "below one fp16" not in en["long"]
    assert number(r"其余 (\d+) 字节是开销", zh["long"]) == over
    assert number(r"每 (\d+) 个权重一个 fp16", zh["long"]) == 32
    assert number(r"Q4_0（([\d.]+) 位）", zh["long"]) == q40
    assert number(r"要 ([\d.]+) 位", zh["long"]) == q41
    assert "更小" not in zh["long"]


# ---- decode: the KV cache, not only the weights -------------------------------------------------------------
def test_a_full_h200_reads_more_kv_than_weights(nums):
    kv_read = REQ * 4096 * KV32                         # each request's own cache, every step
    assert round(kv_read / 1e9, 1) == 75.2 and round(W32 / 1e9, 1) == 65.5
    lo = (W32 + kv_read) / H200_BW * 1e3                # the step reads at least both
    equal = W32 / KV32                                  # cached tokens whose KV weighs as much as the weights
    # attention per cached token and KV head: n_rep query heads x (q.k + p.v) = 4 hd n_rep FLOPs over 4 hd bytes
    n_rep = C32["num_attention_heads"] // C32["num_key_value_heads"]
    for lang, pat_kv, pat_w, pat_ms, pat_eq, pat_rep in (
            ("en", r"reads ([\d.]+) GB of KV per step", r"against ([\d.]+) GB of weights",
             r"at least ([\d.]+) ms per step", r"about ([\d,]+) cached tokens", r"\(([\d]+) for 32B"),
            ("zh", r"每步读 ([\d.]+) GB 的 KV", r"、([\d.]+) GB 的权重", r"每步至少 ([\d.]+) ms",
             r"到约 ([\d,]+) 个时", r"32B 为 (\d+)：")):
        t = text("decode", lang, "academic", nums)
        assert number(pat_kv, t) == round(kv_read / 1e9, 1)
        assert number(pat_w, t) == round(W32 / 1e9, 1)
        assert lo <= number(pat_ms, t) <= lo * 1.02, (lo, t)      # + the activations' few bytes
        assert number(pat_eq, t) == round(equal, -3) == 250_000
        assert number(pat_rep, t) == n_rep == 5
    for lang, pat in (("en", r"reads ([\d.]+) GB of KV"), ("zh", r"读 ([\d.]+) GB 的 KV")):
        for t in (text("serving", lang, "academic", nums), question("prefill-decode", lang, nums)["long"],
                  question("quantization-decode-prefill", lang, nums)["long"]):
            assert number(pat, t) == 75.2
    assert "75.2 GB" in text("serving", "en", "plain", nums) and "75.2 GB" in text("serving", "zh", "plain", nums)
    assert "batching pays" not in text("decode", "en", "academic", nums)


# ---- eager attention at S = 32,768 ------------------------------------------------------------------------------
def test_one_layers_scores_at_32k_do_not_fit_an_h200(nums):
    S, nh = 32768, C32["num_attention_heads"]
    bf16, fp32 = nh * S * S * 2, nh * S * S * 4
    assert (bf16 / 2 ** 30, fp32 / 2 ** 30) == (80, 160)
    assert bf16 + W32 > H200_BYTES                      # 151.4 GB with the weights
    en, zh = text("serving", "en", "academic", nums), text("serving", "zh", "academic", nums)
    assert number(r"is ([\d.]+) GiB in bf16", en) == 80 and number(r"and ([\d.]+) GiB in float32", en) == 160
    assert number(r"that is ([\d.]+) GB in bf16 alone", en) == round((bf16 + W32) / 1e9, 1) == 151.4
    assert "does not fit an H200" in en
    assert number(r"按 bf16 就有 ([\d.]+) GiB", zh) == 80 and number(r"float32 是 ([\d.]+) GiB", zh) == 160
    assert number(r"就是 ([\d.]+) GB，超过", zh) == 151.4 and "放不下" in zh


# ---- prefix caching: the layers only ----------------------------------------------------------------------------
def test_prefix_flops_leave_out_the_lm_head(nums):
    H, I, L, V = C32["hidden_size"], C32["intermediate_size"], C32["num_hidden_layers"], C32["vocab_size"]
    nh, nkv, hd, S, saved = C32["num_attention_heads"], C32["num_key_value_heads"], 128, 2048, 63
    layer_weights = 2 * H * nh * hd + 2 * H * nkv * hd + 3 * H * I          # q, o; k, v; gate, up, down
    per_request = 2 * S * L * layer_weights + 4 * nh * hd * S * S * L        # matmuls + QK^T and PV
    hand = saved * per_request / 1e15
    lm_head = saved * 2 * S * V * H / 1e15
    q = question("sv-prefix-saved", "en", nums)
    stated = number(r"\(([\d.]+) PFLOP\)", q["long"].replace(" P", " P"))
    assert abs(stated - hand) / hand < 0.002, (stated, hand)       # elementwise ops are the rest (~0.1%)
    assert abs(stated - (hand + lm_head)) > 0.1                      # not the figure with the LM head (8.60)
    assert number(r"（([\d.]+) PFLOP）", question("sv-prefix-saved", "zh", nums)["long"]) == stated
    assert number(r"and ([\d.]+) PFLOP of prefill", text("serving", "en", "academic", nums)) == stated


# ---- speculative decoding: a bound ---------------------------------------------------------------------------------
def test_speculative_speedup_is_labelled_a_bound(nums):
    a, k = 0.8, 4
    E = (1 - a ** (k + 1)) / (1 - a)
    c = params(CFG["0.5b"]) / P32
    bound = E / (k * c + 1)
    assert round(E, 2) == 3.36 and round(bound, 2) == 3.17
    en, zh = text("serving", "en", "academic", nums), text("serving", "zh", "academic", nums)
    assert number(r"speed-up is at most ([\d.]+)×", en) == round(bound, 2) and "ideal bound" in en
    assert number(r"加速最多 ([\d.]+) 倍", zh) == round(bound, 2) and "理想上界" in zh
    assert number(r"at best about ([\d.]+)×", text("serving", "en", "plain", nums)) == round(bound, 2)
    assert number(r"最多约快 ([\d.]+) 倍", text("serving", "zh", "plain", nums)) == round(bound, 2)
    q_en, q_zh = question("sv-spec-speedup", "en", nums), question("sv-spec-speedup", "zh", nums)
    assert number(r"At most about ([\d.]+)×", q_en["short"]) == round(bound, 2) and "bound" in q_en["short"]
    assert number(r"最多约 ([\d.]+) 倍", q_zh["short"]) == round(bound, 2) and "上界" in q_zh["short"]


# ---- bfloat16 ------------------------------------------------------------------------------------------------------
def test_bf16_spacing_at_one_is_2_to_the_minus_7():
    one = torch.tensor(1.0, dtype=torch.bfloat16)
    assert (torch.nextafter(one, torch.tensor(2.0, dtype=torch.bfloat16)) - one).item() == 2 ** -7
    # the largest rounding error is half of that: 1 + 2^-8 is a tie and rounds to even (1)
    assert torch.tensor(1 + 2 ** -8).to(torch.bfloat16).item() == 1.0
    assert torch.tensor(256.0 + 1).to(torch.bfloat16).item() == 256.0             # the texts' 256 + 1 example
    nums = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))
    for lang in ("en", "zh"):
        t = text("attention", lang, "academic", nums)
        assert "$2^{-7}$" in t and "$2^{-8}$" in t and "相对步长" not in t and "relative step" not in t
        long = question("softmax-fp32", lang, nums)["long"]
        assert "2⁻⁷" in long and "2⁻⁸" in long


# ---- int8: s = max|w| / 127.5 -------------------------------------------------------------------------------------
def test_int8_largest_weight_lands_half_a_step_short(nums):
    from ops.fast import quant
    w = torch.tensor([[1.0, 0.3, -0.2, 0.55]])
    q, s = quant.quantize(w, torch.float32)             # max |w| / 127.5 = 127.5 steps: stored as 127
    step = s.item()
    assert q[0, 0].item() == 127 and 0.4999 * step < abs(1.0 - 127 * step) <= 0.5 * step
    q, s = quant.quantize(w, torch.bfloat16)            # s rounded up to bf16 (by < 2^-8): 127..127.5 steps
    step = s.float().item()
    assert 1 / 127.5 <= step < (1 + 2 ** -8) / 127.5 and q[0, 0].item() == 127
    assert abs(1.0 - 127 * step) <= 0.5 * step
    coarser = round(100 * (127.5 / 127 - 1), 1)        # dividing by 127 instead
    assert coarser == 0.4
    en, zh = text("precision", "en", "academic", nums), text("precision", "zh", "academic", nums)
    assert "up to half a step short" in en and number(r"about ([\d.]+)% coarser", en) == coarser
    assert "最多被存短半级" in zh and number(r"步长粗约 ([\d.]+)%", zh) == coarser
    assert "127.5" in en and "127.5" in zh


# ---- the rest ----------------------------------------------------------------------------------------------------
def test_rope_step_states_the_relative_rotation():
    th, m, n = 0.37, 3, 11
    R = lambda a: torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=torch.float64)  # noqa: E731
    assert torch.allclose(R(m * th).T @ R(n * th), R((n - m) * th))
    step = next(s for s in tour.STEPS if s.key == "rope")
    for words in (step.words_en, step.words_zh):
        assert "Rₘᵀ Rₙ = Rₙ₋ₘ" in words and "n − m" in words
    assert "so dot products learn" not in step.words_en


def test_moe_is_a_section_of_the_mlp_page(nums):
    assert stages.get("moe").parent == "mlp"
    assert "next page" not in text("mlp", "en", "academic", nums) and "下一页" not in text("mlp", "zh", "academic", nums)


def test_rmsnorm_plain_keeps_the_stream_its_size(nums):
    en, zh = text("rmsnorm", "en", "plain", nums), text("rmsnorm", "zh", "plain", nums)
    assert "divides the whole row" not in en and "never turned down" in en and "copy" in en
    assert "然后全部除以它" not in zh and "从不被调小" in zh and "拷贝" in zh


def test_plain_serving_softmax_by_hand_without_symbols(nums):
    # scores 2, 1, 3, 0.5 in blocks of 2, by hand
    l1 = 1 + math.exp(-1)
    alpha = math.exp(2 - 3)
    l2 = l1 * alpha + 1 + math.exp(0.5 - 3)
    for lang, p1, pa, p2 in (("en", r"add up to ([\d.]+)", r"one factor, ([\d.]+),", r"total becomes ([\d.]+)"),
                             ("zh", r"份额加起来是 ([\d.]+)", r"缩小系数 ([\d.]+)", r"总和变成 ([\d.]+)")):
        t = text("serving", lang, "plain", nums)
        first = t.split("\n\n")[0]
        assert "\\ell" not in first and "\\alpha" not in first and "$m$" not in first
        assert number(p1, first) == round(l1, 3) and number(pa, first) == round(alpha, 3)
        assert number(p2, first) == round(l2, 3)


def test_sharing_notes_plain_gives_the_group_size(nums):
    n_rep = C32["num_attention_heads"] // C32["num_key_value_heads"]
    mha = 2 * C32["num_hidden_layers"] * C32["num_attention_heads"] * 128 * 2
    for lang, pat in (("en", r"each group of (\d+) heads"), ("zh", r"每 (\d+) 个头一组")):
        t = text("serving", lang, "plain", nums)
        assert number(pat, t) == n_rep
        assert costs.human(mha, "B") in t and costs.human(KV32, "B") in t


def test_quantization_answer_reads_straight(nums):
    en = question("quantization-decode-prefill", "en", nums)["long"]
    assert "(or the weights must be dequantised first)" not in en
    assert "only if the hardware multiplies faster" in en


def test_final_norm_academic_is_fuller(nums):
    # one positive factor per position: the ranking of a position's logits does not change
    g = torch.Generator().manual_seed(0)
    x, gamma, W = torch.randn(16, generator=g), torch.rand(16, generator=g) + 0.5, torch.randn(50, 16, generator=g)
    y = gamma * x / torch.sqrt((x * x).mean() + 1e-6)
    assert (W @ y).argmax() == (W @ (gamma * x)).argmax()
    assert torch.allclose(W @ y, (W * gamma) @ (x / torch.sqrt((x * x).mean() + 1e-6)))     # gamma folds into W
    for lang in ("en", "zh"):
        t = text("final_norm", lang, "academic", nums)
        assert t.count("**") >= 12 and "151,936" in t
    assert "tuned lens" in text("final_norm", "en", "academic", nums)


# ---- §2 references ------------------------------------------------------------------------------------------------
ARXIV = re.compile(r"arXiv:(\d{4}\.\d{4,5})")
HEAD = {"en": "**References.**", "zh": "**参考文献。**"}


@pytest.mark.parametrize("stage", texts.STAGES + texts.PAIRED)
def test_every_academic_text_ends_with_its_references(stage):
    ids = {}
    for lang in texts.LANGS:
        t = texts.template(stage, lang, "academic")
        assert HEAD[lang] in t, (stage, lang)
        refs = t[t.index(HEAD[lang]):]
        assert refs.strip() == t[t.index(HEAD[lang]):].strip() and "\n\n**" not in refs[len(HEAD[lang]):], \
            f"{stage} ({lang}): the references are not the last part"
        entries = [line for line in refs.splitlines() if line.startswith("- ")]
        assert entries and all(ARXIV.search(e) and re.search(r"\b(19|20)\d\d\b", e) for e in entries), (stage, lang)
        ids[lang] = [ARXIV.search(e).group(1) for e in entries]
    assert ids["en"] == ids["zh"], stage                  # both languages cite the same papers


def test_the_ids_the_issue_names_are_cited_where_they_belong():
    def cited(stage):
        return set(ARXIV.findall(texts.template(stage, "en", "academic")))
    assert {"2104.09864", "2305.13245", "1706.03762"} <= cited("attention")
    assert "2002.05202" in cited("mlp") and "1910.07467" in cited("rmsnorm") and "1508.07909" in cited("tokenize")
    assert {"2205.14135", "2309.06180", "2211.17192", "2302.01318", "2309.00071", "2405.04434", "2210.17323",
            "2306.00978"} <= cited("serving")
    assert {"2210.17323", "2306.00978", "2211.10438"} <= cited("precision")
    assert "2412.15115" in cited("overview") and "2303.08112" in cited("final_norm") and "2209.11895" in cited("atlas")
    assert {"2403.02310", "2211.17192", "2407.01082"} <= cited("decode")     # chunked prefill, drafts, min-p


# ---- §4: the thin stages ---------------------------------------------------------------------------------------------
def test_thin_stages_have_five_questions_each():
    from collections import Counter
    n = Counter(q["stage"] for q in practice.load_questions())
    assert all(n[s] >= 5 for s in ("residual", "final_norm", "embedding", "rmsnorm")), n
    assert len({q["id"] for q in practice.load_questions()}) == len(practice.load_questions())


def test_new_stage_questions_by_hand(nums):
    H, L, V = C32["hidden_size"], C32["num_hidden_layers"], C32["vocab_size"]
    assert question("rms-params-32b", "en", nums)["answer"] == (2 * L + 1) * H == 660_480
    assert "660,480" in question("rms-params-32b", "zh", nums)["short"]
    pad = V - 151_665                                   # rows past the tokenizer's 151,665 tokens
    assert V % 128 == 0 and V > 151_665
    for lang in ("en", "zh"):
        assert number(r"([\d,]+)", question("emb-padding-rows", lang, nums)["short"]) == pad == 399
        assert f"{V * H:,}" in question("emb-tied-saves", lang, nums)["short"]
        assert f"2 × {L}" in question("res-adds-count", lang, nums)["short"]
        assert f"{H:,}" in question("emb-decode-bytes", lang, nums)["short"] or str(H) in question(
            "emb-decode-bytes", lang, nums)["short"]
        assert "1e-06" in question("rms-eps", lang, nums)["short"]
    assert 256 ** 2 > torch.finfo(torch.float16).max > 255 ** 2      # the 'about 256' of rms-float32


# ---- the Generate page's options in its explanations: chunked prefill, prompt-lookup drafts, min-p ------------------
def _step_s(tokens, pairs, kv_read, rows, peak=989e12, bw=4.8e12):
    """One step of Qwen2.5-32B on an H200 by hand: 2 FLOPs per layer weight per token, the untied LM head on the
    rows that need logits, 4 L nh hd per (query, key) pair; bf16 weights once plus the KV read; the slower of both."""
    H, V, L, nh = C32["hidden_size"], C32["vocab_size"], C32["num_hidden_layers"], C32["num_attention_heads"]
    layer_w = P32 - 2 * V * H
    flops = 2 * layer_w * tokens + 2 * H * V * rows + 4 * L * nh * 128 * pairs
    return max(flops / peak, (W32 + KV32 * kv_read) / bw)


def test_decode_texts_teach_chunked_prefill_lookup_and_min_p(nums):
    from ops.engine import sampling as smp
    from ops.engine.speculate import lookup_draft
    P, D, X, C = 8192, 32, 4096, 512                  # a prompt arrives while D requests decode at X cached tokens
    dec = _step_s(D, D * (X + 1), D * X, D)
    alone = _step_s(P, P * (P + 1) // 2, 0, 1)
    steps = [_step_s(D + C, D * (X + 1) + C * a + C * (C + 1) // 2, D * X + a, D + (a + C == P))
             for a in range(0, P, C)]
    ttft_one, itl_one, ttft_c, itl_c = (f"{1000 * x:,.1f}" for x in (alone, alone + dec, sum(steps), max(steps)))
    assert max(steps) == steps[-1] and sum(steps) > alone and max(steps) < (alone + dec) / 10
    # the roofline's ridge: 989 TFLOP/s over 4.8 TB/s = 206 FLOP/byte; a B = 1 prefill does ~1 FLOP per weight byte
    # per token, so the smallest power of two past the ridge is compute-bound, the one before it memory-bound
    alone_cross = 2 ** math.ceil(math.log2(989 / 4.8))
    # issue 46: a chunk step also reads the D decodes' KV (32·4,096·262,144 = 34.4 GB), so it needs more tokens to
    # turn compute-bound: the smallest power-of-two chunk whose every step has FLOPs/peak >= bytes/bandwidth
    def compute_bound(c):
        return all(_step_s(D + c, D * (X + 1) + c * a + c * (c + 1) // 2, D * X + a, D + (a + c == P), bw=1e30)
                   >= (W32 + KV32 * (D * X + a)) / 4.8e12 for a in range(0, P, c))
    cross = next(2 ** k for k in range(17) if compute_bound(2 ** k))
    assert D * X * KV32 == 34_359_738_368 and alone_cross == 256
    # prompt lookup: a 3-token suffix beats a later 2-token one, a 4-token match is not looked for; 8 tokens copied
    ids = [6, 7, 1, 2, 9, 5, 7, 1, 2, 8, 3, 1, 2, 4, 6, 7, 1, 2]
    assert lookup_draft(ids)[0] == 8 and len(lookup_draft(list(range(40)) + [0])) == 8
    ngram, draft = 3, 8
    for lang, pats in (
            ("en", dict(itl_one=r"between two tokens is ([\d,.]+) ms", ttft_one=r"first token takes ([\d,.]+) ms",
                        itl_c=r"steps\) the gap is ([\d,.]+) ms", ttft_c=r"a little later, at ([\d,.]+) ms",
                        mem=r"stays memory-bound at \$C\$ = ([\d,]+)", cross=r"compute-bound only from \$C\$ = ([\d,]+)",
                        ngram=r"up to (\d+) of them", draft=r"copies up to (\d+) tokens", passes=r"yields 1 to (\d+)",
                        m=r"with \$m = ([\d.]+)\$", gap=r"only within ([\d.]+) of the top")),
            ("zh", dict(itl_one=r"之间要隔 ([\d,.]+) ms", ttft_one=r"首 token 要 ([\d,.]+) ms",
                        itl_c=r"间隔降到 ([\d,.]+) ms", ttft_c=r"稍晚一点，([\d,.]+) ms",
                        mem=r"\$C\$ = ([\d,]+) 时一步仍受带宽限制", cross=r"\$C\$ = ([\d,]+) 起才受算力限制",
                        ngram=r"最多 (\d+) 个）更早", draft=r"最多 (\d+) 个 token 抄来", passes=r"得到 1 到 (\d+) 个",
                        m=r"\$m = ([\d.]+)\$ 时", gap=r"不超过 ([\d.]+) 的 token"))):
        t = text("decode", lang, "academic", nums)
        got = {k: re.search(v, t) for k, v in pats.items()}
        assert all(got.values()), [k for k, v in got.items() if not v]
        g = {k: v.group(1) for k, v in got.items()}
        assert (g["itl_one"], g["ttft_one"], g["itl_c"], g["ttft_c"]) == (itl_one, ttft_one, itl_c, ttft_c), g
        assert (int(g["mem"].replace(",", "")), int(g["cross"].replace(",", ""))) == (cross // 2, cross) == (256, 512)
        assert (int(g["ngram"]), int(g["draft"]), int(g["passes"])) == (ngram, draft, draft + 1)
        m, gap = float(g["m"]), float(g["gap"])
        assert gap == round(-math.log(m), 2) == 2.30
        kept = smp.apply_min_p(torch.tensor([0.0, -gap + 0.01, -gap - 0.01]), m)
        assert torch.isfinite(kept).tolist() == [True, True, False]
        plain = text("decode", lang, "plain", nums)
        assert itl_one in plain and itl_c in plain and f"{100 * m:g}%" in plain
        words = {"en": (f"(up to {ngram})", f"checks up to {draft} guessed"),
                 "zh": (f"（最多 {ngram} 个）", f"最多 {draft} 个猜的词")}[lang]
        assert all(w in plain for w in words), words
