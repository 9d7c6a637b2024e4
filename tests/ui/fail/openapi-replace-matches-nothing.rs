mcp_runtime::openapi!("openapi/base.yaml", replace = ["listPet"]);

fn main() {}
