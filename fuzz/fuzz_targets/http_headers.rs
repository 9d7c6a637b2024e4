//! The HTTP header guard: arbitrary `Host`, `Origin`, `Accept`, `MCP-Protocol-Version`,
//! `Mcp-Session-Id` and `Content-Type` values (and repeats of them) through the checks a request
//! meets before its body is read. Nothing may panic, and every answer is a status the guard
//! gives: 200 (passed), 400 or 403.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::fuzzing::fuzz_guard;

const NAMES: [&str; 6] = [
    "host",
    "origin",
    "accept",
    "mcp-protocol-version",
    "mcp-session-id",
    "content-type",
];

fuzz_target!(|bytes: &[u8]| {
    // Each header is one selector byte (which name) and its value up to the next 0 byte.
    let mut headers = Vec::new();
    for part in bytes.split(|&b| b == 0) {
        if let Some((&selector, value)) = part.split_first() {
            headers.push((NAMES[usize::from(selector) % NAMES.len()], value));
        }
    }
    for status in fuzz_guard(&headers) {
        assert!(matches!(status, 200 | 400 | 403 | 415), "unexpected status {status}");
    }
});
