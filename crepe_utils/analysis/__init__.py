"""Tables and figures built from results and the papers' numbers.

``tables``       published numbers beside evaluated ones, with differences and intervals
``correlation``  R² against ImageNet accuracy, with bootstrap intervals
``reporting``    one style for figures (PNG, SVG) and tables (CSV, Markdown, LaTeX)
``model_table``  the model registry as a table (``python -m crepe_utils models``)
``sugarcrepe``   SugarCrepe's published table, its ImageNet correlations, evaluated results beside it (notebook 08)
``uncertainty``  exact binomial intervals for published numbers of known N, and for the gap between two
``prose``        sentences rendered from the values they state
``totals``, ``systematicity``, ``productivity``, ``imagenet``, ``winoground_view``, ``toy_view``
                 notebooks 01-06: their tables, figures and sentences
"""
