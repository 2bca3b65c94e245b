"""The serving chapter's 2026 topics (ops/arith/scheduling.py, parallelism.py, serving_math's drafts and sparse /
linear attention, formats' low-bit floats), each against a number worked by hand in the comment beside it, from
Qwen2.5-32B-Instruct's config (FACTS.md: 64 layers, H 5120, 40 / 8 heads of 128, I 27648, V 152064, untied,
32,763,876,352 parameters) and the H200's published 989 TFLOP/s bf16 and 4.8 TB/s."""
from __future__ import annotations

import pytest

from ops.arith import costs, formats, parallelism as pp, scheduling as sc, serving_math as sv
from ops.errors import InputError

C32 = costs.reference_config("Qwen2.5-32B-Instruct")
C30A3 = costs.reference_config("Qwen3-30B-A3B")


# ---- the step model --------------------------------------------------------------------------------------------
def test_layer_params_leave_out_embedding_and_head():
    # 32,763,876,352 - 152,064·5,120 (embedding) - 152,064·5,120 (untied LM head)
    #   = 32,763,876,352 - 2·778,567,680 = 31,206,740,992
    assert sc.layer_params(C32) == 31_206_740_992


def test_one_decode_step_by_hand():
    # B = 1 at 4,096 cached tokens, attending to 4,097 keys:
    #   FLOPs = 2·31,206,740,992 + 2·5,120·152,064 + 4·64·40·128·4,097
    #         = 62,413,481,984 + 1,557,135,360 + 5,370,019,840 = 69,340,637,184
    #   bytes = 2·32,763,876,352 (bf16 weights) + 4,096·262,144 (KV) = 65,527,752,704 + 1,073,741,824
    #         = 66,601,494,528
    #   time  = max(69,340,637,184 / 989e12 = 0.0701 ms, 66,601,494,528 / 4.8e12 = 13.87531136 ms)
    r = sc.decode_step(C32, 1, 4096)
    assert r["flops"] == 69_340_637_184 and r["bytes"] == 66_601_494_528
    assert r["s"] == pytest.approx(0.01387531136, rel=1e-12) and r["bound"] == "memory"


def test_a_big_chunk_is_compute_bound():
    # 512 prompt tokens + 32 decodes, no attention, no logits: 2·31,206,740,992·544 = 33,952,934,199,296 FLOPs
    # / 989e12 = 34.3306 ms, against 65,527,752,704 B / 4.8e12 = 13.65 ms
    r = sc.step_time(C32, 544, 0, 0, 0)
    assert r["flops"] == 33_952_934_199_296 and r["bound"] == "compute"
    assert r["s"] == pytest.approx(33_952_934_199_296 / 989e12)


# ---- continuous batching with chunked prefill --------------------------------------------------------------------
def test_chunked_prefill_bounds_the_gap_but_not_the_first_token():
    # One chunk of the whole prompt: the same as the prompt alone, and the decodes wait for it.
    one = sc.chunked_prefill(C32, 8192, None, 32, 4096)
    alone = sc.step_time(C32, 8192, 8192 * 8193 // 2, 0, 1)["s"]
    assert one["ttft_s"] == alone and one["itl_s"] == pytest.approx(alone + sc.decode_step(C32, 32, 4096)["s"])
    # Chunks of 512 with 32 decodes: 16 steps; the last reads 32·4,096 + 7,680 KV tokens and computes
    #   544 tokens, 32·4,097 + 512·7,680 + 512·513/2 = 131,104 + 3,932,160 + 131,328 = 4,194,592 pairs, 33 logit rows
    c512 = sc.chunked_prefill(C32, 8192, 512, 32, 4096)
    last = sc.step_time(C32, 544, 4_194_592, 32 * 4096 + 7680, 33)
    assert c512["steps"] == 16 and c512["itl_s"] == last["s"]
    assert c512["itl_s"] < one["itl_s"] / 10                      # the gap shrinks more than tenfold
    assert c512["ttft_s"] > one["ttft_s"]                          # the first token comes a little later
    with pytest.raises(InputError):
        sc.chunked_prefill(C32, 10, 0, 1, 10)


def test_goodput_is_the_best_throughput_under_the_target():
    # B = 128 at 4,096: bytes 65,527,752,704 + 128·4,096·262,144 = 202,966,706,176 -> 42.2847 ms (memory-bound);
    # B = 256: 65,527,752,704 + 256·4,096·262,144 = 340,405,659,648 -> 70.918 ms, over a 50 ms target.
    g = sc.decode_goodput(C32, (1, 128, 256), 4096, 0.050)
    rows = {r["batch"]: r for r in g["rows"]}
    assert rows[128]["itl_s"] == pytest.approx(202_966_706_176 / 4.8e12)
    assert rows[256]["itl_s"] == pytest.approx(340_405_659_648 / 4.8e12) and not rows[256]["meets"]
    # ... but B = 128 does not fit one H200: 202,966,706,176 B > 141e9 (issue 46). The largest batch that fits:
    # (141e9 - 65,527,752,704) // 262,144 = 287,903 tokens of KV, // 4,096 = 70 requests, added to the offer;
    # B = 70: 65,527,752,704 + 70·4,096·262,144 = 140,689,680,384 B (fits) -> 29.3102 ms, meets the target.
    assert rows[128]["meets_itl"] and not rows[128]["fits"] and not rows[128]["meets"]
    assert g["largest_fit"] == 70 and rows[70]["need_bytes"] == 140_689_680_384 and rows[70]["fits"]
    assert g["best_batch"] == 70 and g["goodput"] == pytest.approx(70 / (140_689_680_384 / 4.8e12))
    assert sc.decode_goodput(C32, (256,), 4096, 0.010)["goodput"] == 0


# ---- disaggregation ------------------------------------------------------------------------------------------------
def test_disaggregation_moves_the_prompts_kv_once():
    # 8,192 tokens · 262,144 B = 2,147,483,648 B; over 50 GB/s: 42.949673 ms; over 450 GB/s: 4.772186 ms
    r = sc.disaggregation(C32, (8192,))[0]
    assert r["kv_bytes"] == 2_147_483_648
    assert r["transfer_s"]["InfiniBand 400G"] == pytest.approx(0.042949673, rel=1e-8)
    assert r["transfer_s"]["NVLink"] == pytest.approx(0.004772186, rel=1e-6)


# ---- prefix sharing ------------------------------------------------------------------------------------------------
def test_radix_tree_and_blocks_on_a_few_shot_workload():
    # 64 requests: a 1,000-token system prompt for all, 4 templates of 500 tokens (16 requests each), 50-token
    # questions. No sharing: 64·1,550 = 99,200 tokens. Radix: 1,000 + 4·500 + 64·50 = 6,200.
    # Blocks of 16: the system prompt fills 62 blocks (992 tokens) shared by all; blocks 62..92 (tokens 992..1,487)
    # mix system and template tokens, shared within a group: 4·31 blocks; blocks 93..95 hold question tokens and
    # the last 14 tokens sit in a partial block, per request: 64·(3·16 + 14). 992 + 1,984 + 3,968 = 6,944.
    reqs = sc.few_shot_requests(1000, 4, 500, 50, 16)
    assert len(reqs) == 64 and sum(map(len, reqs)) == 99_200
    assert sc.radix_tokens(reqs) == 6_200 and sc.block_hash_tokens(reqs, 16) == 6_944
    rows = {r["scheme"]: r for r in sc.prefix_sharing(C32, reqs)}
    assert rows["radix"]["kv_bytes"] == 6_200 * 262_144 and rows["radix"]["skipped"] == 93_000
    assert sc.radix_tokens([[1, 2, 3], [1, 2, 4], [5]]) == 5           # 1, 2, 3, 4 and 5


# ---- grammar ------------------------------------------------------------------------------------------------------
def test_integer_automaton_masks_tokens():
    vocab = [b"1", b"12", b"-", b"-0", b"0", b"01", b"a", b"", b"7x"]
    start = sc.token_mask(sc.INTEGER_DFA, "start", vocab)
    assert start["allowed"] == [0, 1, 2, 3, 4]          # "01": 0 takes no digit after it; "a", "7x" fail; "" skipped
    assert not start["ends"] and start["mask_bytes"] == 2      # 9 tokens: ceil(9 / 8) bytes
    # bytes walked: 1 + 2 + 1 + 2 + 1 + 2 ("0", then "1" dead) + 1 + 0 + 2 = 12
    assert start["walked"] == 12
    assert sc.token_mask(sc.INTEGER_DFA, "zero", vocab)["allowed"] == [] and sc.token_mask(
        sc.INTEGER_DFA, "zero", vocab)["ends"]


# ---- pipeline, expert and context parallelism -----------------------------------------------------------------------
def test_pipeline_bubble_and_bytes():
    assert pp.pipeline_bubble(4, 8) == 3 / 11 and pp.pipeline_bubble(1, 1) == 0
    r = {x["stages"]: x for x in pp.pipeline_parallel(C32, (4,), (1, 8))}[4]
    # a layer: (32,763,876,352 - 2·778,567,680 - 5,120 final norm) / 64 = 487,605,248 parameters;
    # 16 layers + one 152,064 × 5,120 matrix, bf16: (16·487,605,248 + 778,567,680)·2 = 17,160,503,296 B
    assert r["layers_per_stage"] == 16 and r["weights_per_gpu"] == 17_160_503_296
    assert r["boundary_bytes_per_token"] == 10_240 and r["bubble"] == {1: 0.75, 8: 3 / 11}
    with pytest.raises(InputError):
        pp.pipeline_bubble(0, 1)


def test_expert_parallel_all_to_all_bytes():
    # Qwen3-30B-A3B: 48 MoE layers, 128 experts, top-8, H 2048, expert width 768 (FACTS.md)
    # per token per layer: 2 (dispatch + combine)·8·2,048·2 B = 65,536; 48 layers: 3,145,728; EP 8: 7/8 of it
    # experts per GPU at EP 8: 16; their bf16 bytes: 48·16·3·2,048·768·2 = 7,247,757,312
    r = {x["ep"]: x for x in pp.expert_parallel(C30A3, (8,))}[8]
    assert r["per_token_layer"] == 65_536 and r["per_token_all_layers"] == 3_145_728
    assert r["leaves_gpu"] == 2_752_512 and r["experts_per_gpu"] == 16
    assert r["expert_bytes_per_gpu"] == 7_247_757_312
    with pytest.raises(InputError):
        pp.expert_parallel(C32)


def test_context_parallel_ring_bytes():
    # 131,072 tokens over 8 GPUs: 16,384 each; KV 16,384·262,144 = 4 GiB per GPU; per layer each GPU receives
    # 7 slices of 16,384 tokens · 4,096 B (2·8·128·2) = 469,762,048 B; 64 layers: 30,064,771,072 B
    r = {x["cp"]: x for x in pp.context_parallel(C32, 131072, (8,))}[8]
    assert r["tokens_per_gpu"] == 16_384 and r["kv_per_gpu"] == 4 * 2**30
    assert r["ring_bytes_layer"] == 469_762_048 and r["ring_bytes"] == 30_064_771_072


# ---- learned drafts ---------------------------------------------------------------------------------------------------
def test_accepted_length():
    # a = 0.8, k = 3: 0.8 + 0.64 + 0.512 = 1.952; decaying 0.8, 0.6, 0.4: 0.8 + 0.48 + 0.192 = 1.472
    assert sv.accepted_length([0.8] * 3) == pytest.approx(1.952)
    assert sv.accepted_length([0.8, 0.6, 0.4]) == pytest.approx(1.472)
    assert sv.accepted_length([]) == 0 and sv.accepted_length([1.0] * 4) == 4
    with pytest.raises(InputError):
        sv.accepted_length([1.2])


def test_draft_head_cost_by_hand():
    # one layer 487,605,248 + LM head 778,567,680 = 1,266,172,928; / 32,763,876,352 = 0.038645394...
    assert sv.draft_head_cost(C32) == pytest.approx(1_266_172_928 / 32_763_876_352)
    row = next(r for r in sv.draft_head_table(C32) if (r["a"], r["k"]) == (0.8, 3))
    # E = 1 + 1.952 = 2.952; bound 2.952 / (3·0.0386454 + 1) = 2.6453
    assert row["expected"] == pytest.approx(2.952) and row["speedup"] == pytest.approx(2.6453, abs=1e-4)


# ---- sparse and linear attention ----------------------------------------------------------------------------------------
def test_sparse_and_linear_attention_memory():
    m = sv.attention_memory(C32, (131072,))
    r = m["rows"][0]
    # full: 131,072·262,144 = 34,359,738,368 B, all 131,072 tokens read per step
    assert r["full"] == 34_359_738_368 and r["full_read"] == 131_072
    # block-sparse: 131,072 / 16 = 8,192 compressed + 16·64 = 1,024 selected + 512 window = 9,728 read;
    # kept: (131,072 + 8,192)·262,144 = 36,507,222,016
    assert r["sparse_read"] == 9_728 and r["sparse_kept"] == 36_507_222_016
    assert r["topk_read"] == 2_048 and r["topk_kept"] == r["full"]
    # linear state: 64 layers · 40 heads · 128 · 128 · 4 B = 167,772,160, at any context; equal to 640 tokens of KV
    assert r["linear"] == m["state"] == 167_772_160 and m["crossover"] == 640
    # hybrid, one full layer in 4: 34,359,738,368 / 4 + 167,772,160·3/4 = 8,589,934,592 + 125,829,120
    assert r["hybrid"] == 8_715_763_712


# ---- low-bit floats -------------------------------------------------------------------------------------------------------
def test_e2m1_values_and_bits_per_weight():
    assert formats.e2m1_values() == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    assert formats.low_bit_bits(4, 32, 8) == 4.25 and formats.low_bit_bits(4, 16, 8) == 4.5
    assert formats.low_bit_bits(8, None, 0) == 8
    rows = {r["format"]: r for r in formats.low_bit_rows(C32)}
    # 32,763,876,352 · 4.25 / 8 = 17,405,809,312 B; · 4.5 / 8 = 18,429,680,448 B
    assert rows["MXFP4 (E2M1)"]["bytes"] == 17_405_809_312 and rows["NVFP4 (E2M1)"]["bytes"] == 18_429_680_448
    assert rows["bf16"]["bytes"] == 65_527_752_704
