"""PTGAN on images (seed 001, Section 5.1, Tables 1, 2, 7, 8; chapter
``notebooks/ptgan_images.md``).

Rooms: ``step`` (the image run's configuration and training step), ``runs`` (one image run),
``cells`` (experiments ``ptgan_images``, ...), ``report`` (the chapter's summaries), ``panels``
(the sample panels of Figures 12-17).
"""
