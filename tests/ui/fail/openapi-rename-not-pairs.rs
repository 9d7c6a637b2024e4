mcp_runtime::openapi!("openapi/base.yaml", rename = ["listPets"]);

fn main() {}
