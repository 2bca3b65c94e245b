"""The Compare page's numbers from two one-row traces (app_pages/compare.py): both next-token distributions,
the residual streams state by state, and where the tokens differ."""
from __future__ import annotations

import torch
import torch.nn.functional as F


def pair_top(ta, tb, k: int = 6) -> dict:
    """Two one-row traces' next-token distributions at their last real positions, over the union of each
    one's top k: ids, and the probability of each under A and under B."""
    pa = torch.softmax(ta.logits[0, ta.lengths[0] - 1].float(), -1)
    pb = torch.softmax(tb.logits[0, tb.lengths[0] - 1].float(), -1)
    ids = list(dict.fromkeys(pa.topk(k).indices.tolist() + pb.topk(k).indices.tolist()))
    ids.sort(key=lambda i: -float(max(pa[i], pb[i])))
    return dict(ids=ids, pa=pa[ids], pb=pb[ids], top_a=int(pa.argmax()), top_b=int(pb.argmax()))


def compare_streams(ta, tb) -> dict:
    """Two one-row traces' residual streams, state by state: cosine and ‖a − b‖ / ‖a‖ at each one's last real
    position, and, when the token counts are equal, the cosine at every position ((L + 1, n), else None)."""
    na, nb = ta.lengths[0], tb.lengths[0]
    cos, rel, maps = [], [], []
    for xa, xb in zip(ta.residual_stream(), tb.residual_stream()):
        a, b = xa[0, na - 1].float(), xb[0, nb - 1].float()
        cos.append(F.cosine_similarity(a, b, dim=0))
        rel.append((a - b).norm() / a.norm().clamp_min(1e-12))
        if na == nb:
            maps.append(F.cosine_similarity(xa[0, :na].float(), xb[0, :nb].float(), dim=-1))
    return dict(cos=torch.stack(cos), rel=torch.stack(rel), cos_map=torch.stack(maps) if maps else None)


def differing_positions(ta, tb) -> list[int]:
    """Positions where two equal-length one-row traces hold different tokens."""
    n = min(ta.lengths[0], tb.lengths[0])
    return (ta.token_ids[0, :n] != tb.token_ids[0, :n]).nonzero().flatten().tolist()
