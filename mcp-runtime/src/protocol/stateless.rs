//! The 2026-07-28 envelope and `input_required` exchange as both sides see them: the `_meta`
//! keys, adding an envelope to a request, reading a result's input requests, and building the
//! retry that answers them (SEP-2575, SEP-2322). The server reads and writes these (server/
//! stateless), the clients (`client`, `testing`) send and answer them.

use serde_json::{Map, Value};

/// `_meta` key: the revision a stateless request is sent under.
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities, for this request.
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: who the client is.
pub(crate) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the least severe log level the client wants for this request.
pub(crate) const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key on results: who the server is.
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key on listen notifications: which subscription they belong to.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// Adds `envelope`'s keys to a request's `_meta`, keeping what the caller put there.
#[cfg_attr(not(any(feature = "client", feature = "testing")), allow(dead_code))]
pub(crate) fn add_envelope(params: &mut Map<String, Value>, envelope: &Map<String, Value>) {
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        for (key, value) in envelope {
            meta.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
}

/// One input request of an `input_required` result: its key, method and params.
pub(crate) type InputRequest = (String, String, Map<String, Value>);

/// What an `input_required` result asks. `None` for any other result, which completes the
/// request.
#[cfg_attr(not(any(feature = "client", feature = "testing")), allow(dead_code))]
pub(crate) fn input_requests(result: &Value) -> Option<Vec<InputRequest>> {
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return None;
    }
    let Some(Value::Object(requests)) = result.get("inputRequests") else {
        return Some(Vec::new());
    };
    Some(
        requests
            .iter()
            .map(|(key, request)| {
                let method = request.get("method").and_then(Value::as_str).unwrap_or("");
                let params = match request.get("params") {
                    Some(Value::Object(params)) => params.clone(),
                    _ => Map::new(),
                };
                (key.clone(), method.to_owned(), params)
            })
            .collect(),
    )
}

/// Turns a request's params into its retry: the answers under `inputResponses`, and the
/// result's `requestState` echoed exactly (or none, when the result had none).
#[cfg_attr(not(any(feature = "client", feature = "testing")), allow(dead_code))]
pub(crate) fn answer_input(
    params: &mut Map<String, Value>,
    responses: Map<String, Value>,
    result: &Value,
) {
    params.insert("inputResponses".into(), Value::Object(responses));
    match result.get("requestState") {
        Some(state) => params.insert("requestState".into(), state.clone()),
        None => params.remove("requestState"),
    };
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_input_required_result_is_answered_by_a_retry() {
        let result = json!({"resultType": "input_required", "requestState": "s1",
            "inputRequests": {"name": {"method": "elicitation/create", "params": {"message": "?"}}}});
        let requests = input_requests(&result).unwrap();
        assert_eq!(requests[0].0, "name");
        assert_eq!(requests[0].1, "elicitation/create");
        assert_eq!(requests[0].2["message"], "?");
        assert_eq!(input_requests(&json!({"resultType": "complete"})), None);
        assert_eq!(input_requests(&json!({"content": []})), None);

        let Value::Object(mut params) = json!({"name": "t", "requestState": "old"}) else {
            unreachable!()
        };
        let Value::Object(answers) = json!({"name": {"action": "decline"}}) else {
            unreachable!()
        };
        answer_input(&mut params, answers.clone(), &result);
        assert_eq!(params["requestState"], "s1");
        answer_input(
            &mut params,
            answers,
            &json!({"resultType": "input_required"}),
        );
        assert!(!params.contains_key("requestState"));

        let Value::Object(envelope) =
            json!({PROTOCOL_VERSION_KEY: "2026-07-28", LOG_LEVEL_KEY: "info"})
        else {
            unreachable!()
        };
        let Value::Object(mut request) = json!({"_meta": {LOG_LEVEL_KEY: "debug"}}) else {
            unreachable!()
        };
        add_envelope(&mut request, &envelope);
        assert_eq!(request["_meta"][LOG_LEVEL_KEY], "debug");
        assert_eq!(request["_meta"][PROTOCOL_VERSION_KEY], "2026-07-28");
    }
}
