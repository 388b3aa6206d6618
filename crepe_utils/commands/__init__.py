"""The commands that span the benchmarks, each called by :mod:`crepe_utils.cli`: ``check`` (every claim, through
the registry), ``models`` (the checkpoint table and each benchmark's roster), ``download`` (a dataset, or the
released text data that are missing: ``released``)."""
