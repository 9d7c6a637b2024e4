mcp_runtime::openapi!(openapi / base);

fn main() {}
