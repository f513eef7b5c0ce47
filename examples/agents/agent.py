#!/usr/bin/env python3
"""A game-claw agent in Python (standard library only).

Plays through `claw-player join` JSON lines, keeps a per-hand log, audits
every saved hand offline with `claw-player audit --json` against the dealer
key of the invite URL, and prints a JSON summary. Exit 0 only when every
hand's live and offline audit passed.

    examples/agents/agent.py URL [--hands N] [--claw-player PATH] [--key FILE]

Strategy (Texas Hold'em): raise the minimum with a pair or two cards ten or
higher, call cheap bets, check when free, otherwise fold. Other games: check
or call when free or cheap, else the first affordable option that is not a
fold.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

RANKS = "23456789TJQKA"


def rank(card):
    """Rank index of a card such as "Td" or "As#1" (jokers rank highest)."""
    return RANKS.index(card[0]) if card[0] in RANKS else len(RANKS)


def holdem_strong(hand):
    """A pair, or two cards ten or higher."""
    return len(hand) == 2 and (hand[0][0] == hand[1][0] or min(rank(c) for c in hand) >= RANKS.index("T"))


def choose(turn, game):
    """The action to send for a `your-turn` line."""
    ok = [a for a in turn["actions"] if a["affordable"]]
    if not ok:
        return None
    by_type = {a["action"]["type"]: a for a in ok}
    cheap = turn["balance"] // 4
    if game == "texas-holdem" and holdem_strong(turn.get("hand", [])):
        for t in ("raise", "bet"):
            if t in by_type and by_type[t]["cost"] <= cheap:
                return by_type[t]["action"]
    if "check" in by_type:
        return by_type["check"]["action"]
    if "call" in by_type and by_type["call"]["cost"] <= cheap:
        return by_type["call"]["action"]
    if game == "texas-holdem" and "fold" in by_type:
        return by_type["fold"]["action"]
    for a in ok:
        if a["action"]["type"] != "fold":
            return a["action"]
    return ok[0]["action"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("url", help="invite URL ws://host:port/ROOM#DEALER_KEY")
    p.add_argument("--hands", type=int, default=5, help="hands to play (default 5)")
    p.add_argument("--claw-player", default=os.environ.get("CLAW_PLAYER", "claw-player"))
    p.add_argument("--key", help="key file (created if missing)")
    p.add_argument("--name", default="agent.py")
    args = p.parse_args()
    dealer_key = args.url.rsplit("#", 1)[-1]

    with tempfile.TemporaryDirectory() as work:
        hands_dir = os.path.join(work, "hands")
        cmd = [args.claw_player, "join", args.url, "--hands", str(args.hands),
               "--save-transcripts", hands_dir, "--name", args.name]
        if args.key:
            cmd += ["--key", args.key]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        game = None
        hands, failures = [], []
        for line in proc.stdout:
            ev = json.loads(line)
            kind = ev["event"]
            if kind == "joined" and ev.get("room"):
                game = ev["room"]["game"]
            elif kind == "hand-started":
                game = ev["game"]
            elif kind == "your-turn":
                action = choose(ev, game)
                if action is not None:
                    proc.stdin.write(json.dumps(action) + "\n")
                    proc.stdin.flush()
            elif kind == "action-rejected":
                print(f"rejected: {ev['code']}: {ev['reason']}", file=sys.stderr)
            elif kind == "hand-ended":
                seat = ev["seat"]
                net = ev["result"]["net"][seat] if seat is not None else 0
                hands.append({"hand_id": ev["hand_id"], "seat": seat, "net": net,
                              "live_audit": ev["audit"]["verdict"], "summary": ev["result"]["summary"]})
                # verdict: ok, pending (deferred reveal not out yet: not a failure) or failed
                verdict = ev["audit"]["verdict"]
                print(f"hand {ev['hand_id']}: seat {seat}, net {net:+d}, "
                      f"live audit {'FAILED' if verdict == 'failed' else verdict}")
                if verdict == "failed":
                    failures.append({"hand_id": ev["hand_id"], "check": ev["audit"].get("failed")})
            elif kind == "verification-failed":
                failures.append({"hand_id": ev.get("hand_id"), "check": ev["check"], "detail": ev["detail"]})
            elif kind in ("kicked", "closed"):
                print(f"{kind}: {ev.get('reason') or ev.get('code')}")
        proc.stdin.close()
        status = proc.wait()

        # Offline audit of the saved transcripts, trusting the invite's key.
        files = sorted(glob.glob(os.path.join(hands_dir, "*.jsonl")))
        offline = []
        if files:
            out = subprocess.run([args.claw_player, "audit", "--json", "--dealer", dealer_key, *files],
                                 capture_output=True, text=True)
            offline = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
            failures += [{"hand_id": v.get("hand_id"), "check": v["check"], "detail": v["detail"]}
                         for v in offline if v["verdict"] == "failed"]

    summary = {
        "hands": len(hands),
        "net": sum(h["net"] for h in hands),
        "audited_offline": sum(1 for v in offline if v["ok"]),
        "failures": failures,
        "claw_player_exit": status,
    }
    print(json.dumps(summary))
    ok = status == 0 and not failures and hands and summary["audited_offline"] == len(files)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
