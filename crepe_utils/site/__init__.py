"""The companion as a book (``make docs``) and its check in a real browser (``make docs-check``).

``build``   the executed notebooks, README, docs/ pages, figures and tables as a Sphinx book that opens from disk
``check``   every page in headless Chromium: images captioned and loaded, links resolved, nothing fetched, search

Needs the ``docs`` extra (``pip install '.[docs]'``: Sphinx, MyST-NB, sphinx-book-theme, Playwright) and Chromium.
"""
