#!/usr/bin/env python3
"""Drives headless Chromium (WebDriver, chromium-driver) through the web app
of a real dealer: the lobby, a live table while bots play, an archived hand
page (in-browser audit all green, the player's own sealed cards opened from
its key file), the audit page with an honest transcript (all green) and
tampered ones (the right check red), and the table page: the browser sits
down with a key it makes, plays with the action buttons until a hand ends
with every check green, on a desktop and on a phone-sized window, and
behind a man in the middle that changes the dealer's signatures shows the
red banner and no action; then one hand of each of the five games, played
by clicking at a dealer per game with SDK bots in the other seats (Guandan:
the dealer's own AIs, marked at the table and in the lobby; Sam Gong: the
banker queue shown; card selection in Dou Di Zhu and Guandan, also on a
phone-sized window; a ready check or rematch vote answered by its button).
The watch page follows the running table through the live feed. Saves
screenshots.

    browser_test.py BIN_DIR SCREENSHOT_DIR      (prints `N passed, N failed`)
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.support.ui import WebDriverWait

CHECKS = ["dealer-signatures", "hash-chain", "structure", "reveal-complete", "seed-commitment", "player-seeds",
          "shuffle", "leaves", "merkle-root", "commission", "deal-order", "opened-cards", "action-signatures"]

results = []


def step(name):
    def wrap(f):
        def run(*a):
            try:
                f(*a)
                results.append((name, None))
                print(f"ok   {name}", flush=True)
            except Exception as e:  # report, screenshot, go on
                results.append((name, e))
                print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
                try:
                    a[0].save_screenshot(os.path.join(SHOTS, f"fail-{name}.png"))
                except Exception:
                    pass
        return run
    return wrap


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def browser():
    o = Options()
    for a in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1400,1000", f"--user-data-dir={tempfile.mkdtemp()}"]:
        o.add_argument(a)
    o.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(executable_path=driver), options=o)


def wait(d, cond, timeout=30):
    # The app re-renders as events arrive: an element found a moment ago may be gone; look again.
    return WebDriverWait(d, timeout, poll_frequency=0.2,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(
        lambda _: cond())


def text(d, css):
    """The text of the first element matching `css`, read in one script call (never stale), or None."""
    return d.execute_script("const e=document.querySelector(arguments[0]);return e&&e.textContent", css)


def statuses(d, root="body"):
    return d.execute_script(
        "const o={};for(const li of document.querySelectorAll(arguments[0]+' li[data-check]'))"
        "o[li.dataset.check]=li.dataset.status;return o", root)


def all_green(st):
    # The rules replay (check 13) runs in the browser too (web/src/replay/).
    return all(st.get(c) == "passed" for c in CHECKS + ["replay"])


@step("lobby")
def lobby(d, base):
    d.get(base + "/")
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "tr[data-room=texas-holdem]"))
    assert "texas-holdem" in (text(d, "tr[data-room=texas-holdem]") or "")
    wait(d, lambda: int(text(d, "tr[data-room=texas-holdem] [data-testid=hands-played]") or 0) > 0, 60)
    d.save_screenshot(os.path.join(SHOTS, "lobby.png"))


@step("live-table")
def live_table(d, base):
    d.get(base + "/room/texas-holdem")
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "[data-testid=live] .seat"), 60)
    first = wait(d, lambda: text(d, "[data-testid=live] h1"))
    # The replay advances: the current log line moves on.
    cur = lambda: d.execute_script("const c=document.querySelector('[data-testid=live] .log .current');return c&&c.dataset.step")
    s0 = cur()
    wait(d, lambda: cur() != s0, 20)
    # A newer hand replaces it as the table plays on.
    wait(d, lambda: text(d, "[data-testid=live] h1") not in (None, first), 90)
    assert d.find_elements(By.CSS_SELECTOR, "[data-testid=hands] a")
    # The running table through the live feed: seats drawn from checked events, a hand audited.
    assert text(d, "[data-testid=feed-status]") == "watching", text(d, "[data-testid=feed-note]")
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "[data-testid=feed-table] .seat"), 60)
    wait(d, lambda: "all checks passed" in (text(d, "[data-testid=feed-note]") or ""), 90)
    d.save_screenshot(os.path.join(SHOTS, "live-table.png"))


@step("hand-page")
def hand_page(d, base, keyfile):
    d.get(base + "/room/texas-holdem")
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "[data-testid=hands] a"), 60)
    d.find_elements(By.CSS_SELECTOR, "[data-testid=hands] a")[0].click()
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "[data-testid=verdict]"))
    st = statuses(d)
    assert all_green(st), st
    assert d.execute_script("return document.querySelector('[data-testid=verdict]').dataset.ok") == "true"
    d.find_element(By.CSS_SELECTOR, "button[data-act=first]").click()
    d.find_element(By.CSS_SELECTOR, "button[data-act=last]").click()
    d.save_screenshot(os.path.join(SHOTS, "hand.png"))
    # The player's own key file, read in the page: its sealed cards open.
    d.find_element(By.CSS_SELECTOR, "[data-testid=keyfile]").send_keys(keyfile)
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=mycards] .card")) == 2)
    st = statuses(d)
    assert all_green(st), st
    assert "2 of your sealed cards opened" in (text(d, "li[data-check=opened-cards]") or "")
    d.save_screenshot(os.path.join(SHOTS, "hand-with-key.png"))


def drop_file(d, base, path, dealer):
    d.get(base + "/audit")
    d.find_element(By.CSS_SELECTOR, "[data-testid=dealer-key]").send_keys(dealer)
    d.find_element(By.CSS_SELECTOR, "[data-testid=file]").send_keys(path)
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "[data-testid=verdict]"))
    return statuses(d)


def sit_and_play(d, base):
    """Sits down from the lobby and plays by clicking (check, else call, else the first button) until a hand's audit is green."""
    d.get(base + "/")
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "tr[data-room=texas-holdem] [data-testid=sit-down]"))
    d.find_element(By.CSS_SELECTOR, "tr[data-room=texas-holdem] [data-testid=sit-down]").click()
    wait(d, lambda: text(d, "[data-testid=status]") == "seated", 30)
    key = d.execute_script("return JSON.parse(localStorage.getItem('claw-identity-v1'))")
    assert key["format"] == "claw-identity-v1" and len(key["player_id"]) == 64, key
    clicks = 0
    shot = False
    audit_at_first_click = None

    def step_once():
        """Acts when it is our turn; done once a hand we acted in has its audit."""
        nonlocal clicks, shot, audit_at_first_click
        assert not d.execute_script("return !document.querySelector('[data-testid=banner]').hidden"), text(d, "[data-testid=banner]")
        labels = d.execute_script("return [...document.querySelectorAll('[data-testid=actions] button.act')].map(b=>b.textContent)")
        if labels:
            if not shot:
                d.save_screenshot(os.path.join(SHOTS, f"play-turn-{d.get_window_size()['width']}.png"))
                shot = True
            pick = next((i for i, l in enumerate(labels) if l.startswith("check")), None)
            pick = pick if pick is not None else next((i for i, l in enumerate(labels) if l.startswith("call")), 0)
            if clicks == 0:
                audit_at_first_click = text(d, "[data-testid=hand-audit]")
            d.execute_script("document.querySelectorAll('[data-testid=actions] button.act')[arguments[0]].click()", pick)
            clicks += 1
        verdict = d.execute_script("return document.querySelector('[data-testid=hand-audit] [data-testid=verdict]') !== null")
        return clicks > 0 and verdict and text(d, "[data-testid=hand-audit]") != audit_at_first_click

    wait(d, step_once, 120)
    st = statuses(d, "[data-testid=hand-audit]")
    assert all_green(st), st
    mine = d.execute_script("return [...document.querySelectorAll('.seat.you .hole .card')].map(c=>c.title)")
    assert len(mine) == 2 and all(mine), mine
    assert "opened and match" in (text(d, "[data-testid=hand-audit] li[data-check=opened-cards]") or "")
    d.save_screenshot(os.path.join(SHOTS, f"play-audit-{d.get_window_size()['width']}.png"))
    print(f"     clicked {clicks} actions; cards {mine}", flush=True)


@step("play")
def play(d, base):
    sit_and_play(d, base)


@step("play-phone")
def play_phone(d, base):
    # Another player: a fresh key (the desktop player's seat stays held for its reconnect window).
    d.execute_script("localStorage.clear()")
    d.set_window_size(390, 844)
    try:
        sit_and_play(d, base)
        # Nothing wider than the screen: the table and the buttons fit.
        width = d.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390, f"page is {width}px wide on a 390px screen"
    finally:
        d.set_window_size(1400, 1000)


def tampering_proxy(listen_port, dealer_port, mutate):
    """A man in the middle on the game port: relays WebSocket connections to
    the dealer and rewrites the dealer's text frames with `mutate` (same
    length, so the frame headers stay valid)."""
    server = socket.create_server(("127.0.0.1", listen_port))

    def pump(src, dst, frames):
        buf = b""
        upgraded = not frames
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                if not frames:
                    dst.sendall(chunk)
                    continue
                buf += chunk
                if not upgraded:
                    end = buf.find(b"\r\n\r\n")
                    if end < 0:
                        continue
                    dst.sendall(buf[:end + 4])
                    buf, upgraded = buf[end + 4:], True
                while len(buf) >= 2:
                    n, off = buf[1] & 0x7F, 2
                    if n == 126:
                        n, off = int.from_bytes(buf[2:4], "big"), 4
                    elif n == 127:
                        n, off = int.from_bytes(buf[2:10], "big"), 10
                    if len(buf) < off + n:
                        break
                    head, payload, buf = buf[:off], buf[off:off + n], buf[off + n:]
                    if head[0] & 0x0F == 1:
                        changed = mutate(payload.decode()).encode()
                        assert len(changed) == len(payload)
                        payload = changed
                    dst.sendall(head + payload)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.close()
                except OSError:
                    pass

    def serve():
        while True:
            try:
                down, _ = server.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", dealer_port))
            threading.Thread(target=pump, args=(down, up, False), daemon=True).start()
            threading.Thread(target=pump, args=(up, down, True), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return server


def flip_signatures(text):
    """Every event's dealer signature changed in one hex digit (the chain is intact: no hash covers `sig`)."""
    m = re.search(r',"sig":"([0-9a-f])[0-9a-f]{127}"\}$', text)
    if not text.startswith('{"type":"event"') or not m:
        return text
    return text[:m.start(1)] + ("1" if m.group(1) == "0" else "0") + text[m.end(1):]


def listening(port):
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@step("play-tampered")
def play_tampered(d, bin_dir, work, procs):
    """A dealer whose invites (so the play page) point at a man in the middle
    that changes every dealer signature of a hand: the table page shows the
    red banner and offers no action."""
    game, proxy, http = free_port(), free_port(), free_port()
    procs.append(subprocess.Popen(
        [os.path.join(bin_dir, "claw-dealer"), "--game", "texas-holdem", "--listen", f"127.0.0.1:{game}",
         "--public-host", f"127.0.0.1:{proxy}", "--http-listen", f"127.0.0.1:{http}",
         "--data-dir", os.path.join(work, "data-mitm"), "--chips", "local", "--welcome", "10000",
         "--between-hands", "500ms", "--timeout", "10s", "--shutdown-grace", "1s"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait(d, lambda: listening(game) and listening(http), 30)
    mitm = tampering_proxy(proxy, game, flip_signatures)
    try:
        # The bot dials the dealer directly; only the browser goes through the proxy.
        key = json.load(urllib.request.urlopen(f"http://127.0.0.1:{http}/api/rooms"))["dealer"]
        procs.append(subprocess.Popen(
            [os.path.join(bin_dir, "claw-player"), "join", f"ws://127.0.0.1:{game}/texas-holdem#{key}",
             "--bot", "simple", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        d.execute_script("localStorage.clear()")
        d.get(f"http://127.0.0.1:{http}/play/texas-holdem")
        wait(d, lambda: d.execute_script("return !document.querySelector('[data-testid=banner]').hidden"), 60)
        banner = text(d, "[data-testid=banner]") or ""
        assert "VERIFICATION FAILED" in banner and "dealer-signatures" in banner, banner
        time.sleep(1)
        assert not d.find_elements(By.CSS_SELECTOR, "[data-testid=actions] button"), "an action offered after a failed check"
        assert text(d, "[data-testid=status]") == "stopped"
        d.save_screenshot(os.path.join(SHOTS, "play-tampered.png"))
        print(f"     {banner[:140]}", flush=True)
    finally:
        mitm.close()


# ---------- every game at the table page (issue 30): a person plays one hand of each, by clicking

GAMES = [  # game, SDK bots filling the other seats, their strategy, extra dealer flags
    # Every game against the dealer's own AIs (issue 30: one person, no terminal).
    ("texas-holdem", 0, "simple", ["--ai-seats", "1s", "--max-players", "2"]),
    ("blackjack", 0, "simple", ["--ai-seats", "1s", "--max-players", "2", "--min-players", "2"]),
    ("sam-gong", 0, "simple", ["--ai-seats", "1s", "--max-players", "2", "--reveal", "deferred", "--reveal-delay", "1s"]),
    ("dou-di-zhu", 0, "simple", ["--ai-seats", "1s"]),
    ("guandan", 0, "guandan-l1", ["--ai-seats", "1s", "--ai-level", "1"]),
]
# And one with SDK bots (`claw-player join --bot`) in the other seats.
GAMES_WITH_BOTS = [("texas-holdem", 2, "simple", [])]
# The seats the dealer's AIs take at each table above (every seat but the person's).
AI_SEATS = {"texas-holdem": 1, "blackjack": 1, "sam-gong": 1, "dou-di-zhu": 2, "guandan": 3}

# One click per turn, chosen from what the page offers: card games select with
# "Hint" (the first time by clicking the cards one by one) and press "Play";
# tribute and return click the card to give; else the first button present
# of this order (Dou Di Zhu: the highest bid).
PLAY_STEP = """
const q = (s) => document.querySelector(s), qa = (s) => [...document.querySelectorAll(s)];
const root = q('[data-testid=actions]');
const give = q('[data-testid=give]');
if (give) {
  const c = qa('[data-testid=actions] button.pick:not(:disabled)')[0];
  if (c && give.disabled) { c.click(); return 'pick'; }
  if (!give.disabled) { give.click(); return 'give'; }
}
const hint = q('[data-testid=hint]');
if (hint && !hint.disabled) {
  const play = q('[data-testid=play]');
  if (play && !play.disabled) { play.click(); return 'play'; }
  hint.click();
  if (!window.__clicked_cards) {
    // Once: the same cards again, by clicking them one by one.
    window.__clicked_cards = true;
    const sel = qa('[data-testid=actions] button.pick.selected');
    q('[data-testid=clear]').click();
    if (qa('[data-testid=actions] button.pick.selected').length) return 'clear failed';
    for (const b of sel) document.querySelector(`[data-testid=actions] button.pick[data-pos="${b.dataset.pos}"]`).click();
    return 'select:' + sel.length + ':' + !q('[data-testid=play]').disabled;
  }
  return 'hint';
}
const by = (t) => qa(`[data-testid=actions] button.act[data-type="${t}"]:not(:disabled)`);
for (const t of arguments[0]) { const b = by(t); if (b.length) { b[b.length - 1].click(); return t; } }
const any = qa('[data-testid=actions] button.act:not(:disabled)')[0];
if (any) { any.click(); return 'first'; }
return null;
"""
VOTE_STEP = """
const b = document.querySelector('[data-testid=vote] [data-testid=ready], [data-testid=vote] [data-testid=rematch-yes]');
if (b) b.click();
return !!b;
"""
PRIORITY = ["no-insurance", "stand", "check", "call", "bet", "bid", "pass", "vote", "fold"]


def play_game(d, bin_dir, work, procs, game, bots, strategy, extra, shot, width=None):
    game_port, http = free_port(), free_port()
    procs.append(subprocess.Popen(
        [os.path.join(bin_dir, "claw-dealer"), "--game", game, "--listen", f"127.0.0.1:{game_port}",
         "--http-listen", f"127.0.0.1:{http}", "--data-dir", os.path.join(work, f"data-{shot}"), "--chips", "local",
         "--welcome", "10000", "--between-hands", "2s", "--timeout", "30s", "--shutdown-grace", "1s", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait(d, lambda: listening(game_port) and listening(http), 30)
    key = json.load(urllib.request.urlopen(f"http://127.0.0.1:{http}/api/rooms"))["dealer"]
    d.execute_script("localStorage.clear()")
    if width:
        d.set_window_size(width, 844)
    try:
        d.get(f"http://127.0.0.1:{http}/play/{game}")
        wait(d, lambda: text(d, "[data-testid=status]") == "seated", 30)
        for _ in range(bots):
            procs.append(subprocess.Popen(
                [os.path.join(bin_dir, "claw-player"), "join", f"ws://127.0.0.1:{game_port}/{game}#{key}",
                 "--bot", strategy, "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        clicks, shots, first_hand, log = 0, False, None, []

        def step_once():
            nonlocal clicks, shots, first_hand
            assert d.execute_script("return document.querySelector('[data-testid=banner]').hidden"), text(d, "[data-testid=banner]")
            hand = text(d, "[data-testid=hand-audit]")
            if first_hand is not None and d.execute_script(
                    "return document.querySelector('[data-testid=hand-audit] [data-testid=verdict]') !== null") \
                    and hand != first_hand:
                st = statuses(d, "[data-testid=hand-audit]")
                # Every check green (the rules' replay: green where the browser runs it, else skipped).
                if all(st.get(c) == "passed" for c in CHECKS) and st.get("replay") in ("passed", "skipped") and shots:
                    return True
                assert not any(v == "failed" for v in st.values()), st
            # A ready check or a rematch vote (rooms with ready_check / rematch_vote): its button.
            if d.execute_script(VOTE_STEP):
                return False
            if not d.find_elements(By.CSS_SELECTOR, "[data-testid=actions] button"):
                return False
            # A hand in progress: cards on the table, and (card games) a selection ready to play.
            if game in ("dou-di-zhu", "guandan"):  # cards selected and "Play" enabled
                ready = d.execute_script("const p=document.querySelector('[data-testid=play]');"
                                         "return !!p && !p.disabled && !!document.querySelector('button.pick.selected')")
            else:  # this player's cards on the table
                ready = d.execute_script("return document.querySelectorAll('.seat.you .card:not(.back)').length > 0")
            if not shots and ready:
                d.save_screenshot(os.path.join(SHOTS, f"{shot}.png"))
                shots = True
            if first_hand is None:
                first_hand = hand
            did = d.execute_script(PLAY_STEP, PRIORITY)
            if did:
                log.append(did)
                assert not did.startswith("select:") or did.endswith(":true"), did
                assert did != "clear failed"
                clicks += 1
                time.sleep(0.15)
            return False

        wait(d, step_once, 240)
        assert shots, "no screenshot of the hand in progress"
        width_now = d.execute_script("return document.documentElement.scrollWidth")
        assert width is None or width_now <= width, f"page is {width_now}px wide on a {width}px screen"
        if not os.path.exists(os.path.join(SHOTS, f"{shot}.png")):
            d.save_screenshot(os.path.join(SHOTS, f"{shot}.png"))
        if game == "sam-gong":  # the banker queue (banker-queue), drawn under the seats
            assert d.find_elements(By.CSS_SELECTOR, "[data-testid=banker-queue] .pill"), "no banker queue"
        if "--ai-seats" in extra:  # the house's AIs marked at the table and in the lobby
            want = AI_SEATS[game]
            ais = len(d.find_elements(By.CSS_SELECTOR, "[data-testid=table] [data-testid=house-ai]"))
            assert ais == want, f"{ais} seats marked AI, {want} expected"
            d.get(f"http://127.0.0.1:{http}/")
            wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, f"tr[data-room={game}] [data-testid=house-ai]")) == want, 30)
        print(f"     {game}: {clicks} clicks ({' '.join(sorted(set(x.split(':')[0] for x in log)))}); audit green", flush=True)
    finally:
        if width:
            d.set_window_size(1400, 1000)


def play_games(d, bin_dir, work, procs):
    for game, bots, strategy, extra in GAMES:
        step(f"play-{game}")(lambda dd: play_game(dd, bin_dir, work, procs, game, bots, strategy, extra, f"play-{game}"))(d)
    for game, bots, strategy, extra in GAMES_WITH_BOTS:
        step(f"play-{game}-bots")(lambda dd: play_game(dd, bin_dir, work, procs, game, bots, strategy, extra, f"play-{game}-bots"))(d)
    step("play-dou-di-zhu-phone")(lambda dd: play_game(dd, bin_dir, work, procs, "dou-di-zhu", 2, "simple", [], "play-dou-di-zhu-phone", 390))(d)


@step("audit-honest")
def audit_honest(d, base, path, dealer):
    st = drop_file(d, base, path, dealer)
    assert all_green(st), st
    d.save_screenshot(os.path.join(SHOTS, "audit-honest.png"))


@step("audit-tampered")
def audit_tampered(d, base, tampered, dealer):
    for name, (path, check) in tampered.items():
        st = drop_file(d, base, path, dealer)
        assert st.get(check) == "failed", (name, st)
        before = CHECKS[:CHECKS.index(check)]
        assert all(st.get(c) == "passed" for c in before), (name, st)
        detail = text(d, f"li[data-check={check}] .detail")
        assert detail, name
        d.save_screenshot(os.path.join(SHOTS, f"audit-tampered-{name}.png"))
        print(f"     {name}: {check} red: {detail[:120]}", flush=True)


def tamper(src, work):
    """Tampered copies of an honest transcript and the check each must fail."""
    lines = open(src).read().splitlines()
    out = {}

    def write(name, ls, check):
        p = os.path.join(work, f"{name}.jsonl")
        open(p, "w").write("\n".join(ls) + "\n")
        out[name] = (p, check)

    # A leaf changed in game-start: its signature breaks when it ends a
    # burst, else the next event's prev (the chain) does.
    i = next(k for k, l in enumerate(lines) if '"type":"game-start"' in l)
    m = re.search(r'"leaves":\["([0-9a-f])', lines[i])
    c = "1" if m.group(1) == "0" else "0"
    check = "dealer-signatures" if re.search(r'"sig":"[0-9a-f]+"}\s*$', lines[i]) else "hash-chain"
    write("leaf", lines[:i] + [lines[i][:m.start(1)] + c + lines[i][m.end(1):]] + lines[i + 1:], check)
    # An event dropped: every signature holds, the chain breaks.
    k = next(k for k, l in enumerate(lines) if '"type":"chips"' in l)
    write("dropped-event", lines[:k] + lines[k + 1:], "hash-chain")
    # Another dealer key: the signatures are not the trusted dealer's.
    return out


def main():
    global SHOTS
    bin_dir, SHOTS = sys.argv[1], sys.argv[2]
    os.makedirs(SHOTS, exist_ok=True)
    work = tempfile.mkdtemp()
    port = free_port()
    dealer = subprocess.Popen(
        [os.path.join(bin_dir, "claw-dealer"), "--game", "texas-holdem", "--listen", "127.0.0.1:0",
         "--http-listen", f"127.0.0.1:{port}", "--data-dir", os.path.join(work, "data"), "--chips", "local", "--welcome", "10000",
         "--between-hands", "1500ms", "--timeout", "10s", "--spectator-delay", "2s", "--shutdown-grace", "1s"],
        stdout=subprocess.PIPE, stderr=open(os.path.join(work, "dealer.err"), "w"), text=True)
    procs = [dealer]
    try:
        url = dealer.stdout.readline().strip()
        assert url.startswith("ws://"), f"dealer printed {url!r}"
        dealer_key = url.rsplit("#", 1)[1]
        player = os.path.join(bin_dir, "claw-player")
        keyfile = os.path.join(work, "bot0.key")
        for i in range(3):
            procs.append(subprocess.Popen(
                [player, "join", url, "--bot", "simple", "--quiet", "--key", os.path.join(work, f"bot{i}.key"),
                 "--save-transcripts", os.path.join(work, f"hands{i}")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        base = f"http://127.0.0.1:{port}"
        d = browser()
        try:
            lobby(d, base)
            live_table(d, base)
            hand_page(d, base, keyfile)
            saved = os.path.join(work, "hands0")
            wait(d, lambda: os.path.isdir(saved) and os.listdir(saved), 60)
            honest = os.path.join(saved, sorted(os.listdir(saved))[0])
            audit_honest(d, base, honest, dealer_key)
            audit_tampered(d, base, tamper(honest, work), dealer_key)
            play(d, base)
            play_phone(d, base)
            play_tampered(d, bin_dir, work, procs)
            play_games(d, bin_dir, work, procs)
        finally:
            d.quit()
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
    failed = sum(1 for _, e in results if e)
    print(f"browser: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
