mcp_runtime::openapi!("openapi/dangling-ref-excluded.yaml", exclude_operations = ["addPet"]);

fn main() {}
