#!/usr/bin/env bash
# Installs headless Chromium, its WebDriver and jq (for the shell agent) from Debian's packages (for
# scripts/test-browser.sh). No-op when all three are already there.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null && command -v jq >/dev/null; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium chromium-driver jq >/dev/null
chromium --version
