"""PTGAN's theory (seed 001, Sections 2-4, SM B-C) checked on instances (chapter
``notebooks/ptgan_theory.md``).

Modules: ``moments`` (Proposition 3), ``nets`` (ReLU critics as the theory sees them),
``distances`` (exact W1 -- SciPy's in one dimension -- and certified upper values of a class's
supremum), ``bounds`` (Proposition 1, Lemma 4, Theorem 1), ``variance`` (Proposition 2, Lemmas
1-3, Remark 3), ``rates`` (Theorems 2-3), ``approx`` (Lemmas 6-8, Proposition 4),
``algorithms`` (Algorithms 1 and 3 by hand), ``assumptions`` (Definition 1, (A1)-(A4)), ``runs``
(checks along ring runs), ``cells`` (experiments ``ptgan_theory_*``), ``checks`` (the decision
rules of the claims), ``planted`` (every claim's hypothesis, instance and planted fault; kind
theory or implementation), ``report`` (the chapter's summaries).
"""
