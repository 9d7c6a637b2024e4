//! The `notes` example (a stateful `#[server]`) as a real child process on real stdio.

use mcp_runtime::testing::Client;
use mcp_tests::spawn_example;
use serde_json::{Value, json};

#[tokio::test]
async fn notes_serves_tools_resources_and_prompts_from_one_impl() {
    let server = spawn_example("notes", Client::builder()).await.unwrap();
    let client = &server.client;
    let init = client.initialize_result().unwrap();
    assert_eq!(init["serverInfo"]["name"], "notes");
    assert_eq!(init["serverInfo"]["title"], "Notes");
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .contains("note store")
    );
    assert_eq!(
        init["capabilities"],
        json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {}
        })
    );
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tools, ["add_note", "delete_note", "search_notes"]);

    client
        .request("resources/subscribe", json!({"uri": "notes://index"}))
        .await
        .unwrap();
    let added = client
        .call_tool(
            "add_note",
            json!({"title": "Groceries", "body": "eggs, milk"}),
        )
        .await
        .unwrap();
    assert_eq!(
        added.structured_content,
        Some(json!({"id": 1, "title": "Groceries", "body": "eggs, milk"}))
    );
    // The tool announced the change: the list changed, and the subscribed index was updated.
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(
            client.next_message().await.unwrap()["method"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "notifications/resources/list_changed",
            "notifications/resources/updated"
        ]
    );

    let read = client
        .request("resources/read", json!({"uri": "notes://1"}))
        .await
        .unwrap();
    assert_eq!(
        read["contents"][0],
        json!({"uri": "notes://1", "mimeType": "text/plain", "text": "Groceries\n\neggs, milk"})
    );
    let encoded = client
        .request("resources/read", json!({"uri": "notes://%31"}))
        .await
        .unwrap();
    assert_eq!(encoded["contents"][0]["text"], "Groceries\n\neggs, milk");
    let error = client
        .request("resources/read", json!({"uri": "notes://first"}))
        .await
        .unwrap_err();
    let error = error.rpc().unwrap();
    assert_eq!(error.code, -32602);
    assert!(error.message.contains("`id`"), "{}", error.message);
    let missing = client
        .request("resources/read", json!({"uri": "notes://9"}))
        .await
        .unwrap_err();
    assert_eq!(missing.rpc().unwrap().code, -32002);

    let index = client
        .request("resources/read", json!({"uri": "notes://index"}))
        .await
        .unwrap();
    let index: Value =
        serde_json::from_str(index["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(index, json!([[1, "Groceries"]]));
    let list = client.request("resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["notes://index", "notes://1"]);

    let completion = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "notes://{id}"}, "argument": {"name": "id", "value": "1"}}),
        )
        .await
        .unwrap();
    assert_eq!(completion["completion"]["values"][0], "1");
    let styles = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "summarise"}, "argument": {"name": "style", "value": "b"}}),
        )
        .await
        .unwrap();
    assert_eq!(styles["completion"]["values"], json!(["brief"]));

    let prompts = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(prompts["prompts"].as_array().unwrap().len(), 2);
    let draft = client
        .request(
            "prompts/get",
            json!({"name": "draft", "arguments": {"topic": "tea"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        draft["messages"][0]["content"]["text"],
        "Draft a note of about 100 words about tea. Give it a short title."
    );
    let error = client
        .request(
            "prompts/get",
            json!({"name": "draft", "arguments": {"topic": "tea", "words": "lots"}}),
        )
        .await
        .unwrap_err();
    assert!(error.rpc().unwrap().message.contains("`words`"));
    let summary = client
        .request(
            "prompts/get",
            json!({"name": "summarise", "arguments": {"style": "detailed"}}),
        )
        .await
        .unwrap();
    assert!(
        summary["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Groceries: eggs, milk")
    );

    let deleted = client
        .call_tool("delete_note", json!({"id": 1}))
        .await
        .unwrap();
    assert_eq!(deleted.text(), "deleted note 1 (Groceries)");
    let again = client
        .call_tool("delete_note", json!({"id": 1}))
        .await
        .unwrap();
    assert!(again.is_error);
}

#[tokio::test]
async fn a_server_method_named_like_the_trait_s_own_is_the_user_s() {
    let shelf = crate::fixtures::Shelf {
        books: vec!["Dune".to_owned()],
    };
    let client = Client::connect(mcp_runtime::McpServer::into_server(shelf))
        .await
        .unwrap();
    let result = client.call_tool("items", json!({})).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"result": ["Dune"]})));
}
