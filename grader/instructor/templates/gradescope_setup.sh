#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (the zip is unpacked
# into $ROOT/source). It installs the grader into its own venv, which run_autograder uses.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c "import ensurepip, venv" 2>/dev/null; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3 python3-venv python3-pip
fi
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install --upgrade pip
"$ROOT/venv/bin/python" -m pip install "$ROOT/source"
