"""The notebooks as pages (``pages``: each one's label and question, read from the notebook), and material that
belongs to one notebook, in a module named as it is (``how_compositionality_is_evaluated``: notebook 00's)."""
