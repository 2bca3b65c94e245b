"""Plotly figure builders: tensors (+ labels) in, go.Figure out. No streamlit here."""
from .figures import bars, heatmap, histogram, lines

__all__ = ["heatmap", "bars", "histogram", "lines"]
