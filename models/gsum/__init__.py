from .configuration_gsum import GSumConfig
from .modeling_gsum import GSumForConditionalGeneration, GSumModel

__all__ = ["GSumConfig", "GSumForConditionalGeneration", "GSumModel"]
