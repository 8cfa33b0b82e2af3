"""``python -m space``: launch the Space. With no checkpoints, no catalog and no GPU it serves every
variant's model-free baseline (the embedded default). The address is ``--host``/``--port``, else
Gradio's own ``GRADIO_SERVER_NAME``/``GRADIO_SERVER_PORT``, else 127.0.0.1:7860; ``--dtype`` is else
``STEERSUM_DTYPE`` (a Space variable)."""

from __future__ import annotations

import argparse
import logging
import os

from variants.seq2seq import DTYPES

from .catalog import DEFAULT_CATALOG


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m space", description=" ".join(__doc__.split()))
    parser.add_argument(
        "--models-dir", default="checkpoints", help="folder of local checkpoints (default: ./checkpoints)"
    )
    parser.add_argument(
        "--catalog",
        default=None,
        help=f"JSON file of Hub ids pinned to revisions (default: {DEFAULT_CATALOG.name} beside the app, if any)",
    )
    parser.add_argument(
        "--store",
        default=None,
        metavar="INDEX",
        help="the model store to serve (default: the committed store/index.json; 'none': no stored model)",
    )
    parser.add_argument(
        "--host",
        default=os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
        help="address to listen on, 0.0.0.0 inside a container (default: $GRADIO_SERVER_NAME or 127.0.0.1)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=os.environ.get("GRADIO_SERVER_PORT") or 7860,  # a string default goes through type=int too
        help="port to listen on (default: $GRADIO_SERVER_PORT or 7860)",
    )
    parser.add_argument("--max-models", type=int, default=4, help="models kept loaded at once")
    parser.add_argument(
        "--dtype",
        choices=DTYPES,
        default=os.environ.get("STEERSUM_DTYPE") or None,
        help="CPU generation for every model: int8 (an int8 copy of its Linear layers: faster, "
        "other and worse summaries, see benchmarks/RESULTS.md), bf16 autocast, auto or float32 "
        "(default: $STEERSUM_DTYPE, else each model's own settings, float32)",
    )
    args = parser.parse_args(argv)
    if args.dtype not in (None, *DTYPES):  # argparse checks the flag's choices, not a default from the environment
        parser.error(f"STEERSUM_DTYPE={args.dtype!r}: choose from {', '.join(DTYPES)}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # gradio's own start-up probes, one line each

    from .app import CSS, build_app, theme
    from .catalog import build_catalog
    from .service import Service

    store_index = False if args.store == "none" else args.store
    service = Service(
        build_catalog(args.models_dir, args.catalog, store_index=store_index),
        max_models=args.max_models,
        dtype=args.dtype,
    )
    build_app(service).launch(server_name=args.host, server_port=args.port, css=CSS, theme=theme())


if __name__ == "__main__":
    main()
