"""SteerSum's custom Hugging Face architectures, one self-contained folder each.

Importing this package registers them with the Auto classes, so ``AutoModelForSeq2SeqLM`` loads a
local checkpoint without ``trust_remote_code``; an exported Hub repo carries the same files and
loads with ``trust_remote_code=True``.
"""

from transformers import AutoConfig, AutoModelForSeq2SeqLM

from .gsum import GSumConfig, GSumForConditionalGeneration
from .persona import PersonaBartConfig, PersonaBartForConditionalGeneration
from .tdsum import TDSumConfig, TDSumForConditionalGeneration
from .topic_bart import TopicBartConfig, TopicBartForConditionalGeneration

for config_class, model_class in [
    (GSumConfig, GSumForConditionalGeneration),
    (TopicBartConfig, TopicBartForConditionalGeneration),
    (TDSumConfig, TDSumForConditionalGeneration),
    (PersonaBartConfig, PersonaBartForConditionalGeneration),
]:
    AutoConfig.register(config_class.model_type, config_class, exist_ok=True)
    AutoModelForSeq2SeqLM.register(config_class, model_class, exist_ok=True)


def register_custom_code(model) -> None:
    """For SteerSum's own architectures, make ``save_pretrained`` copy ``configuration_*.py`` and
    ``modeling_*.py`` and write ``auto_map``, so the folder loads with ``trust_remote_code=True`` alone."""
    if type(model).__module__.startswith(__name__ + "."):
        type(model.config).register_for_auto_class()
        type(model).register_for_auto_class("AutoModelForSeq2SeqLM")
