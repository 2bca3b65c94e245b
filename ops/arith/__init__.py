"""Arithmetic on configs, no weights: operator costs, serving sizes, GPU placement, worked examples done by hand."""
