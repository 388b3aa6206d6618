"""The papers' claims, checked: each check returns rows of (claim, paper value, ours, status).

``base``        the check row, its statuses, and what a topic of ``make check`` is

Each benchmark's claims live in its folder (``crepe_utils.benchmarks.<name>.claims``); ``make check``
(:mod:`crepe_utils.commands.checks`) gathers them through the registry.
"""
