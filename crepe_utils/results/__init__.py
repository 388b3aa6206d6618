"""Results on disk: one folder per model × benchmark, written whole or not at all.

``store``         the results format (summary, per-query, manifest), writing and reading
``provenance``    what every manifest records of the environment and the project's git state
``completeness``  whether a result covers its whole benchmark (no limit, no skipped query)
"""
