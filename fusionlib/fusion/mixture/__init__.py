"""FusionGAN's chapter on the simulated mixture (seed 000; ``notebooks/fusiongan.md``).

Rooms: ``data`` (the simulated sources with a known truth), ``runs`` (one setting, several
seeds, trained until learned), ``extensions`` (the section I extension runs), ``cells``
(experiment ``fusiongan``), ``report`` (what the chapter shows). The method itself (networks,
step, synthesizer, ...) is ``fusionlib.fusion``.
"""
