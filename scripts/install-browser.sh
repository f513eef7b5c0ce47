#!/usr/bin/env bash
# Installs headless Chromium and its WebDriver from Debian's packages (for
# scripts/test-browser.sh). No-op when both are already there.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
chromium --version
