//! The message decoder: arbitrary bytes through the depth check, the JSON parser and the
//! JSON-RPC envelope. Nothing may panic, what decodes must say why it does not, and the direct
//! parser (`parse`) must agree with `decode` + `Message::from_value` on every input.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::fuzzing::{
    Incoming, Message, decode, encode_error, error_codes, id_in_prefix, parse,
};

fuzz_target!(|bytes: &[u8]| {
    // The id of a line cut short (an oversized stdio line): any prefix, never a panic, and an id
    // read from a prefix is the one the whole message has.
    let whole = match parse(bytes, 64) {
        Ok(Incoming::Single(Ok(Message::Request(request)))) => Some(request.id),
        _ => None,
    };
    for end in (0..=bytes.len()).take(512) {
        let id = id_in_prefix(&bytes[..end]);
        if let (Some(id), Some(whole)) = (&id, &whole)
            && !has_duplicate_id(bytes)
        {
            assert_eq!(id, whole, "a prefix's id differs from the message's");
        }
    }
    for max_depth in [1, 4, 64] {
        let direct = parse(bytes, max_depth);
        let general = decode(bytes, max_depth).map(|value| match value {
            serde_json::Value::Array(items) => Incoming::Batch(items),
            value => Incoming::Single(Message::from_value(value)),
        });
        assert_eq!(direct, general, "parse and decode disagree");
        match decode(bytes, max_depth) {
            Ok(value) => {
                if let serde_json::Value::Array(batch) = &value {
                    for item in batch {
                        let _ = Message::from_value(item.clone());
                    }
                }
                if let Err(invalid) = Message::from_value(value) {
                    // Every refusal is answerable, with the id when it could be read.
                    let reply = encode_error(invalid.id.as_ref(), &invalid.error);
                    let reply: serde_json::Value =
                        serde_json::from_slice(&reply).expect("an error reply is JSON");
                    // `id` is always there: the message's, or `null` (JSON-RPC 2.0).
                    let id = reply.get("id").expect("an error reply has an `id`");
                    assert_eq!(id.is_null(), invalid.id.is_none());
                }
            }
            Err(error) => assert_eq!(error.code, error_codes::PARSE_ERROR),
        }
    }
});

/// Whether `"id"` may appear more than once (a JSON object with a repeated key keeps the last,
/// the prefix reader the first): counted anywhere in the text, and any `\u` escape (which may
/// spell `id`) counts as a repeat, to stay conservative.
fn has_duplicate_id(bytes: &[u8]) -> bool {
    bytes.windows(4).filter(|w| w == b"\"id\"").count() > 1
        || bytes.windows(2).any(|w| w == b"\\u")
}
