mcp_runtime::openapi!("openapi/base.yaml", prefix = "my api/");

fn main() {}
