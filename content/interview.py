"""The interview page's tables and example prompts: ops/lab/interview.py's figures, labelled in either language.
No streamlit, no model: rows in, rows out."""
from __future__ import annotations

from ops.arith.costs import human

# prompts that repeat themselves (code, a quoted passage), where copying from the prompt pays
_BODY = ("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
         "def mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    return a / b\n")
CODE = "# file a.py\n" + _BODY + "\n\n# file b.py: an exact copy of a.py\n" + _BODY[:30]
QUOTE = ("Repeat the sentence exactly: The quick brown fox jumps over the lazy dog while the farmer watches "
         "from the gate.\nThe quick brown fox")
SHORT = "The capital of France is"
CHUNKS = (None, 32, 8)
NEW_TOKENS = dict(prefill=8, batch=32, lookup=32)


def _l(lang: str, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


def _g(x: float) -> str:
    return f"{x:.3g}"


# each tab's caption: (zh, en)
CAPTIONS = {
    "prefill": ('同一个提示词，一次整段预填充，或每次 C 个 token 经 KV cache 分几次预填'
                '充：次数变多，每次的时间有上限，调度器因此能在两次预填充之间插入别人的解码。首 token'
                ' 的 logits 与一次预填充相比，差在最后几位。',
                'One prompt prefilled in one pass, or C tokens per pass through the KV cache: more passes, each '
                "bounded, so a scheduler can slip other requests' decode steps between them. The first token's l"
                'ogits differ from the one-pass prefill in the last bits.'),
    "batch": ('同一个提示词单独跑，或者和一个更长的提示词拼成一批（它被补齐）：矩阵形状变了，浮点加法的顺'
                '序就可能变，数值差在最后几位；贪心解码一旦在两个候选几乎相等处分叉，后面的文字就不同。这就'
                '是服务端“温度 0”也不一定可复现的原因。',
                'One prompt alone, or batched with a longer one (so it is padded): the matrix shapes change, so '
                'the order of float additions may change and the numbers differ in the last bits; once greedy de'
                'coding meets a near-tie there, the texts part. That is why temperature 0 in a server is not alw'
                'ays reproducible.'),
    "lookup": ('草稿不用小模型：最后几个 token 若在前文出现过，就把那里接下去的 token 当草稿'
                '，一次前向核对全部；保留到第一个不一致处，那里换成模型自己的 token。得到的 toke'
                'n 与普通贪心完全相同。',
                'No draft model: when the last few tokens occurred earlier, the tokens that followed them there '
                'are the draft, verified in one forward pass; kept up to the first disagreement, where the model'
                "'s own token goes instead. The tokens are exactly plain greedy's."),
}


def caption(name: str, lang: str) -> str:
    return _l(lang, *CAPTIONS[name])


def prefill_rows(rows: list[dict], lang: str) -> list[dict]:
    return [{_l(lang, "每块 C", "chunk C"): r["chunk"], _l(lang, "前向次数", "passes"): r["passes"],
             _l(lang, "每次最多 token", "max tokens per pass"): r["max_tokens_per_pass"],
             _l(lang, "最长一次 (ms)", "longest pass (ms)"): f"{1000 * r['max_pass_s']:.1f}",
             _l(lang, "合计 (ms)", "total (ms)"): f"{1000 * r['total_s']:.1f}",
             _l(lang, "首 token logits 最大差", "first-token logits max |diff|"): _g(r["logits_max_diff"]),
             _l(lang, "贪心 token 相同", "same greedy tokens"): "✓" if r["same_tokens"] else "✗"} for r in rows]


def split_rows(rows: list[dict], lang: str) -> list[dict]:
    return [{_l(lang, "分块数 K", "splits K"): r["splits"], _l(lang, "键数", "keys"): r["keys"],
             _l(lang, "与 trace 的 context 最大差", "max |diff| vs the trace's context"): _g(r["max_diff_vs_trace"]),
             _l(lang, "与 eager 重算最大差", "max |diff| vs eager recomputed"): _g(r["max_diff_vs_eager"]),
             _l(lang, "max |context|", "max |context|"): _g(r["scale"])} for r in rows]


def invariance_rows(result: dict, lang: str, limit: int = 12) -> list[dict]:
    """The operators in pipeline order from the first that differs (the identical ones before it in one line)."""
    ops = result["operators"]
    first = next((k for k, r in enumerate(ops) if r["max_diff"] > 0), len(ops))
    same = [{_l(lang, "张量", "tensor"): _l(lang, f"前 {first} 个张量（{ops[0]['name']} …）",
                                          f"the first {first} tensors ({ops[0]['name']} ...)"),
             _l(lang, "最大差", "max |diff|"): "0"}] if first else []
    return same + [{_l(lang, "张量", "tensor"): r["name"], _l(lang, "最大差", "max |diff|"): _g(r["max_diff"]),
                    _l(lang, "最大 |值|", "max |value|"): _g(r["scale"])} for r in ops[first:first + limit]]


def lookup_rows(gens: dict, lang: str) -> list[dict]:
    """gens: label -> (plain Generation, prompt-lookup Generation)."""
    out = []
    for label, (plain, spec) in gens.items():
        rate = spec.accepted / spec.proposed if spec.proposed else 0.0
        out.append({_l(lang, "提示词", "prompt"): label, _l(lang, "生成 token", "tokens"): len(spec.token_ids),
                    _l(lang, "与贪心相同", "same as greedy"): "✓" if spec.token_ids == plain.token_ids else "✗",
                    _l(lang, "提议", "proposed"): spec.proposed, _l(lang, "接受", "accepted"): spec.accepted,
                    _l(lang, "接受率", "acceptance"): f"{rate:.0%}",
                    _l(lang, "前向次数", "passes"): f"{spec.forward_passes} / {plain.forward_passes}",
                    _l(lang, "省下", "saved"): spec.passes_saved})
    return out


def kv_rows(r: dict, lang: str) -> list[dict]:
    return [{"B": x["B"], _l(lang, "上下文", "context"): f"{x['context']:,}",
             _l(lang, "权重字节", "weight bytes"): human(x["weight_bytes"], "B"),
             _l(lang, "KV 字节", "KV bytes"): human(x["kv_bytes"], "B"),
             _l(lang, "KV 占比", "KV share"): f"{x['kv_share']:.0%}"} for x in r["rows"]]


def outlier_rows(figs: list[dict], lang: str) -> list[dict]:
    return [{_l(lang, "张量", "tensor"): f"layers.{f['layer']}.{f['name']}",
             _l(lang, "最大通道", "top channels"): ", ".join(map(str, f["top_channels"])),
             "max |x|": _g(f["max_abs"]), _l(lang, "中位 |x|", "median |x|"): _g(f["median_abs"]),
             _l(lang, "int8 步长（整张量）", "int8 step (per tensor)"): _g(f["step"]),
             _l(lang, "步长 / 中位", "step / median"): _g(f["step_over_median"]),
             _l(lang, "变成 0（整张量）", "rounded to 0 (per tensor)"): f"{f['per_tensor']['zero_share']:.1%}",
             _l(lang, "变成 0（逐通道）", "rounded to 0 (per channel)"): f"{f['per_channel']['zero_share']:.1%}",
             _l(lang, "平均相对误差（整张量 / 逐通道）", "mean rel. error (tensor / channel)"):
                 f"{f['per_tensor']['mean_rel_error']:.1%} / {f['per_channel']['mean_rel_error']:.1%}",
             _l(lang, "1% 显著通道占 |x|", "1% salient channels' share of |x|"): f"{f['salient_share']:.1%}"}
            for f in figs]


# ---- the page's sentences with live values ---------------------------------------------------------------------
def split_intro(lang: str, b: int, i: int, keys: int) -> str:
    return _l(lang, f"**分块 KV 解码（FlashDecoding）**：第 {b} 行最后一个 token 在第 {i} 层"
                    f"对全部 {keys} 个键的注意力，把键切成 K 块，"
                    "每块各自做 softmax（最大值、和、加权 V），再按 log-sum-exp 合并。",
              f"**Split-KV decode (FlashDecoding)**: row {b}'s last token attends to all {keys} keys in layer {i}; the "
              "keys are cut into K splits, each does its own softmax (max, sum, weighted V), and the parts merge by "
              "log-sum-exp.")


LABELS = dict(first=("第一个不同的张量", "first tensor that differs"),
              logits=("最后位置 logits 最大差", "last-position logits max |diff|"),
              parts=("文字分叉于第几个 token", "texts part at token"), alone=("单独", "alone"),
              batched=("成批", "batched"),
              weights=("权重（bf16）", "weights (bf16)"), kv_tok=("每 token KV", "KV per token"),
              crossover=("KV 超过权重时缓存的 token 数", "cached tokens where KV passes weights"),
              code=("代码", "code"), quote=("引文", "quote"),
              step_bytes=("解码一步字节", "decode step bytes"), kv_bytes=("每 token KV 字节", "KV bytes per token"))


def label(name: str, lang: str) -> str:
    return _l(lang, *LABELS[name])


def two_texts(lang: str, inv: dict) -> str:
    """The greedy text alone and batched, one line each."""
    return f"{label('alone', lang)}: {inv['solo_text']}\n{label('batched', lang)}: {inv['batched_text']}"


def not_parted(lang: str, n: int) -> str:
    return _l(lang, f"{n} 个内不分叉", f"not within {n}")


def kv_caption(lang: str, name: str) -> str:
    return _l(lang, f"{name}：解码一步读一遍权重（整批共享）和每条序列自己的 KV cache。"
                    "缓存的 token 总数 B·T 超过上面这个数，KV 的读取就超过权重，批次再大也省不下它。",
              f"{name}: a decode step reads the weights once (shared by the batch) and every sequence's own KV cache. "
              "Once the cached tokens B·T pass the figure above, KV reads outweigh weight reads, and a bigger batch no "
              "longer amortises them.")


def own_kv_caption(lang: str, name: str, own: dict) -> str:
    kv, cross = f"{own['kv_bytes_per_token']:,}", f"{own['crossover_tokens']:,.0f}"
    return _l(lang, f"本模型 {name}：每 token KV {kv} B，KV 在 {cross} 个缓存 token 处超过权重。",
              f"This model, {name}: {kv} B of KV per token; KV passes the weights at {cross} cached tokens.")


def outlier_caption(lang: str, loud: int) -> str:
    return _l(lang, f"第 {loud} 层的残差流里 |x| 最大。少数通道大出中位数几个数量级："
                    "整张量一个 int8 步长，普通值大多被舍成 0。W8A8 因此需要 SmoothQuant（把激活的通道尺度挪进权重），"
                    "只量化权重（4 位）的 AWQ 按激活大小找出少数显著通道并保护它们的权重。",
              f"Layer {loud}'s residual stream holds the largest |x|. A few channels stand orders of magnitude "
              "above the median: with one int8 step for the whole tensor most ordinary values round to 0. Hence "
              "W8A8 needs SmoothQuant (moving the activations' channel scales into the weights), and AWQ (4-bit, "
              "weight-only) finds the few salient channels by activation size and protects their weights.")
