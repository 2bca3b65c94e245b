"""RoPE scaling as transformers computes it (linear, dynamic, yarn, llama3), read from the config.json transformers
saves and from a GGUF's rope_freqs, through the trace and through the decoder's KV-cache steps; and a check that
each test fails when the scaling is ignored (the issue measured 4.7e-3 to 6.1e-3 off then).

Tolerance 1e-4 on logits: the repository's parity bound (tests/parity/test_parity_tiny.py). Measured on these tiny
float32 models (2026-12-06, x86-64 CPU): the trace bitwise equal to transformers (0), the decoder's steps within
1.3e-7, the GGUF with rope_freqs within 2.4e-7; with the scaling ignored 1.6e-3 (dynamic) to 5.3e-3 (linear) away, so
each test asserts the ignored run is more than 10 x the bound off (it cannot pass with the scaling dropped)."""
import json
import math

import conftest as shapes
import numpy as np
import pytest
import safetensors.torch
import torch
import transformers

from ops import Model, ModelConfig
from ops.engine import rope
from ops.engine.decode import Decoder
from ops.engine.sampling import SamplingParams
from ops.models.loading import load_source

BOUND = 1e-4
# the tiny shapes: 2 layers, hd = 16 (8 pairs), theta 10,000, so windows of 32-64 tokens already scale most pairs
TINY = dict(shapes.TINY, rope_theta=10000.0)
CASES = {   # name -> (family, max_position_embeddings, rope_parameters, prompt length)
    "llama3": ("llama", 256, dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                  original_max_position_embeddings=64), 40),
    "yarn": ("qwen2", 256, dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=64), 40),
    "linear": ("qwen2", 256, dict(rope_type="linear", factor=4.0), 40),
    # dynamic scales only past its window: a 32-token window and a 48-token prompt
    "dynamic": ("qwen2", 32, dict(rope_type="dynamic", factor=2.0), 48),
}
HF = {"llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
      "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM)}


def save_tiny(folder, family: str, max_pos: int, params: dict, seed: int = 0):
    """A random tiny model saved by transformers with these RoPE parameters; returns the folder."""
    cfg_cls, model_cls = HF[family]
    torch.manual_seed(seed)
    cfg = cfg_cls(**TINY, max_position_embeddings=max_pos, rope_parameters=dict(params, rope_theta=10000.0),
                  tie_word_embeddings=family == "llama")
    ref = model_cls(cfg)
    with torch.no_grad():                      # random norms, so a wrong gamma would show
        for n, p in ref.named_parameters():
            if "norm" in n:
                p.add_(torch.randn_like(p) * 0.1)
    ref.save_pretrained(str(folder))
    shapes.tiny_tokenizer().to_json_file(folder / "tokenizer.json")
    return folder


def hf_model(folder):
    return transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32,
                                                             attn_implementation="eager").eval()


def ours(folder, ignore_scaling: bool = False) -> Model:
    config, weights, tok = load_source(folder)
    if ignore_scaling:
        config = config.replace(rope_scaling=(), rope_freq_factors=())
    return Model(config, weights, tok)


def prompt_ids(n: int, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, shapes.TINY["vocab_size"], (1, n), generator=g)


def diff(a, b) -> float:
    return (a.float() - b.float()).abs().max().item()


@pytest.fixture(scope="module", params=list(CASES))
def case(request, tmp_path_factory):
    family, max_pos, params, n = CASES[request.param]
    folder = save_tiny(tmp_path_factory.mktemp(request.param), family, max_pos, params)
    return request.param, folder, n


def test_config_json_is_read_as_transformers_writes_it(case):
    name, folder, _ = case
    written = json.loads((folder / "config.json").read_text())
    c = ModelConfig.from_dict(written)
    assert c.rope_type == name and c.rope_theta == 10000.0
    assert dict(c.rope_scaling)["factor"] == CASES[name][2]["factor"]


def test_frequencies_equal_transformers_rotary(case):
    """The one function's inv_freq and attention factor against transformers' rotary embedding (after a call long
    enough for dynamic to grow)."""
    name, folder, n = case
    ref, model = hf_model(folder), ours(folder)
    with torch.no_grad():
        ref(prompt_ids(n))
    inv, scale = rope.frequencies(model.config, n)
    rot = ref.model.rotary_emb
    assert torch.equal(inv, rot.inv_freq.float()), name
    assert scale == rot.attention_scaling
    assert diff(inv, rope.base_inv_freq(model.config)) > 1e-3, f"{name}: the scaling changed no frequency"


def test_trace_logits_equal_transformers(case):
    name, folder, n = case
    ids = prompt_ids(n)
    with torch.no_grad():
        want = hf_model(folder)(ids).logits
    trace = ours(folder).trace_ids(ids.tolist())
    d = diff(trace.logits, want)
    assert d < BOUND, f"{name}: trace logits {d:.2e} from transformers'"
    assert torch.equal(trace["rope.inv_freq"], rope.frequencies(trace.config, n)[0])
    assert torch.equal(trace["rope.inv_freq_base"], rope.base_inv_freq(trace.config))
    ignored = diff(ours(folder, ignore_scaling=True).trace_ids(ids.tolist()).logits, want)
    assert ignored > 10 * BOUND, f"{name}: ignoring the scaling is only {ignored:.2e} off: the test cannot fail"


def hf_decode(folder, ids: torch.Tensor, prefill: int) -> torch.Tensor:
    """transformers' own KV-cache decoding: the prompt's first `prefill` tokens, then one token per call
    (a fresh model: dynamic's rotary keeps state between calls)."""
    ref = hf_model(folder)
    with torch.no_grad():
        out = ref(ids[:, :prefill], use_cache=True)
        logits, past = [out.logits[0, -1]], out.cache
        for t in range(prefill, ids.shape[1]):
            out = ref(ids[:, t:t + 1], cache=past, use_cache=True)
            logits.append(out.logits[0, -1])
            past = out.cache
    return torch.stack(logits)


def our_decode(model, ids: torch.Tensor, prefill: int, path: str = "eager") -> torch.Tensor:
    """The Decoder's passes through its KV cache: the prefill, then one token per pass."""
    dec = Decoder(model, "", ids[0].tolist(), 4, SamplingParams(), path)
    logits = [dec.forward(ids[:, :prefill])[0, -1]]
    for t in range(prefill, ids.shape[1]):
        logits.append(dec.forward(ids[:, t:t + 1])[0, -1])
    return torch.stack(logits)


def test_decoder_steps_equal_transformers_decoding(case):
    """Dynamic grows its frequencies at every step past the window (keys in the cache keep the old ones), as
    transformers' generate does: the prefill stops 8 tokens before the end."""
    name, folder, n = case
    ids, prefill = prompt_ids(n), n - 8
    want = hf_decode(folder, ids, prefill)
    d = diff(our_decode(ours(folder), ids, prefill), want)
    assert d < BOUND, f"{name}: decoder logits {d:.2e} from transformers' decoding"
    ignored = diff(our_decode(ours(folder, ignore_scaling=True), ids, prefill), want)
    assert ignored > 10 * BOUND, f"{name}: ignoring the scaling is only {ignored:.2e} off"


@pytest.mark.parametrize("weights", ["bf16", "int8"])
def test_fast_paths_rotate_by_the_scaled_frequencies(case, weights):
    """The decoder's fast paths run the same pass: the frequencies they rotate by are transformers'."""
    name, folder, n = case
    model, ref = ours(folder), hf_model(folder)
    ids = prompt_ids(n)
    with torch.no_grad():
        ref(ids)
    seen = {}
    model.forward(ids, torch.arange(n)[None], torch.ones(1, n, dtype=torch.bool), weights=weights, attention="sdpa",
                  record=lambda k, t: seen.setdefault(k, t))
    assert torch.equal(seen["rope.inv_freq"].cpu(), ref.model.rotary_emb.inv_freq.float()), (name, weights)


# ---- a GGUF with rope_freqs, written the way llama.cpp's converter writes llama3 scaling -------------------------
def llama_cpp_permute(w: torch.Tensor, n_head: int) -> torch.Tensor:   # convert_hf_to_gguf.py LlamaModel.permute
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_factors(p: dict, theta: float, hd: int) -> list[float]:
    """convert_hf_to_gguf.py LlamaModel.generate_extra_tensors: per pair, what llama.cpp divides the frequency by."""
    freqs = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    low_wavelen = p["original_max_position_embeddings"] / p["low_freq_factor"]
    high_wavelen = p["original_max_position_embeddings"] / p["high_freq_factor"]
    out = []
    for freq in freqs.tolist():
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(p["factor"])
        else:
            smooth = (p["original_max_position_embeddings"] / wavelen - p["low_freq_factor"]) / (
                p["high_freq_factor"] - p["low_freq_factor"])
            out.append(1 / ((1 - smooth) / p["factor"] + smooth))
    return out


def write_llama3_gguf(path, folder, params: dict):
    import gguf

    cfg = json.loads((folder / "config.json").read_text())
    weights = safetensors.torch.load_file(folder / "model.safetensors")
    hd = cfg["hidden_size"] // cfg["num_attention_heads"]
    w = gguf.GGUFWriter(str(path), "llama")
    fields = dict(shapes.tiny_tokenizer_fields(), pad_token_id=None)         # as before: no pad token written
    shapes.write_gguf_header(w, dict(cfg, rope_theta=10000.0, head_dim=hd), fields)
    w.add_tensor("rope_freqs.weight", np.array(llama3_rope_factors(params, 10000.0, hd), dtype=np.float32))
    for name, t in weights.items():
        if name.endswith("q_proj.weight"):
            t = llama_cpp_permute(t, cfg["num_attention_heads"])
        elif name.endswith("k_proj.weight"):
            t = llama_cpp_permute(t, cfg["num_key_value_heads"])
        w.add_tensor(shapes.gguf_name_for(name), np.ascontiguousarray(t.float().numpy()))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_gguf_rope_freqs_equal_transformers_llama3(tmp_path):
    family, max_pos, params, n = CASES["llama3"]
    folder = save_tiny(tmp_path / "hf", family, max_pos, params)
    path = write_llama3_gguf(tmp_path / "llama3.gguf", folder, params)
    config, weights, tok = load_source(path)
    assert config.model_type == "llama" and len(config.rope_freq_factors) == 8 and config.rope_type == "default"
    ids = prompt_ids(n)
    with torch.no_grad():
        want = hf_model(folder)(ids).logits
    model = Model(config, weights, tok)
    d = diff(model.trace_ids(ids.tolist()).logits, want)
    assert d < BOUND, f"GGUF rope_freqs: logits {d:.2e} from transformers' llama3 scaling"
    d = diff(our_decode(model, ids, n - 8), hf_decode(folder, ids, n - 8))
    assert d < BOUND, f"GGUF rope_freqs: decoder {d:.2e} from transformers' decoding"
    plain = Model(config.replace(rope_freq_factors=()), weights, tok)
    ignored = diff(plain.trace_ids(ids.tolist()).logits, want)
    assert ignored > 10 * BOUND, f"ignoring rope_freqs is only {ignored:.2e} off"


def test_old_style_rope_scaling_reads_the_same(tmp_path):
    """A config.json with the older "rope_scaling": {"type": ...} and a top-level rope_theta (as Qwen2.5's model
    cards say to write it) loads as transformers loads it."""
    family, max_pos, params, n = CASES["yarn"]
    folder = save_tiny(tmp_path, family, max_pos, params)
    cfg = json.loads((folder / "config.json").read_text())
    cfg.pop("rope_parameters")
    cfg["rope_theta"] = 10000.0
    cfg["rope_scaling"] = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    (folder / "config.json").write_text(json.dumps(cfg))
    ids = prompt_ids(n)
    with torch.no_grad():
        want = hf_model(folder)(ids).logits
    model = ours(folder)
    assert model.config.rope_type == "yarn"
    assert diff(model.trace_ids(ids.tolist()).logits, want) < BOUND
