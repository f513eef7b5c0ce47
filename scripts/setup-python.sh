#!/usr/bin/env bash
# A Python venv with the third-party readers and drivers the checks use:
# pokerkit (PokerStars hand histories), ohh-pydantic (Open Hand History),
# selenium (WebDriver client). Prints the venv's python path.
#
#   scripts/setup-python.sh [VENV_DIR]     # default target/venv
set -euo pipefail
venv=${1:-${CARGO_TARGET_DIR:-target}/venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$(dirname "$0")/requirements.txt" >&2
echo "$venv/bin/python"
