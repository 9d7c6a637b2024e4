//! Cursors for every list method: opaque to clients, an offset to us.

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::protocol::ErrorObject;

const ENGINE: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The offset a request's `cursor` points at: 0 without one, -32602 for one we did not mint.
pub(crate) fn offset(params: &Map<String, Value>) -> Result<usize, ErrorObject> {
    let invalid = || {
        ErrorObject::invalid_params(
            "invalid cursor: pass back a `nextCursor` exactly as it was received",
        )
    };
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(0),
        Some(Value::String(cursor)) => {
            let bytes = ENGINE.decode(cursor).map_err(|_| invalid())?;
            let text = std::str::from_utf8(&bytes).map_err(|_| invalid())?;
            text.strip_prefix("offset:")
                .and_then(|n| n.parse().ok())
                .ok_or_else(invalid)
        }
        Some(_) => Err(invalid()),
    }
}

/// The cursor of the page that starts at `offset`.
pub(crate) fn cursor(offset: usize) -> String {
    ENGINE.encode(format!("offset:{offset}"))
}

/// Writes `{"<key>": [items...], "nextCursor"?: ...}` for the page of `items` at `offset`.
/// Items are already-serialized JSON objects. An offset past the end is an invalid cursor.
pub(crate) fn page(
    key: &str,
    items: &[String],
    offset: usize,
    page_size: usize,
) -> Result<String, ErrorObject> {
    if offset > items.len() || (offset == items.len() && offset != 0) {
        return Err(ErrorObject::invalid_params(
            "invalid cursor: it points past the end of the list",
        ));
    }
    let end = offset.saturating_add(page_size.max(1)).min(items.len());
    let slice = &items[offset..end];
    let mut out = String::with_capacity(
        slice.iter().map(String::len).sum::<usize>() + slice.len() + key.len() + 48,
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
        out.push_str(&cursor(end));
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
        let first: Value = serde_json::from_str(&page("tools", &items, 0, 2).unwrap()).unwrap();
        assert_eq!(first["tools"], json!([{"n": 0}, {"n": 1}]));
        let params = json!({"cursor": first["nextCursor"]});
        let next = offset(params.as_object().unwrap()).unwrap();
        let second: Value = serde_json::from_str(&page("tools", &items, next, 2).unwrap()).unwrap();
        assert_eq!(second["tools"], json!([{"n": 2}, {"n": 3}]));
        let last = offset(json!({"cursor": second["nextCursor"]}).as_object().unwrap()).unwrap();
        let last: Value = serde_json::from_str(&page("tools", &items, last, 2).unwrap()).unwrap();
        assert_eq!(last, json!({"tools": [{"n": 4}]}));
    }

    #[test]
    fn foreign_cursors_are_invalid_params() {
        for cursor in [json!("nope"), json!(3), json!(cursor(99))] {
            let params = json!({"cursor": cursor});
            let result = offset(params.as_object().unwrap()).and_then(|o| page("x", &[], o, 10));
            assert_eq!(result.unwrap_err().code, -32602);
        }
        assert_eq!(page("x", &[], 0, 10).unwrap(), r#"{"x":[]}"#);
    }
}
