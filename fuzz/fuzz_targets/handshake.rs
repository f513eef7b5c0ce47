//! libFuzzer entry point of the `handshake` target (see `claw_fuzz::targets::handshake`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| claw_fuzz::targets::handshake(data));
