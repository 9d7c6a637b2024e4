//! `cargo mcp`: the jobs around an MCP server crate built with `mcp-runtime`, run inside that
//! crate.
//!
//! - `new PATH`: a server crate that builds and serves at once;
//! - `dev`: the crate's server at a stable address (`http://127.0.0.1:6277/mcp`, or `--stdio`),
//!   rebuilt on every save and swapped in behind the clients' sessions, with a dev page at `/`;
//! - `inspect`: build the crate's server, start it over stdio (or reach a running one with
//!   `--http URL`) and print what it serves;
//! - `call TOOL JSON`, `read URI`, `prompt NAME JSON`: one request, its result printed, a
//!   non-zero exit when the tool reports an error;
//! - `install CLIENT`: build in release, copy the binary to a place of its own and write it into
//!   the configuration of Claude Desktop, Claude Code, VS Code, Cursor, Gemini CLI or Codex,
//!   merged into what is there (`--dev`: `cargo mcp dev --stdio` on the crate instead);
//! - `card`: write the MCP Registry `server.json` and the Server Card (SEP-2127), in the form of
//!   their published JSON schemas.
//!
//! Installed with `cargo install --path cargo-mcp` (package `mcp-runtime-cli`), cargo runs the
//! `cargo-mcp` binary for `cargo mcp`.

mod card;
mod cli;
mod connect;
mod dev;
mod edit;
mod inspect;
mod install;
mod new;
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
        Command::New(new) => new::run(&new),
        Command::Dev(dev) => dev::run(&dev),
        Command::DevChild(child) => dev::child::run(&child),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
