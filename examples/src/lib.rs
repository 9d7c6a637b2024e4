//! Example MCP servers built with `mcp-runtime`. Each is an `[[example]]` target that runs with
//! one `cargo run -p mcp-examples --example NAME` line; this library holds only what every
//! example's command line shares.

/// Prints `usage` to stdout and exits with status 0 when the command line asks for help
/// (`--help` or `-h` anywhere in it); returns otherwise. Every example calls it first, before
/// it reads its other arguments or starts serving, so `--help` never reaches the protocol.
pub fn help(usage: &str) {
    if std::env::args()
        .skip(1)
        .any(|arg| arg == "--help" || arg == "-h")
    {
        println!("{}", usage.trim_end());
        std::process::exit(0);
    }
}
