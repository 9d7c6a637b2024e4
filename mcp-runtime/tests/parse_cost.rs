//! `ParseCost` against what parsing really allocates: for hostile shapes of JSON (and a few
//! ordinary ones), the bound taken before parsing is never below all that `serde_json` allocates
//! while it builds the `Value` (every block, as if none were freed: above its peak), counted by
//! `dhat`'s heap profiler with glibc's header and rounding on each block, nor below what the
//! `Value` holds once built. A test binary of its own: the profiler is the process's allocator.

use mcp_runtime::protocol::ParseCost;

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

/// What glibc's malloc adds to each block at most: its header and its rounding to 16 bytes.
const PER_BLOCK: usize = 24;

/// Everything parsing `text` allocated (a bound of its peak: every block it ever took, as if none
/// were freed), and what it still holds once parsed, each block with its overhead.
fn measured(text: &[u8]) -> (usize, usize) {
    let before = dhat::HeapStats::get();
    let value: serde_json::Value = serde_json::from_slice(text).expect("the shapes are JSON");
    let after = dhat::HeapStats::get();
    let taken = usize::try_from(after.total_bytes - before.total_bytes).unwrap()
        + PER_BLOCK * usize::try_from(after.total_blocks - before.total_blocks).unwrap();
    let held = (after.curr_bytes - before.curr_bytes)
        + PER_BLOCK * (after.curr_blocks - before.curr_blocks);
    drop(value);
    (taken, held)
}

/// A JSON array of `item`, repeated to about `size` bytes of text.
fn array_of(item: &str, size: usize) -> String {
    let mut text = String::with_capacity(size + item.len() + 2);
    text.push('[');
    while text.len() + item.len() + 2 < size {
        text.push_str(item);
        text.push(',');
    }
    text.push_str(item);
    text.push(']');
    text
}

#[test]
fn the_bound_is_never_below_what_parsing_allocates() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let mut object = String::from("{");
    for i in 0..40_000 {
        object.push_str(&format!("\"k{i:x}\":0,"));
    }
    object.push_str("\"z\":0}");
    let mut nested = String::new();
    for _ in 0..60 {
        nested.push_str("{\"a\":[");
    }
    nested.push('1');
    for _ in 0..60 {
        nested.push_str("]}");
    }
    let mut shapes = vec![
        array_of("0", 1 << 18),
        array_of("[]", 1 << 18),
        array_of("{}", 1 << 18),
        array_of("\"\"", 1 << 18),
        array_of("\"a\"", 1 << 18),
        array_of("[0]", 1 << 18),
        array_of("{\"a\":0}", 1 << 18),
        array_of("[[[0]]]", 1 << 18),
        array_of("1.5e300", 1 << 18),
        array_of("\"\\u00e9\\n\"", 1 << 18),
        array_of("{\"key\":\"value\",\"n\":[1,2,3]}", 1 << 18),
        object,
        nested,
        format!("[\"{}\"]", "x".repeat(1 << 18)),
        format!("[\"{}\"]", "\\\"".repeat(1 << 17)),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#
            .to_owned(),
        r#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}"#
            .to_owned(),
    ];
    // Small ones, where the cheap bound is taken as it is.
    for size in [2, 30, 200, 2_000] {
        shapes.push(array_of("[0]", size));
        shapes.push(array_of("{\"a\":0}", size));
    }
    for text in &shapes {
        let cost = ParseCost::of(text.as_bytes());
        let (taken, held) = measured(text.as_bytes());
        let head = text.get(..40).unwrap_or(text);
        assert!(
            cost.peak >= taken,
            "{head}…: {taken} allocated, {} bounded",
            cost.peak
        );
        assert!(
            cost.held >= held,
            "{head}…: {held} held, {} bounded",
            cost.held
        );
    }
}
