//! A coverage-free mutator: byte edits, splices, and JSON-aware edits of
//! valid seeds (numbers at the edges of their types, odd strings, missing,
//! repeated or unknown fields, wrong types), stacked a few at a time.

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde_json::{Map, Value};

/// Tokens that often break parsers.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "false",
    "-0",
    "1e999",
    "-1",
    "18446744073709551616",
    "9223372036854775808",
    "0.5",
    "\n",
    " ",
    "\u{feff}",
    "é",
    "\"type\":",
    "\"sig\":",
    "00",
    "ff",
    "\u{10ffff}",
];

/// Numbers at the edges of the integer types and beyond.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "255",
    "256",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "1e308",
    "1.5",
    "-0.0",
    "1000000000000000",
    "1000000000000000000",
];

/// A mutator with its own seeded CSPRNG (so a run is reproducible from its seed).
pub struct Mutator {
    rng: ChaCha20Rng,
}

impl Mutator {
    /// A mutator drawing from `rng`.
    pub fn new(rng: ChaCha20Rng) -> Mutator {
        Mutator { rng }
    }

    /// The generator, for the driver's own choices.
    pub fn rng(&mut self) -> &mut ChaCha20Rng {
        &mut self.rng
    }

    /// A mutant of `seed`; `other` is a second seed for splicing.
    pub fn mutate(&mut self, seed: &[u8], other: &[u8]) -> Vec<u8> {
        let mut out = seed.to_vec();
        let rounds = 1 + self.rng.gen_range(0..4);
        for _ in 0..rounds {
            match self.rng.gen_range(0..10) {
                0..=3 => self.json(&mut out),
                4 => self.splice(&mut out, other),
                _ => self.bytes(&mut out),
            }
        }
        if out.len() > 256 * 1024 {
            out.truncate(256 * 1024);
        }
        out
    }

    fn bytes(&mut self, out: &mut Vec<u8>) {
        let r = &mut self.rng;
        let len = out.len();
        match r.gen_range(0..7) {
            0 if len > 0 => {
                let i = r.gen_range(0..len);
                out[i] ^= 1 << r.gen_range(0..8);
            }
            1 if len > 0 => {
                let i = r.gen_range(0..len);
                out[i] = r.gen();
            }
            2 if len > 0 => {
                let a = r.gen_range(0..len);
                let b = (a + r.gen_range(1..=16.min(len - a))).min(len);
                out.drain(a..b);
            }
            3 if len > 0 => {
                let a = r.gen_range(0..len);
                let b = (a + r.gen_range(1..=64.min(len - a))).min(len);
                let piece = out[a..b].to_vec();
                let at = r.gen_range(0..=len);
                out.splice(at..at, piece);
            }
            4 => {
                let t = TOKENS.choose(r).copied().unwrap_or("{");
                let at = r.gen_range(0..=len);
                out.splice(at..at, t.bytes());
            }
            5 => {
                // Replace a digit run with an edge number.
                let digits: Vec<usize> = (0..len).filter(|&i| out[i].is_ascii_digit()).collect();
                if let Some(&i) = digits.choose(r) {
                    let mut j = i;
                    while j < len && out[j].is_ascii_digit() {
                        j += 1;
                    }
                    let n = NUMBERS.choose(r).copied().unwrap_or("0");
                    out.splice(i..j, n.bytes());
                }
            }
            _ if len > 0 => {
                let at = r.gen_range(0..len);
                out.truncate(at);
            }
            _ => out.push(r.gen()),
        }
    }

    fn splice(&mut self, out: &mut Vec<u8>, other: &[u8]) {
        if out.is_empty() || other.is_empty() {
            return;
        }
        let a = self.rng.gen_range(0..out.len());
        let b = self.rng.gen_range(0..other.len());
        out.truncate(a);
        out.extend_from_slice(&other[b..]);
    }

    /// Edits one JSON document of the input: the whole input, or one line of it.
    fn json(&mut self, out: &mut Vec<u8>) {
        let Ok(text) = std::str::from_utf8(out) else { return self.bytes(out) };
        let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let candidates: Vec<usize> =
            (0..lines.len()).filter(|&i| serde_json::from_str::<Value>(&lines[i]).is_ok()).collect();
        let Some(&i) = candidates.choose(&mut self.rng) else { return self.bytes(out) };
        let Ok(mut v) = serde_json::from_str::<Value>(&lines[i]) else { return };
        let nodes = count(&v);
        let target = self.rng.gen_range(0..nodes);
        let mut seen = 0;
        self.edit(&mut v, target, &mut seen);
        lines[i] = v.to_string();
        *out = lines.join("\n").into_bytes();
    }

    /// Edits the `target`-th node (pre-order) of `v`.
    fn edit(&mut self, v: &mut Value, target: usize, seen: &mut usize) -> bool {
        if *seen == target {
            *v = self.replacement(v);
            return true;
        }
        *seen += 1;
        match v {
            Value::Array(items) => {
                for item in items.iter_mut() {
                    if self.edit(item, target, seen) {
                        return true;
                    }
                }
                false
            }
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    if let Some(item) = map.get_mut(&k) {
                        if self.edit(item, target, seen) {
                            return true;
                        }
                    }
                }
                false
            }
            _ => false,
        }
    }

    fn replacement(&mut self, v: &Value) -> Value {
        let r = &mut self.rng;
        match (v, r.gen_range(0..8)) {
            (Value::Object(map), 0..=2) => {
                let mut map = map.clone();
                let keys: Vec<String> = map.keys().cloned().collect();
                match (r.gen_range(0..3), keys.choose(r)) {
                    (0, Some(k)) => {
                        map.remove(k);
                    }
                    (1, Some(k)) => {
                        let other = keys.choose(r).cloned().unwrap_or_default();
                        if let Some(val) = map.get(&other).cloned() {
                            map.insert(k.clone(), val);
                        }
                    }
                    _ => {
                        map.insert("x-unknown".into(), Value::from(1));
                    }
                }
                Value::Object(map)
            }
            (Value::Array(items), 0..=2) => {
                let mut items = items.clone();
                match r.gen_range(0..4) {
                    0 if !items.is_empty() => {
                        let i = r.gen_range(0..items.len());
                        items.remove(i);
                    }
                    1 if !items.is_empty() => {
                        let i = r.gen_range(0..items.len());
                        let dup = items[i].clone();
                        items.push(dup);
                    }
                    2 if items.len() > 1 => {
                        let last = items.len() - 1;
                        items.swap(0, last);
                    }
                    _ => items.clear(),
                }
                Value::Array(items)
            }
            (Value::Number(_), 0..=4) => {
                let n = NUMBERS.choose(r).copied().unwrap_or("0");
                serde_json::from_str(n).unwrap_or(Value::Null)
            }
            (Value::String(s), 0..=4) => Value::String(match r.gen_range(0..6) {
                0 => String::new(),
                1 => "a".repeat(r.gen_range(60..70_000)),
                2 => s.chars().rev().collect(),
                3 => format!("{s}\u{0}"),
                4 if !s.is_empty() => {
                    let mut b = s.clone().into_bytes();
                    let i = r.gen_range(0..b.len());
                    b[i] = if b[i] == b'0' { b'f' } else { b'0' };
                    String::from_utf8(b).unwrap_or_default()
                }
                _ => "é\u{1F600}".into(),
            }),
            (_, 5) => Value::Null,
            (_, 6) => Value::Array(vec![v.clone()]),
            _ => match r.gen_range(0..5) {
                0 => Value::Bool(true),
                1 => Value::from(-1),
                2 => Value::String("0".into()),
                3 => Value::Object(Map::new()),
                _ => Value::from(u64::MAX),
            },
        }
    }
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(items) => items.iter().map(count).sum(),
        Value::Object(map) => map.values().map(count).sum(),
        _ => 0,
    }
}
