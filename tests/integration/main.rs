//! Behaviour tests: everything here goes through a real transport, the in-process client (the
//! stdio transport over an in-memory pipe) or a child process on real stdio.

mod apps;
mod bad_input;
mod blocking;
mod client;
mod conformance_2026;
mod context;
mod deploy;
mod dynamic;
mod error_ids;
mod everything;
mod examples;
mod fair;
mod fixtures;
mod gateway;
mod http;
mod http_stateless;
mod legacy_sse;
mod lifecycle;
mod load;
mod middleware;
mod notes;
mod oauth;
mod prompts;
mod resources;
mod server_card;
mod skills;
mod snapshots;
mod stateless;
mod stdio;
mod surface;
mod task_bounds;
mod tasks;
mod tools;
mod upstreams;
