//! End-to-end tests live in tests/tests/e2e/ (one binary). This library holds their shared
//! helpers: start a real dealer node on 127.0.0.1 and seat bots on it.

pub mod harness;
