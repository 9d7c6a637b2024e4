//! The handshake, the JSON-RPC envelope and the errors every client may meet.

use std::time::Duration;

use mcp_runtime::testing::{Client, ClientError};
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

use crate::fixtures::{add, slow};

fn server() -> Server {
    Server::builder().tool(add).tool(slow)
}

async fn raw_client() -> Client {
    Client::builder()
        .skip_initialize()
        .timeout(Duration::from_secs(5))
        .connect(server())
        .await
        .unwrap()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn initialize_echoes_every_supported_handshake_version() {
    for version in ProtocolVersion::HANDSHAKE {
        let client = Client::builder()
            .protocol_version(version)
            .connect(server())
            .await
            .unwrap();
        let result = client.initialize_result().unwrap();
        assert_eq!(result["protocolVersion"], version.as_str());
    }
}

#[tokio::test]
async fn initialize_counter_offers_the_latest_handshake_version() {
    for asked in ["1999-01-01", "2026-07-28", "2025-11-25-draft"] {
        let client = Client::builder()
            .protocol_version(asked)
            .connect(server())
            .await
            .unwrap();
        assert_eq!(
            client.initialize_result().unwrap()["protocolVersion"],
            "2025-11-25"
        );
    }
}

#[tokio::test]
async fn server_info_defaults_to_the_crate_that_wrote_the_tools() {
    let client = Client::connect(server()).await.unwrap();
    let info = &client.initialize_result().unwrap()["serverInfo"];
    assert_eq!(info["name"], "mcp-tests");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn server_info_is_shaped_by_revision() {
    let server = || {
        server()
            .name("demo")
            .version("9.9.9")
            .title("Demo")
            .website_url("https://demo.test")
    };
    let old = Client::builder()
        .protocol_version(ProtocolVersion::V2025_03_26)
        .connect(server())
        .await
        .unwrap();
    assert_eq!(
        old.initialize_result().unwrap()["serverInfo"],
        json!({"name": "demo", "version": "9.9.9"})
    );
    let new = Client::connect(server()).await.unwrap();
    assert_eq!(
        new.initialize_result().unwrap()["serverInfo"],
        json!({"name": "demo", "version": "9.9.9", "title": "Demo", "websiteUrl": "https://demo.test"})
    );
}

#[tokio::test]
async fn capabilities_advertise_only_what_is_registered() {
    let with_tools = Client::connect(server()).await.unwrap();
    assert_eq!(
        with_tools.initialize_result().unwrap()["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    let empty = Client::connect(Server::builder().name("empty").version("1"))
        .await
        .unwrap();
    assert_eq!(
        empty.initialize_result().unwrap()["capabilities"],
        json!({"logging": {}})
    );
    let error = empty.request("tools/list", json!({})).await.unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32601);
}

#[tokio::test]
async fn ping_works_before_initialize_and_other_requests_do_not() {
    let client = raw_client().await;
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
    let error = client.request("tools/list", json!({})).await.unwrap_err();
    let error = error.rpc().unwrap();
    assert_eq!(error.code, -32600);
    assert!(error.message.contains("initialize"), "{}", error.message);
}

#[tokio::test]
async fn a_second_initialize_is_refused() {
    let client = Client::connect(server()).await.unwrap();
    let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let error = client.request("initialize", params).await.unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32600);
}

#[tokio::test]
async fn malformed_initialize_params_are_invalid_params() {
    let client = raw_client().await;
    let error = client
        .request("initialize", json!({"protocolVersion": 7}))
        .await
        .unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32602);
    // The session is still waiting for a good one.
    client.send_line(INITIALIZE).unwrap();
    assert_eq!(
        client.next_message().await.unwrap()["result"]["protocolVersion"],
        "2025-11-25"
    );
}

#[tokio::test]
async fn a_discover_probe_for_an_unknown_revision_lists_handshake_ones_so_clients_fall_back() {
    let client = raw_client().await;
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2027-01-01", "io.modelcontextprotocol/clientCapabilities": {}}});
    let error = client.request("server/discover", meta).await.unwrap_err();
    let error = error.rpc().unwrap();
    assert_eq!(error.code, -32022);
    let supported = &error.data.as_ref().unwrap()["supported"];
    assert!(supported.as_array().unwrap().contains(&json!("2025-11-25")));
    client.send_line(INITIALIZE).unwrap();
    assert_eq!(
        client.next_message().await.unwrap()["result"]["protocolVersion"],
        "2025-11-25"
    );
}

#[tokio::test]
async fn unparseable_input_is_a_parse_error_with_a_null_id_and_service_goes_on() {
    let client = Client::connect(server()).await.unwrap();
    for garbage in ["garbage", "{\"jsonrpc\":", "\u{7f}\u{1}"] {
        let reply = client.send_line_and_receive(garbage).await.unwrap();
        assert_eq!(reply["error"]["code"], -32700, "{garbage}");
        assert_eq!(reply.get("id"), Some(&Value::Null), "{garbage}: {reply}");
    }
    let invalid_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}".to_vec();
    assert_eq!(
        client.send_line_and_receive(invalid_utf8).await.unwrap()["error"]["code"],
        -32700
    );
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test]
async fn invalid_envelopes_are_invalid_requests() {
    let client = Client::connect(server()).await.unwrap();
    let cases = [
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, None),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, None),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, None),
        (
            r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
            Some(json!(5)),
        ),
        (r#"{"id":"x","method":"ping"}"#, Some(json!("x"))),
        (r#"{"jsonrpc":"2.0","id":6,"method":3}"#, Some(json!(6))),
        (r#"[1]"#, None),
        (r#"42"#, None),
    ];
    for (line, id) in cases {
        let reply = client.send_line_and_receive(line).await.unwrap();
        let code = &reply["error"]["code"];
        assert!(code == -32600, "{line}: {reply}");
        assert_eq!(
            reply.get("id").cloned(),
            Some(id.unwrap_or(Value::Null)),
            "{line}"
        );
    }
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test]
async fn unknown_methods_are_method_not_found() {
    let client = Client::connect(server()).await.unwrap();
    let error = client
        .request("tools/frobnicate", json!({}))
        .await
        .unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32601);
    assert!(error.rpc().unwrap().message.contains("tools/frobnicate"));
}

#[tokio::test]
async fn ids_are_echoed_with_their_type() {
    let client = Client::connect(server()).await.unwrap();
    let reply = client
        .send_line_and_receive(r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#)
        .await;
    // A string id is not one of the client's numeric ids, so it lands in the inbox.
    assert_eq!(
        reply.unwrap(),
        json!({"jsonrpc": "2.0", "id": "1", "result": {}})
    );
}

#[tokio::test]
async fn notifications_are_never_answered_and_unprefixed_spellings_work() {
    let client = Client::builder()
        .timeout(Duration::from_millis(1500))
        .connect(server())
        .await
        .unwrap();
    client.notify("notifications/whatever", json!({})).unwrap();
    client.notify("initialized", json!({})).unwrap();
    // A long call, cancelled with the unprefixed spelling: no response may follow.
    client
        .send_line(r#"{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"slow","arguments":{"millis":60000}}}"#)
        .unwrap();
    client
        .notify("cancelled", json!({"requestId": "long", "reason": "test"}))
        .unwrap();
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
    match client.next_message().await {
        Err(ClientError::Timeout(_)) => {}
        other => panic!("nothing should have been sent, got {other:?}"),
    }
}

#[tokio::test]
async fn batches_are_served_on_2025_03_26_only() {
    let client = Client::builder()
        .protocol_version(ProtocolVersion::V2025_03_26)
        .connect(server())
        .await
        .unwrap();
    let batch = r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}},{"jsonrpc":"2.0","id":"c","method":"initialize","params":{}}]"#;
    let reply = client.send_line_and_receive(batch).await.unwrap();
    let Value::Array(replies) = reply else {
        panic!("a batch gets an array back: {reply}")
    };
    assert_eq!(replies.len(), 3);
    assert_eq!(
        replies[0],
        json!({"jsonrpc": "2.0", "id": "a", "result": {}})
    );
    assert_eq!(replies[1]["result"]["content"][0]["text"], "3");
    assert_eq!(replies[2]["id"], "c");
    assert_eq!(replies[2]["error"]["code"], -32600);

    let newer = Client::connect(server()).await.unwrap();
    let reply = newer
        .send_line_and_receive(r#"[{"jsonrpc":"2.0","id":"a","method":"ping"}]"#)
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32600);
    assert_eq!(reply.get("id"), Some(&Value::Null), "{reply}");
}

#[tokio::test]
async fn an_oversized_line_is_refused_and_the_session_goes_on() {
    let client = Client::connect(server().max_message_size(1024))
        .await
        .unwrap();
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4000)
    );
    let reply = client.send_line_and_receive(big).await.unwrap();
    assert_eq!(reply["error"]["code"], -32600);
    assert!(reply["error"]["message"].as_str().unwrap().contains("1024"));
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test]
async fn a_slow_tool_does_not_hold_up_other_requests() {
    let client = Client::connect(server()).await.unwrap();
    let slow = client.call_tool("slow", json!({"millis": 1500}));
    let ping = async {
        let started = std::time::Instant::now();
        client.request("ping", json!({})).await.unwrap();
        started.elapsed()
    };
    let (slow, ping_took) = tokio::join!(slow, ping);
    assert_eq!(slow.unwrap().text(), "done");
    assert!(
        ping_took < Duration::from_millis(1500),
        "ping waited for the slow tool: {ping_took:?}"
    );
}

#[tokio::test]
async fn duplicate_request_ids_in_flight_are_refused() {
    let client = Client::connect(server()).await.unwrap();
    let call = r#"{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"slow","arguments":{"millis":500}}}"#;
    client.send_line(call).unwrap();
    client.send_line(call).unwrap();
    let first = client.next_message().await.unwrap();
    assert_eq!(first["error"]["code"], -32600, "{first}");
    let second = client.next_message().await.unwrap();
    assert_eq!(second["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn a_batch_takes_a_slot_per_message_so_the_window_bounds_it() {
    let client = Client::builder()
        .protocol_version(ProtocolVersion::V2025_03_26)
        .connect(server().max_in_flight_requests(3))
        .await
        .unwrap();
    let batch = |n: usize| {
        let pings: Vec<Value> = (0..n)
            .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"}))
            .collect();
        Value::Array(pings).to_string()
    };
    let reply = client.send_line_and_receive(batch(3)).await.unwrap();
    assert_eq!(reply.as_array().map(Vec::len), Some(3), "{reply}");
    // Four messages need four slots of three: refused whole, and the session goes on.
    let reply = client.send_line_and_receive(batch(4)).await.unwrap();
    assert_eq!(reply["error"]["code"], -32000, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("too many requests in flight"),
        "{reply}"
    );
    assert_eq!(client.request("ping", json!({})).await.unwrap(), json!({}));
}
