"""The CCS variant has no architecture of its own (Flan-T5 or BART with a LoRA adapter); this folder
holds its processor, which every exported CCS repo ships."""

from .processing_ccs import CCSProcessor, hard_prompt
