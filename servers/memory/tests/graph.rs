//! The memory server through the runtime's in-process client: concurrent changes all kept
//! (within one server and between two sharing a file), the file replaced whole, subscribers
//! told of changes, and an oversized file refused. The same session against the original is
//! `tests/servers/test_memory.py` (`scripts/servers.sh memory`).

use std::path::PathBuf;
use std::sync::Arc;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::Client;
use mcp_server_memory::store::{self, MAX_FILE_BYTES};
use mcp_server_memory::{GRAPH_URI, Graph, Memory};
use serde_json::{Value, json};

/// A directory of its own, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("mcp-memory-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn file(&self) -> PathBuf {
        self.0.join("memory.jsonl")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn entity(client: &Client, name: &str) {
    let created = client
        .call_tool(
            "create_entities",
            json!({"entities": [{"name": name, "entityType": "counter", "observations": []}]}),
        )
        .await
        .unwrap();
    assert!(!created.is_error, "{}", created.text());
}

/// `count` observations added to `name` at once, each by a call of its own.
async fn add_concurrently(client: Arc<Client>, name: &str, prefix: &str, count: usize) {
    let calls: Vec<_> = (0..count)
        .map(|i| {
            let client = Arc::clone(&client);
            let args = json!({"observations": [{"entityName": name, "contents": [format!("{prefix} {i}")]}]});
            tokio::spawn(async move { client.call_tool("add_observations", args).await })
        })
        .collect();
    for call in calls {
        let result = call.await.unwrap().unwrap();
        assert!(!result.is_error, "{}", result.text());
    }
}

fn observations_in_file(dir: &Dir, name: &str) -> Vec<String> {
    let graph = store::load(&dir.file()).unwrap();
    let entity = graph.entities.into_iter().find(|e| e.name == name).unwrap();
    entity.observations
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_changes_are_all_kept() {
    let dir = Dir::new("concurrent");
    let client = Arc::new(
        Client::connect(Memory::new(dir.file()).into_server())
            .await
            .unwrap(),
    );
    entity(&client, "Busy").await;
    add_concurrently(Arc::clone(&client), "Busy", "observation", 64).await;
    let mut kept = observations_in_file(&dir, "Busy");
    kept.sort();
    let mut expected: Vec<String> = (0..64).map(|i| format!("observation {i}")).collect();
    expected.sort();
    assert_eq!(kept, expected);
    // Every write replaced the file whole: nothing half-written or left beside it.
    let left: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left.contains(&"memory.jsonl".to_owned()) && left.contains(&"memory.jsonl.lock".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_sharing_a_file_take_turns() {
    let dir = Dir::new("shared");
    let first = Arc::new(
        Client::connect(Memory::new(dir.file()).into_server())
            .await
            .unwrap(),
    );
    let second = Arc::new(
        Client::connect(Memory::new(dir.file()).into_server())
            .await
            .unwrap(),
    );
    entity(&first, "Shared").await;
    tokio::join!(
        add_concurrently(Arc::clone(&first), "Shared", "first", 32),
        add_concurrently(Arc::clone(&second), "Shared", "second", 32),
    );
    assert_eq!(observations_in_file(&dir, "Shared").len(), 64);
}

#[tokio::test]
async fn a_subscriber_is_told_of_each_change() {
    let dir = Dir::new("subscribe");
    let client = Client::connect(Memory::new(dir.file()).into_server())
        .await
        .unwrap();
    let caps = &client.initialize_result().unwrap()["capabilities"]["resources"];
    assert_eq!(caps["subscribe"], true, "{caps}");
    client
        .request("resources/subscribe", json!({"uri": GRAPH_URI}))
        .await
        .unwrap();
    entity(&client, "Ada").await;
    let note = client.next_message().await.unwrap();
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": GRAPH_URI}})
    );
    let read = client
        .request("resources/read", json!({"uri": GRAPH_URI}))
        .await
        .unwrap();
    let graph: Graph = serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(graph.entities[0].name, "Ada");
}

#[tokio::test]
async fn a_failed_change_saves_nothing() {
    let dir = Dir::new("failed");
    let client = Client::connect(Memory::new(dir.file()).into_server())
        .await
        .unwrap();
    entity(&client, "Ada").await;
    let before = std::fs::read(dir.file()).unwrap();
    let failed = client
        .call_tool(
            "add_observations",
            json!({"observations": [
                {"entityName": "Ada", "contents": ["kept?"]},
                {"entityName": "Nobody", "contents": ["x"]},
            ]}),
        )
        .await
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(failed.text(), "Entity with name Nobody not found");
    assert_eq!(std::fs::read(dir.file()).unwrap(), before);
}

#[tokio::test]
async fn a_file_over_the_bound_or_not_jsonl_is_refused_naming_it() {
    let dir = Dir::new("bounds");
    let client = Client::connect(Memory::new(dir.file()).into_server())
        .await
        .unwrap();
    std::fs::File::create(dir.file())
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let too_large = client.call_tool("read_graph", json!({})).await.unwrap();
    assert!(too_large.is_error);
    assert_eq!(
        too_large.text(),
        format!(
            "the memory file {} is larger than {MAX_FILE_BYTES} bytes; remove entities or start another file with MEMORY_FILE_PATH",
            dir.file().display()
        )
    );
    std::fs::write(
        dir.file(),
        "{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"x\",\"observations\":[]}\nnot json",
    )
    .unwrap();
    let broken = client.call_tool("read_graph", json!({})).await.unwrap();
    assert!(broken.is_error);
    assert!(
        broken
            .text()
            .starts_with(&format!("{} line 2: not JSON", dir.file().display())),
        "{}",
        broken.text()
    );
    // Neither was overwritten by a change.
    let refused = client
        .call_tool("delete_entities", json!({"entityNames": ["A"]}))
        .await
        .unwrap();
    assert!(refused.is_error);
    assert!(
        std::fs::read_to_string(dir.file())
            .unwrap()
            .ends_with("not json")
    );
}

#[tokio::test]
async fn results_read_as_the_originals() {
    let dir = Dir::new("results");
    let client = Client::connect(Memory::new(dir.file()).into_server())
        .await
        .unwrap();
    let created = client
        .call_tool(
            "create_entities",
            json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["x"]}]}),
        )
        .await
        .unwrap();
    assert_eq!(
        created.text(),
        "[\n  {\n    \"name\": \"Ada\",\n    \"entityType\": \"person\",\n    \"observations\": [\n      \"x\"\n    ]\n  }\n]"
    );
    assert_eq!(
        created.structured_content,
        Some(json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["x"]}]}))
    );
    let deleted = client
        .call_tool("delete_entities", json!({"entityNames": ["Ada"]}))
        .await
        .unwrap();
    assert_eq!(deleted.text(), "Entities deleted successfully");
    assert_eq!(
        deleted.structured_content,
        Some(json!({"success": true, "message": "Entities deleted successfully"}))
    );
    let tools: Vec<Value> = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 9);
}
