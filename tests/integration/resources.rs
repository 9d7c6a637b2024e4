//! Resources, templates, subscriptions and pagination as a client sees them.

use std::time::Duration;

use mcp_runtime::testing::{Client, ClientError};
use mcp_runtime::{ProtocolVersion, Server};
use serde_json::{Value, json};

use crate::fixtures::*;

fn server() -> Server {
    Server::builder()
        .resource(static_text)
        .resource(binary)
        .resource(config)
        .resource(note)
        .resource(file)
        .resource(raw)
        .resource(search_items)
        .resource(tree)
}

async fn read(client: &Client, uri: &str) -> Result<Value, ClientError> {
    client.request("resources/read", json!({"uri": uri})).await
}

async fn read_text(client: &Client, uri: &str) -> String {
    let result = read(client, uri).await.unwrap();
    assert_eq!(result["contents"][0]["uri"], uri);
    result["contents"][0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn capabilities_advertise_resources_and_completions() {
    let client = Client::connect(server()).await.unwrap();
    assert_eq!(
        client.initialize_result().unwrap()["capabilities"],
        json!({"resources": {"subscribe": true, "listChanged": true}, "completions": {}, "logging": {}})
    );
}

#[tokio::test]
async fn static_resources_and_listed_instances_are_in_resources_list() {
    let client = Client::connect(server()).await.unwrap();
    let list = client.request("resources/list", json!({})).await.unwrap();
    assert_eq!(
        list["resources"],
        json!([
            {"uri": "test://binary", "name": "binary", "description": "Some bytes.", "mimeType": "image/png", "size": 4},
            {"uri": "test://config", "name": "config", "title": "Configuration", "description": "Settings, as JSON."},
            {"uri": "test://static", "name": "static_text", "description": "Plain text.", "mimeType": "text/plain",
             "annotations": {"audience": ["user"], "priority": 0.5}},
            {"uri": "notes://1", "name": "note-1"},
            {"uri": "notes://2", "name": "note-2"},
        ])
    );
}

#[tokio::test]
async fn templates_are_in_resources_templates_list() {
    let client = Client::connect(server()).await.unwrap();
    let list = client
        .request("resources/templates/list", json!({}))
        .await
        .unwrap();
    let templates: Vec<&str> = list["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(templates.len(), 5);
    for expected in [
        "notes://{id}",
        "files://{+path}",
        "search://items{?q,limit}",
        "tree://root{/segments*}",
    ] {
        assert!(templates.contains(&expected), "{templates:?}");
    }
    let note = list["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["uriTemplate"] == "notes://{id}")
        .unwrap();
    assert_eq!(
        note,
        &json!({"uriTemplate": "notes://{id}", "name": "note", "description": "A note by number.", "mimeType": "text/plain"})
    );
}

#[tokio::test]
async fn reads_return_text_blob_and_json_with_the_uri_read() {
    let client = Client::connect(server()).await.unwrap();
    let text = read(&client, "test://static").await.unwrap();
    assert_eq!(
        text,
        json!({"contents": [{"uri": "test://static", "mimeType": "text/plain", "text": "hello"}]})
    );
    let blob = read(&client, "test://binary").await.unwrap();
    assert_eq!(
        blob,
        json!({"contents": [{"uri": "test://binary", "mimeType": "image/png", "blob": "iVBORw=="}]})
    );
    let json_contents = read(&client, "test://config").await.unwrap();
    assert_eq!(json_contents["contents"][0]["mimeType"], "application/json");
    let parsed: Value =
        serde_json::from_str(json_contents["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(parsed["colour"], "blue");
}

#[tokio::test]
async fn template_variables_are_decoded_and_parsed() {
    let client = Client::connect(server()).await.unwrap();
    assert_eq!(read_text(&client, "notes://42").await, "note 42");
    assert_eq!(read_text(&client, "notes://%34%32").await, "note 42");
    for bad in ["notes://abc", "notes://-1", "notes://caf%C3%A9"] {
        let error = read(&client, bad).await.unwrap_err();
        let error = error.rpc().unwrap();
        assert_eq!(error.code, -32602, "{bad}");
        assert!(error.message.contains("`id`"), "{bad}: {}", error.message);
    }
}

#[tokio::test]
async fn missing_resources_are_not_found_with_the_revision_s_code() {
    let client = Client::connect(server()).await.unwrap();
    for uri in ["nothing://here", "notes://101"] {
        let error = read(&client, uri).await.unwrap_err();
        let error = error.rpc().unwrap();
        assert_eq!(error.code, -32002, "{uri}");
        assert_eq!(error.data, Some(json!({"uri": uri})));
    }
}

#[tokio::test]
async fn reserved_expansion_refuses_escapes_unless_allowed() {
    let client = Client::connect(server()).await.unwrap();
    assert_eq!(
        read_text(&client, "files://docs/readme.md").await,
        "file docs/readme.md"
    );
    for escape in [
        "files://../etc/passwd",
        "files://a/../../etc/passwd",
        "files:///etc/passwd",
        "files://%2e%2e/x",
        "files://a%00b",
    ] {
        let error = read(&client, escape).await.unwrap_err();
        let error = error.rpc().unwrap();
        assert_eq!(error.code, -32602, "{escape}");
        assert!(
            error.message.contains("`path`"),
            "{escape}: {}",
            error.message
        );
    }
    assert_eq!(
        read_text(&client, "raw://../etc/passwd").await,
        "raw ../etc/passwd"
    );
    // A `..` that stays inside the directory is no escape.
    assert_eq!(
        read_text(&client, "files://docs/../readme.md").await,
        "file docs/../readme.md"
    );
    assert_eq!(read_text(&client, "files://a/..").await, "file a/..");
}

#[tokio::test]
async fn query_and_exploded_variables_bind() {
    let client = Client::connect(server()).await.unwrap();
    assert_eq!(
        read_text(&client, "search://items?q=rust&limit=3").await,
        "q=Some(\"rust\") limit=3"
    );
    assert_eq!(
        read_text(&client, "search://items?limit=3&q=a%20b").await,
        "q=Some(\"a b\") limit=3"
    );
    assert_eq!(
        read_text(&client, "search://items").await,
        "q=None limit=10"
    );
    assert_eq!(
        read_text(&client, "tree://root/a/b/c").await,
        "3 segments at 2025-11-25: a|b|c"
    );
}

#[tokio::test]
async fn not_found_is_minus_32002_on_every_handshake_revision() {
    for version in ProtocolVersion::HANDSHAKE {
        let client = Client::builder()
            .protocol_version(version)
            .connect(server())
            .await
            .unwrap();
        let error = read(&client, "nothing://here").await.unwrap_err();
        assert_eq!(error.rpc().unwrap().code, -32002);
    }
}

#[tokio::test]
async fn subscribe_and_unsubscribe_answer_empty_objects_and_gate_updates() {
    let service = server().build().unwrap();
    let quick = || {
        Client::builder()
            .timeout(Duration::from_millis(500))
            .connect_service(&service)
    };
    let subscriber = quick().await.unwrap();
    let bystander = quick().await.unwrap();
    assert_eq!(
        subscriber
            .request("resources/subscribe", json!({"uri": "notes://1"}))
            .await
            .unwrap(),
        json!({})
    );
    service.handle().resource_updated("notes://1");
    let update = subscriber.next_message().await.unwrap();
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "notes://1"}})
    );
    assert!(matches!(
        bystander.next_message().await,
        Err(ClientError::Timeout(_))
    ));
    assert_eq!(
        subscriber
            .request("resources/unsubscribe", json!({"uri": "notes://1"}))
            .await
            .unwrap(),
        json!({})
    );
    service.handle().resource_updated("notes://1");
    assert!(matches!(
        subscriber.next_message().await,
        Err(ClientError::Timeout(_))
    ));
    service.handle().resources_list_changed();
    for client in [&subscriber, &bystander] {
        let note = client.next_message().await.unwrap();
        assert_eq!(
            note,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
        );
    }
    // Tools are not served here, so their list never changes.
    service.handle().tools_list_changed();
    assert!(matches!(
        subscriber.next_message().await,
        Err(ClientError::Timeout(_))
    ));
}

#[tokio::test]
async fn template_variables_complete() {
    let client = Client::connect(server()).await.unwrap();
    let complete = |value: &str, context: Value| {
        client.request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "notes://{id}"}, "argument": {"name": "id", "value": value}, "context": context}),
        )
    };
    let result = complete("14", json!({})).await.unwrap();
    assert_eq!(
        result["completion"]["values"],
        json!([
            "14", "140", "141", "142", "143", "144", "145", "146", "147", "148", "149"
        ])
    );
    let all = complete("", json!({})).await.unwrap();
    assert_eq!(all["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(all["completion"]["total"], 150);
    assert_eq!(all["completion"]["hasMore"], true);
    let with_context = complete("x1", json!({"arguments": {"base": "x"}}))
        .await
        .unwrap();
    assert_eq!(with_context["completion"]["values"][0], "x1");
    let unknown = client
        .request("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "nope://{x}"}, "argument": {"name": "x", "value": ""}}))
        .await
        .unwrap_err();
    assert_eq!(unknown.rpc().unwrap().code, -32602);
}

#[tokio::test]
async fn lists_paginate_with_cursors() {
    let client = Client::connect(server().page_size(2)).await.unwrap();
    let mut uris = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let page = client.request("resources/list", params).await.unwrap();
        let items = page["resources"].as_array().unwrap();
        assert!(items.len() <= 2);
        uris.extend(items.iter().map(|r| r["uri"].as_str().unwrap().to_owned()));
        match page.get("nextCursor") {
            Some(next) => cursor = next.clone(),
            None => break,
        }
    }
    assert_eq!(
        uris,
        [
            "test://binary",
            "test://config",
            "test://static",
            "notes://1",
            "notes://2"
        ]
    );
    let error = client
        .request("resources/list", json!({"cursor": "garbage"}))
        .await
        .unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32602);
    let error = client
        .request("resources/templates/list", json!({"cursor": 5}))
        .await
        .unwrap_err();
    assert_eq!(error.rpc().unwrap().code, -32602);
}

#[test]
fn indistinguishable_templates_are_refused_at_build() {
    let error = Server::builder()
        .resource(note)
        .resource_def(other_notes())
        .build()
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("can never be told apart"), "{message}");
}

fn other_notes() -> mcp_runtime::resource::ResourceDef {
    use mcp_runtime::resource::ResourceBuilder;
    ResourceBuilder::new("notes://{name}", "by-name", |_call| {
        Box::pin(async { Ok(Vec::new()) })
    })
    .build()
}

#[tokio::test]
async fn subscriptions_are_bounded_in_count_and_uri_length() {
    let service = server().max_subscriptions(2, 64).build().unwrap();
    let client = Client::builder().connect_service(&service).await.unwrap();
    let subscribe = |uri: String| {
        let client = &client;
        async move {
            client
                .request("resources/subscribe", json!({ "uri": uri }))
                .await
        }
    };
    assert_eq!(subscribe("notes://1".into()).await.unwrap(), json!({}));
    assert_eq!(subscribe("notes://2".into()).await.unwrap(), json!({}));
    // Subscribing again to a URI held already is no new subscription.
    assert_eq!(subscribe("notes://2".into()).await.unwrap(), json!({}));
    let error = subscribe("notes://3".into()).await.unwrap_err();
    let error = error.rpc().unwrap();
    assert_eq!(error.code, -32602);
    assert!(
        error.message.contains("too many subscriptions"),
        "{error:?}"
    );
    // Once one is dropped there is room again.
    client
        .request("resources/unsubscribe", json!({"uri": "notes://1"}))
        .await
        .unwrap();
    assert_eq!(subscribe("notes://3".into()).await.unwrap(), json!({}));
    client
        .request("resources/unsubscribe", json!({"uri": "notes://3"}))
        .await
        .unwrap();
    let long = format!("notes://{}", "x".repeat(100));
    let error = subscribe(long).await.unwrap_err();
    let error = error.rpc().unwrap();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("at most 64 bytes"), "{error:?}");
}
