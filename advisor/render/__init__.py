"""Laying the report values of :mod:`advisor.report` out as HTML and Markdown: templates, charts,
the criteria SVG and display names.  Renderers take values and return text; they never analyse."""
