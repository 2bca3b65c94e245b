"""Plotly figure builders: tensors (+ labels) in, go.Figure out. No streamlit here."""
import plotly.io as pio

from .figures import bars, heatmap, histogram, lines

# one default for every figure: setting template= on each figure is slow, and a page has a dozen
pio.templates.default = "plotly_white"

__all__ = ["heatmap", "bars", "histogram", "lines"]
