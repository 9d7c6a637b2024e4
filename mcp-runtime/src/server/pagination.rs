//! Cursors for every list method: opaque to clients, an offset into one registry snapshot to us.
//!
//! A cursor names the offset of the next page and the generation of the registry snapshot that
//! minted it. Lists change while a server runs ([`ServerHandle`](crate::ServerHandle)), so a
//! client may come back with a cursor from an older snapshot; one that now points past the end
//! gets an empty last page (the client was sent `list_changed` and will list again), while a
//! cursor past the end of the very list that minted it was never ours: -32602.

use base64::Engine as _;
use serde_json::Value;

use crate::protocol::ErrorObject;
use crate::protocol::Members;

const ENGINE: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Where a list request starts: its cursor's offset, and the generation of the snapshot that
/// minted the cursor (none without a cursor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) offset: usize,
    pub(crate) generation: Option<u64>,
}

/// Where a request's `cursor` points: the start without one, -32602 for one we did not mint.
pub(crate) fn offset(params: &impl Members) -> Result<Position, ErrorObject> {
    let invalid = || {
        ErrorObject::invalid_params(
            "invalid cursor: pass back a `nextCursor` exactly as it was received",
        )
    };
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(Position::default()),
        Some(Value::String(cursor)) => {
            let bytes = ENGINE.decode(cursor).map_err(|_| invalid())?;
            let text = std::str::from_utf8(&bytes).map_err(|_| invalid())?;
            let (offset, generation) = text
                .strip_prefix("offset:")
                .and_then(|rest| rest.split_once("@generation:"))
                .ok_or_else(invalid)?;
            Ok(Position {
                offset: offset.parse().map_err(|_| invalid())?,
                generation: Some(generation.parse().map_err(|_| invalid())?),
            })
        }
        Some(_) => Err(invalid()),
    }
}

/// The cursor of the page that starts at `offset` in the list of snapshot `generation`.
pub(crate) fn cursor(offset: usize, generation: u64) -> String {
    ENGINE.encode(format!("offset:{offset}@generation:{generation}"))
}

/// Writes `{"<key>": [items...], "nextCursor"?: ...}` for the page of `items` at `from`, in the
/// list of snapshot `generation`. Items are already-serialized JSON objects.
pub(crate) fn page(
    key: &str,
    items: &[String],
    from: Position,
    page_size: usize,
    generation: u64,
) -> Result<String, ErrorObject> {
    let offset = from.offset;
    if offset > items.len() || (offset == items.len() && offset != 0) {
        if from.generation.is_some_and(|g| g != generation) {
            // The list shrank since this cursor was minted.
            return Ok(format!("{{\"{key}\":[]}}"));
        }
        return Err(ErrorObject::invalid_params(
            "invalid cursor: it points past the end of the list",
        ));
    }
    let end = offset.saturating_add(page_size.max(1)).min(items.len());
    // Checked even though `offset <= end <= items.len()` holds: the offset is the client's.
    let slice = items.get(offset..end).unwrap_or_default();
    let mut out = String::with_capacity(
        slice.iter().map(String::len).sum::<usize>() + slice.len() + key.len() + 64,
    );
    out.push_str("{\"");
    out.push_str(key);
    out.push_str("\":[");
    for (i, item) in slice.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out.push(']');
    if end < items.len() {
        out.push_str(",\"nextCursor\":\"");
        out.push_str(&cursor(end, generation));
        out.push('"');
    }
    out.push('}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages_chain_through_cursors() {
        let items: Vec<String> = (0..5).map(|i| json!({"n": i}).to_string()).collect();
        let start = Position::default();
        let first: Value =
            serde_json::from_str(&page("tools", &items, start, 2, 0).unwrap()).unwrap();
        assert_eq!(first["tools"], json!([{"n": 0}, {"n": 1}]));
        let params = json!({"cursor": first["nextCursor"]});
        let next = offset(params.as_object().unwrap()).unwrap();
        let second: Value =
            serde_json::from_str(&page("tools", &items, next, 2, 0).unwrap()).unwrap();
        assert_eq!(second["tools"], json!([{"n": 2}, {"n": 3}]));
        let last = offset(json!({"cursor": second["nextCursor"]}).as_object().unwrap()).unwrap();
        let last: Value =
            serde_json::from_str(&page("tools", &items, last, 2, 0).unwrap()).unwrap();
        assert_eq!(last, json!({"tools": [{"n": 4}]}));
    }

    #[test]
    fn foreign_cursors_are_invalid_params() {
        let legacy = ENGINE.encode("offset:1");
        for cursor in [json!("nope"), json!(3), json!(cursor(99, 4)), json!(legacy)] {
            let params = json!({"cursor": cursor});
            let result = offset(params.as_object().unwrap()).and_then(|o| page("x", &[], o, 10, 4));
            assert_eq!(result.unwrap_err().code, -32602);
        }
        assert_eq!(
            page("x", &[], Position::default(), 10, 4).unwrap(),
            r#"{"x":[]}"#
        );
    }

    #[test]
    fn a_cursor_from_an_older_snapshot_past_the_end_gets_an_empty_page() {
        let items: Vec<String> = (0..3).map(|i| json!({"n": i}).to_string()).collect();
        let stale = offset(json!({"cursor": cursor(5, 1)}).as_object().unwrap()).unwrap();
        assert_eq!(
            page("tools", &items, stale, 2, 2).unwrap(),
            r#"{"tools":[]}"#
        );
        // Within the newer list, it simply continues there.
        let within = offset(json!({"cursor": cursor(2, 1)}).as_object().unwrap()).unwrap();
        let page: Value =
            serde_json::from_str(&page("tools", &items, within, 2, 2).unwrap()).unwrap();
        assert_eq!(page, json!({"tools": [{"n": 2}]}));
    }
}
