"""The SteerSum Space: pick a variant, a model and controls, generate, and see live metric scores.

    python -m space [--models-dir checkpoints] [--catalog space/catalog.json] [--port 7860] [--host 127.0.0.1]
                    [--dtype int8]
    (or GRADIO_SERVER_NAME / GRADIO_SERVER_PORT / STEERSUM_DTYPE; flags win)

* :mod:`space.catalog`  which models are offered (baselines, local checkpoints, pinned Hub ids)
* :mod:`space.service`  plain inference functions, a bounded model cache and request batching
* :mod:`space.views`    results as highlighted text, tables and chart data; escaping of user text
* :mod:`space.texts`    the page's own words: what is served, how to add models, the API help
* :mod:`space.examples` labelled examples per variant: a document and the controls that fit it
* :mod:`space.app`      the Gradio UI and the named API endpoints, wiring only

Nothing is built per variant here: every registered variant appears with widgets made from its
control schema.
"""

import os

# Analytics off before gradio is first imported (it reads the variable at import time).
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
