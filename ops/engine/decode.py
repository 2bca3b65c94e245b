"""The decode step: one prompt's generation, one token per call, with a KV cache.

Model.generate is a loop over Decoder.step(); the Generate page calls step() once per click. A decoding
path is a forward-pass configuration by name (ops/engine/model.py runs it): "eager" is the trace's own (the
model's weights, eager attention), "bf16" the fused 16-bit copy with SDPA, "int8" int8 rows with one scale
each (ops/fast/quant.py, multiplied in C where ops/fast/native built) with SDPA. This module never imports
ops/engine/model.py: the Decoder is handed the model that makes it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from ..arith.costs import kv_cache_bytes
from ..errors import InputError
from .config import ModelConfig
from .sampling import SamplingParams, make_generator, sample_stages

PATHS = {"eager": ("model", "eager"), "bf16": ("bf16", "sdpa"), "int8": ("int8", "sdpa")}   # -> (weights, attention)
CANDIDATES = 20        # token ids a step keeps the stage values of (the Generate page shows its top ones)


def decode_path(fast) -> str:
    """generate's `fast` argument -> a PATHS name: False/None "eager", True/"bf16" "bf16", "int8" "int8"."""
    if fast is None or fast is False:
        return "eager"
    if fast is True or fast == "bf16":
        return "bf16"
    if fast == "int8":
        return "int8"
    raise InputError(f"fast = {fast!r} is not a decoding path: use False (the traced path, the model's own weights), "
                     "True or 'bf16' (the bfloat16 fused copy with SDPA), or 'int8' (int8 weights, one scale per row)")


class KVCache:
    """Keys and values of every layer, preallocated for `capacity` positions.  k[i]: (B, nkv, capacity, hd)"""

    def __init__(self, config: ModelConfig, B: int, capacity: int, device, dtype):
        """device: one device, or a list with each layer's (a model placed on several GPUs)."""
        self.config = config
        shape = (B, config.num_key_value_heads, capacity, config.head_dim)
        L = config.num_hidden_layers
        devices = device if isinstance(device, (list, tuple)) else [device] * L
        self.k = [torch.zeros(shape, device=devices[i], dtype=dtype) for i in range(L)]
        self.v = [torch.zeros(shape, device=devices[i], dtype=dtype) for i in range(L)]
        self.length = 0        # positions filled so far
        self.positions = None  # (B, length) position id of every cached key

    def update(self, i: int, k: torch.Tensor, v: torch.Tensor):
        """Write this call's (B, nkv, S, hd) keys/values after the cached ones; return all (B, nkv, T, hd)."""
        end = self.length + k.shape[2]
        self.k[i].narrow(2, self.length, k.shape[2]).copy_(k)       # [:, :, length:end] = k
        self.v[i].narrow(2, self.length, v.shape[2]).copy_(v)
        return self.k[i].narrow(2, 0, end), self.v[i].narrow(2, 0, end)

    def advance(self, n: int):
        self.length += n

    @property
    def nbytes(self) -> int:
        """Bytes actually holding keys and values (filled positions of every row)."""
        return kv_cache_bytes(self.config, self.k[0].shape[0] * self.length, self.k[0].element_size())



@dataclass
class GenerationStep:
    token_id: int
    piece: str
    phase: str                      # "prefill" (the first token, whole prompt) or "decode"
    processed: int                  # tokens this step ran through the model (the prompt, then 1)
    seconds: float
    kv_tokens: int                  # positions in the KV cache after this step
    kv_bytes: int
    candidates: list[int]           # top token ids by raw logit (the chosen one always among them: last if drawn
                                    # from further down), for showing the stages
    stages: dict                    # stage name -> values at `candidates` (logits ... probs; raw_probs: softmax of
                                    # the logits, T = 1, nothing cut)
    chosen_prob: float


@dataclass
class Generation:
    prompt: str
    text: str                       # the generated text only
    token_ids: list[int]            # generated ids (the stop token included when reached)
    prompt_ids: list[int]
    steps: list[GenerationStep] = field(default_factory=list)
    stopped: str = "max_new_tokens"  # or "eos"
    fast: bool = False              # True: a fast path (bf16 or int8 weights, SDPA), not the traced one
    compute_dtype: str = "float32"  # dtype of the activations and the KV cache while generating
    path: str = "eager"             # which path ran: "eager" (the trace's own), "bf16" or "int8" (see PATHS)
    weight_dtype: str = "float32"   # how the projections' weights were stored: float32, bfloat16 or int8
    forward_passes: int = 0         # forward calls made, the prefill's chunks included
    prefill_passes: int = 1         # of which the prefill's (ceil(prompt / prefill_chunk) when chunked)
    prefill_largest: int = 0        # tokens in the prefill's largest pass (the prompt, or one chunk)
    draft: str = ""                 # "" or "prompt-lookup" (ops/engine/speculate.py)
    proposed: int = 0               # draft tokens proposed, and accepted by the verifying pass
    accepted: int = 0

    @property
    def passes_saved(self) -> int:
        """Passes plain decoding would make (the prefill's, then one per later token) less those made."""
        return self.prefill_passes + len(self.token_ids) - 1 - self.forward_passes


class Decoder:
    """One prompt's decoding, a step at a time: the first step() runs the whole prompt (prefill) and picks a
    token, each later one runs the last token against the KV cache and picks the next. Model.generate loops
    over step(); the Generate page calls it once per click."""

    def __init__(self, model, prompt: str, prompt_ids: list[int], max_new_tokens: int,
                 params: SamplingParams, path: str = "eager", stop_at_eos: bool = True,
                 prefill_chunk: int | None = None, draft: str = "", drafter=None):
        """prefill_chunk: run the prompt through the cache this many tokens per pass (None: all at once).
        draft: "" or the draft's name; drafter: its step, fn(decoder) -> steps (ops/engine/speculate.draft_step,
        handed in by Model.decoder, which checked the name: speculate builds on this module, not the reverse);
        advance() then verifies copied tokens several per pass."""
        if prefill_chunk is not None and (isinstance(prefill_chunk, bool) or not isinstance(prefill_chunk, int)
                                          or prefill_chunk < 1):
            raise InputError(f"prefill_chunk = {prefill_chunk!r}: it must be a whole number >= 1, or None")
        self.prefill_chunk = prefill_chunk or max(len(prompt_ids), 1)
        self.forward_passes = self.prefill_passes = self.prefill_largest = 0
        if draft and drafter is None:
            raise InputError(f"draft = {draft!r} needs its step (Model.decoder hands it in)")
        self.drafter = drafter if draft else None
        self.draft, self.proposed, self.accepted = draft, 0, 0   # draft tokens proposed, and accepted by verifying
        self.model, self.prompt, self.prompt_ids, self.params, self.path = model, prompt, prompt_ids, params, path
        self.weights, self.attention = PATHS[path]
        W = model.weight_set(self.weights)                      # builds the fast copy now, not in the first step
        dtype = W.dtype
        self.compute_dtype = str(dtype).replace("torch.", "")
        self.weight_dtype = getattr(W, "weight_dtype", self.compute_dtype)
        self.budget = min(max_new_tokens, model.config.context_length - len(prompt_ids))  # tokens in all
        self.cache = KVCache(model.config, 1, len(prompt_ids) + max(self.budget, 1), model.cache_devices, dtype)
        self.eos = set(getattr(model.tokenizer, "eos_token_ids", ()) or ()) | set(model.config.eos_ids)
        self.stop_at_eos = stop_at_eos
        self.generator = make_generator(params.seed)
        self.token_ids: list[int] = []
        self.steps: list[GenerationStep] = []
        self.stopped = "" if self.budget > 0 else "max_new_tokens"     # "" while it may go on

    @property
    def done(self) -> bool:
        return bool(self.stopped)

    @property
    def remaining(self) -> int:
        """Tokens it may still make: budget less those made."""
        return 0 if self.done else self.budget - len(self.token_ids)

    @property
    def text(self) -> str:
        """The generated text so far (special tokens left out)."""
        tok = self.model.tokenizer
        return tok.decode(self.token_ids, skip_special_tokens=True) if tok and self.token_ids else ""

    @torch.inference_mode()
    def step(self) -> GenerationStep:
        """Prefill (first call) or one token; picks the next token with the sampling stages and returns the step."""
        if self.done:
            raise InputError(f"this decoding has finished ({self.stopped}); start a new one")
        t0 = time.perf_counter()
        ids = torch.tensor([self.token_ids[-1:] or self.prompt_ids])   # (1, S): the prompt, then the last token
        S = ids.shape[1]
        for a in range(0, S, self.prefill_chunk if not self.steps else S):   # the prompt a chunk per pass
            chunk = ids[:, a:a + self.prefill_chunk]
            logits = self.forward(chunk, last_only=True)[0, -1]    # (V,)
            if not self.steps:
                self.prefill_passes += 1
                self.prefill_largest = max(self.prefill_largest, chunk.shape[1])
        step = self.pick(logits, self.prompt_ids + self.token_ids, S, "decode" if self.steps else "prefill")
        step.seconds = time.perf_counter() - t0                # the whole step, its sampling included
        self.record(step)
        return step

    def pick(self, logits: torch.Tensor, seen: list[int], processed: int, phase: str,
             seconds: float = 0.0) -> GenerationStep:
        """The sampling stages of one position's logits (V,) after the tokens `seen`, as a GenerationStep."""
        st = sample_stages(logits, seen, self.params, self.generator)
        token, cand = st["chosen"], torch.topk(st["logits"], CANDIDATES).indices
        if token not in cand.tolist():               # a draw from outside the top: kept, in the last place
            cand[-1] = token
        st["raw_probs"] = torch.softmax(st["logits"], -1)       # the model's own distribution (T = 1, nothing cut)
        tok = self.model.tokenizer
        return GenerationStep(token_id=token, piece=tok.decode([token]) if tok else str(token), phase=phase,
                              processed=processed, seconds=seconds, kv_tokens=self.cache.length,
                              kv_bytes=self.cache.nbytes, candidates=cand.tolist(),
                              stages={k: v[cand].tolist() for k, v in st.items() if k != "chosen"},
                              chosen_prob=float(st["probs"][token]))

    def record(self, step: GenerationStep):
        """Keep a picked step's token, and stop at the end-of-sequence token or the budget."""
        self.steps.append(step)
        self.token_ids.append(step.token_id)
        if self.stop_at_eos and step.token_id in self.eos:
            self.stopped = "eos"
        elif len(self.token_ids) >= self.budget:
            self.stopped = "max_new_tokens"

    def advance(self) -> list[GenerationStep]:
        """One forward pass's tokens: step(), or with a draft one verifying pass that may yield several."""
        return self.drafter(self) if self.drafter else [self.step()]

    def forward(self, ids: torch.Tensor, last_only=True) -> torch.Tensor:
        """One pass of ids (1, S) after the cached keys, on this decoding's path: logits (1, S|1, V)."""
        past, S = self.cache.length, ids.shape[1]
        self.forward_passes += 1
        return self.model.forward(ids, torch.arange(past, past + S)[None], torch.ones(1, past + S, dtype=torch.bool),
                                  cache=self.cache, last_only=last_only, weights=self.weights,
                                  attention=self.attention)

    def result(self) -> Generation:
        return Generation(prompt=self.prompt, text=self.text, token_ids=list(self.token_ids),
                          prompt_ids=self.prompt_ids, steps=list(self.steps), stopped=self.stopped,
                          fast=self.path != "eager", compute_dtype=self.compute_dtype, path=self.path,
                          weight_dtype=self.weight_dtype, forward_passes=self.forward_passes,
                          prefill_passes=self.prefill_passes, prefill_largest=self.prefill_largest,
                          draft=self.draft, proposed=self.proposed, accepted=self.accepted)
