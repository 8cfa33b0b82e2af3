"""The decoding rules' old module: they now live in :mod:`variants.decoding` (:class:`DecodingRules`, the
logits processors and :func:`~variants.decoding.rule_kwargs`), which an exported repo ships whole. The
names below are the ones callers used here; :func:`constraint_kwargs` splits the document's sentences as
SteerSum does everywhere (:func:`metrics.text.sentences`).
"""

from metrics.text import sentences

from .decoding import (  # noqa: F401
    KEYWORD_BIAS,
    PATH_BIAS,
    WORD,
    DecodedRows,
    DecodingRules,
    KeywordBiasLogitsProcessor,
    SentencePathLogitsProcessor,
    WordBoundsLogitsProcessor,
    WordLimitStoppingCriteria,
    keyword_paths,
    missing,
    on_path,
    per_row,
    rule_kwargs,
    sentence_path,
    token_budget,
    tokens_per_word,
    word_starts,
)

HardConstraints = DecodingRules  # the old name: the rules also carry soft biases (preferred sentences)
_DecodedRows = DecodedRows


def constraint_kwargs(tokenizer, constraints: list[DecodingRules], sources: list[str], max_new_tokens: int) -> dict:
    """:func:`variants.decoding.rule_kwargs` with SteerSum's sentence splitter."""
    return rule_kwargs(tokenizer, constraints, sources, max_new_tokens, split=sentences)
