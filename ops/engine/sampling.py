"""Turning one position's logits into the next token, one visible stage at a time.

logits -> repetition penalty -> temperature -> top-k -> top-p -> min-p -> softmax -> pick
The order and the arithmetic follow transformers' logits processors, so a seeded run is comparable. min-p comes
after top-p, as transformers orders its warpers: its threshold is relative to the top token's probability, which
top-k and top-p never remove, so it reads the tempered distribution and only trims what the others kept.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..errors import SamplingError


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.0          # 0 means greedy (argmax)
    top_k: int = 0                    # 0 means off
    top_p: float = 1.0                # 1.0 means off
    repetition_penalty: float = 1.0   # 1.0 means off
    seed: int = 0
    min_p: float = 0.0                # 0 means off: drop tokens with p < min_p * p_max

    def __post_init__(self):
        checks = [
            ("temperature", self.temperature, lambda v: 0.0 <= v <= 100.0, "a number from 0 (greedy) to 100"),
            ("top_k", self.top_k, lambda v: float(v).is_integer() and 0 <= v <= 10_000_000,
             "a whole number >= 0 (0 = off)"),
            ("top_p", self.top_p, lambda v: 0.0 < v <= 1.0, "a number in (0, 1] (1 = off)"),
            ("repetition_penalty", self.repetition_penalty, lambda v: 0.0 < v <= 100.0,
             "a number in (0, 100] (1 = off)"),
            ("min_p", self.min_p, lambda v: 0.0 <= v <= 1.0, "a number in [0, 1] (0 = off)"),
            ("seed", self.seed, lambda v: float(v).is_integer() and 0 <= v < 2**63, "a whole number >= 0"),
        ]
        for name, value, ok, allowed in checks:
            try:
                good = not isinstance(value, bool) and math.isfinite(float(value)) and ok(float(value))
            except (TypeError, ValueError):
                good = False
            if not good:
                raise SamplingError(f"{name} = {value!r} is out of range: it must be {allowed}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


# The settings a learner meets first on the Sampling and Generate pages (ui/pickers.SAMPLING starts its sliders here)
# and a lesson export draws its sampling step with: a common chat setting, so every stage has something to do.
SHOWN = SamplingParams(temperature=0.8, top_k=50, top_p=0.9)


def apply_repetition_penalty(logits: torch.Tensor, seen_ids, penalty: float) -> torch.Tensor:
    """Tokens already in the text: positive logits divided by the penalty, negative ones multiplied."""
    if penalty == 1.0 or len(seen_ids) == 0:
        return logits
    idx = torch.as_tensor(sorted(set(seen_ids)), dtype=torch.long, device=logits.device)
    picked = logits[idx]
    out = logits.clone()
    out[idx] = torch.where(picked < 0, picked * penalty, picked / penalty)
    return out


def apply_top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k largest logits; the rest become -inf, so their probability is exactly 0."""
    if k <= 0 or k >= logits.shape[-1]:
        return logits
    kth = torch.topk(logits, k).values[-1]
    return logits.masked_fill(logits < kth, float("-inf"))


def apply_top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the smallest set of top tokens whose probabilities add up to at least p (nucleus)."""
    if p >= 1.0:
        return logits
    sorted_logits, order = torch.sort(logits, descending=False)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    drop_sorted = cum <= (1 - p)
    drop_sorted[-1] = False                       # always keep the most likely token
    drop = drop_sorted.scatter(0, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def apply_min_p(logits: torch.Tensor, min_p: float) -> torch.Tensor:
    """Drop tokens whose probability is below min_p times the top token's: p_i < min_p * p_max.
    In logits: z_i < z_max + ln(min_p), since p_i / p_max = exp(z_i - z_max); the top token always stays."""
    if min_p <= 0.0:
        return logits
    probs = logits.softmax(-1)
    return logits.masked_fill(probs < min_p * probs.max(), float("-inf"))


def sample_stages(logits: torch.Tensor, seen_ids, params: SamplingParams,
                  generator: torch.Generator | None = None) -> dict:
    """Every stage for one position's logits (V,); returns the stage tensors and the chosen id. "probs" is the
    distribution the pick is drawn from: softmax of the last stage, or at T = 0 (greedy) one-hot on the argmax."""
    logits = logits.float().cpu()            # (V,) small; sampling on the CPU keeps seeds portable
    penalized = apply_repetition_penalty(logits, seen_ids, params.repetition_penalty)
    if params.greedy:
        # T = 0 is the limit T -> 0 of softmax(z / T): all the probability on the largest logit. Greedy skips the
        # temperature, the cuts and the draw, so those stages pass the penalized logits on; the last stage is the
        # one-hot distribution the pick is made from, as the text teaches it (one bar at 1.0, the others 0).
        chosen = int(penalized.numpy().argmax())     # torch.argmax's first largest, faster (bench/RESULTS.md)
        probs = torch.zeros_like(penalized)
        probs[chosen] = 1.0
        return dict(logits=logits, penalized=penalized, tempered=penalized, top_k=penalized,
                    top_p=penalized, min_p=penalized, probs=probs, chosen=chosen)
    tempered = penalized / params.temperature
    after_k = apply_top_k(tempered, int(params.top_k))
    after_p = apply_top_p(after_k, params.top_p)
    after_min_p = apply_min_p(after_p, params.min_p)
    probs = torch.softmax(after_min_p, -1)
    chosen = int(torch.multinomial(probs, 1, generator=generator))
    return dict(logits=logits, penalized=penalized, tempered=tempered, top_k=after_k,
                top_p=after_p, min_p=after_min_p, probs=probs, chosen=chosen)


def make_generator(seed: int) -> torch.Generator:
    g = torch.Generator(device="cpu")
    g.manual_seed(int(seed))
    return g
