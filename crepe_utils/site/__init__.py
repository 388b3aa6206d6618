"""The companion as a static website (``make docs``) and its check in a real browser (``make docs-check``).

``build``   the executed notebooks, README, docs/ pages, figures and tables as pages that open from disk
``check``   every page in headless Chromium: images loaded, local links resolved, nothing fetched

Needs the ``docs`` extra for the check (``pip install '.[docs]'``) and Chromium with its driver.
"""
