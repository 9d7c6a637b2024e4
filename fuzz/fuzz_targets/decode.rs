//! The message decoder: arbitrary bytes through the depth check, the JSON parser and the
//! JSON-RPC envelope. Nothing may panic, what decodes must say why it does not, and the direct
//! parser (`parse`) must agree with `decode` + `Message::from_value` on every input.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::fuzzing::{Incoming, Message, decode, encode_error, error_codes, parse};

fuzz_target!(|bytes: &[u8]| {
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
                    assert!(serde_json::from_slice::<serde_json::Value>(&reply).is_ok());
                }
            }
            Err(error) => assert_eq!(error.code, error_codes::PARSE_ERROR),
        }
    }
});
