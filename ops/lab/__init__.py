"""The lab's analyses on a trace: edits, attribution, sweeps, the head atlas, logit lens, precision, checks, per-page
helpers."""
