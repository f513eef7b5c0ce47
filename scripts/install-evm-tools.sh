#!/usr/bin/env bash
# Installs the pinned EVM tools of the EVM chip provider (chip-providers/evm/
# package.json + package-lock.json): the local node `anvil` and the Solidity
# compiler `solcjs`, into chip-providers/evm/node_modules (git-ignored).
# Prints `export CLAW_ANVIL=...` for the test harness; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/../chip-providers/evm"
if ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm >&2
  else
    echo "npm is required (apt-get install nodejs npm)" >&2
    exit 1
  fi
fi
npm ci --no-audit --no-fund >&2
anvil="$PWD/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"
"$anvil" --version >&2
echo "export CLAW_ANVIL=$anvil"
