//! SPEC §12's "default" rows are the node's `Limits::default()`: each row's
//! numbers after "default" are read from SPEC.md and compared with the code.

use std::time::Duration;

use claw_engine::room::config::Limits;

/// The value cell of the SPEC §12 row whose first cell starts with `label`.
fn row<'a>(section: &'a str, label: &str) -> &'a str {
    section
        .lines()
        .find_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            if cells.len() > 3 && cells[1].starts_with(label) {
                Some(cells[2])
            } else {
                None
            }
        })
        .unwrap_or_else(|| panic!("SPEC §12 has no row {label:?}"))
}

/// The numbers written after the first "default" of `cell` (SPEC groups
/// digits by threes with spaces: `262 144`).
fn defaults(cell: &str) -> Vec<u64> {
    let rest = &cell[cell.find("default").unwrap_or_else(|| panic!("no default in {cell:?}"))..];
    let chars: Vec<char> = rest.chars().collect();
    let mut out = Vec::new();
    let mut cur: Option<u64> = None;
    for (i, c) in chars.iter().enumerate() {
        let grouping = *c == ' '
            && cur.is_some()
            && chars.get(i + 1..i + 4).is_some_and(|g| g.iter().all(char::is_ascii_digit))
            && !chars.get(i + 4).is_some_and(char::is_ascii_digit);
        match c.to_digit(10) {
            Some(d) => cur = Some(cur.unwrap_or(0) * 10 + u64::from(d)),
            None if grouping => {}
            None => out.extend(cur.take()),
        }
    }
    out.extend(cur);
    out
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

#[test]
fn spec_section_12_defaults_are_the_nodes_limits() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../SPEC.md")).unwrap();
    let start = text.find("\n## 12.").expect("SPEC.md has a §12");
    let section = &text[start..text.find("\n## 13.").expect("SPEC.md has a §13")];
    let l = Limits::default();
    let n = |v: usize| v as u64;
    let rows: [(&str, Vec<u64>); 19] = [
        ("Node transport limit", vec![n(l.max_frame_bytes)]),
        ("Player messages", vec![u64::from(l.rate_per_sec), u64::from(l.rate_burst)]),
        (
            "Raw frames read from one connection",
            vec![u64::from(l.frame_rate_per_sec), u64::from(l.frame_burst)],
        ),
        ("Bad or rate-limited frames in a row", vec![u64::from(l.flood_close_after)]),
        ("Send budget of a connection", vec![n(l.send_budget_bytes)]),
        ("Grace of a connection behind", vec![ms(l.send_grace)]),
        ("Heartbeat", vec![ms(l.ping_interval)]),
        ("Unseated connection without", vec![ms(l.idle_timeout)]),
        ("Unseated connections per room", vec![n(l.max_watchers)]),
        (
            "Queries answered per room",
            vec![u64::from(l.room_queries_per_sec), u64::from(l.room_queries_per_sec)],
        ),
        ("Authenticated connections per identity", vec![n(l.max_conns_per_identity)]),
        ("Open connections per source address", vec![n(l.max_conns_per_addr)]),
        ("Connections in the handshake per source address", vec![n(l.max_handshakes_per_addr)]),
        ("Handshake steps", vec![n(l.handshake_concurrency)]),
        ("Dealer HTTP port: a request's first byte", vec![ms(l.http_header_timeout)]),
        ("Dealer HTTP port: the end of a request's headers", vec![ms(l.http_body_timeout)]),
        ("Dealer HTTP port: connection with no request", vec![ms(l.http_idle_timeout)]),
        ("Dealer HTTP port: open connections", vec![n(l.http_max_connections)]),
        (
            "Dealer HTTP port: archive reads per source address",
            vec![u64::from(l.http_archive_reads_per_sec), u64::from(l.http_archive_burst)],
        ),
    ];
    for (label, want) in rows {
        let cell = row(section, label);
        let got = defaults(cell);
        assert_eq!(&got[..want.len().min(got.len())], &want[..], "SPEC §12 row {label:?}: {cell}");
    }
    // The node-wide handshake cap follows the per-address one in its row.
    let cell = row(section, "Connections in the handshake per source address");
    assert!(defaults(cell).contains(&n(l.max_handshakes)), "{cell}");
    let cell = row(section, "Dealer HTTP port: open connections");
    assert!(defaults(cell).contains(&n(l.http_max_conns_per_addr)), "{cell}");
    assert_eq!(defaults("default 1 000/s, burst 200; 262 144 bytes"), vec![1000, 200, 262_144]);
}
