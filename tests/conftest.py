"""Test-wide settings: nothing may reach the network, bundled data lives in ../shared/data."""
import os
from pathlib import Path

for var, value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "TOKENIZERS_PARALLELISM": "false",
}.items():
    os.environ.setdefault(var, value)

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.fail(f"bundled data not found at {DATA}: ../shared must sit beside the checkout")
    return DATA
