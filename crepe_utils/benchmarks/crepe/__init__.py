"""CREPE itself: its CSVs read into retrieval queries, its images found, its data validated, and the
paper's models evaluated on it (the benchmarks' declarations: :mod:`crepe_utils.benchmarks.crepe.benchmark`).

``queries``     CREPE CSVs → retrieval queries (every odd row counted, none silently lost)
``images``      Visual Genome images by id
``validation``  the data validation report (``python -m crepe_utils validate``)
``scheduling``  many (model, benchmark) jobs, here or spread over several devices
                (``python -m crepe_utils evaluate-paper``)
"""
