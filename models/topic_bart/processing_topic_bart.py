"""The topic processor: a document and a topic as the model's input (SteerSum's topic variant, after
Passali & Tsoumakas 2024):

* ``prepend``     the topic's name, then ``[TOPIC]``, in front of the document (the paper's BARTpre);
* ``tag``         every word whose lemma is one of the topic's ``top_n`` representative terms wrapped in
                  ``[TAG] ... [TAG]`` (BARTtag);
* ``prepend-tag`` both (BARTpre+tag);
* ``emb``         the document, plus ``topic_ids``: the topic's row in the model's topic embedding.

A topic's representative terms are the highest-weighted terms of its vector in the topic space
(``topic_space.json``: topics, vocabulary, IDF; ``topic_space.npz``: the topic vectors), ties in
alphabetical order. An unseen topic (``tag``/``prepend`` methods) is described by ``topic_words``
(or its own name): their TF-IDF vector in the same space gives its terms.

Terms are WordNet lemmas (SteerSum's ``metrics.stas.term``). WordNet is not a dependency here: the repo
ships ``topic_lemmas.json``, every written form whose term is a term of the space's vocabulary, with that
term. The table was made by asking the lemmatizer itself about each vocabulary term's possible forms
(WordNet's morphology applies one suffix rule or one exception, so the forms are the term, each rule
undone once and the exceptions that name it), so it gives the lemmatizer's answer for every word whose
term the space knows, and no term for any other word, which is all that tagging and an unseen topic's
vector need. SteerSum's ``variants.topic`` tags with the functions of this file (and the lemmatizer).

Self-contained (torch, transformers, numpy and the standard library): it ships in every exported topic
repo and ``AutoProcessor.from_pretrained(repo, trust_remote_code=True)`` loads it.
"""

import re
import threading

import numpy as np

from .processing_base import SteerSumProcessor

DOCUMENT_PATH_BIAS = 2.0  # the decoder's bias along the document's sentences (SteerSum's variants.topic)

TAG, TOPIC = "[TAG]", "[TOPIC]"
SPACE_FILE, VECTORS_FILE, LEMMAS_FILE = "topic_space.json", "topic_space.npz", "topic_lemmas.json"
# The topic id that adds no embedding, as models.topic_bart.modeling_topic_bart.NO_TOPIC (a test checks).
NO_TOPIC = -1
CLITICS = frozenset({"s", "re", "ve", "ll", "d", "m"})  # "bank's" is "bank"; "don't" is no term
# A word: letters/digits with an optional inner apostrophe (SteerSum's metrics.text.WORD).
WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?", re.IGNORECASE)


def table_term(lemmas: dict[str, str]):
    """A word's topic-space term from the shipped table (``metrics.stas.term`` for the space's terms):
    clitics cut as there, then the table; None for a word whose term the space does not know."""

    def term(word: str):
        head, apostrophe, tail = word.replace("’", "'").partition("'")
        if apostrophe and tail == "t":
            return None
        if apostrophe and tail in CLITICS:
            word = head
        return lemmas.get(word)

    return term


def tag_words(document: str, terms: frozenset[str], term) -> str:
    """Wrap each word (:data:`WORD`) whose term (``term`` of the lower-cased word) is in ``terms`` in
    ``[TAG] ... [TAG]``: the tagging rule, word by word."""
    return WORD.sub(
        lambda m: f"{TAG} {m.group(0)} {TAG}" if term(m.group(0).lower()) in terms else m.group(0), document
    )


class Tagger:
    """:func:`tag_words` for one topic's terms, fast: a document is cut at spaces (``str.split``) into
    chunks such as ``"(banks'"``; a chunk met before is looked up in a dict of the chunks holding a
    tagged word, with their tagged text; a chunk not met before goes through the rule (:func:`tag_words`
    on the chunk alone: exactly what it gives inside the document, since no WORD token holds a space).
    Thread-safe; the cache starts over past ``max_chunks`` chunks."""

    def __init__(self, terms: frozenset[str], term, max_chunks: int = 500_000):
        self.terms, self.term, self.max_chunks = terms, term, max_chunks
        self._lock = threading.Lock()
        # chunks (as written) already looked at; those among them holding a tagged word → their tagged text
        self._state: tuple[set[str], dict[str, str]] = (set(), {})

    def __call__(self, document: str) -> str:
        chunks = document.split(" ")
        seen, tagged = self._state
        new = set(chunks) - seen
        if new:
            with self._lock:  # tagged first, then seen: a reader never sees a chunk before its tagged text
                seen, tagged = self._state
                if len(seen) > self.max_chunks:
                    seen, tagged = set(), {}
                for chunk in new - seen:
                    text = tag_words(chunk, self.terms, self.term)
                    if text != chunk:
                        tagged[chunk] = text
                seen |= new
                self._state = (seen, tagged)
        if tagged.keys().isdisjoint(chunks):
            return document
        return " ".join([tagged.get(chunk, chunk) for chunk in chunks])


def topic_text(document: str, topic: str, method: str, tag=None) -> str:
    """The model's source text for the ``tag``, ``prepend`` and ``prepend-tag`` methods (``tag``: the
    topic's :class:`Tagger`, needed by the tag methods)."""
    text = tag(document) if "tag" in method else document
    return f"{topic} {TOPIC} {text}" if method.startswith("prepend") else text


def tagged_share(text: str, tag) -> float:
    """The share of a text's words the topic's :class:`Tagger` marks: how much of a window of a document is
    about the topic, in the summarizer's own topic space (STAS is judged in another), for ``window_mode``
    "pick"."""
    words = len(WORD.findall(text))
    return tag(text).count(TAG) / 2 / words if words else 0.0


def representative_terms(weights: np.ndarray, terms: np.ndarray, n: int) -> list[str]:
    """The ``n`` highest-weighted terms of a topic vector, highest first, ties in alphabetical order;
    fewer when fewer have a positive weight."""
    order = np.lexsort((terms, -weights))  # last key first: weight descending, then term
    return [str(terms[j]) for j in order[:n] if weights[j] > 0]


def words_vector(text: str, vocabulary: dict[str, int], idf: np.ndarray, term) -> np.ndarray:
    """The l2-normalized TF-IDF vector of a text in the topic space (scikit-learn's ``transform``)."""
    vector = np.zeros(len(idf), dtype=np.float64)
    for word in WORD.findall(text.lower()):
        column = vocabulary.get(term(word))
        if column is not None:
            vector[column] += 1
    vector *= idf
    norm = np.sqrt(np.dot(vector, vector))
    return vector / norm if norm > 0 else vector


def unseen_topic_words(topic: str, topic_words: str | None) -> list[str]:
    """The words that describe an unseen topic: ``topic_words`` split at commas, else the topic's name."""
    return [w.strip() for w in (topic_words or topic).split(",") if w.strip()]


def unseen_notice(topic: str, topic_words: str | None) -> str:
    return f"unseen topic {topic!r}: its representative terms come from the words {topic_words or topic!r}"


class TopicProcessor(SteerSumProcessor):
    """``processor(document, {"topic": "business"})``, or an unseen topic
    ``{"topic": "weather", "topic_words": "rain, storm, forecast"}`` (tag and prepend methods)."""

    files = (SPACE_FILE, VECTORS_FILE, LEMMAS_FILE)

    def __init__(self, tokenizer, settings: dict | None = None, data: dict | None = None):
        super().__init__(tokenizer, settings, data)
        space = self.data[SPACE_FILE]
        self.topics = list(space["topics"])
        self.terms = np.array(space["vocabulary"])
        self.vocabulary = {t: i for i, t in enumerate(space["vocabulary"])}
        self.idf = np.asarray(space["idf"], dtype=np.float64)
        lemmas = self.data[LEMMAS_FILE]
        table = {t: t for t in space["vocabulary"] if t not in set(lemmas["not_terms"])}
        self.term = table_term({**table, **lemmas["forms"]})
        self.taggers: dict[tuple[str, str], Tagger] = {}

    def tagger(self, topic: str, topic_words: str | None) -> tuple[Tagger, list[str]]:
        """The topic's tagger (its representative terms), and a notice for an unseen topic."""
        key = (topic, "" if topic in self.topics else topic_words or topic)
        if topic in self.topics:
            weights, notices = self.data[VECTORS_FILE]["topic_vectors"][self.topics.index(topic)], []
        else:
            words = unseen_topic_words(topic, topic_words)
            known = [w for w in words if any(self.term(t) in self.vocabulary for t in WORD.findall(w.lower()))]
            if not known:
                raise ValueError(
                    f"unseen topic {topic!r}: none of the words {', '.join(map(repr, words))} is in the "
                    "topic space's vocabulary; describe it with a few known words in 'topic_words' or "
                    f"pick one of: {', '.join(self.topics)}"
                )
            weights, notices = (
                words_vector(" ".join(known), self.vocabulary, self.idf, self.term),
                [unseen_notice(topic, topic_words)],
            )
        if key not in self.taggers:
            terms = representative_terms(weights, self.terms, int(self.settings.get("top_n", 100)))
            self.taggers[key] = Tagger(frozenset(terms), self.term)
        return self.taggers[key], notices

    def relevance(self, text: str, controls: dict) -> float:
        """The share of the window's words the asked topic's tagger marks (:func:`tagged_share`)."""
        return tagged_share(text, self.tagger(controls["topic"], controls.get("topic_words"))[0])

    def unconditional(self, document: str) -> tuple[str, dict, list[str]]:
        """The document as is: no topic prepended, no word tagged; for ``emb`` the topic id that adds no
        embedding (``models.topic_bart.modeling_topic_bart.NO_TOPIC``)."""
        return (document, {"topic_ids": NO_TOPIC}, []) if self.settings["method"] == "emb" else (document, {}, [])

    def rules(self, document: str, controls: dict):
        """Every document sentence for the decoder to prefer, whatever the topic, as SteerSum's
        ``variants.topic`` gives its decoder (bias :data:`DOCUMENT_PATH_BIAS`)."""
        return {"prefer": True, "prefer_bias": DOCUMENT_PATH_BIAS}

    def prepare(self, document: str, controls: dict) -> tuple[str, dict, list[str]]:
        topic, method = controls["topic"], self.settings["method"]
        if method == "emb":
            embedded = list(self.settings.get("embedding_topics") or [])
            if topic not in embedded:
                raise ValueError(
                    f"method 'emb' only knows the topics it was trained on; unknown topic {topic!r}; "
                    f"allowed: {', '.join(embedded)}"
                )
            return document, {"topic_ids": embedded.index(topic)}, []
        tag, notices = self.tagger(topic, controls.get("topic_words"))
        return topic_text(document, topic, method, tag), {}, notices
