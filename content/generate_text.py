"""The Generate page's longer sentences in both languages, filled with the run's own numbers.
No streamlit, no model: numbers in, text out (lang "zh" or "en")."""
from __future__ import annotations

from ops.arith.costs import human

CHUNKS = (0, 4, 16, 64)           # prefill chunk sizes offered (0: the whole prompt in one pass)
DRAFTS = ("", "prompt-lookup")    # "" = no draft


def _l(lang: str, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


FAST_HELP = (
    "解码每步要把全部权重读一遍，所以字节越少越快。bfloat16 只读 float32 一半的字节；"
    "int8 每行权重存成 int8 加一个缩放因子，又减半。首次使用时建一份权重副本。logits 与 float32 相差舍入误差，"
    "长文本可能在某一步选出不同的 token。“下一个 token” 和 “一直生成到结束” 都走这条路径；切换会重新开始。",
    "Each decode step reads every weight once, so fewer bytes are faster. bfloat16 reads half the bytes of float32; "
    "int8 stores each weight row as int8 with one scale, halving them again. The first use builds a copy of the "
    "weights. Logits differ from float32 by rounding, so a long answer may pick a different token at some step. "
    "Both “Next token” and “Run to the end” take this path; switching starts over.")
MIN_P_HELP = ("0 = 关闭；去掉概率低于 min-p × 最大概率的 token（在 top-k、top-p 之后）。",
              "0 = off; drops tokens whose probability is below min-p × the top token's (after top-k and top-p).")
CHUNK_HELP = (
    "预填充时每次只把 C 个提示词 token 送进模型，经 KV 缓存接着算：前向次数变多，但每次的时间有上限，服务端的调度器"
    "因此能在两次之间插入别人的解码步。首 token 的 logits 只差在最后几位，贪心选出的 token 不变。",
    "The prefill feeds the prompt C tokens per pass, each pass continuing from the KV cache: more passes, each with "
    "a bounded time, so a server's scheduler can slip other requests' decode steps between them. The first token's "
    "logits differ only in the last bits, and greedy picks the same tokens.")
DRAFT_HELP = (
    "提示词查找：找出最后几个 token 在前文里上一次出现的位置，把那里接着的 token 当作草稿，一次前向同时验证整段草稿。"
    "草稿保留到第一个与模型自己的选择不同的地方，所以文字与普通贪心解码相同，只是前向次数更少。每次点击 “下一个 token”"
    " 是一次前向，可能一次得到好几个 token。",
    "Prompt lookup: find where the last few tokens appeared earlier in the text, take the tokens that followed them "
    "there as a draft, and check the whole draft in one forward pass. The draft is kept up to the first token where "
    "the model's own choice differs, so the text is plain greedy's with fewer passes. Each “Next token” click is one "
    "forward pass and may yield several tokens.")


def chunk_label(C: int, lang: str) -> str:
    return _l(lang, "关", "off") if not C else f"{C}"


def draft_label(draft: str, lang: str) -> str:
    return _l(lang, "无", "none") if not draft else _l(lang, "提示词查找", "prompt lookup")


def greedy_only(T: float, lang: str) -> str:
    return _l(lang, "提示词查找只用于贪心解码（T = 0）：抽样时要验证一个草稿 token，得用投机采样的接受规则。"
                    f"现在 T = {T:g}，草稿不启用。",
              f"Prompt lookup is for greedy decoding only (T = 0): checking a drafted token against a sampled one "
              f"needs speculative sampling's acceptance rule. T = {T:g} now, so no draft is used.")


def question(lang: str) -> str:
    return _l(lang, "模型生成的第一个 token 会是哪一个？", "Which token will the model generate first?")


def why(greedy: bool, T: float, seed: int, lang: str) -> str:
    if greedy:
        return _l(lang, "贪心解码取概率最大的那个 token：下面预览图里红色的那根柱子。",
                  "Greedy decoding takes the most probable token: the red bar of the preview below.")
    return _l(lang, f"T = {T:g} 时第一个 token 是按上面的设置抽出来的（种子 {seed}）：概率最高的只是最可能的那个。",
              f"At T = {T:g} the first token is drawn with the settings above (seed {seed}): the most probable one "
              "is only the likeliest.")


def preview_title(greedy: bool, lang: str) -> str:
    return _l(lang, "预览：下一个 token 的前 8 个候选", "Preview: the top 8 candidates for the next token") + (
        _l(lang, "（贪心取红色那个）", " (greedy takes the red one)") if greedy
        else _l(lang, "（模型的原始概率，T = 1；生成时再按上面的设置抽样）",
                " (the model's own probabilities, T = 1; a run then draws with the settings above)"))


def finished(stopped: str, budget: int, lang: str) -> str:
    if stopped == "eos":
        return _l(lang, "结束：遇到结束符 (EOS)。", "Finished: the model produced an end-of-sequence token.")
    return _l(lang, f"结束：达到最多 {budget} 个 token。", f"Finished: reached the limit of {budget} tokens.")


def chat_caption(chat: bool, S0: int, several: bool, lang: str) -> str:
    return _l(lang, f"聊天模板：{'开' if chat else '关'}（在左侧边栏切换）。提示词共 {S0} 个 token"
                    + ("（生成只用第一行提示词）。" if several else "。"),
              f"Chat template: {'on' if chat else 'off'} (toggle in the sidebar). The prompt is {S0} tokens"
              + (" (generation uses the first prompt line only)." if several else "."))


def latex(lang: str) -> str:
    return r"x_{t+1} \sim \pi(\cdot \mid x_{\le t}),\qquad " + _l(
        lang, r"\text{预填充：全部 } S \text{ 个提示词 token 的 } K, V;\quad "
        r"\text{解码：每步 } 1 \text{ 个 token，对照缓存}",
        r"\text{prefill: } K, V \text{ of all } S \text{ prompt tokens};\quad \text{decode: } 1 \text{ token against "
        r"the cache}")


def nothing_yet(S0: int, lang: str) -> str:
    return _l(lang, f"还没有生成。第一次点击 “下一个 token” 是**预填充 (prefill)**：一次处理全部 {S0} 个提示词 token，"
                    "填满 KV 缓存。",
              f"Nothing generated yet. The first “Next token” click is the **prefill**: all {S0} prompt tokens in "
              "one pass, filling the KV cache.")


def fast_caption(path: str, weight_dtype: str, compute_dtype: str, lang: str) -> str:
    return _l(lang, f"这次用快速路径 {path}：权重 {weight_dtype}，激活和 KV 缓存 {compute_dtype}。",
              f"This run used the fast path {path}: {weight_dtype} weights, activations and KV cache in "
              f"{compute_dtype}.")


def speed_metrics(S0: int, pre: float, dec: float | None, per_tok: int, lang: str) -> list[tuple[str, str]]:
    return [(_l(lang, f"预填充：{S0} 个 token", f"prefill: {S0} tokens"), f"{pre:.0f} ms"),
            (_l(lang, "解码：每个 token", "decode: per token"), f"{dec:.0f} ms" if dec else "—"),
            (_l(lang, "解码速度", "decode speed"), f"{1000 / dec:.1f} tok/s" if dec else "—"),
            (_l(lang, "每个 token 的 KV 缓存", "KV cache per token"), human(per_tok, "B"))]


def option_metrics(r: dict, lang: str) -> list[tuple[str, str]]:
    """ops.lab.generate_data.generation_report's figures as label / value pairs: passes, the prefill's when it took
    more than one, then the draft's."""
    out = [(_l(lang, "前向次数", "forward passes"), f"{r['forward_passes']}")]
    if r["prefill_passes"] > 1:
        out += [(_l(lang, "预填充次数", "prefill passes"), f"{r['prefill_passes']}"),
                (_l(lang, "预填充最大一次", "largest prefill pass"), f"{r['prefill_largest']}")]
    if r["draft"]:
        rate = "—" if r["acceptance"] is None else f"{r['acceptance']:.0%}"
        out += [(_l(lang, "草稿 token", "drafted"), f"{r['proposed']}"),
                (_l(lang, "被接受的", "accepted"), f"{r['accepted']}"), (_l(lang, "接受率", "acceptance"), rate),
                (_l(lang, "省下的前向次数", "passes saved"), f"{r['passes_saved']}")]
    return out


def option_text(r: dict, lang: str) -> str:
    """One paragraph on what the prefill chunk and the draft did in this run (generation_report's numbers)."""
    n, S, fp, pp, big = r["tokens"], r["prompt_tokens"], r["forward_passes"], r["prefill_passes"], r["prefill_largest"]
    out = _l(lang, f"**这次运行。** {n} 个 token 用了 {fp} 次前向，其中预填充 {pp} 次，最大的一次 {big} 个 token"
                   f"（提示词共 {S} 个）。",
             f"**This run.** {n} tokens took {fp} forward passes, {pp} of them for the prefill, the largest of "
             f"{big} tokens (the prompt has {S}).")
    if r["draft"]:
        rate = "" if r["acceptance"] is None else _l(lang, f"（{r['acceptance']:.0%}）", f" ({r['acceptance']:.0%})")
        out += _l(lang, f"提示词查找提出了 {r['proposed']} 个草稿 token，验证时接受了 {r['accepted']} 个{rate}，"
                        f"比逐个解码少 {r['passes_saved']} 次前向；接受的只是模型自己也会选的 token，所以文字与普通贪心"
                        "解码相同。",
                  f" Prompt lookup proposed {r['proposed']} draft tokens and the verifying passes accepted "
                  f"{r['accepted']}{rate}, {r['passes_saved']} passes fewer than one token at a time; only tokens "
                  "the model itself would choose are accepted, so the text is plain greedy's.")
    return out


def prefill_vs_decode(S0: int, passes: int, pre: float, dec: float | None, per_tok: int, L: int, nkv: int, hd: int,
                      kv_n: int, kv_bytes: int, lang: str) -> str:
    per, now = human(per_tok, "B"), human(kv_bytes, "B")
    nbytes = per_tok // (2 * L * nkv * hd)           # bytes per element of the cache's dtype (kv_bytes_per_token's)
    if lang == "zh":
        how = "一次算完" if passes == 1 else f"分 {passes} 次算完"
        serve = f"全部 {S0} 个" if passes == 1 else "一整块"
        return (f"**预填充 vs 解码。** 预填充{how}提示词的 {S0} 个 token（{pre:.0f} ms），"
                f"每读一次权重服务{serve} token，提示够长时就受算力限制；之后每步只算 1 个新 token"
                + (f"（平均 {dec:.0f} ms）" if dec else "")
                + "，但仍要把全部权重从内存读一遍，所以主要受内存带宽限制。KV 缓存让每步不必重算旧 token 的 K 和 V："
                f"每个 token 存 2 × {L} 层 × {nkv} 个 KV 头 × {hd} 维 × {nbytes} 字节 = {per}，"
                f"现在共 {kv_n} 条，{now}。")
    how = "one pass" if passes == 1 else f"{passes} passes"
    serve = f"all {S0} tokens" if passes == 1 else "a whole chunk of tokens"
    return (f"**Prefill vs decode.** The prefill runs all {S0} prompt tokens in {how} ({pre:.0f} ms): each weight "
            f"read serves {serve}, so a long enough prompt is bound by arithmetic. Each later step handles one new "
            "token" + (f" ({dec:.0f} ms on average)" if dec else "") + " but still reads every weight from memory, "
            "so it is bound by memory bandwidth. The KV cache spares each step from recomputing old tokens' K and V: "
            f"per token it stores 2 × {L} layers × {nkv} KV heads × {hd} dims × {nbytes} bytes = {per}; "
            f"now {kv_n} entries, {now}.")
