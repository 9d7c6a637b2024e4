//! `cargo mcp`: the jobs around an MCP server crate built with `mcp-runtime`, run inside that
//! crate.
//!
//! - `inspect`: build the crate's server, start it over stdio (or reach a running one with
//!   `--http URL`) and print what it serves;
//! - `call TOOL JSON`, `read URI`, `prompt NAME JSON`: one request, its result printed, a
//!   non-zero exit when the tool reports an error;
//! - `install CLIENT`: build in release and write the server into the configuration of Claude
//!   Desktop, Claude Code, VS Code, Cursor, Gemini CLI or Codex, merged into what is there;
//! - `card`: write the MCP Registry `server.json` and the Server Card (SEP-2127), both
//!   validated against their published JSON schemas.
//!
//! Installed with `cargo install --path cargo-mcp` (package `mcp-runtime-cli`), cargo runs the
//! `cargo-mcp` binary for `cargo mcp`.

mod card;
mod cli;
mod connect;
mod edit;
mod inspect;
mod install;
mod project;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cargo, Command};

fn main() -> ExitCode {
    let Cargo::Mcp(args) = Cargo::parse();
    let outcome = match args.command {
        Command::Install(install) => install::run(&install),
        Command::Card(card) => card::run(&card),
        Command::Inspect(inspect) => inspect::inspect(&inspect),
        Command::Call(call) => inspect::call(&call),
        Command::Read(read) => inspect::read(&read),
        Command::Prompt(prompt) => inspect::prompt(&prompt),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
