"""Publishing to the Hugging Face Hub: export a checkpoint as a Hub repo folder with its model card,
push it, and package the Space.

    python -m hub_cards export CHECKPOINT_DIR --out DIR [--repo-id ORG/NAME] [--eval-report FILE] [--base-model ORG/NAME]
    python -m hub_cards push DIR --repo-id ORG/NAME [--private] [--revision BRANCH] [--repo-type model|space]
    python -m hub_cards space --out DIR [--catalog FILE]

* :mod:`hub_cards.export` the repo layout: safetensors weights, config + remote code, tokenizer,
  generation config, the variant's assets, the processor (``AutoProcessor`` remote code:
  ``models/<name>/processing_<name>.py``, the code the variant's ``prepare`` runs, with its files), the
  eval report, the card; ``--base-model`` checked against the checkpoint before it is written
* :mod:`hub_cards.export_weights` the weight files as a Hub user expects them: the store's int8 model as fp16,
  its adapters as peft adapters with fp32 weights, or merged when their architecture adds modules
* :mod:`hub_cards.export_checks` what an export must pass: safetensors only, float tensors, no machine path
* :mod:`hub_cards.general` the general summarizer (no variant, no controls) as a repo of its own
* :mod:`hub_cards.card`   the model card, one Jinja template per variant family (``templates/``),
  filled from the variant object, ``steersum.json`` and ``eval_report.json``
* :mod:`hub_cards.card_metadata` the card's front matter: licence, datasets, tags, the eval report as ``model-index``
* :mod:`hub_cards.licenses` whose terms the weights carry (training data and base model), and ``LICENSE.md``
* :mod:`hub_cards.base_model` the base model a checkpoint names (a Hub id, a local folder or none), and
  whether an export's ``--base-model`` resolves and fits the checkpoint
* :mod:`hub_cards.push`   checks a folder (card metadata, weights) and uploads it with ``HfApi``
* :mod:`hub_cards.space`  the Space repo folder: app code, the packages it imports, requirements
* :mod:`hub_cards.publish` ``python -m hub_cards publish ORG``: the store's six models and the Space, each exported and
  checked before the first upload, so the Hub gets all of them or none
* :mod:`hub_cards.zoo`    ``python -m training zoo --push-to-hub ORG``: the general summarizer, the variant
  models and the Space, its catalog pinned to the revisions pushed

Nothing here is written per variant: a variant plugs in through its :class:`variants.base.Variant`
(``paper``, ``description``, ``controls_for``, ``evaluation.metric_names``, ``prepare``, ``load``, and the
optional ``processor`` and ``card_facts``) and, to say more than the generic card, ``templates/<variant id>.md``.
"""
