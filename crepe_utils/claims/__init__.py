"""The papers' claims, checked: each check returns rows of (claim, paper value, ours, status).

``base``        the check row and its statuses
``crepe``       CREPE's claims
``winoground``  Winoground's claims
``aggregate``   ``make check``: every claim the available data and results allow
"""
