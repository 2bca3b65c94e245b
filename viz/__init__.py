"""Plotly figure builders: tensors (+ labels) in, go.Figure out. No streamlit here."""
import plotly.graph_objects as go
import plotly.io as pio

from .figures import FONT, bars, heatmap, histogram, lines
from .labels import TOKEN_COLORS

# one default for every figure: setting template= on each figure is slow, and a page has a dozen. The page's
# font, and the token colours as the colour cycle (series k of a figure drawn per token gets token k's colour)
# (merged once here: a "plotly_white+lab" default would be merged again for every figure, 35x slower)
pio.templates["lab"] = go.layout.Template(layout=dict(font=FONT, colorway=TOKEN_COLORS))
pio.templates["lab"] = pio.templates["plotly_white+lab"]
pio.templates.default = "lab"

__all__ = ["heatmap", "bars", "histogram", "lines"]
