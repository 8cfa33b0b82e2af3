from .configuration_topic_bart import TopicBartConfig
from .modeling_topic_bart import TopicBartForConditionalGeneration, TopicBartModel

__all__ = ["TopicBartConfig", "TopicBartForConditionalGeneration", "TopicBartModel"]
