//! A calculator served over stdio.
//!
//! Run with: `cargo run -p mcp-examples --example calculator`
//!
//! Then type (or pipe) newline-delimited JSON-RPC, for example:
//!
//! ```text
//! {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"me","version":"1"}}}
//! {"jsonrpc":"2.0","method":"notifications/initialized"}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}
//! ```
//!
//! What it lists is pinned by `tests/mcp-surface-calculator.json`:
//! `cargo test -p mcp-examples --example calculator` checks it.

use mcp_runtime::prelude::*;

/// Add two integers.
///
/// A sum outside the 64-bit range is an error the model can read, never a wrapped number.
#[tool(read_only, idempotent, open_world = false)]
async fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> Result<i64, ToolError> {
    // `a + b` would wrap in a release build (`i64::MAX + 1` is `i64::MIN`) and panic in a debug
    // one: say what happened instead.
    a.checked_add(b).ok_or_else(|| {
        ToolError::new(format!(
            "{a} + {b} is outside the 64-bit integer range ({} to {})",
            i64::MIN,
            i64::MAX
        ))
    })
}

/// Divide one number by another.
///
/// Dividing by zero is an error the model can read and correct.
#[tool(read_only, idempotent, open_world = false)]
async fn divide(
    /// The number to divide.
    dividend: f64,
    /// The number to divide by; must not be zero.
    divisor: f64,
) -> Result<f64, ToolError> {
    if divisor == 0.0 {
        return Err(ToolError::new(
            "cannot divide by zero: choose a non-zero divisor",
        ));
    }
    Ok(dividend / divisor)
}

/// Summary statistics of a list of numbers.
#[derive(Debug, Serialize, JsonSchema)]
struct Stats {
    /// How many numbers there were.
    count: usize,
    /// Their sum.
    sum: f64,
    /// Their mean; absent for an empty list.
    mean: Option<f64>,
    /// The smallest; absent for an empty list.
    min: Option<f64>,
    /// The largest; absent for an empty list.
    max: Option<f64>,
}

/// Summary statistics (count, sum, mean, min, max) of a list of numbers.
#[tool(title = "Statistics", read_only, idempotent, open_world = false)]
fn statistics(
    /// The numbers to summarise.
    numbers: Vec<f64>,
    /// Round every result to this many decimal places.
    #[arg(default = 6)]
    precision: u8,
) -> Stats {
    let round = |x: f64| {
        let factor = 10f64.powi(i32::from(precision.min(15)));
        (x * factor).round() / factor
    };
    let sum: f64 = numbers.iter().sum();
    let count = numbers.len();
    let mean = (count > 0).then(|| round(sum / count as f64));
    let min = numbers.iter().copied().reduce(f64::min).map(round);
    let max = numbers.iter().copied().reduce(f64::max).map(round);
    Stats {
        count,
        sum: round(sum),
        mean,
        min,
        max,
    }
}

/// The calculator: every `#[tool]` in this file.
fn server() -> Server {
    Server::new("calculator", env!("CARGO_PKG_VERSION"))
        .instructions("Arithmetic on numbers: add, divide, and summary statistics.")
}

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    // Written out rather than shared with the other examples: this file is also a crate of its
    // own (the CLI's end-to-end test copies it into one).
    if std::env::args().any(|arg| arg == "--help" || arg == "-h") {
        println!(
            "usage: calculator [--help]\n\nA calculator (add, divide, summary statistics) \
             served over stdio."
        );
        return Ok(());
    }
    // stdout carries the protocol; logs go to stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    server().serve_stdio().await
}

#[cfg(test)]
mod tests {
    /// What the calculator lists, on every protocol revision, is pinned in a reviewed file; a
    /// change fails here with each difference marked breaking or not. `MCP_SURFACE_UPDATE=1`
    /// records a new surface (a breaking one only with a new major version).
    #[tokio::test]
    async fn surface() {
        mcp_runtime::testing::assert_surface(super::server(), "tests/mcp-surface-calculator.json")
            .await;
    }
}
