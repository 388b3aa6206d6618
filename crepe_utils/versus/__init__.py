"""Is my model better, and where does it stand: paired comparisons of two results, and a result placed in the field.

``pairing``   two result folders of the same benchmark and data, paired query by query: per set, the paired
              difference, its Newcombe interval, the exact McNemar p and Holm's adjustment (``compare``)
``standing``  one or more results placed on the columns of the field's 202 checkpoints, beside the blind scorers
              given (``standing``)
``figures``   the forest plot of a comparison and the strips of a standing page
``output``    ``compare()`` and ``standing()``, the Python API's, and the folders they write
``command``   the ``compare`` and ``standing`` commands
``prose``     the sentences of the "Is it better?" notebook, built from the numbers shown beside them

Nothing here names a benchmark: what "correct" is for a benchmark's rows is its scoring rule's ``outcomes``
(:class:`crepe_utils.protocol.benchmark.ScoringRule`), and how its rows make a field column is its declaration's
``table_columns`` pooled by that rule's ``field`` (:func:`crepe_utils.field.result_counts`).
"""
from __future__ import annotations
