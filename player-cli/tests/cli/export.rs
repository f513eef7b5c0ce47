//! `claw-player export`: the audited hands are written, a hand that fails
//! its audit and an unreadable file are said on stderr, as
//! `claw-player: …` lines or, with `--log-format json`, JSON log objects.

use crate::audit::write_hands;
use crate::player;

use serde_json::Value;

#[test]
fn export_writes_the_audited_hands_and_says_the_rest_in_the_log_format() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ids) = write_hands(dir.path(), "texas-holdem", 2, Some(1));
    let missing = dir.path().join("missing.jsonl");
    let run = |json: bool| {
        let mut c = player();
        c.args(["export", "--format", "text"]).arg(&path).arg(&missing);
        if json {
            c.args(["--log-format", "json"]);
        }
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "an unreadable file: {stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(stdout.contains(&ids[0]) && !stdout.contains(&ids[1]), "only the good hand: {stdout}");
        stderr
    };

    let text = run(false);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines.iter().all(|l| l.starts_with("claw-player: ")), "{text}");
    assert!(lines[0].contains(&format!("hand {} not exported: ", ids[1])), "{text}");
    assert!(lines[1].contains("missing.jsonl"), "{text}");
    assert_eq!(lines[2], "claw-player: 1 hands exported");

    let json = run(true);
    let lines: Vec<Value> =
        json.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(lines.len(), 3, "{json}");
    let said =
        |i: usize| (lines[i]["level"].as_str().unwrap(), lines[i]["fields"]["message"].as_str().unwrap());
    assert!(lines.iter().all(|v| v["target"] == "claw_player"), "{json}");
    assert_eq!(said(0).0, "ERROR");
    assert!(said(0).1.contains("not exported"), "{json}");
    assert_eq!(said(1).0, "ERROR");
    assert_eq!(said(2), ("INFO", "1 hands exported"));
}
