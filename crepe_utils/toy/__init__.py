"""The compositional toy world: CREPE's experiment end to end on a CPU, in minutes.

A procedurally generated world of shapes (objects) with colours and sizes (attributes) in
spatial relations, where we know exactly which compounds a model saw in training. A tiny CLIP
is trained on it and evaluated through the same data layer, engine and notebooks as the real
benchmark. Every number computed here is labelled ``kind="toy"``.

``world``     vocabulary, scene graphs, pictures, captions and the semantic checker
``foils``     hard negatives (HN-Atom, HN-Comp, HN-Swap, HN-Neg), each verified false
``build``     writes a CREPE data root (CSVs in the real layout, ``VG_100K/<id>.jpg``) and the
              training split
``train``     trains the tiny open_clip model with open_clip's contrastive loss
``pipeline``  ``python -m crepe_utils toy``: generate → train → evaluate, each stage cached
"""
