"""SteerSum's metrics: batched pure functions over lists, one module per paper's measure.

=========  =====================  =====================================================
name       module                 measures
=========  =====================  =====================================================
rouge      :mod:`metrics.rouge`    ROUGE-1/2/Lsum with stemming (rouge-score)
rouge-k    :mod:`metrics.rouge_k`  share of reference keywords in the summary (Takeshita et al.)
stas       :mod:`metrics.stas`     topic affinity, cosine over tf-idf topic vectors (Passali et al.)
egises     :mod:`metrics.egises`   personalization: EGISES and P-Acc (Vansh et al.)
ccs        :mod:`metrics.ccs`      CCSBench controls: length bin, keywords, FKGL, focus (Ding et al.)
entity     :mod:`metrics.entity`   entity mention and coverage (Maddela et al.)
=========  =====================  =====================================================

Each module has ``score_records(records, source)`` used by ``python -m metrics NAME FILE.jsonl``
and a ``FIELDS`` text that documents the JSONL fields it reads.
"""

METRICS = {
    "rouge": "metrics.rouge",
    "rouge-k": "metrics.rouge_k",
    "stas": "metrics.stas",
    "egises": "metrics.egises",
    "ccs": "metrics.ccs",
    "entity": "metrics.entity",
    "bootstrap": "metrics.bootstrap",
}
