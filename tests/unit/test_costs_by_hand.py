"""Issue 46 §2: every stage of ops.arith.costs.operator_costs (the "At scale" cards) against numbers worked by hand
for Qwen2.5-32B-Instruct at B = 2, S = 3 (T = 6 tokens), and the practice answers that state the same quantities.

The config by hand (assets/configs/qwen2.5-32b-instruct.json, read here as plain JSON): H = 5,120, L = 64,
nh = 40, nkv = 8, hd = 5,120 / 40 = 128, I = 27,648, V = 152,064, q/k/v with bias, o without, untied LM head.
Counting rules (the module docstring of costs.py): a matmul [m, k] @ [k, n] is 2·m·n·k FLOPs; bytes are the
weights the stage reads + its input read and its output written, in bf16 (2 bytes; ids as int64, 8 bytes).
"""
import json
import pathlib

import pytest

from content import practice
from ops.arith import costs

ROOT = pathlib.Path(__file__).resolve().parents[2]
CFG = json.loads((ROOT / "assets/configs/qwen2.5-32b-instruct.json").read_text())
B, S = 2, 3                                          # T = 6 tokens


@pytest.fixture(scope="module")
def c():
    return costs.reference_config("Qwen2.5-32B-Instruct")


def test_the_config_is_the_one_worked_by_hand():
    assert (CFG["hidden_size"], CFG["num_hidden_layers"], CFG["num_attention_heads"], CFG["num_key_value_heads"],
            CFG["intermediate_size"], CFG["vocab_size"], CFG["tie_word_embeddings"]) == \
        (5120, 64, 40, 8, 27648, 152064, False)


# stage: (params, FLOPs, bytes), every figure worked by hand in the comment above it
HAND = {
    # embedding: params V·H = 152,064 × 5,120 = 778,567,680; no FLOPs (a gather);
    # bytes: T rows of H read 6 × 5,120 × 2 = 61,440 + ids 6 × 8 = 48 + output written 61,440 = 122,928
    # (not the [V, H] table: 1,557,135,360 bytes, which an old card showed)
    "embedding": (778_567_680, 0, 122_928),
    # rmsnorm: 2·64 + 1 = 129 norms of H weights: 129 × 5,120 = 660,480 params;
    # FLOPs ~4·T·H each: 4 × 6 × 5,120 × 129 = 15,851,520;
    # bytes: weights 660,480 × 2 = 1,320,960 + (in 61,440 + out 61,440) × 129 = 15,851,520 -> 17,172,480
    "rmsnorm": (660_480, 15_851_520, 17_172_480),
    # attention, one layer: q 5,120·5,120 + 5,120 = 26,219,520; k and v 5,120·1,024 + 1,024 = 5,243,904 each;
    # o 5,120·5,120 = 26,214,400 -> 62,921,728; × 64 = 4,026,990,592 params.
    # FLOPs per layer: q_proj 2·6·5,120·5,120 = 314,572,800; k + v 2 × 2·6·1,024·5,120 = 125,829,120;
    # RoPE ~3 per element of q and k: 3·6·(40 + 8)·128 = 110,592; scores 2·B·nh·S·S·hd = 2·2·40·3·3·128 = 184,320;
    # softmax ~5 per score: 5·40·2·3·3 = 3,600; context PV 184,320; o_proj 314,572,800
    # -> 755,457,552 per layer, × 64 = 48,349,283,328.
    # bytes: weights 4,026,990,592 × 2 = 8,053,981,184 + (in 61,440 + out 61,440) × 64 = 7,864,320
    # + K and V written: 6 tokens × 2·64·8·128·2 = 6 × 262,144 = 1,572,864 -> 8,063,418,368
    "attention": (4_026_990_592, 48_349_283_328, 8_063_418_368),
    # residual: no params; FLOPs 2 adds × 6 × 5,120 × 64 = 3,932,160;
    # bytes: each add reads two [6, 5,120] tensors and writes one: 3 × 61,440 = 184,320; × 2 adds × 64 = 23,592,960
    "residual": (0, 3_932_160, 23_592_960),
    # mlp, one layer: 3 × 5,120 × 27,648 = 424,673,280 params, × 64 = 27,179,089,920;
    # FLOPs per layer: 3 × 2·6·5,120·27,648 = 5,096,079,360 + SiLU·up ~5 × 6 × 27,648 = 829,440
    # -> 5,096,908,800, × 64 = 326,202,163,200;
    # bytes: 27,179,089,920 × 2 = 54,358,179,840 + (61,440 + 61,440) × 64 = 7,864,320 -> 54,366,044,160
    "mlp": (27_179_089_920, 326_202_163_200, 54_366_044_160),
    # lm_head (untied): 152,064 × 5,120 = 778,567,680 params; FLOPs 2·6·5,120·152,064 = 9,342,812,160;
    # bytes: 1,557,135,360 + in 61,440 + logits out 6 × 152,064 × 2 = 1,824,768 -> 1,559,021,568
    "lm_head": (778_567_680, 9_342_812_160, 1_559_021_568),
    # sampling: softmax ~5 per logit over [B, V]: 5 × 2 × 152,064 = 1,520,640;
    # bytes: logits read 2 × 152,064 × 2 = 608,256 + ids written 2 × 2 = 4 -> 608,260
    "sampling": (0, 1_520_640, 608_260),
}


@pytest.mark.parametrize("stage", list(HAND))
def test_every_stage_against_the_hand_count(c, stage):
    params, flops, nbytes = HAND[stage]
    oc = costs.operator_costs(c, stage, B, S)
    assert (oc["params"], oc["flops"], oc["bytes"]) == (params, flops, nbytes), (stage, oc)


def test_the_embedding_card_moves_rows_not_the_table(c):
    """The issue's case: 8 tokens used to show 1.45 GiB (the whole table); a gather reads 8 rows of 5,120 bf16."""
    oc = costs.operator_costs(c, "embedding", 1, 8)
    assert oc["weight_bytes"] == 8 * 5120 * 2 == 81_920
    assert oc["bytes"] == 81_920 + 8 * 8 + 81_920 and costs.human(oc["bytes"], "B") == "160.06 KiB"


def test_the_hand_counts_add_up_to_the_model(c):
    # every parameter belongs to one stage: the stages' params sum to total_params (32,763,876,352)
    assert sum(HAND[s][0] for s in HAND) == costs.total_params(c) == 32_763_876_352


# ---- the practice answers that state the same quantities call the same function --------------------------------
def _answer(qid):
    return practice.compute(next(q for q in practice.load_questions() if q["id"] == qid))


def test_practice_answers_equal_the_cards(c):
    # one decode step reads one row: 5,120 × 2 = 10,240 bytes, the card's embedding weight bytes at B = S = 1
    assert _answer("emb-decode-bytes") == costs.operator_costs(c, "embedding", 1, 1)["weight_bytes"] == 10_240
    # the table itself: 152,064 × 5,120 × 2 = 1,557,135,360 bytes
    assert _answer("embed-bytes-32b") == 2 * costs.operator_costs(c, "embedding", 1, 1)["params"] == 1_557_135_360
    # LM head on 1,024 positions: 2 × 1,024 × 5,120 × 152,064 = 1,594,506,608,640 (2,048 × 5,120 = 10,485,760; × 152,064)
    assert _answer("lm-head-flops-32b") == costs.operator_costs(c, "lm_head", 1, 1024)["flops"] == 1_594_506_608_640
    # q_proj on 512 tokens: 2 × 512 × 5,120 × 5,120 = 26,843,545,600 (one row of the attention card)
    assert _answer("q-proj-flops-32b") == 26_843_545_600
    # one MLP layer per token: 2 × 3 × 5,120 × 27,648 = 849,346,560 (the card adds SiLU·up's 5·I on top)
    mlp = costs.operator_costs(c, "mlp", 1, 1)
    assert _answer("mlp-flops-token") == 849_346_560 == mlp["flops_per_layer"] - 5 * 27648
    # norms: (2 × 64 + 1) × 5,120 = 660,480, the rmsnorm card's parameters
    assert _answer("rms-params-32b") == costs.operator_costs(c, "rmsnorm", 1, 1)["params"] == 660_480


def test_practice_bank_rows_of_the_cards_by_id():
    """Every bank question whose formula reads a card names it through content.practice's _stage helpers."""
    for qid, formula in (("emb-decode-bytes", "embedding_read_bytes"), ("embed-bytes-32b", "embedding_bytes")):
        q = next(q for q in practice.load_questions() if q["id"] == qid)
        assert q["compute"]["formula"] == formula and q["compute"]["unit"] == "bytes"
