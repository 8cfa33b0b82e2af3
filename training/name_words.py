"""Which words of a tokenizer's vocabulary are names: the document-names rule's list (the generation config's
``name_words``, :class:`variants.text_rules.DocumentNamesLogitsProcessor`).

MiniLM's vocabulary is uncased and holds most names as one token ("alan", "london", "gogh"), so neither the token
nor the model's lower-case text says which words are names. A corpus does: a word its writers capitalise
mid-sentence more often than not is a name ("London", "Mr", "January", "British"), one they write in lower case
as often is a common word ("world", "government"). A word of the vocabulary the corpus never writes counts too: a
rare name, or the first part of a longer word ("fra" of "Fratton", "gr" of "Groenefeld"), which the model strings
into a word no one writes ("fra button Park"). The corpus is the model's own training documents, never a test
set, and the list is the tokenizer's ids of such words that it writes as one token. The judge of invented names
(:mod:`metrics.quality`) reads the document and WordNet instead; the two share only the idea that a name is
capitalised or a word no one else writes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

WORD = re.compile(r"\S+")
LETTERS = re.compile(r"[A-Za-z]+")
EDGES = "\"'“”‘’()[],;:.!?"  # marks stripped from a whitespace word's ends
SENTENCE_END = re.compile(r"[.!?:][\"'”’)\]]*$")  # a word that ends a sentence: the next one starts with a capital
OPENING = tuple("\"“‘'([")  # a word that opens a quote or a bracket may start a sentence within it
LEAST = 2  # the fewest capitalised mid-sentence uses that make a word a name


def capitalisation(texts: list[str]) -> tuple[Counter, Counter]:
    """How often the texts write each word (lower-cased, letters only) mid-sentence capitalised, and in lower case:
    a word is mid-sentence when a word before it in its paragraph does not end a sentence and it opens no quote."""
    capitalised, lower = Counter(), Counter()
    for text in texts:
        for paragraph in text.split("\n"):
            before = None
            for raw in WORD.findall(paragraph):
                word = raw.strip(EDGES)
                mid_sentence = before is not None and not SENTENCE_END.search(before) and not raw.startswith(OPENING)
                if mid_sentence and LETTERS.fullmatch(word):
                    (capitalised if word[0].isupper() else lower)[word.lower()] += 1
                before = raw
    return capitalised, lower


def name_words(tokenizer, texts: list[str], least: int = LEAST) -> list[int]:
    """The token ids of the words ``texts`` write capitalised mid-sentence more often than in lower case (at least
    ``least`` times), each a whole word of one token under ``tokenizer``, and of the vocabulary's words of letters
    that ``texts`` never write; single letters are no names ("I", "U.S."'s parts)."""
    capitalised, lower = capitalisation(texts)
    words = sorted(w for w, n in capitalised.items() if len(w) > 1 and n >= least and n > lower[w])
    ids = set()
    for word, tokens in zip(words, tokenizer(words, add_special_tokens=False)["input_ids"]):
        if len(tokens) == 1:
            ids.add(tokens[0])
    written = {w.lower() for text in texts for w in LETTERS.findall(text)}
    return sorted(ids | set(unwritten(tokenizer, written)))


def unwritten(tokenizer, written: set[str]) -> list[int]:
    """The vocabulary's whole words of two or more ASCII letters that are not among ``written`` (lower-cased)."""
    from variants.decoding_rules import whole_words

    whole = whole_words(tokenizer)
    vocabulary = tokenizer.convert_ids_to_tokens(list(range(len(whole))))
    return [
        i
        for i, token in enumerate(vocabulary)
        if whole[i] and len(token) > 1 and token.isascii() and token.isalpha() and token.lower() not in written
    ]


def training_documents(train_file: Path) -> list[str]:
    """The distinct documents of a variant's derived training set (``train.jsonl``: one example a line, its
    ``document``; CCSBench asks several compositions of one document)."""
    documents = []
    with open(train_file, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                example = json.loads(line)
                if "document" not in example:
                    raise ValueError(f"{train_file}:{number}: an example without a 'document'")
                documents.append(example["document"])
    return list(dict.fromkeys(documents))
