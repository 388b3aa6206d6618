"""The evaluation engine: encode every distinct crop and caption once, then score every query.

``images``  decoding and the official crop
``core``    tokenizing, encoding, the verified embedding cache, scoring (:func:`core.run`)

The engine knows nothing of CREPE's files: a query is anything with an id, an image region and its
candidate captions (:class:`core.Query`).
"""
