mcp_runtime::openapi!("openapi/not-yaml.yaml");

fn main() {}
