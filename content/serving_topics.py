"""The serving chapter's 2026 topics: the examples they work, their `sv_` placeholders (serving_numbers.numbers()
merges them in), and one tab each of tables and captions for the page. Every number comes from ops/arith/
(scheduling, parallelism, serving_math, formats) on a reference config. Never imports streamlit, never runs the
model (the grammar tab is handed the vocabulary's bytes).
"""
from __future__ import annotations

from functools import lru_cache

from content.template import fill
from content.words import say
from ops.arith import costs, formats, parallelism as par, scheduling as sch, serving_math as ops_sv
from ops.engine.config import ModelConfig

MOE_LABEL = "Qwen3-30B-A3B"                           # the expert-parallel example
CHUNK = dict(prompt=8192, decodes=32, context=4096, chunks=(None, 2048, 512))   # a prompt arrives mid-decode
GOODPUT = dict(batches=(1, 8, 32, 64, 128, 256), context=4096, slo_ms=50)      # an inter-token target
DISAGG_PROMPTS = (1024, 8192, 32768)
FEW_SHOT = dict(system=1000, groups=4, template=500, question=50, per_group=16)  # the prefix-sharing workload
DRAFT = dict(a=0.8, k=3, decay=(0.8, 0.6, 0.4))       # a learned draft: one rate, and rates that fall with depth
PIPE = dict(stages=4, microbatches=(1, 8, 32))
LONG = 131072                                         # the context of the context-parallel and sparse examples
CP_DEGREE, EP_DEGREE = 8, 8
TOPICS = (("chunked", "分块预填充", "Chunked prefill"), ("disagg", "预填充解码分离", "Disaggregation"),
          ("drafts", "EAGLE / MTP", "EAGLE / MTP"), ("radix", "RadixAttention", "RadixAttention"),
          ("parallel", "流水线/专家/上下文并行", "PP / EP / CP"), ("sparse", "稀疏与线性注意力", "Sparse / linear"),
          ("fp4", "FP8 / FP4", "FP8 / FP4"), ("grammar", "语法约束解码", "Grammars"))


def _l(lang: str, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


def _b(n) -> str:
    return costs.human(n, "B")


def _gb(n) -> str:
    return costs.gb(n)


def _ms(s: float) -> str:
    return f"{1000 * s:,.1f}"


def _n(n) -> str:
    return f"{int(n):,}"


def labels(lang: str) -> list[str]:
    return [_l(lang, zh, en) for _, zh, en in TOPICS]


# ---- the computed examples (cached: the page asks on every run) ----------------------------------------------
@lru_cache(maxsize=4)
def _chunked(ref: ModelConfig):
    return [sch.chunked_prefill(ref, CHUNK["prompt"], ch, CHUNK["decodes"], CHUNK["context"]) for ch in CHUNK["chunks"]]


@lru_cache(maxsize=4)
def _goodput(ref: ModelConfig):
    return sch.decode_goodput(ref, GOODPUT["batches"], GOODPUT["context"], GOODPUT["slo_ms"] / 1000)


@lru_cache(maxsize=1)
def _few_shot():
    return sch.few_shot_requests(**FEW_SHOT)


@lru_cache(maxsize=8)
def numbers(ref: ModelConfig) -> dict:
    """The topics' sv_ placeholders, from the reference config (Qwen2.5-32B-Instruct on an H200 in the app)."""
    one, _, small = _chunked(ref)
    gp = _goodput(ref)
    over = next(r for r in gp["rows"] if not r["meets_itl"])
    nofit = next(r for r in gp["rows"] if r["meets_itl"] and not r["fits"])   # meets the target, does not fit
    late = sch.chunk_delay(ref, CHUNK["prompt"], small["chunk"], CHUNK["decodes"], CHUNK["context"])
    cross = sch.chunk_crossover(ref, CHUNK["prompt"], CHUNK["decodes"], CHUNK["context"])
    late_mem = sch.chunk_delay(ref, CHUNK["prompt"], cross // 2, CHUNK["decodes"], CHUNK["context"])
    dg = {r["prompt"]: r for r in sch.disaggregation(ref, DISAGG_PROMPTS)}[CHUNK["prompt"]]
    head = ops_sv.draft_head_cost(ref)
    a, k = DRAFT["a"], DRAFT["k"]
    rx = {r["scheme"]: r for r in sch.prefix_sharing(ref, _few_shot())}
    pipe = par.pipeline_parallel(ref, (PIPE["stages"],), PIPE["microbatches"])[0]
    moe = costs.reference_config(MOE_LABEL)
    ep = par.expert_parallel(moe, (EP_DEGREE,))[0]
    cp = par.context_parallel(ref, LONG, (CP_DEGREE,))[0]
    mem = ops_sv.attention_memory(ref, (LONG,))
    sp = mem["rows"][0]
    low = {r["format"]: r for r in formats.low_bit_rows(ref)}
    s = ops_sv.SPARSE
    m1, m8, m32 = (pipe["bubble"][m] for m in PIPE["microbatches"])
    d = dict(
        cp_prompt=_n(CHUNK["prompt"]), cp_decodes=_n(CHUNK["decodes"]), cp_ctx=_n(CHUNK["context"]),
        cp_chunk=_n(small["chunk"]), cp_steps=_n(small["steps"]), cp_ttft_one=_ms(one["ttft_s"]),
        cp_itl_one=_ms(one["itl_s"]), cp_ttft_chunk=_ms(small["ttft_s"]), cp_itl_chunk=_ms(small["itl_s"]),
        cp_delay=_ms(late["delay_s"]), cp_decodes_ms=_ms(late["decodes_s"]), cp_reread=_ms(late["reread_s"]),
        cp_kv_step=_gb(costs.kv_cache_bytes(ref, CHUNK["decodes"] * CHUNK["context"])),
        cp_cross_chunk=_n(cross), cp_mem_chunk=_n(cross // 2), cp_reread_mem=_ms(late_mem["reread_s"]),
        gp_slo=_n(GOODPUT["slo_ms"]), gp_best=_n(gp["best_batch"]), gp_good=_n(gp["goodput"]),
        gp_itl_best=_ms(next(r["itl_s"] for r in gp["rows"] if r["batch"] == gp["best_batch"])),
        gp_over=_n(over["batch"]), gp_itl_over=_ms(over["itl_s"]), gp_fit=_n(gp["largest_fit"]),
        gp_mem=f"{gp['gpu_bytes'] / 1e9:g} GB", gp_nofit=_n(nofit["batch"]), gp_itl_nofit=_ms(nofit["itl_s"]),
        gp_nofit_kv=_gb(nofit["kv_bytes"]), gp_nofit_need=_gb(nofit["need_bytes"]),
        gp_weights=_gb(costs.weight_bytes(ref, 16)),
        dg_kv=_b(dg["kv_bytes"]), dg_prefill=_ms(dg["prefill_s"]), dg_ib=_ms(dg["transfer_s"]["InfiniBand 400G"]),
        dg_nvl=_ms(dg["transfer_s"]["NVLink"]),
        eagle_c=f"{head:.4f}", eagle_a=f"{a:g}", eagle_k=_n(k), eagle_acc=f"{ops_sv.accepted_length([a] * k):.2f}",
        eagle_e=f"{ops_sv.spec_expected_tokens(a, k):.2f}", eagle_bound=f"{ops_sv.spec_speedup(a, k, head):.2f}",
        eagle_decay=", ".join(f"{x:g}" for x in DRAFT["decay"]),
        eagle_acc_decay=f"{ops_sv.accepted_length(DRAFT['decay']):.2f}",
        rx_sys=_n(FEW_SHOT["system"]), rx_groups=_n(FEW_SHOT["groups"]), rx_tpl=_n(FEW_SHOT["template"]),
        rx_q=_n(FEW_SHOT["question"]), rx_per=_n(FEW_SHOT["per_group"]),
        rx_req=_n(FEW_SHOT["groups"] * FEW_SHOT["per_group"]),
        rx_none=_n(rx["none"]["tokens"]), rx_blocks=_n(rx["blocks"]["tokens"]), rx_radix=_n(rx["radix"]["tokens"]),
        rx_none_kv=_b(rx["none"]["kv_bytes"]), rx_radix_kv=_b(rx["radix"]["kv_bytes"]),
        pp_stages=_n(pipe["stages"]), pp_layers=_n(pipe["layers_per_stage"]), pp_weights=_gb(pipe["weights_per_gpu"]),
        pp_boundary=_n(pipe["boundary_bytes_per_token"]), pp_m8=_n(PIPE["microbatches"][1]),
        pp_m32=_n(PIPE["microbatches"][2]), pp_bubble1=f"{100 * m1:.0f}", pp_bubble8=f"{100 * m8:.0f}",
        pp_bubble32=f"{100 * m32:.1f}", pp_idle1=f"{100 * pipe['idle'][1]:.0f}",
        pp_token_ms=_ms(pipe["token_s"]), pp_tp_token_ms=_ms(pipe["tp_token_s"]),
        ep_model=MOE_LABEL, ep_degree=_n(EP_DEGREE), ep_experts=_n(ep["experts_per_gpu"]),
        ep_layer=_n(ep["per_token_layer"]), ep_all=_b(ep["per_token_all_layers"]), ep_leaves=_b(ep["leaves_gpu"]),
        cx_long=_n(LONG), cx_degree=_n(CP_DEGREE), cx_slice=_n(cp["tokens_per_gpu"]), cx_kv=_b(cp["kv_per_gpu"]),
        cx_ring_layer=_b(cp["ring_bytes_layer"]), cx_ring=_b(cp["ring_bytes"]),
        sp_full=_b(sp["full"]), sp_read=_n(sp["sparse_read"]), sp_stride=_n(s["stride"]), sp_blocks=_n(s["blocks"]),
        sp_block=_n(s["block"]), sp_window=_n(s["window"]), sp_topk=_n(s["topk"]), sp_linear=_b(sp["linear"]),
        sp_cross=_n(mem["crossover"]), sp_hybrid=_b(sp["hybrid"]), sp_every=_n(s["hybrid_every"]),
        sp_kept=_b(sp["sparse_kept"]),
        fp8_gb=_gb(low["FP8 E4M3 / E5M2"]["bytes"]), mxfp4_bits=f"{low['MXFP4 (E2M1)']['bits']:g}",
        nvfp4_bits=f"{low['NVFP4 (E2M1)']['bits']:g}", mxfp8_bits=f"{low['MXFP8 (E4M3)']['bits']:g}",
        mxfp4_gb=_gb(low["MXFP4 (E2M1)"]["bytes"]), nvfp4_gb=_gb(low["NVFP4 (E2M1)"]["bytes"]),
        bf16_gb=_gb(low["bf16"]["bytes"]), e2m1=", ".join(f"{v:g}" for v in formats.e2m1_values()),
        e2m1_max=f"{max(formats.e2m1_values()):g}", mx_block=_n(formats.LOW_BIT["MXFP4 (E2M1)"][1]),
        nv_block=_n(formats.LOW_BIT["NVFP4 (E2M1)"][1]),
        gr_mask=_n(-(-ref.vocab_size // 8)), gr_logits=_b(4 * ref.vocab_size), gr_vocab=_n(ref.vocab_size),
    )
    return {f"sv_{k}": str(v) for k, v in d.items()}


# ---- each tab: (rows, caption) pairs ---------------------------------------------------------------------------------
def _chunked_rows(ref, lang):
    rows = [{_l(lang, "每块", "chunk"): _l(lang, "整段", "whole prompt") if r["chunk"] is None else _n(r["chunk"]),
             _l(lang, "步数", "steps"): r["steps"], "TTFT (ms)": _ms(r["ttft_s"]),
             _l(lang, "解码请求最长间隔 ITL (ms)", "decodes' longest gap ITL (ms)"): _ms(r["itl_s"]),
             _l(lang, "期间解码 token/s", "decode tokens/s meanwhile"): _n(r["decode_tokens_per_s"])}
            for r in _chunked(ref)]
    gp = _goodput(ref)
    cap = f"{gp['gpu_bytes'] / 1e9:g} GB"
    good = [{"B": r["batch"], "KV": _gb(r["kv_bytes"]),
             _l(lang, f"KV + 权重 ≤ {cap}", f"KV + weights ≤ {cap}"):
                 ("✓ " if r["fits"] else "✗ ") + _gb(r["need_bytes"]),
             "ITL (ms)": _ms(r["itl_s"]), "token/s": _n(r["tokens_per_s"]),
             f"≤ {GOODPUT['slo_ms']} ms": "✓" if r["meets_itl"] else "✗",
             _l(lang, "可以提供", "may be offered"): "✓" if r["meets"] else "✗"}
            for r in gp["rows"]]
    return [(rows, "chunked"), (good, "goodput")]


def _disagg_rows(ref, lang):
    return [([{_l(lang, "提示词 token", "prompt tokens"): _n(r["prompt"]),
               _l(lang, "KV 字节", "KV bytes"): _b(r["kv_bytes"]),
               _l(lang, "预填充 (ms)", "prefill (ms)"): _ms(r["prefill_s"]),
               **{_l(lang, f"经 {k} 传输 (ms)", f"over {k} (ms)"): _ms(v) for k, v in r["transfer_s"].items()}}
              for r in sch.disaggregation(ref, DISAGG_PROMPTS)], "disagg")]


def _draft_rows(ref, lang):
    return [([{_l(lang, "接受率 a", "acceptance a"): f"{r['a']:g}", _l(lang, "草稿长度 k", "draft length k"): r["k"],
               _l(lang, "平均接受的草稿 token", "draft tokens accepted"): f"{r['accepted']:.2f}",
               _l(lang, "每次核对得到 token", "tokens per verification"): f"{r['expected']:.2f}",
               _l(lang, "加速比上限", "speed-up bound"): f"{r['speedup']:.2f}×"}
              for r in ops_sv.draft_head_table(ref)], "drafts")]


def _radix_rows(ref, lang):
    names = dict(none=("不共享", "no sharing"), blocks=("按 16 token 的块", "hashed blocks of 16"),
                 radix=("基数树（逐 token）", "radix tree (per token)"))
    return [([{_l(lang, "方式", "scheme"): _l(lang, *names[r["scheme"]]),
               _l(lang, "缓存的 token", "tokens kept"): _n(r["tokens"]),
               _l(lang, "KV 字节", "KV bytes"): _b(r["kv_bytes"]),
               _l(lang, "省下的预填充 token", "prefill tokens skipped"): _n(r["skipped"])}
              for r in sch.prefix_sharing(ref, _few_shot())], "radix")]


def _parallel_rows(ref, lang):
    pp = [{_l(lang, "级数 p", "stages p"): r["stages"], _l(lang, "每级层数", "layers per stage"): r["layers_per_stage"],
           _l(lang, "每卡权重（首尾级）", "weights per GPU (end stage)"): _gb(r["weights_per_gpu"]),
           _l(lang, "每 token 跨级字节", "bytes per token per boundary"): _n(r["boundary_bytes_per_token"]),
           **{_l(lang, f"服务：{m} 个在途时空闲", f"serving: idle, {m} in flight"): f"{100 * b:.0f}%"
              for m, b in r["idle"].items()},
           _l(lang, "每 token 下限（ms）", "per token, at least (ms)"): _ms(r["token_s"])}
          for r in par.pipeline_parallel(ref, (2, 4, 8), PIPE["microbatches"])]
    ep = [{"EP": r["ep"], _l(lang, "每卡专家", "experts per GPU"): f"{r['experts_per_gpu']:g}",
           _l(lang, "每卡专家权重", "expert weights per GPU"): _gb(r["expert_bytes_per_gpu"]),
           _l(lang, "每 token 每层 all-to-all", "all-to-all per token per layer"): _n(r["per_token_layer"]),
           _l(lang, "离开本卡（全部层）", "leaving the GPU (all layers)"): _b(r["leaves_gpu"])}
          for r in par.expert_parallel(costs.reference_config(MOE_LABEL))]
    cp = [{"CP": r["cp"], _l(lang, "每卡 token", "tokens per GPU"): _n(r["tokens_per_gpu"]),
           _l(lang, "每卡 KV", "KV per GPU"): _b(r["kv_per_gpu"]),
           _l(lang, "每层环上收到", "received per layer (ring)"): _b(r["ring_bytes_layer"]),
           _l(lang, "一遍全部层", "one pass, all layers"): _b(r["ring_bytes"])}
          for r in par.context_parallel(ref, LONG)]
    return [(pp, "pp"), (ep, "ep"), (cp, "cp")]


def _sparse_rows(ref, lang):
    m, k = ops_sv.attention_memory(ref), ops_sv.SPARSE["hybrid_every"]
    return [([{_l(lang, "上下文", "context"): _n(r["context"]),
               _l(lang, "完整注意力 KV", "full attention KV"): _b(r["full"]),
               _l(lang, "块稀疏：每步读的 token", "block-sparse: tokens read per step"): _n(r["sparse_read"]),
               _l(lang, "块稀疏：保存", "block-sparse: kept"): _b(r["sparse_kept"]),
               _l(lang, "top-k：每步读的 token", "top-k: tokens read per step"): _n(r["topk_read"]),
               _l(lang, "线性（门控 delta）状态", "linear (gated delta) state"): _b(r["linear"]),
               _l(lang, f"混合（每 {k} 层 1 层完整）", f"hybrid (1 layer in {k} full)"): _b(r["hybrid"])}
              for r in m["rows"]], "sparse")]


def _fp4_rows(ref, lang):
    rows = [{_l(lang, "格式", "format"): r["format"], _l(lang, "元素位", "element bits"): r["elem"],
             _l(lang, "几个共用一个缩放", "elements per scale"): r["block"] or _l(lang, "整个张量", "whole tensor"),
             _l(lang, "缩放位", "scale bits"): r["scale_bits"] or r["tensor_bits"],
             _l(lang, "每权重位数", "bits per weight"): f"{r['bits']:g}",
             _l(lang, "Qwen2.5-32B 权重", "Qwen2.5-32B weights"): _gb(r["bytes"])} for r in formats.low_bit_rows(ref)]
    return [(rows, "fp4")]


def _grammar_rows(ref, lang, masks):
    names = dict(start=("开头", "start"), neg=("读到 -", "after -"), int=("读到非 0 数字", "inside a number"),
                 zero=("读到 0", "after a lone 0"))
    return [([{_l(lang, "自动机状态", "automaton state"): _l(lang, *names[r["state"]]),
               _l(lang, "允许的 token", "tokens allowed"): _n(r["allowed"]),
               _l(lang, "例子", "examples"): " ".join(repr(x) for x in r["examples"]),
               _l(lang, "可以结束", "may end"): "✓" if r["ends"] else "✗",
               _l(lang, "扫描走过的字节", "bytes walked by a scan"): _n(r["walked"]),
               _l(lang, "掩码字节", "mask bytes"): _n(r["mask_bytes"])} for r in masks], "grammar")]


CAPTIONS = {
    "chunked": ("Qwen2.5-32B，H200：{sv_cp_decodes} 个请求正在 {sv_cp_ctx} 个 token 的上下文上解码，来了一个 "
                "{sv_cp_prompt} token 的提示词。整段预填充时解码请求等它做完；分块时每一步带上全部解码请求和下一"
                "块提示词。时间是屋顶线下限：每个层权重每 token 2 FLOPs、只有需要 logits 的行算 LM head，字节 = "
                "权重 + 读到的 KV。",
                "Qwen2.5-32B on an H200: {sv_cp_decodes} requests decode at a {sv_cp_ctx}-token context when a "
                "prompt of {sv_cp_prompt} tokens arrives. Whole: the decodes wait for its prefill. Chunked: "
                "every step carries all the decodes and the next chunk. Times are roofline bounds: 2 FLOPs per "
                "layer weight per token, the LM head only on rows that need logits, bytes = weights + the KV "
                "read."),
    "disagg": ("预填充卡做完后，把提示词的整个 KV cache 一次传给解码卡。链路按单向带宽：NVLink 为 H200 公开的 "
               "900 GB/s （双向合计）的一半，InfiniBand 按 400 Gb/s 一个端口。",
               "When the prefill GPU is done, the prompt's whole KV cache crosses to the decode GPU once. Links "
               "at one direction's bandwidth: NVLink half the H200's published 900 GB/s (both directions), "
               "InfiniBand one 400 Gb/s port."),
    "drafts": ("草稿头接在目标模型自己的特征上（EAGLE、MTP）：一层与目标同宽的解码层，加上目标的 LM head，代价 c "
               "= {sv_eagle_c}（按权重字节）。加速比 E / (k·c + 1) 是上限：假设每个草稿 token 以同一概率、彼此独"
               "立地被接受。",
               "A draft head on the target's own features (EAGLE, MTP): one decoder layer at the target's width "
               "plus the target's LM head, c = {sv_eagle_c} by weight bytes. The speed-up E / (k·c + 1) is a "
               "bound: it assumes every draft token is accepted independently at the same rate."),
    "radix": ("{sv_rx_req} 个请求：{sv_rx_sys} token 的系统提示人人相同，{sv_rx_groups} 个 {sv_rx_tpl} token 的示"
              "例模板各被 {sv_rx_per} 个请求共用，每个请求再有 {sv_rx_q} token 的问题。按块共享时，跨过共享边界的"
              "块和最后不满的块不能共享；基数树逐 token 共享。",
              "{sv_rx_req} requests: a {sv_rx_sys}-token system prompt for all, {sv_rx_groups} few-shot "
              "templates of {sv_rx_tpl} tokens each shared by {sv_rx_per} of them, a {sv_rx_q}-token question "
              "each. Hashed blocks cannot share a block that straddles the end of a shared part, nor a request's "
              "last partial block; a radix tree shares token by token."),
    "ep": ("{sv_ep_model}：每个 token 把隐藏向量发给它的 k 个专家，再收回结果（dispatch + combine）；按专家均匀分"
           "布估计离开本卡的比例 (e − 1)/e，是上限（同一卡上的专家可以只发一份）。",
           "{sv_ep_model}: each token sends its hidden state to its k experts and gets the results back "
           "(dispatch + combine); the share leaving the GPU, (e − 1)/e with experts picked evenly, is an upper "
           "bound (experts on one GPU can share a copy)."),
    "cp": ("Qwen2.5-32B 的一条 {sv_cx_long} token 序列切成 g 段（环形注意力）：每张卡存自己那段的 KV，每层把其他 "
           "g − 1 段的 K、V 沿环收一遍。",
           "One {sv_cx_long}-token Qwen2.5-32B sequence cut into g slices (ring attention): each GPU keeps its "
           "slice's KV and, in every layer, receives the other g − 1 slices' K and V round the ring."),
    "sparse": ("Qwen2.5-32B 的形状，一条序列，bf16 KV。块稀疏的示例设置：每 {sv_sp_stride} token 一个压缩 "
               "token，选 {sv_sp_blocks} 块 × {sv_sp_block} token，窗口 {sv_sp_window}；top-k 取 {sv_sp_topk}；线"
               "性层每头一个 d_h × d_h 的 float32 状态，与上下文无关。",
               "At Qwen2.5-32B's shape, one sequence, bf16 KV. Block-sparse example settings: one compressed "
               "token per {sv_sp_stride}, {sv_sp_blocks} selected blocks of {sv_sp_block}, a window of "
               "{sv_sp_window}; top-k with k = {sv_sp_topk}; the linear layers keep a d_h × d_h float32 state "
               "per head, whatever the context."),
    "fp4": ("每权重位数 = 元素位 + 缩放位 / 每块元素数；每个张量一个 FP32 缩放（FP8、NVFP4）每权重不到千万分之一"
            "位，不计。E2M1 能表示的非负值：{sv_e2m1}。",
            "Bits per weight = element bits + scale bits / elements per block; one FP32 scale per tensor (FP8, "
            "NVFP4) adds under a millionth of a bit per weight and is not counted. E2M1's non-negative values: "
            "{sv_e2m1}."),
    "grammar": ("JSON 整数 -?(0|[1-9][0-9]*) 的自动机，作用在已加载模型的词表（{V_tok} 个 token）上：一个 token "
                "的每个字节都有出边才允许；不允许的 logits 设为 −inf。朴素做法每一步都扫一遍词表。",
                "The automaton of a JSON integer, -?(0|[1-9][0-9]*), over the loaded model's vocabulary ({V_tok} "
                "tokens): a token is allowed when each of its bytes has an edge; the others' logits are set to "
                "−inf. A plain scan walks the vocabulary every step."),
}


def tables(key: str, ref: ModelConfig, lang: str, nums: dict, masks=None) -> list[tuple[list[dict], str]]:
    """The tab `key`'s tables, each with its caption filled in the page's language. masks(): the grammar masks on
    the loaded vocabulary (scheduling.grammar_masks; only the grammar tab asks)."""
    make = dict(chunked=_chunked_rows, disagg=_disagg_rows, drafts=_draft_rows, radix=_radix_rows,
                parallel=_parallel_rows, sparse=_sparse_rows, fp4=_fp4_rows)
    parts = _grammar_rows(ref, lang, masks()) if key == "grammar" else make[key](ref, lang)
    return [(rows, fill(CAPTIONS[cap][0 if lang == "zh" else 1], nums) if cap in CAPTIONS
             else say(f"serving_notes.caption_{cap}", lang, **nums)) for rows, cap in parts]
