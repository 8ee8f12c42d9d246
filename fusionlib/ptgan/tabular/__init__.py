"""PTGAN on tables (seed 001, Section 5.1, Appendix D.2.3; chapter ``notebooks/ptgan_tabular.md``).

Rooms: ``data`` (the three tables), ``model`` (the ``TabularPTGAN`` synthesizer), ``step``
(Algorithm 3 with a Gumbel-softmax head), ``stacked`` (R repetitions as one model), ``runs``
(the S_T protocol's runs), ``cells`` (experiment ``ptgan_tabular``), ``report`` (the chapter's
summaries).
"""
