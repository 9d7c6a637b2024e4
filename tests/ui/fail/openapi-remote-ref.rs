mcp_runtime::openapi!("openapi/remote-ref.yaml");

fn main() {}
