from .configuration_persona import PersonaBartConfig
from .modeling_persona import PersonaBartForConditionalGeneration, PersonaBartModel, PersonaUserEncoder

__all__ = ["PersonaBartConfig", "PersonaBartForConditionalGeneration", "PersonaBartModel", "PersonaUserEncoder"]
