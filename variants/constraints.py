"""The decoding rules' old module: they now live in :mod:`variants.decoding_rules` (:class:`DecodingRules`
and what it measures) and :mod:`variants.rule_processors` (the logits processors and :func:`rule_kwargs`),
which an exported repo ships beside its decoding. The names below are the ones callers used here;
:func:`constraint_kwargs` splits the document's sentences as SteerSum does everywhere
(:func:`metrics.text.sentences`).
"""

from metrics.text import sentences

from .decoding_rules import (  # noqa: F401
    KEYWORD_BIAS,
    PATH_BIAS,
    WORD,
    DecodedRows,
    DecodingRules,
    keyword_paths,
    missing,
    on_path,
    per_row,
    sentence_path,
    token_budget,
    tokens_per_word,
    word_starts,
)
from .rule_processors import (  # noqa: F401
    KeywordBiasLogitsProcessor,
    SentencePathLogitsProcessor,
    WordBoundsLogitsProcessor,
    WordLimitStoppingCriteria,
    rule_kwargs,
)

HardConstraints = DecodingRules  # the old name: the rules also carry soft biases (preferred sentences)
_DecodedRows = DecodedRows


def constraint_kwargs(tokenizer, constraints: list[DecodingRules], sources: list[str], max_new_tokens: int) -> dict:
    """:func:`variants.rule_processors.rule_kwargs` with SteerSum's sentence splitter."""
    return rule_kwargs(tokenizer, constraints, sources, max_new_tokens, split=sentences)
