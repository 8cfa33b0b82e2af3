"""The control strength's old module: classifier-free guidance now lives in
:mod:`variants.classifier_free_guidance` (the processor, :class:`ClassifierFreeGuidance`, which
:func:`variants.decoding.generate` applies at its ``guidance_scale``) and its one-pass serving in
:mod:`variants.speedups` (:class:`~variants.speedups.PairedGuidance`). The names below are the ones callers
used here.
"""

from .classifier_free_guidance import (  # noqa: F401
    CANDIDATES,
    CandidateHead,
    ClassifierFreeGuidance,
    expand_rows,
    head_owner,
    head_replaced,
    parent_rows,
)
from .classifier_free_guidance import STRENGTH_RANGE as GUIDANCE_RANGE  # noqa: F401
from .classifier_free_guidance import check_strength as check_guidance  # noqa: F401
from .speedups import DECODER_INPUTS, PairedCache, SplitHead, pad_to, stack_outputs, stack_pair, takes_own_cache  # noqa: F401
from .speedups import PairedGuidance as EncoderDecoderGuidance  # noqa: F401
