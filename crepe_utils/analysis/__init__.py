"""What every benchmark's analysis is built with; each benchmark's own tables and figures live in its folder.

``correlation``  R² against ImageNet accuracy, with bootstrap intervals
``reporting``    one style for figures (PNG, SVG) and tables (CSV, Markdown, LaTeX); the claims page's table
"""
