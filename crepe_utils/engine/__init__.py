"""The evaluation engine: encode every distinct crop and caption once, then score every query.

``images``           decoding and the official crop
``precisions``       precision modes and the floating-point settings a run records
``tokenizing``       captions → token ids (truncation, the fast path, the token-id cache)
``encoders``         token ids and crops → embeddings (length-cut batches, the crop worker pool)
``embedding_cache``  the verified, content-addressed embedding cache
``threads``          cores, torch's thread counts, and work in a thread that computes like its starter
``layout``           what a query list alone decides: kept queries, crops and their keys, captions, the scoring index
``shared_inputs``    what a multi-model run prepares once
``core``             :func:`core.run`: a query list → embeddings → scores, with what was skipped and why

The engine knows nothing of CREPE's files: a query is anything with an id, an image region and its
candidate captions (:class:`core.Query`).
"""
