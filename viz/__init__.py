"""Plotly figure builders: tensors (+ labels) in, go.Figure out. No streamlit here."""
import plotly.graph_objects as go
import plotly.io as pio

from .figures import FONT, bars, heatmap, histogram, lines
from .labels import TOKEN_COLORS

__all__ = ["heatmap", "bars", "histogram", "lines", "use_lab_template"]


def use_lab_template() -> None:
    """Make the house template plotly's default: the page's font, and the token colours as the colour cycle (series k
    of a figure drawn per token gets token k's colour). app.py calls it at start; importing viz changes nothing.
    One default for every figure, because setting template= on each figure is slow and a page has a dozen; merged
    once here, because a "plotly_white+lab" default would be merged again for every figure."""
    if pio.templates.default == "lab":
        return
    pio.templates["lab"] = go.layout.Template(layout=dict(font=FONT, colorway=TOKEN_COLORS))
    pio.templates["lab"] = pio.templates["plotly_white+lab"]
    pio.templates.default = "lab"
