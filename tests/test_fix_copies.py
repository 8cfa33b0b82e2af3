"""scripts/fix_copies.py: a copy that drifted from its source is named by --check and rewritten by a fix,
after which --check passes (blocks, whole files, definitions and assignments); the repository's own copies
are in step."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "fix_copies.py"
spec = importlib.util.spec_from_file_location("fix_copies", SCRIPT)
fix_copies = importlib.util.module_from_spec(spec)
sys.modules["fix_copies"] = fix_copies
spec.loader.exec_module(fix_copies)

SOURCE = '''"""A source module."""

import json


def helper(value, error=ValueError):
    if value < 0:
        raise error(f"negative: {value}")
    return value


# Copy begins
LIMIT = 3


# Copied from pkg.base.helper
def helper(value, error=ValueError):
    if value < 0:
        raise error(f"negative: {value}")
    return value
# Copy ends
'''

COPY = '''"""A self-contained copy."""

import json


# Copied from pkg.base
LIMIT = 3


# Copied from pkg.base.helper
def helper(value, error=ValueError):
    if value < 0:
        raise error(f"negative: {value}")
    return value
# End of copy


class Holder:
    # Copied from pkg.base.helper
    def helper(value, error=ValueError):
        if value < 0:
            raise error(f"negative: {value}")
        return value

    def other(self):
        return 1
'''


def write_tree(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "base.py").write_text(SOURCE)
    (root / "pkg" / "copy.py").write_text(COPY)


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args], capture_output=True, text=True, timeout=60
    )


def test_copies_in_step_pass_the_check(tmp_path):
    write_tree(tmp_path)
    assert fix_copies.stale(tmp_path) == []
    assert run(tmp_path, "--check").returncode == 0


def test_a_stale_copy_is_named_and_a_fix_rewrites_it(tmp_path):
    write_tree(tmp_path)
    base = tmp_path / "pkg" / "base.py"
    # the source's definition changes, and its region: its own copy of the definition is stale now too
    base.write_text(SOURCE.replace("LIMIT = 3", "LIMIT = 4").replace('f"negative: {value}"', 'f"below 0: {value}"', 1))
    copy = tmp_path / "pkg" / "copy.py"
    before = copy.read_text()

    checked = run(tmp_path, "--check")
    assert checked.returncode == 1
    # the source's own copy of helper (line 16), the block (line 6) and the method (line 19): three stale copies
    assert sorted(line for line in checked.stderr.splitlines()) == [
        "pkg/base.py:16: copy of pkg.base.helper differs from its source; run python scripts/fix_copies.py",
        "pkg/copy.py:19: copy of pkg.base.helper differs from its source; run python scripts/fix_copies.py",
        "pkg/copy.py:6: copy of pkg.base differs from its source; run python scripts/fix_copies.py",
    ]
    assert copy.read_text() == before  # --check changes nothing

    assert run(tmp_path).returncode == 0
    text = copy.read_text()
    assert "LIMIT = 4" in text and text.count('f"below 0: {value}"') == 2 and "negative" not in text
    assert base.read_text().count('f"below 0: {value}"') == 2  # the source's own copy, rewritten first
    assert "        def helper" not in text and "    def helper(value, error=ValueError):\n" in text  # re-indented
    assert "    def other(self):\n        return 1\n" in text  # what follows a copy is kept
    assert run(tmp_path, "--check").returncode == 0


def test_a_block_without_its_end_or_a_missing_source_is_an_error(tmp_path):
    write_tree(tmp_path)
    copy = tmp_path / "pkg" / "copy.py"
    copy.write_text(COPY.replace("# End of copy\n", ""))
    result = run(tmp_path, "--check")
    assert result.returncode == 2 and "pkg/copy.py:6" in result.stderr and "End of copy" in result.stderr
    copy.write_text(COPY.replace("# Copied from pkg.base.helper\n    def", "# Copied from pkg.base.nothing\n    def"))
    with pytest.raises(fix_copies.CopyError, match="defines no nothing"):
        fix_copies.stale(tmp_path)


WORDS = '''"""Word lists."""

NAMES = frozenset({"a", "b"})


def count():
    return len(NAMES)
'''


def test_a_whole_file_copy_and_a_copied_assignment(tmp_path):
    write_tree(tmp_path)
    pkg = tmp_path / "pkg"
    (pkg / "words.py").write_text(WORDS)  # no "# Copy begins": a copy of it is the whole file
    whole, uses = pkg / "whole.py", pkg / "uses.py"
    whole.write_text("# Copied from pkg.words\n# End of copy\n")
    uses.write_text('"""Uses."""\n\n# Copied from pkg.words.NAMES\nNAMES = frozenset({"a"})\n\nOTHER = 1\n')

    checked = run(tmp_path, "--check")
    assert checked.returncode == 1
    assert sorted(line.split(":")[0] + ":" + line.split(":")[1] for line in checked.stderr.splitlines()) == [
        "pkg/uses.py:3",
        "pkg/whole.py:1",
    ]
    assert run(tmp_path).returncode == 0
    assert whole.read_text() == "# Copied from pkg.words\n" + WORDS + "# End of copy\n"
    assert uses.read_text().endswith('NAMES = frozenset({"a", "b"})\n\nOTHER = 1\n')
    # the two blank lines a formatter puts before the end, after a definition, are no difference
    whole.write_text("# Copied from pkg.words\n" + WORDS + "\n\n# End of copy\n")
    assert run(tmp_path, "--check").returncode == 0
    whole.write_text(
        "# Copied from pkg.words\n" + WORDS.replace("len(NAMES)", "len(NAMES) + 1") + "\n\n# End of copy\n"
    )
    assert run(tmp_path, "--check").returncode == 1


def test_the_repository_copies_are_in_step():
    assert [fix_copies.describe(c, ROOT) for c in fix_copies.stale(ROOT)] == []
    processors = sorted(p for p in (ROOT / "models").glob("*/processing_*.py") if p.name != "processing_base.py")
    assert len(processors) == 5
    for path in processors:  # each imports the processor base from a whole copy beside it
        copy = path.parent / "processing_base.py"
        assert [c.source for c in fix_copies.copies(ROOT, copy)] == ["models.processing_base"], copy
        assert copy.read_text().startswith("# Copied from models.processing_base\n"), copy
        assert "# Copied from variants.base.check_value\ndef check_value(" in copy.read_text(), copy
        assert "from .processing_base import " in path.read_text(), path


def test_a_processor_checks_a_control_as_the_variant_does():
    from models.ccs.processing_base import check_value
    from variants.base import Control, ControlError

    length = Control("length", "integer", "bin", minimum=0, maximum=4)
    topic = Control("topic", "choice", "a topic", choices=("sport", "politics"))
    for control, value in ((length, "3"), (length, 9), (topic, " sport "), (topic, "cooking"), (topic, "")):
        try:
            expected = control.check(value)
        except ControlError as err:
            with pytest.raises(ValueError) as raised:
                check_value(control.to_json(), value)
            assert str(raised.value) == str(err)
        else:
            assert check_value(control.to_json(), value) == expected
    assert length.check("3") == 3 and topic.check(" sport ") == "sport"
