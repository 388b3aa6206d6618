"""What is about several benchmarks at once: the commands that span them (``check``, ``models``,
``download``), the analyses across them (blind scorers, the field's 202 checkpoints, one benchmark beside
another), and the teaching notebook's material. Each benchmark's own code is in its folder under
:mod:`crepe_utils.benchmarks`."""
