"""The serving chapter's 2026 topics: the examples they work, their `sv_` placeholders (serving_numbers.numbers()
merges them in), and one tab each of tables and captions for the page. Every number comes from ops/arith/
(scheduling, parallelism, serving_math, formats) on a reference config. Never imports streamlit, never runs the
model (the grammar tab is handed the vocabulary's bytes).
"""
from __future__ import annotations

from functools import lru_cache

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
# the tabs (key, 中文, English): their labels are assets/words/serving_topics' tab_<key>, like every text here
TOPICS = tuple((k, say(f"serving_topics.tab_{k}", "zh"), say(f"serving_topics.tab_{k}", "en"))
               for k in ("chunked", "disagg", "drafts", "radix", "parallel", "sparse", "fp4", "grammar"))


def _b(n) -> str:
    return costs.human(n, "B")


def _gb(n) -> str:
    return costs.gb(n)


def _ms(s: float) -> str:
    return f"{1000 * s:,.1f}"


def _n(n) -> str:
    return f"{int(n):,}"


def labels(lang: str) -> list[str]:
    return [say(f"serving_topics.tab_{k}", lang) for k, _, _ in TOPICS]


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
    rows = [{say("serving_topics.chunk", lang):
             say("serving_topics.whole_prompt", lang) if r["chunk"] is None else _n(r["chunk"]),
             say("serving_topics.steps", lang): r["steps"], "TTFT (ms)": _ms(r["ttft_s"]),
             say("serving_topics.decodes_longest_gap_itl", lang): _ms(r["itl_s"]),
             say("serving_topics.decode_tokens_s_meanwhile", lang): _n(r["decode_tokens_per_s"])}
            for r in _chunked(ref)]
    gp = _goodput(ref)
    cap = f"{gp['gpu_bytes'] / 1e9:g} GB"
    good = [{"B": r["batch"], "KV": _gb(r["kv_bytes"]),
             say("serving_topics.col_fits_in", lang, cap=cap):
                 ("✓ " if r["fits"] else "✗ ") + _gb(r["need_bytes"]),
             "ITL (ms)": _ms(r["itl_s"]), "token/s": _n(r["tokens_per_s"]),
             f"≤ {GOODPUT['slo_ms']} ms": "✓" if r["meets_itl"] else "✗",
             say("serving_topics.may_be_offered", lang): "✓" if r["meets"] else "✗"}
            for r in gp["rows"]]
    return [(rows, "chunked"), (good, "goodput")]


def _disagg_rows(ref, lang):
    return [([{say("serving_topics.prompt_tokens", lang): _n(r["prompt"]),
               say("serving_topics.kv_bytes", lang): _b(r["kv_bytes"]),
               say("serving_topics.prefill_ms", lang): _ms(r["prefill_s"]),
               **{say("serving_topics.col_over_link", lang, k=k): _ms(v) for k, v in r["transfer_s"].items()}}
              for r in sch.disaggregation(ref, DISAGG_PROMPTS)], "disagg")]


def _draft_rows(ref, lang):
    return [([{say("serving_topics.acceptance_a", lang): f"{r['a']:g}",
               say("serving_topics.draft_length_k", lang): r["k"],
               say("serving_topics.draft_tokens_accepted", lang): f"{r['accepted']:.2f}",
               say("serving_topics.tokens_per_verification", lang): f"{r['expected']:.2f}",
               say("serving_topics.speed_up_bound", lang): f"{r['speedup']:.2f}×"}
              for r in ops_sv.draft_head_table(ref)], "drafts")]


def _radix_rows(ref, lang):
    return [([{say("serving_topics.scheme", lang): say(f"serving_topics.scheme_{r['scheme']}", lang),
               say("serving_topics.tokens_kept", lang): _n(r["tokens"]),
               say("serving_topics.kv_bytes", lang): _b(r["kv_bytes"]),
               say("serving_topics.prefill_tokens_skipped", lang): _n(r["skipped"])}
              for r in sch.prefix_sharing(ref, _few_shot())], "radix")]


def _parallel_rows(ref, lang):
    pp = [{say("serving_topics.stages_p", lang): r["stages"],
           say("serving_topics.layers_per_stage", lang): r["layers_per_stage"],
           say("serving_topics.weights_per_gpu_end", lang): _gb(r["weights_per_gpu"]),
           say("serving_topics.bytes_per_token_per", lang): _n(r["boundary_bytes_per_token"]),
           **{say("serving_topics.col_idle_in_flight", lang, m=m): f"{100 * b:.0f}%"
              for m, b in r["idle"].items()},
           say("serving_topics.per_token_at_least", lang): _ms(r["token_s"])}
          for r in par.pipeline_parallel(ref, (2, 4, 8), PIPE["microbatches"])]
    ep = [{"EP": r["ep"], say("serving_topics.experts_per_gpu", lang): f"{r['experts_per_gpu']:g}",
           say("serving_topics.expert_weights_per_gpu", lang): _gb(r["expert_bytes_per_gpu"]),
           say("serving_topics.all_to_all_per", lang): _n(r["per_token_layer"]),
           say("serving_topics.leaving_the_gpu_all", lang): _b(r["leaves_gpu"])}
          for r in par.expert_parallel(costs.reference_config(MOE_LABEL))]
    cp = [{"CP": r["cp"], say("serving_topics.tokens_per_gpu", lang): _n(r["tokens_per_gpu"]),
           say("serving_topics.kv_per_gpu", lang): _b(r["kv_per_gpu"]),
           say("serving_topics.received_per_layer_ring", lang): _b(r["ring_bytes_layer"]),
           say("serving_topics.one_pass_all_layers", lang): _b(r["ring_bytes"])}
          for r in par.context_parallel(ref, LONG)]
    return [(pp, "pp"), (ep, "ep"), (cp, "cp")]


def _sparse_rows(ref, lang):
    m, k = ops_sv.attention_memory(ref), ops_sv.SPARSE["hybrid_every"]
    return [([{say("serving_topics.context", lang): _n(r["context"]),
               say("serving_topics.full_attention_kv", lang): _b(r["full"]),
               say("serving_topics.block_sparse_tokens_read", lang): _n(r["sparse_read"]),
               say("serving_topics.block_sparse_kept", lang): _b(r["sparse_kept"]),
               say("serving_topics.top_k_tokens_read", lang): _n(r["topk_read"]),
               say("serving_topics.linear_gated_delta_state", lang): _b(r["linear"]),
               say("serving_topics.col_hybrid", lang, k=k): _b(r["hybrid"])}
              for r in m["rows"]], "sparse")]


def _fp4_rows(ref, lang):
    rows = [{say("serving_topics.format", lang): r["format"], say("serving_topics.element_bits", lang): r["elem"],
             say("serving_topics.elements_per_scale", lang): r["block"] or say("serving_topics.whole_tensor", lang),
             say("serving_topics.scale_bits", lang): r["scale_bits"] or r["tensor_bits"],
             say("serving_topics.bits_per_weight", lang): f"{r['bits']:g}",
             say("serving_topics.qwen2_5_32b_weights", lang): _gb(r["bytes"])} for r in formats.low_bit_rows(ref)]
    return [(rows, "fp4")]


def _grammar_rows(ref, lang, masks):
    return [([{say("serving_topics.automaton_state", lang): say(f"serving_topics.state_{r['state']}", lang),
               say("serving_topics.tokens_allowed", lang): _n(r["allowed"]),
               say("serving_topics.examples", lang): " ".join(repr(x) for x in r["examples"]),
               say("serving_topics.may_end", lang): "✓" if r["ends"] else "✗",
               say("serving_topics.bytes_walked_by_a", lang): _n(r["walked"]),
               say("serving_topics.mask_bytes", lang): _n(r["mask_bytes"])} for r in masks], "grammar")]


CAPTIONED = ("chunked", "disagg", "drafts", "radix", "ep", "cp", "sparse", "fp4", "grammar")   # cap_<name> here


def tables(key: str, ref: ModelConfig, lang: str, nums: dict, masks=None) -> list[tuple[list[dict], str]]:
    """The tab `key`'s tables, each with its caption filled in the page's language. masks(): the grammar masks on
    the loaded vocabulary (scheduling.grammar_masks; only the grammar tab asks)."""
    make = dict(chunked=_chunked_rows, disagg=_disagg_rows, drafts=_draft_rows, radix=_radix_rows,
                parallel=_parallel_rows, sparse=_sparse_rows, fp4=_fp4_rows)
    parts = _grammar_rows(ref, lang, masks()) if key == "grammar" else make[key](ref, lang)
    return [(rows, say(f"serving_topics.cap_{cap}" if cap in CAPTIONED else f"serving_notes.caption_{cap}", lang,
                       **nums)) for rows, cap in parts]
