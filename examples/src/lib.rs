//! Example MCP servers built with `mcp-runtime`. Each is an `[[example]]` target that runs with
//! one `cargo run -p mcp-examples --example NAME` line; this library holds nothing.
