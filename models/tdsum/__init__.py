from .configuration_tdsum import TDSumConfig
from .modeling_tdsum import TDSumForConditionalGeneration, TDSumModel

__all__ = ["TDSumConfig", "TDSumForConditionalGeneration", "TDSumModel"]
