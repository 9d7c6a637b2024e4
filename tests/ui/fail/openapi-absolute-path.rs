mcp_runtime::openapi!("/etc/api.yaml");

fn main() {}
