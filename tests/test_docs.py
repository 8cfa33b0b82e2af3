"""The documentation: tracked text speaks about the project, the README stays a short guide, every
variant folder documents its methods, and relative links lead to files that exist.

Tracked text says what was measured, when and on what hardware; it never narrates how the project was
made (numbered work stops, issue numbers, borrowed or vanished machines, work sittings). The patterns
are assembled from fragments below, so this file does not match them itself.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from variants import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 250

# Each pattern joined from two fragments: the source line holds neither whole word.
PROCESS_WORDS = [
    re.compile("".join(parts), re.IGNORECASE)
    for parts in (
        (r"\bst", r"op \d"),  # a numbered work stop
        (r"\biss", r"ues?[ \-_#]*\d"),  # a ticket number, with a space, hyphen or hash before it
        (r"\ble", r"nt\b"),  # a borrowed machine
        (r"\blost w", r"ith\b"),  # models gone with their machine
        (r"\bwas l", r"ost\b"),
        (r"\bsess", r"ions?\b"),  # a working sitting (pytest's fixture scope is exempt below)
        (r"\bthis ro", r"und\b"),
    )
]
EXEMPT = re.compile("scope=[\"']" + "sess" + "ion[\"']")  # pytest's scope of a fixture: code, not a story
# Corpus text (articles, titles, vocabularies) and generated outputs are data, not the project's words.
DATA = ("tests/fixtures/", "/assets/", "space/examples.json", "leaderboard/leaderboard.json", "store/models/")
BINARY = {".png", ".npz", ".safetensors", ".bin", ".jpg", ".jpeg", ".gif", ".pdf"}


def tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no list of tracked files")
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [name for name in listing.stdout.split("\0") if name]


def is_text(name: str) -> bool:
    return (
        Path(name).suffix.lower() not in BINARY
        and not name.endswith(".jsonl")
        and not any(part in f"/{name}" for part in DATA)
    )


def process_word_hits(name: str, text: str) -> list[str]:
    """``file:line: text`` for each line of ``text`` that narrates how the project was made."""
    hits = []
    for number, line in enumerate(text.splitlines(), start=1):
        checked = EXEMPT.sub("", line)
        if any(pattern.search(checked) for pattern in PROCESS_WORDS):
            hits.append(f"{name}:{number}: {line.strip()[:160]}")
    return hits


def test_the_patterns_catch_what_they_are_for():
    """Hand-made lines: each narration is caught, the project's own words are not."""
    caught = [
        "measured in " + "st" + "op 28",
        "until " + "iss" + "ue 20",
        "the " + "iss" + "ue-22 recipe",
        "a " + "le" + "nt GPU",
        "checkpoints " + "lost w" + "ith their machine",
        "the next GPU " + "sess" + "ion",
        "done in " + "this ro" + "und",
    ]
    fine = [
        "@pytest.fixture(scope=" + '"sess' + 'ion")',
        "early stopping at 96 tokens",
        "excellent results",
        "silent failure",
        "the issue of length control",
        "2026-11-25, 2-core AMD EPYC, fp32",
    ]
    assert all(process_word_hits("x.md", line) for line in caught)
    assert not any(process_word_hits("x.md", line) for line in fine)


def test_tracked_text_says_nothing_about_how_the_project_was_made():
    hits = []
    for name in filter(is_text, tracked_files()):
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):  # binary, or deleted but not yet committed
            continue
        hits += process_word_hits(name, text)
    assert not hits, "say what was measured, when and on what hardware instead:\n" + "\n".join(hits)


def test_readme_is_a_short_guide():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; at most {README_MAX_LINES}"


@pytest.mark.parametrize("variant_id", sorted(REGISTRY))
def test_each_variant_folder_documents_its_methods(variant_id):
    readme = ROOT / "variants" / variant_id / "README.md"
    assert readme.is_file(), f"{readme.relative_to(ROOT)} is missing"
    text = readme.read_text(encoding="utf-8")
    missing = [m for m in REGISTRY[variant_id].methods if f"`{m}`" not in text]
    assert not missing, f"{readme.relative_to(ROOT)} never names method(s) {', '.join(missing)}"


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_guides() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "variants").glob("*/README.md")),
    ]


def test_relative_links_lead_to_files_that_exist():
    broken = []
    for guide in markdown_guides():
        for number, line in enumerate(guide.read_text(encoding="utf-8").splitlines(), start=1):
            for target in LINK.findall(line):
                path = target.split("#", 1)[0]
                if not path or re.match(r"^[a-z][a-z0-9+.-]*:", path):  # an anchor, or http(s)/mailto
                    continue
                if not (guide.parent / path).exists():
                    broken.append(f"{guide.relative_to(ROOT)}:{number}: {target}")
    assert not broken, "links to nothing:\n" + "\n".join(broken)
