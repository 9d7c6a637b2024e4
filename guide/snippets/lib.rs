//! The code of the user guide (`guide/src`). Each module holds one chapter's snippets between
//! `// ANCHOR: name` and `// ANCHOR_END: name` lines, which the book includes with
//! `{{#include ../snippets/FILE.rs:name}}`, and, below them, tests that check what the chapter
//! says the snippet does. The snippets read as a user's server, not as a library's API: hence
//! the lints allowed here.
#![allow(dead_code, missing_docs, unreachable_pub, clippy::unused_async)]

pub mod context;
pub mod deployment;
pub mod eras;
pub mod from_rmcp;
pub mod gateways;
pub mod http;
pub mod middleware;
pub mod oauth;
pub mod openapi;
pub mod prompts;
pub mod resources;
pub mod skills_apps;
pub mod state;
pub mod tasks;
pub mod testing;
pub mod tools;
