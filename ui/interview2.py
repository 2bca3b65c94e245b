"""The Interview page's second round: six demos on the loaded model, each run on its button (they take seconds to
minutes on a CPU) with a progress bar, kept per model. Compute: ops/lab/interview_{tree_verify, lora_batch,
quant4, fp8, step_time}.py; rows and sentences: content/interview2.py; figures: viz/interview2.py."""
from __future__ import annotations

import streamlit as st

from content import interview as words, interview2 as w2
from ops.arith import costs, interview_math as im
from ops.lab import (
    interview as iv,
    interview_fp8,
    interview_lora_batch as lb,
    interview_quant4 as q4,
    interview_step_time as stt,
    interview_tree_verify as tv,
)
from viz import interview2 as fig

from . import experiments_state as lab
from .blocks import chart, table
from .session import t

TABS = ("tab_tree", "tab_lora", "tab_quant4", "tab_fp8", "tab_step", "tab_preempt", "tab_computed")
LORA_ROWS = (0, 1, -1, 0)            # the adapter of each row (-1: none): two adapters, a plain row, a repeat
EVICT, DECODE = 8, 24
LORA_PROMPTS = (words.SHORT, words.SHORT, words.CODE, words.QUOTE)   # the LoRA demo's own batch, one per row
LORA_TOKENS = 16                     # the tokens each LoRA row writes (short enough to show whole)


def _run(key: tuple, name: str, compute):
    """compute(progress) on its button, kept for this model and key."""
    return lab.sweep(key + (name,), compute, t("在本机上跑一次", "Run it on this machine"), button=f"iv2-{name}")


def _ids(model, text: str) -> list[int]:
    return model.encode_prompts(text, False)[2][0]


def round_two(page, model, trace, L: str, key: tuple, b: int = 0):
    """The six tabs; `trace` is the page's (its prompt is the live prompt), b its row."""
    st.header(w2.w("round_two", L))
    live = stt.row_ids(trace, b)
    key = key + (tuple(live),)
    tabs = page.tabs([w2.w(n, L) for n in TABS], "interview2")
    if tabs[0]:
        with tabs[0]:
            st.caption(w2.w("caption_tree", L))
            prompts = {words.label("code", L): words.CODE, words.label("quote", L): words.QUOTE}
            st.markdown(w2.prompts_shown(prompts, L))

            def trees(progress):
                out = {}
                for k, (label, p) in enumerate(prompts.items()):
                    progress(k, len(prompts))
                    out[label] = tv.tree_runs(model, p, words.NEW_TOKENS["lookup"])
                return out
            runs = _run(key, "tree", trees)
            if runs:
                table(w2.tree_rows(runs, L))
                best = max(runs.values(), key=lambda r: r["plain_passes"] - r["tree_passes"])
                st.markdown(w2.tree_result(best, L))
                if best["shown"]:
                    tr = best["shown"]
                    shape = dict(nodes=len(tr["tokens"]), leaves=tr["leaves"])
                    st.caption(w2.w("tree_mask", L, **shape))
                    chart(fig.tree_mask(tr, best["pieces"], w2.w("tree_mask_short", L, **shape), w2.w("tree_axis", L)),
                          "iv2-mask")
    if tabs[1]:
        with tabs[1]:
            st.caption(w2.w("caption_lora", L, n=2, rank=8, targets=", ".join(lb.TARGETS)))
            prompts = list(LORA_PROMPTS)
            st.markdown(w2.lora_prompts(prompts, LORA_TOKENS, L))
            r = _run(key, "lora", lambda progress: lb.lora_batch(model, prompts, list(LORA_ROWS),
                                                                 new_tokens=LORA_TOKENS, progress=progress))
            if r:
                st.markdown(w2.lora_result(r, L))
                table(w2.lora_rows(r, L, prompts))
    if tabs[2]:
        with tabs[2]:
            st.caption(w2.w("caption_quant4", L))
            r = _run(key, "quant4", lambda progress: q4.compare(model, _ids(model, w2.CALIBRATION), live,
                                                                 _ids(model, w2.EVAL_TEXT), progress=progress))
            if r:
                st.caption(w2.quant4_note(r, L))
                table(w2.quant4_rows(r, L))
                chart(fig.quant_layers(r["rows"], 128, w2.w("quant4_layers", L), layers=r["layers"]), "iv2-q4")
    if tabs[3]:
        with tabs[3]:
            loud = iv.loudest_layer(trace, "resid_out", b)
            st.caption(w2.w("caption_fp8", L, layer=loud))
            r = _run(key, "fp8", lambda progress: (interview_fp8.weight_errors(model, progress=progress),
                                                   interview_fp8.activation_errors(trace, loud, b=b)))
            if r:
                st.markdown(w2.w("fp8_weights", L))
                table(w2.fp8_weight_rows(r[0], L))
                st.markdown(w2.w("fp8_acts", L))
                table(w2.fp8_act_rows(r[1], L))
    if tabs[4]:
        with tabs[4]:
            st.caption(w2.w("caption_step", L, launch=f"{stt.LAUNCH_US:.0f}"))
            r = _run(key, "step", lambda progress: [stt.step_profile(model, live, p) for p in ("eager", "bf16")])
            if r:
                table(w2.step_rows(r, L))
                st.markdown(w2.step_note(r[0], L))
    if tabs[5]:
        with tabs[5]:
            st.caption(w2.w("caption_preempt", L, k=EVICT, n=DECODE))
            p = _run(key, "preempt", lambda progress: stt.preempt(model, live, DECODE, EVICT))
            if p:
                st.markdown(w2.w("preempt_result", L, recomputed=p["recomputed"], same="✓" if p["same"] else "✗"))
                ref = stt.recompute_vs_swap(costs.reference_config("Qwen2.5-32B-Instruct"), 4096)
                table(w2.preempt_rows(p, ref, L))
    if tabs[6]:
        with tabs[6]:
            computed(L)


def computed(L: str, gpu: str = "H200 141GB"):
    """The whiteboard sums from the configs: capacity (with its inputs), TP, KV tiers, wide EP, decode attention."""
    g, ref = costs.GPUS[gpu], costs.reference_config("Qwen2.5-32B-Instruct")
    st.caption(w2.w("computed_intro", L, gpu=gpu, tflops=f"{g['tflops_bf16']:.0f}", tbs=g["tb_per_s"]))
    st.subheader(w2.w("cap_head", L, model=ref.name))
    cols = st.columns(5)
    qps = cols[0].number_input(w2.w("cap_qps", L), 0.1, 1000.0, 10.0, key="iv2-qps")
    prompt = cols[1].number_input(w2.w("cap_prompt", L), 1, 32000, 2000, key="iv2-prompt")
    out = cols[2].number_input(w2.w("cap_output", L), 1, 8000, 300, key="iv2-out")
    ttft = cols[3].number_input(w2.w("cap_ttft", L), 0.01, 60.0, 1.0, key="iv2-ttft")
    tpot = cols[4].number_input(w2.w("cap_tpot", L), 1.0, 1000.0, 50.0, key="iv2-tpot")
    st.markdown(w2.capacity_text(im.capacity(ref, qps, int(prompt), int(out), ttft, tpot / 1000, gpu), L))
    small = costs.reference_config("Qwen2.5-0.5B-Instruct")
    for c in (ref, small):
        link = "NVLink 4 (H100/H200)"
        st.markdown(w2.w("tp_head", L, model=c.name, batch=1, link=link, bw=f"{im.LINKS_GB_S[link]:.0f}",
                         lat=f"{1e6 * im.ALLREDUCE_LATENCY_S:.0f}"))
        table(w2.tp_rows(im.tp_allreduce(c, 1, gpu=gpu), L))
    tiers = im.kv_tiers(ref, 4096, gpu)
    st.markdown(w2.w("tier_head", L, tokens="4,096", bytes=costs.human(tiers["bytes"], "B"),
                     re=f"{1000 * tiers['recompute_s']:.0f}"))
    table(w2.tier_rows(tiers, L))
    st.caption(w2.w("tier_route", L, r=tiers["replicas"], rand=f"{tiers['hit_random']:.1%}"))
    moe = costs.reference_config("Qwen3-30B-A3B")
    st.markdown(w2.w("ep_head", L, model=moe.name, batch=256))
    table(w2.ep_rows(im.wide_ep(moe, 256), L))
    a = im.decode_attn(ref, gpu)
    st.markdown(w2.w("attn_head", L, gpu=gpu, ridge=f"{a['ridge']:.0f}"))
    st.caption(w2.w("attn_rows", L, model=ref.name, rep=a["n_rep"], gqa=f"{a['gqa']:.1f}", mla=f"{a['mla']:.0f}"))
