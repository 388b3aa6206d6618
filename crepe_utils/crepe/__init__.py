"""CREPE itself: its CSVs read into retrieval queries, its images found, its data validated, and
one model evaluated on it.

``queries``     CREPE CSVs → retrieval queries (every odd row counted, none silently lost)
``images``      Visual Genome images by id
``validation``  the data validation report (``python -m crepe_utils validate``)
``settings``    every evaluation setting, declared once (the options and the manifest come from it)
``evaluation``  one model on systematicity or productivity: queries → engine → metrics → a result
                folder (``python -m crepe_utils evaluate``)
``scheduling``  many (model, benchmark) jobs, here or spread over several devices
                (``python -m crepe_utils evaluate-paper``)
"""
