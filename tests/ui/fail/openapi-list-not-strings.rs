mcp_runtime::openapi!("openapi/base.yaml", exclude_tags = "pets");

fn main() {}
