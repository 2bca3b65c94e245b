"""The Serving page's live view of this server's own continuous batching (classroom/batcher.py): from the steps the
batcher ran (rows, seconds, when each ended), what the room's generations cost now; from the passes the trace batcher
ran (classroom/tracer.py: new prompts traced together), what a pass of N prompts cost against the N alone.

Pure functions of the records, so a test hands in steps and checks the figures by hand.
"""
from __future__ import annotations

import statistics

SPAN_S = 30.0            # the class's tokens per second: the tokens of the steps that ended in the last SPAN_S seconds


def batching_view(records, now: float, running: int = 0, span: float = SPAN_S) -> dict:
    """records: objects with .rows, .seconds, .ended (time.monotonic), oldest first; now: time.monotonic().
    Returns
      rows_now      the rows of the step running now, else of the last step (0 when none ran)
      last_ms       the last step's time, ms
      one_ms        the median step time with one row among the records (None if no step ran alone)
      tokens_per_s  tokens made by the steps that ended in the last `span` seconds, per second
      by_rows       one dict per batch size seen: rows, steps, ms (median per step), ms_per_token, vs_one
                    (median step time / one_ms, None without one_ms)"""
    records = list(records)
    one, sizes = _by_size(records)
    by_rows = [dict(rows=rows, steps=n, ms=ms, ms_per_token=ms / rows, vs_one=ms / one if one else None)
               for rows, n, ms in sizes]
    recent = sum(r.rows for r in records if now - r.ended <= span)
    return dict(rows_now=running or (records[-1].rows if records else 0),
                last_ms=records[-1].seconds * 1000 if records else None, one_ms=one,
                tokens_per_s=recent / span, by_rows=by_rows)


def trace_view(records) -> dict:
    """The trace batcher's passes (classroom/tracer.py): records with .requests, .rows (prompts), .seconds, oldest
    first. Returns
      passes        passes recorded
      mean, max, last   prompts per pass
      sessions_mean sessions (requests) per pass, mean
      one_ms        the median time of a pass of one prompt (None if no pass had one)
      by_rows       one dict per pass size seen: rows, passes, ms (median per pass), alone_ms (rows × one_ms: the
                    same prompts one by one, None without one_ms), vs_alone (ms / alone_ms, None without one_ms)"""
    records = list(records)
    if not records:
        return dict(passes=0, mean=0.0, max=0, last=0, sessions_mean=0.0, one_ms=None, by_rows=[])
    one, sizes = _by_size(records)
    by_rows = [dict(rows=rows, passes=n, ms=ms, alone_ms=rows * one if one else None,
                    vs_alone=ms / (rows * one) if one else None) for rows, n, ms in sizes]
    prompts = [r.rows for r in records]
    return dict(passes=len(records), mean=statistics.fmean(prompts), max=max(prompts), last=prompts[-1],
                sessions_mean=statistics.fmean(r.requests for r in records), one_ms=one, by_rows=by_rows)


def _by_size(records) -> tuple:
    """(the median ms of a record with one row, or None; [(rows, records, median ms)] by rows ascending)."""
    sizes: dict[int, list[float]] = {}
    for r in records:
        sizes.setdefault(r.rows, []).append(r.seconds)
    medians = {rows: statistics.median(secs) * 1000 for rows, secs in sizes.items()}
    return medians.get(1), [(rows, len(sizes[rows]), medians[rows]) for rows in sorted(sizes)]
