"""Plotly figure builders: tensors (+ labels) in, go.Figure out. No streamlit here."""
import plotly.graph_objects as go
import plotly.io as pio

from .figures import FONT, bars, heatmap, histogram, lines
from .labels import TOKEN_COLORS

__all__ = ["heatmap", "bars", "histogram", "lines", "use_lab_template", "TITLE", "MODEBAR"]

# Plotly's toolbar (the modebar) is drawn over the top MODEBAR_PX of a chart, at the right, when the pointer is on it:
# the title sits below that band (pinned to the top of the figure, pad in pixels), so the toolbar never covers it,
# however long the title or narrow the column. The figures' top margins (60 px for most) leave room for it.
MODEBAR_PX = 28
TITLE = dict(y=1, yref="container", yanchor="top", pad=dict(t=MODEBAR_PX))
# the toolbar's buttons: saving the picture, zoom and pan, and back to the whole picture (the rest are for
# selections no page uses); a short toolbar covers less of the chart's top right
MODEBAR = dict(displaylogo=False, modeBarButtonsToRemove=["select2d", "lasso2d", "zoomIn2d", "zoomOut2d",
                                                         "autoScale2d", "toggleSpikelines", "hoverClosestCartesian",
                                                         "hoverCompareCartesian"])


def use_lab_template() -> None:
    """Make the house template plotly's default: the page's font, and the token colours as the colour cycle (series k
    of a figure drawn per token gets token k's colour). app.py calls it at start; importing viz changes nothing.
    One default for every figure, because setting template= on each figure is slow and a page has a dozen; merged
    once here, because a "plotly_white+lab" default would be merged again for every figure."""
    if pio.templates.default == "lab":
        return
    pio.templates["lab"] = go.layout.Template(layout=dict(font=FONT, colorway=TOKEN_COLORS, title=TITLE))
    pio.templates["lab"] = pio.templates["plotly_white+lab"]
    pio.templates.default = "lab"
