"""The topic variant's model-free baseline: topic-focused extraction, the document's sentences closest to
the topic in the summarizer's topic space (a topic-focused Lead-3)."""

from __future__ import annotations

from metrics.text import sentences
from metrics.topic_space import TopicSpace

from ..base import Baseline, Summary


def topic_focused_extract(document: str, topic: str, space: TopicSpace, n_sentences: int = 3) -> str:
    """The model-free baseline: the ``n_sentences`` sentences most similar to the topic vector, in
    document order (a topic-focused Lead-3)."""
    sents = sentences(document)
    if len(sents) <= n_sentences:
        return " ".join(sents)
    column = space.topics.index(topic)
    similarity = space.affinities(sents)[:, column]
    best = sorted(sorted(range(len(sents)), key=lambda i: (-similarity[i], i))[:n_sentences])
    return " ".join(sents[i] for i in best)


class TopicBaseline(Baseline):
    name = "baseline: topic-focused extraction"

    def extract(self, document: str, controls: dict) -> Summary:
        assets, notices = self.assets.resolve(controls)
        text = topic_focused_extract(document, controls["topic"], assets.space)
        unseen = controls["topic"] not in self.assets.space.topics
        return Summary(text, notices + unmatched_topic_notices(document, controls["topic"], assets.space, unseen))


def unmatched_topic_notices(
    document: str, topic: str, space: TopicSpace, unseen: bool, n_sentences: int = 3
) -> list[str]:
    """A notice when no sentence shares a term with the topic's vector: every similarity is 0, so the
    extract is the first sentences (Lead-3) and STAS is 0 whatever was asked. Typical of an unseen
    topic named by one word the document does not use ("football" for a match report)."""
    sents = sentences(document)
    if len(sents) <= n_sentences or space.affinities(sents)[:, space.topics.index(topic)].max() > 0:
        return []
    hint = (
        (
            "describe the topic in 'topic_words' with a few words this document uses (for a match report: "
            "striker, league, match)"
        )
        if unseen
        else "this document is not about it"
    )
    return [
        f"no sentence of the document uses a term of topic {topic!r}, so the extract is its first {n_sentences} "
        f"sentences (Lead-3) and STAS is 0: {hint}"
    ]
