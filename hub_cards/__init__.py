"""Publishing to the Hugging Face Hub: export a checkpoint as a Hub repo folder with its model card,
push it, and package the Space.

    python -m hub_cards export CHECKPOINT_DIR --out DIR [--repo-id ORG/NAME] [--eval-report FILE] [--base-model ORG/NAME]
    python -m hub_cards push DIR --repo-id ORG/NAME [--private] [--revision BRANCH] [--repo-type model|space]
    python -m hub_cards space --out DIR [--catalog FILE]

* :mod:`hub_cards.export` the repo layout: safetensors weights, config + remote code, tokenizer,
  generation config, the variant's assets, the eval report, the card
* :mod:`hub_cards.card`   the model card, one Jinja template per variant family (``templates/``),
  filled from the variant object, ``steersum.json`` and ``eval_report.json``
* :mod:`hub_cards.push`   checks a folder (card metadata, weights) and uploads it with ``HfApi``
* :mod:`hub_cards.space`  the Space repo folder: app code, the packages it imports, requirements

Nothing here is written per variant: a variant plugs in through its :class:`variants.base.Variant`
(``paper``, ``description``, ``controls_for``, ``metric_names``, ``prepare``, ``load``, and the
optional ``card_facts``) and, to say more than the generic card, ``templates/<variant id>.md``.
"""
