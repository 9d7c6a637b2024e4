//! Golden wire snapshots: what the calculator's `initialize` and `tools/list` send, per protocol
//! revision. `UPDATE_SNAPSHOTS=1` rewrites them; review the diff.

use mcp_runtime::ProtocolVersion;
use mcp_runtime::testing::Client;
use mcp_tests::{assert_snapshot, spawn_example};
use serde_json::json;

#[tokio::test]
async fn calculator_surface_per_revision() {
    for version in ProtocolVersion::HANDSHAKE {
        let server = spawn_example("calculator", Client::builder().protocol_version(version))
            .await
            .unwrap();
        let mut init = server.client.initialize_result().unwrap().clone();
        init["serverInfo"]["version"] = json!("<version>");
        let tools = server
            .client
            .request("tools/list", json!({}))
            .await
            .unwrap();
        let surface = json!({"initialize": init, "tools/list": tools});
        assert_snapshot(&format!("calculator-{version}"), &surface);
    }
}

#[tokio::test]
async fn notes_surface_per_revision() {
    for version in ProtocolVersion::HANDSHAKE {
        let server = spawn_example("notes", Client::builder().protocol_version(version))
            .await
            .unwrap();
        let client = &server.client;
        let mut init = client.initialize_result().unwrap().clone();
        init["serverInfo"]["version"] = json!("<version>");
        let mut surface = json!({"initialize": init});
        for method in [
            "tools/list",
            "resources/list",
            "resources/templates/list",
            "prompts/list",
        ] {
            surface[method] = client.request(method, json!({})).await.unwrap();
        }
        assert_snapshot(&format!("notes-{version}"), &surface);
    }
}
