"""The papers' claims, checked: each check returns rows of (claim, paper value, ours, status).

``base``        the check row and its statuses
``crepe``       CREPE's claims
``winoground``  Winoground's claims
``topics``      the claims by topic, as notebooks 01–05 check them (one function each)
``aggregate``   ``make check``: every topic's claims that the available data and results allow
"""
