"""The real-store Hub check (``scripts/check_store_repos.py``) runs a card's code as written: its setup once,
its per-example lines for each example, in a fresh process with no SteerSum on its path."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_store_repos", ROOT / "scripts" / "check_store_repos.py")
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

CARD = """# A model

## Usage

```python
import importlib.util

assert importlib.util.find_spec("variants") is None  # SteerSum is not importable: a Hub user's process
calls = []
processor = lambda document, controls: (document.upper(), controls)
document = (
    "The card's own example."
)
controls = {"length": 0}
inputs = processor(document, controls)
calls.append(1)
print(inputs[0], inputs[1].get("length"), len(calls))
```
"""


def test_the_snippet_splits_into_its_setup_and_the_lines_it_runs_per_example():
    setup, per_example = check.split_snippet(check.card_snippet_text(CARD))
    assert setup.endswith("processor = lambda document, controls: (document.upper(), controls)\n")
    assert per_example.startswith("inputs = processor(document, controls)\n")
    with pytest.raises(ValueError, match="no 'document = ...' example"):
        check.split_snippet("print('no example')\n")


def test_the_card_code_runs_once_per_example_in_a_fresh_process(tmp_path):
    readme = tmp_path / "repo" / "README.md"
    readme.parent.mkdir()
    readme.write_text(CARD)
    examples = [{"document": "first one", "controls": {"length": 2}}, {"document": "second", "controls": {}}]
    printed = check.snippet_summaries(readme, examples, tmp_path / "cache", tmp_path / "run")
    # the per-example lines ran with each example's document and controls; the setup ran once (calls grows)
    assert printed == ["FIRST ONE 2 1", "SECOND None 2"]
