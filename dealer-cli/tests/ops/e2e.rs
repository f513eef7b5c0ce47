//! First contact: the README's `claw-dealer` commands run as written (only
//! the hand count made small, and the serving ports made free ones), each
//! on its default data directory under a private temporary directory and
//! home; each exits as the README says. Two SDK players join the README's
//! no-bots dealer and play a hand on its play-money welcome chips. Around
//! them: `--serve` keeps the demo's web app up, `--log-format json` puts
//! only JSON on stderr, a dealer reachable from the network grants nothing
//! unasked, and an unreachable points URL is blamed on what it is.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::Duration;

use claw_player::bots::strategy;
use claw_player::node::{NodeConfig as PlayerConfig, PlayerNode};
use claw_player::play::play_bot;
use claw_protocol::Identity;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::stop::DealerProc;
use crate::GUARD;

/// The README's prefix of a `claw-dealer` command built by cargo.
const CARGO_RUN: &str = "cargo run --release -p claw-dealer-cli -- ";

/// The README's `claw-dealer` command lines (default build), as argument lists.
fn readme_dealer_commands() -> Vec<Vec<String>> {
    let readme = include_str!("../../../README.md");
    readme
        .lines()
        .filter_map(|l| l.trim().strip_prefix(CARGO_RUN))
        .map(|rest| {
            let args = rest.split(" #").next().unwrap_or(rest);
            args.split_whitespace().map(str::to_owned).collect()
        })
        .collect()
}

/// The value after `flag` in `args`.
fn value_of<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).map(String::as_str)
}

/// A private environment: the temporary directory, the home (per-user data
/// directory) and the working directory of the commands.
struct Sandbox {
    _root: tempfile::TempDir,
    tmp: PathBuf,
    home: PathBuf,
    cwd: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = ["tmp", "home", "cwd"].iter().map(|d| root.path().join(d)).collect();
        dirs.iter().for_each(|d| std::fs::create_dir(d).unwrap());
        let [tmp, home, cwd] = <[PathBuf; 3]>::try_from(dirs).unwrap();
        Sandbox { _root: root, tmp, home, cwd }
    }

    /// `claw-dealer ARGS` in the sandbox, output piped.
    fn command(&self, args: &[String]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_claw-dealer"));
        c.args(args)
            .current_dir(&self.cwd)
            .env("TMPDIR", &self.tmp)
            .env("HOME", &self.home)
            .env_remove("XDG_DATA_HOME")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        c
    }

    /// Nothing was left in the working directory (no `claw-data/`).
    fn assert_cwd_clean(&self, what: &str) {
        let left: Vec<_> = std::fs::read_dir(&self.cwd).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{what} left {left:?} in its working directory");
    }
}

/// Runs `command` to its exit, guarded.
async fn run(mut command: Command) -> Output {
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("claw-dealer starts");
    let pid = child.id();
    match tokio::time::timeout(GUARD, tokio::task::spawn_blocking(move || child.wait_with_output())).await {
        Ok(r) => r.expect("wait task").expect("wait"),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            panic!("guard: claw-dealer did not exit")
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Seats `n` SDK players with fresh identities at `invite` and plays one
/// hand; every player must have audited it OK.
async fn play_one_hand(invite: &claw_player::Invite, game: &str, n: u8) {
    let mut tasks = Vec::new();
    for i in 0..n {
        let me = Arc::new(Identity::generate(&mut rand::rngs::OsRng));
        let node = tokio::time::timeout(GUARD, PlayerNode::connect(invite, me, PlayerConfig::default()))
            .await
            .expect("guard: connect")
            .unwrap_or_else(|e| panic!("player {i} could not join: {e}"));
        let game = game.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut node = node;
            let s = strategy(&game, "simple").expect("strategy");
            let mut rng = ChaCha20Rng::seed_from_u64(u64::from(i));
            let r = play_bot(&mut node, s.as_ref(), &mut rng, Some(1), |_| {}).await.expect("plays");
            node.close().await;
            r
        }));
    }
    for t in tasks {
        let r = tokio::time::timeout(GUARD, t).await.expect("guard: a hand").expect("player task");
        assert_eq!((r.hands, r.audited_ok), (1, 1), "{r:?}");
        assert!(r.failures.is_empty(), "{r:?}");
    }
}

/// Waits until `log` has a line containing `needle`; returns that line.
async fn wait_line(log: &Path, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + GUARD;
    loop {
        let t = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(l) = t.lines().find(|l| l.contains(needle)) {
            return l.to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "guard: no {needle:?} in the log:\n{t}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `GET path` on `addr` (HTTP/1.0); the status code and body.
fn http_get(addr: &str, path: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("HTTP port answers");
    s.set_read_timeout(Some(GUARD)).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let code = resp.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = resp.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (code, body)
}

/// The first `http://ADDR/` in `line`: ADDR.
fn http_addr(line: &str) -> String {
    let rest = line.split("http://").nth(1).expect("an http:// URL");
    rest.split('/').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_readme_dealer_command_works_as_written() {
    let commands = readme_dealer_commands();
    assert!(commands.len() >= 7, "the README's dealer commands: {commands:?}");
    // Every game has its demo line.
    let mut demo_games: Vec<&str> = commands
        .iter()
        .filter(|a| a.iter().any(|x| x == "--bots"))
        .filter_map(|a| value_of(a, "--game"))
        .collect();
    demo_games.sort();
    demo_games.dedup();
    let mut games = claw_games::registry::names();
    games.sort();
    assert_eq!(demo_games, games, "a demo line per game in the README");

    for args in &commands {
        let sb = Sandbox::new();
        let game = value_of(args, "--game").expect("--game").to_owned();
        // Small hand counts; the serving ports made free ones (7777/7778 may be taken).
        let mut args = args.clone();
        if let Some(i) = args.iter().position(|a| a == "--hands") {
            args[i + 1] = "2".into();
        }
        let demo = args.iter().any(|a| a == "--bots");
        let serve = args.iter().any(|a| a == "--serve");
        if serve || !demo {
            args.extend(["--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"].map(String::from));
        }
        match (demo, serve) {
            (true, false) => {
                let out = run(sb.command(&args)).await;
                let t = text(&out);
                assert_eq!(out.status.code(), Some(0), "{args:?}: {t}");
                assert!(t.contains("2 hands audited OK"), "{args:?}: {t}");
                // A fresh data directory under the temporary directory, said.
                let stdout = String::from_utf8_lossy(&out.stdout);
                let line = stdout.lines().find(|l| l.starts_with("data directory: ")).expect("data line");
                let dir = PathBuf::from(line["data directory: ".len()..].split(" (").next().unwrap());
                assert!(dir.starts_with(&sb.tmp) && dir.join("rooms").is_dir(), "{args:?}: {t}");
                assert!(t.contains("--serve"), "the demo says how to watch its hands: {t}");
                sb.assert_cwd_clean(&format!("{args:?}"));
            }
            (true, true) => {
                let log = sb.tmp.join("serve.log");
                let mut c = sb.command(&args);
                c.stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
                let child = c.stdout(Stdio::piped()).spawn().expect("claw-dealer starts");
                let proc = ServeProc(Some(child));
                let line = wait_line(&log, "serving the web app at").await;
                let addr = http_addr(&line);
                let (code, body) = http_get(&addr, &format!("/api/rooms/{game}/hands"));
                assert_eq!(code, 200, "{body}");
                let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                let served = v["hands"].as_array().map_or(0, Vec::len)
                    + v["not_yet_public"].as_u64().unwrap_or(0) as usize;
                assert_eq!(served, 2, "the demo's hands are served: {body}");
                let (code, _) = http_get(&addr, &format!("/room/{game}"));
                assert_eq!(code, 200);
                let (status, stdout) = proc.terminate().await;
                let log_text = std::fs::read_to_string(&log).unwrap();
                assert_eq!(status.code(), Some(0), "{log_text}");
                assert!(stdout.contains("2 hands audited OK"), "{stdout}\n{log_text}");
                sb.assert_cwd_clean(&format!("{args:?}"));
            }
            (false, _) => {
                let log = sb.tmp.join("dealer.log");
                let mut c = sb.command(&args);
                c.stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
                let dealer = DealerProc::start_with(c, log.clone()).await;
                let welcome = dealer.log_text();
                assert!(
                    welcome.contains("welcome chips: 10000 play-money chips")
                        && welcome.contains("--welcome 0"),
                    "the play-money default is said in one line: {welcome}"
                );
                play_one_hand(&dealer.invite(), &game, 2).await;
                let (status, log_text) = dealer.terminate().await;
                assert_eq!(status.code(), Some(0), "{log_text}");
                let data = sb.home.join(".local/share/claw");
                assert!(data.join("dealer.key").is_file(), "per-user data directory {data:?}: {log_text}");
                assert!(log_text.contains(&format!("data directory {}", data.display())), "{log_text}");
                sb.assert_cwd_clean(&format!("{args:?}"));
            }
        }
    }
}

/// A `claw-dealer --serve` process; killed on drop.
struct ServeProc(Option<std::process::Child>);

impl ServeProc {
    /// SIGTERM, then its exit status and stdout.
    async fn terminate(mut self) -> (std::process::ExitStatus, String) {
        let mut child = self.0.take().unwrap();
        let pid = child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let out = child.stdout.take().unwrap();
        let status = tokio::time::timeout(GUARD, tokio::task::spawn_blocking(move || child.wait()))
            .await
            .expect("guard: exit after SIGTERM")
            .unwrap()
            .unwrap();
        let mut stdout = String::new();
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            stdout.push_str(&l);
            stdout.push('\n');
        }
        (status, stdout)
    }
}

impl Drop for ServeProc {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Every line of `stderr` is one JSON object.
fn assert_all_json(stderr: &str, what: &str) {
    assert!(!stderr.trim().is_empty(), "{what}: nothing on stderr");
    for l in stderr.lines() {
        let v: Result<serde_json::Value, _> = serde_json::from_str(l);
        assert!(
            v.as_ref().is_ok_and(serde_json::Value::is_object),
            "{what}: not a JSON object: {l:?}\n{stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_put_only_json_objects_on_stderr() {
    let sb = Sandbox::new();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // A serving dealer, started and stopped.
    let log = sb.tmp.join("serving.log");
    let mut c = sb.command(&args(&[
        "--game",
        "texas-holdem",
        "--listen",
        "127.0.0.1:0",
        "--http-listen",
        "127.0.0.1:0",
        "--log-format",
        "json",
    ]));
    c.stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let dealer = DealerProc::start_with(c, log).await;
    let (status, stderr) = dealer.terminate().await;
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_all_json(&stderr, "serving dealer");
    assert!(stderr.contains("welcome chips") && stderr.contains("SIGTERM"), "{stderr}");

    // The demo: its summary on stdout, JSON only on stderr.
    let demo =
        run(sb.command(&args(&["--game", "dou-di-zhu", "--bots", "--hands", "1", "--log-format", "json"])))
            .await;
    assert_eq!(demo.status.code(), Some(0), "{}", text(&demo));
    assert!(String::from_utf8_lossy(&demo.stdout).contains("1 hands audited OK"), "{}", text(&demo));
    assert_all_json(&String::from_utf8_lossy(&demo.stderr), "demo");

    // An error, and a usage error, are JSON too.
    for (a, code) in [
        (args(&["--game", "blackjack", "--public-host", "cards.example.com", "--log-format", "json"]), 1),
        (args(&["--game", "no-such-game", "--log-format=json"]), 2),
    ] {
        let out = run(sb.command(&a)).await;
        assert_eq!(out.status.code(), Some(code), "{a:?}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_all_json(&stderr, &format!("{a:?}"));
        assert!(stderr.contains(r#""level":"ERROR""#), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dealer_reachable_from_the_network_grants_nothing_unasked() {
    let sb = Sandbox::new();
    let public = |game: &str| {
        [
            "--game",
            game,
            "--listen",
            "127.0.0.1:0",
            "--http-listen",
            "off",
            "--public-host",
            "cards.example.com",
        ]
        .map(String::from)
        .to_vec()
    };
    // Blackjack needs its bankroll given.
    let out = run(sb.command(&public("blackjack"))).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("--house-bankroll"), "{}", text(&out));

    let log = sb.tmp.join("public.log");
    let mut c = sb.command(&public("texas-holdem"));
    c.stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let child = c.stdout(Stdio::piped()).spawn().unwrap();
    let proc = ServeProc(Some(child));
    let line = wait_line(&log, "welcome chips:").await;
    assert!(line.contains("welcome chips: off"), "{line}");
    let (status, _) = proc.terminate().await;
    assert_eq!(status.code(), Some(0), "{}", std::fs::read_to_string(&log).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_loopback_points_url_is_connection_refused_not_a_private_network() {
    let sb = Sandbox::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/");
    let args = ["--game", "texas-holdem", "--listen", "127.0.0.1:0", "--http-listen", "off"]
        .into_iter()
        .chain(["--chips-url", url.as_str(), "--chips-token", "t0ken", "--data-dir", "d"])
        .map(String::from)
        .collect::<Vec<_>>();
    let out = run(sb.command(&args)).await;
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or_default();
    assert!(last.contains(&format!("points service at {url}")) && last.contains("connection refused"), "{t}");
    assert!(!last.contains("--chips-allow-private"), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_flag_of_help_is_in_the_dealer_docs_flag_table() {
    let sb = Sandbox::new();
    let out = run(sb.command(&["--help".to_owned()])).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    let docs = include_str!("../../../docs/dealer.md");
    let table: String = docs.lines().filter(|l| l.starts_with("| `-")).collect::<Vec<_>>().join("\n");
    let flags: Vec<&str> = help
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        // `--flag <VALUE>` or `-h, --help`
        .filter_map(|l| l.split_whitespace().take(2).find(|w| w.starts_with("--")))
        .map(|w| w.trim_end_matches(','))
        .collect();
    assert!(flags.len() > 50, "{flags:?}\n{help}");
    let missing: Vec<&&str> = flags.iter().filter(|f| !table.contains(&format!("`{f}"))).collect();
    assert!(missing.is_empty(), "flags of --help missing from docs/dealer.md's flag table: {missing:?}");
}
