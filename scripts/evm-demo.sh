#!/usr/bin/env bash
# One command for the EVM chips demo (docs/chips-evm.md): installs anvil
# (scripts/install-evm-tools.sh), starts it on 127.0.0.1 with a free port,
# deploys the test token and the ChipVault (claw-evm), registers and funds
# 6 bots (1000 chips each, anvil dev keys 4-9), then runs
# `claw-dealer --chips evm` with the 6 bots for HANDS hands (default 20) and
# shows each bot's vault balance. Stops anvil at exit.
#   scripts/evm-demo.sh            # HANDS=50 scripts/evm-demo.sh
# Files go to $CLAW_EVM_DEMO_DIR (default: a new temp directory).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
hands="${HANDS:-20}"
work="${CLAW_EVM_DEMO_DIR:-$(mktemp -d)}"
mkdir -p "$work/bots"
echo "evm-demo: files in $work" >&2

eval "$("$root/scripts/install-evm-tools.sh")"

echo "evm-demo: building claw-evm and claw-dealer (release, feature evm; minutes the first time)" >&2
# One cargo run builds both binaries the demo runs, with EVM chips only (no
# Solana crates), in release: the profile the README's commands build, so a
# machine that built them reuses the dependencies, and the hands run at
# release speed.
(cd "$root" && cargo build --release --locked -p claw-chips -p claw-dealer-cli \
  --features claw-chips/evm,claw-dealer-cli/evm --bin claw-evm --bin claw-dealer)
bin="${CARGO_TARGET_DIR:-$root/target}/release"

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
url="http://127.0.0.1:$port"
"$CLAW_ANVIL" --host 127.0.0.1 --port "$port" >"$work/anvil.log" 2>&1 &
anvil_pid=$!
trap 'kill "$anvil_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q "Listening on" "$work/anvil.log" && break
  sleep 0.1
done
grep -q "Listening on" "$work/anvil.log" || { cat "$work/anvil.log" >&2; exit 1; }

# anvil prints its dev accounts and keys: "(i) 0x…" under each heading.
section() { awk -v h="$1" '$0 ~ h {f = 1; next} f && /^\([0-9]+\)/ {print $2} f && /^$/ && n++ {exit}' "$work/anvil.log"; }
mapfile -t accounts < <(section "Available Accounts")
mapfile -t keys < <(section "Private Keys")
key_file() { (umask 077 && printf '%s' "$2" >"$work/$1"); echo "$work/$1"; }
admin_key="$(key_file admin.key "${keys[0]}")"
operator_key="$(key_file operator.key "${keys[1]}")"
evm() { "$bin/claw-evm" --rpc-url "$url" --chain-id 31337 "$@"; }
json() { python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }

deployed="$(evm --key-file "$admin_key" deploy --max-lock 3600 --operator "${accounts[1]}")"
token="$(echo "$deployed" | json token)"
vault="$(echo "$deployed" | json vault)"
echo "evm-demo: token $token vault $vault operator ${accounts[1]}" >&2
for i in 0 1 2 3 4 5; do
  k="$(key_file "bot-$i-evm.key" "${keys[$((4 + i))]}")"
  evm --key-file "$k" register --vault "$vault" --identity "$work/bots/bot-$i.key" >/dev/null
  evm --key-file "$admin_key" mint --token "$token" --to "${accounts[$((4 + i))]}" --amount 1000 >/dev/null
  evm --key-file "$k" deposit --vault "$vault" --amount 1000 >/dev/null
done

"$bin/claw-dealer" --game texas-holdem --bots 6 --hands "$hands" --commission 1 \
  --chips evm --evm-rpc-url "$url" --evm-chain-id 31337 --evm-vault "$vault" \
  --evm-key-file "$operator_key" --bot-keys "$work/bots" --data-dir "$work/data"
for i in 0 1 2 3 4 5; do
  echo "bot-$i vault balance: $(evm --key-file "$work/bot-$i-evm.key" balance --vault "$vault")"
done
echo "operator (commission): $(evm --key-file "$admin_key" balance --vault "$vault" --owner "${accounts[1]}")"
