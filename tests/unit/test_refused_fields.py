"""Every config field that changes the arithmetic is computed exactly or refused when the model loads, with a
message naming the field and its value, in both languages (docs/models.md lists them). The supported variants
(biases on o_proj and the MLP, a head_dim apart from H / nh, Qwen2's ignored attention_bias) are checked against
transformers' logits on tiny random models (bound 1e-4, the repository's parity bound; measured about 1e-6)."""
import json

import conftest as shapes
import numpy as np
import pytest
import torch
import transformers

from content.refusals import load_error
from ops import Model
from ops.errors import Refused
from ops.models.loading import load_source

# field edit -> (field named, value named): each a config.json change transformers would compute differently
REFUSED = {
    "longrope": (dict(rope_parameters=dict(rope_type="longrope", rope_theta=1e4, short_factor=[1.0] * 8,
                                           long_factor=[2.0] * 8, original_max_position_embeddings=64)),
                 "rope_type", "longrope"),
    "proportional": (dict(rope_parameters=dict(rope_type="proportional", rope_theta=1e4)), "rope_type",
                     "proportional"),
    "partial_rotary": (dict(partial_rotary_factor=0.5), "partial_rotary_factor", "0.5"),
    "partial_rotary_in_rope": (dict(rope_parameters=dict(rope_type="default", rope_theta=1e4,
                                                         partial_rotary_factor=0.25)), "partial_rotary_factor", "0.25"),
    "no_factor": (dict(rope_parameters=dict(rope_type="dynamic", rope_theta=1e4)), "rope_parameters.factor", "None"),
    "odd_head_dim": (dict(head_dim=15), "head_dim", "15"),
    "hidden_act": (dict(hidden_act="gelu_pytorch_tanh"), "hidden_act", "gelu_pytorch_tanh"),
    "final_softcap": (dict(final_logit_softcapping=30.0), "final_logit_softcapping", "30.0"),
    "attn_softcap": (dict(attn_logit_softcapping=50.0), "attn_logit_softcapping", "50.0"),
    "multiplier": (dict(embedding_multiplier=12.0), "embedding_multiplier", "12.0"),
    "logits_scaling": (dict(logits_scaling=8.0), "logits_scaling", "8.0"),
    "qk_norm": (dict(use_qk_norm=True), "use_qk_norm", "True"),
    "no_rope": (dict(no_rope_layers=[1, 0]), "no_rope_layers", "[1, 0]"),
    "quantized": (dict(quantization_config=dict(quant_method="awq", bits=4)), "quantization_config", "awq"),
    "layer_type": (dict(layer_types=["full_attention", "chunked_attention"]), "layer_types", "chunked_attention"),
    "sliding_layers": (dict(layer_types=["full_attention", "sliding_attention"]), "layer_types", "sliding_attention"),
    "sliding_window": (dict(layer_types=None, use_sliding_window=True, sliding_window=16, max_window_layers=1),
                       "use_sliding_window", "sliding_window 16"),
}


def edit_config(folder, **changes):
    cfg = json.loads((folder / "config.json").read_text())
    for k, v in changes.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


@pytest.fixture(scope="module")
def folder(tiny_hf_folder):
    return tiny_hf_folder("qwen2")


def refusal(source) -> Refused:
    with pytest.raises(Refused) as e:
        load_source(source)
    return e.value


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_field_names_field_and_value(name, folder, tmp_path):
    import shutil
    changes, field, value = REFUSED[name]
    edit_config(shutil.copytree(folder, tmp_path / "m"), **changes)
    e = refusal(tmp_path / "m")
    assert e.field == field
    for text in (str(e), load_error(e, "en"), load_error(e, "zh")):
        assert field in text and value in text, text
    assert load_error(e, "en") != load_error(e, "zh")


def test_sliding_window_off_loads(folder, tmp_path):
    """Qwen2.5's own configs: sliding_window and max_window_layers present, use_sliding_window false: full attention."""
    import shutil
    edit_config(shutil.copytree(folder, tmp_path / "m"), use_sliding_window=False, sliding_window=16,
                max_window_layers=1, layer_types=["full_attention"] * 2)
    load_source(tmp_path / "m")


# ---- GGUF metadata -------------------------------------------------------------------------------------------
GGUF_REFUSED = {   # what the writer adds -> (field, value)
    "longrope": (lambda w: (w.add_string("qwen2.rope.scaling.type", "longrope")), "rope.scaling.type", "longrope"),
    "dims": (lambda w: w.add_rope_dimension_count(8), "rope.dimension_count", "8"),
    "attn_factor": (lambda w: w.add_rope_scaling_attn_factors(2.0), "rope.scaling.attn_factor", "2.0"),
    "rope_freqs": (lambda w: w.add_tensor("rope_freqs.weight", np.ones(3, dtype=np.float32)), "rope_freqs",
                   "3 values"),
}


@pytest.mark.parametrize("name", list(GGUF_REFUSED))
def test_gguf_refused(name, folder, tmp_path, monkeypatch):
    import gguf
    add, field, value = GGUF_REFUSED[name]
    weights = load_source(folder)[1]
    real_header = gguf.GGUFWriter.write_header_to_file

    def header(self, *a, **k):            # the writer adds the extra field just before its header is written
        add(self)
        return real_header(self, *a, **k)
    monkeypatch.setattr(gguf.GGUFWriter, "write_header_to_file", header)
    path = shapes.write_tiny_gguf(tmp_path / f"{name}.gguf", weights)
    monkeypatch.undo()
    e = refusal(path)
    assert e.field == field and value in str(e) and value in load_error(e, "zh")


# ---- fields computed exactly ----------------------------------------------------------------------------------
SUPPORTED = {
    "llama attention_bias (q, k, v and o)": ("llama", dict(attention_bias=True)),
    "llama mlp_bias": ("llama", dict(mlp_bias=True)),
    "llama head_dim != H / nh": ("llama", dict(head_dim=8)),
    "qwen3 attention_bias (q, k, v and o)": ("qwen3", dict(attention_bias=True)),
}


@pytest.mark.parametrize("name", list(SUPPORTED))
def test_supported_field_matches_transformers(name, tiny_hf_folder):
    family, changes = SUPPORTED[name]
    path = tiny_hf_folder(family, **changes)
    ref = transformers.AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32,
                                                            attn_implementation="eager").eval()
    with torch.no_grad():                               # random biases: a missing one would show
        for n, p in ref.named_parameters():
            if n.endswith("bias"):
                p.add_(torch.randn_like(p) * 0.1)
    ref.save_pretrained(str(path))
    config, weights, tok = load_source(path)
    ids = torch.randint(0, shapes.TINY["vocab_size"], (1, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        want = ref(ids).logits
    got = Model(config, weights, tok).trace_ids(ids.tolist()).logits
    assert (got - want).abs().max() < 1e-4, name


def test_qwen2_attention_bias_false_is_ignored_as_transformers_does(folder, tmp_path):
    """Qwen2's attention always has q/k/v biases, whatever attention_bias says (transformers ignores the field)."""
    import shutil
    edit_config(shutil.copytree(folder, tmp_path / "m"), attention_bias=False)
    config, weights, _ = load_source(tmp_path / "m")
    assert config.attention_bias and "model.layers.0.self_attn.q_proj.bias" in weights


def test_rope_keys_a_type_does_not_read_are_ignored_as_transformers_does(folder, tmp_path):
    """linear reads only factor: an attention_factor or mrope_section beside it changes nothing in transformers."""
    import shutil
    path = edit_config(shutil.copytree(folder, tmp_path / "m"), rope_parameters=dict(
        rope_type="linear", rope_theta=1e4, factor=2.0, attention_factor=3.0, mrope_section=[2, 3, 3]))
    ref = transformers.AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32,
                                                            attn_implementation="eager").eval()
    ids = torch.randint(0, shapes.TINY["vocab_size"], (1, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        want = ref(ids).logits
    config, weights, tok = load_source(path)
    assert (Model(config, weights, tok).trace_ids(ids.tolist()).logits - want).abs().max() < 1e-4


@pytest.mark.parametrize("family, bias", [("qwen2", True), ("qwen2_moe", True), ("qwen3", False),
                                          ("qwen3_moe", False), ("llama", False)])
def test_attention_bias_defaults_as_transformers(family, bias):
    """A config.json without the field: transformers' defaults (Qwen2 always, Qwen2-MoE qkv_bias=True, else no)."""
    from ops import ModelConfig
    extra = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=8) if family.endswith("moe") else {}
    c = ModelConfig.from_dict(dict(shapes.TINY, model_type=family, **extra))
    assert c.attention_bias is bias and c.o_bias is False and c.mlp_bias is False
