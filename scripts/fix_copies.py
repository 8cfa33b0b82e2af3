"""One source for code that is copied: write the copies from it, or check that they match it.

An exported repo runs without SteerSum, so what it needs ships whole inside its files: every processor
(``models/<name>/processing_<name>.py``) imports the processor base from a whole copy beside it
(``models/<name>/processing_base.py``), which holds ``Control.check`` as ``check_value``; the entity
processor's name and sentence rules hold definitions of ``metrics.text`` and ``metrics.entity``. Such code is written once, in its source, and copied by this script, as transformers'
``utils/check_copies.py`` keeps its ``# Copied from`` code in step. A copy says where it comes from:

* a block: the lines between ``# Copied from <module>`` and ``# End of copy`` are the source module's
  lines between its ``# Copy begins`` and ``# Copy ends`` lines (its whole text when it has none: a
  whole-file copy, the marker on its first line); blank lines before ``# End of copy`` do not count;
* an object: ``# Copied from <module>.<name>`` on the line above a ``def``, a ``class`` or an assignment
  (``NAME = ...``) makes that definition the source's, as written there (re-indented to where the copy
  sits).

Files that ship unchanged (the decoding module, the text fixes) are copied when a repo is exported.

    python scripts/fix_copies.py          # rewrite every stale copy from its source
    python scripts/fix_copies.py --check  # name every stale copy and exit 1 (CI)

Standard library only, so CI runs it before anything is installed.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^(?P<indent>\s*)# Copied from (?P<source>[A-Za-z_][\w.]*)\s*$")
END = "# End of copy"
SOURCE_BEGINS, SOURCE_ENDS = "# Copy begins", "# Copy ends"
SKIPPED = {"__pycache__", "node_modules", "site-packages"}  # besides hidden folders (.venv, .git)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
ASSIGNMENT = re.compile(r"[A-Za-z_]\w*\s*(?::[^=]*)?=(?!=)")  # "NAME = ..." or "NAME: type = ..."


class CopyError(ValueError):
    """A marker that cannot be followed: its source does not exist, or a block has no end."""


@dataclass
class Copy:
    path: Path
    line: int  # the marker's (1-based)
    source: str
    start: int  # the copy's first line (0-based index into the file's lines)
    end: int  # one past its last line
    expected: list[str]  # the lines the copy should hold


def python_files(root: Path) -> list[Path]:
    return sorted(
        path
        for path in root.rglob("*.py")
        if not any(part.startswith(".") or part in SKIPPED for part in path.relative_to(root).parts[:-1])
    )


def module_file(root: Path, dotted: str) -> Path | None:
    base = root.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def region(text: str) -> list[str]:
    """A source module's copied lines: between ``# Copy begins`` and ``# Copy ends``, else all of them."""
    lines = text.splitlines()
    begins = [i for i, line in enumerate(lines) if line.strip() == SOURCE_BEGINS]
    if not begins:
        return lines
    ends = [i for i, line in enumerate(lines) if line.strip() == SOURCE_ENDS and i > begins[0]]
    if not ends:
        raise CopyError(f"{SOURCE_BEGINS!r} without {SOURCE_ENDS!r}")
    return lines[begins[0] + 1 : ends[0]]


def defined_name(node: ast.AST) -> str | None:
    """The name a ``def``, ``class`` or one-name assignment defines (None for any other statement)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    targets = (
        node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    )
    return targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else None


def definition(tree: ast.Module, names: list[str]) -> ast.AST | None:
    """The ``def``, ``class`` or assignment at dotted ``names`` inside a module (``Class.method`` too)."""
    body, node = tree.body, None
    for name in names:
        node = next((n for n in body if defined_name(n) == name), None)
        if node is None:
            return None
        body = getattr(node, "body", [])
    return node


def first_line(node: ast.AST) -> int:
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def source_lines(root: Path, dotted: str) -> list[str]:
    """What a copy of ``dotted`` holds, unindented: a module's region, or one definition."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        path = module_file(root, ".".join(parts[:i]))
        if path is not None:
            break
    else:
        raise CopyError(f"no module for {dotted!r} under {root}")
    text, names = path.read_text(encoding="utf-8"), parts[i:]
    if not names:
        return textwrap.dedent("\n".join(region(text))).split("\n")
    node = definition(ast.parse(text), names)
    if node is None:
        raise CopyError(f"{path.relative_to(root)} defines no {'.'.join(names)}")
    lines = text.splitlines()[first_line(node) - 1 : node.end_lineno]
    return textwrap.dedent("\n".join(lines)).split("\n")


def indented(lines: list[str], indent: str) -> list[str]:
    return [indent + line if line.strip() else "" for line in lines]


def copies(root: Path, path: Path) -> list[Copy]:
    """The copies ``path`` holds, each with the lines its source gives now (blocks hold what is inside them
    as their source has it, so a marker inside a block is the source's business)."""
    text = path.read_text(encoding="utf-8")
    if "# Copied from" not in text:
        return []
    lines, found, tree = text.splitlines(), [], None
    comments = {  # lines whose marker is a comment, not text inside a string
        token.start[0] - 1
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    }
    i = 0
    while i < len(lines):
        match = MARKER.match(lines[i]) if i in comments else None
        if not match:
            i += 1
            continue
        indent, source, where = match["indent"], match["source"], f"{path.relative_to(root)}:{i + 1}"
        try:
            expected = indented(source_lines(root, source), indent)
        except CopyError as err:
            raise CopyError(f"{where}: {err}") from None
        follows = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if follows.startswith(("def ", "async def ", "class ", "@")) or (
            ASSIGNMENT.match(follows) and module_file(root, source) is None  # a block may begin with one
        ):  # an object
            tree = tree or ast.parse(text)
            node = next((n for n in ast.walk(tree) if isinstance(n, DEFINITIONS) and first_line(n) == i + 2), None)
            if node is None:
                raise CopyError(f"{where}: no definition follows the marker")
            found.append(Copy(path, i + 1, source, i + 1, node.end_lineno, expected))
            i = node.end_lineno
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j] == indent + END), None)
        if end is None:
            raise CopyError(f"{where}: '# Copied from {source}' has no {END!r} line after it")
        last = end  # blank lines before the end are the formatter's (two after a definition), not the copy's
        while last > i + 1 and not lines[last - 1].strip():
            last -= 1
        while expected and not expected[-1].strip():
            expected.pop()
        found.append(Copy(path, i + 1, source, i + 1, last, expected))
        i = end + 1
    return found


def stale(root: Path = ROOT) -> list[Copy]:
    """Every copy under ``root`` that differs from its source."""
    out = []
    for path in python_files(root):
        lines = path.read_text(encoding="utf-8").splitlines()
        out += [c for c in copies(root, path) if lines[c.start : c.end] != c.expected]
    return out


def fix(root: Path = ROOT, rounds: int = 4) -> list[Copy]:
    """Rewrite every stale copy under ``root`` from its source; the copies rewritten. Runs until nothing
    changes, so a copy of a source that itself holds a copy ends up in step with the first source."""
    fixed = []
    for _ in range(rounds):
        changed = stale(root)
        if not changed:
            return fixed
        for path in sorted({c.path for c in changed}):
            lines = path.read_text(encoding="utf-8").splitlines()
            for c in sorted((c for c in changed if c.path == path), key=lambda c: -c.start):
                lines[c.start : c.end] = c.expected
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        fixed += changed
    left = stale(root)
    if left:
        raise CopyError(
            f"copies still differ after {rounds} rounds (a cycle?): {', '.join(describe(c, root) for c in left)}"
        )
    return fixed


def describe(c: Copy, root: Path) -> str:
    return f"{c.path.relative_to(root)}:{c.line}: copy of {c.source}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="name every stale copy and exit 1; change nothing")
    mode.add_argument("--fix", action="store_true", help="rewrite every stale copy from its source (the default)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    try:
        if args.check:
            found = stale(root)
            for c in found:
                print(
                    f"{describe(c, root)} differs from its source; run python scripts/fix_copies.py", file=sys.stderr
                )
            return 1 if found else 0
        for c in fix(root):
            print(f"{describe(c, root)}: rewritten")
    except CopyError as err:
        print(f"fix_copies: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
