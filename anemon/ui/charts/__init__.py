"""Charts: textual-plot for the large ones, Sparklines for strips.

Every chart is a `ChartSpec` (`specs`: which lines to draw from a Session) drawn by one `Chart`
widget (`chart`); the full series stay in the Session and each draw hands the widget ≤2 points
per column (`anemon.ui.series`), drawn on its canvas with numpy (`drawing`) within the limits
and ticks of `axes`. `strips` are the one-line Sparklines of the compact layout. `plotlib` is
the one module that reaches textual-plot's and textual-hires-canvas's internals.
"""
