//! Medians, ratios, the target checks, and the two result files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use crate::measure::median;
use crate::{Config, LAYER_VARIANTS, LAYERS, Metrics, SERVERS};

/// Issue 28's scenarios: the metric prefix and its label.
const LAYER_SCENARIOS: [(&str, &str); 4] = [
    ("stdio_seq", "stdio tools/call, 1 in flight"),
    ("stdio_pipe64", "stdio tools/call, 64 in flight"),
    ("http_1conn", "HTTP tools/call, 1 connection"),
    ("http_32conn", "HTTP tools/call, 32 connections"),
];

/// Issue 28's variants' labels, in `LAYER_VARIANTS`' order.
const LAYER_LABELS: [&str; 6] = [
    "no layer",
    "one empty layer",
    "rate limiter",
    "metrics only",
    "telemetry (spans and metrics)",
    "telemetry, sampled out",
];

/// bench-layers' modes `bench/callgrind.sh --layers` counts, with their labels.
const IR_MODES: [(&str, &str); 7] = [
    ("none", "no layer"),
    ("empty", "one empty `from_fn` layer"),
    ("rate", "the rate limiter, at a rate never reached"),
    ("metrics", "metrics only"),
    ("telemetry", "spans (made on the tracer) and metrics"),
    ("sampled", "spans and metrics, every request sampled out"),
    (
        "layered",
        "spans (through `tracing-opentelemetry`) and metrics",
    ),
];

/// A row of the table: metric key, label, unit, and whether higher is better.
const ROWS: &[(&str, &str, &str, bool)] = &[
    (
        "stdio_seq_per_s",
        "stdio tools/call, 1 in flight",
        "calls/s",
        true,
    ),
    ("stdio_seq_p50_us", "  p50 latency", "µs", false),
    ("stdio_seq_p99_us", "  p99 latency", "µs", false),
    ("stdio_seq_cpu_us", "  server CPU per request", "µs", false),
    (
        "stdio_sync_seq_per_s",
        "stdio tools/call of a sync tool, 1 in flight",
        "calls/s",
        true,
    ),
    ("stdio_sync_seq_p50_us", "  p50 latency", "µs", false),
    ("stdio_sync_seq_p99_us", "  p99 latency", "µs", false),
    (
        "stdio_sync_seq_cpu_us",
        "  server CPU per request",
        "µs",
        false,
    ),
    (
        "stdio_pipe64_per_s",
        "stdio tools/call, 64 in flight",
        "calls/s",
        true,
    ),
    ("stdio_pipe64_p50_us", "  p50 latency", "µs", false),
    ("stdio_pipe64_p99_us", "  p99 latency", "µs", false),
    (
        "stdio_pipe64_cpu_us",
        "  server CPU per request",
        "µs",
        false,
    ),
    (
        "stdio_list_per_s",
        "stdio tools/list, 1 in flight",
        "lists/s",
        true,
    ),
    ("stdio_list_p50_us", "  p50 latency", "µs", false),
    ("stdio_list_p99_us", "  p99 latency", "µs", false),
    ("stdio_list_cpu_us", "  server CPU per request", "µs", false),
    (
        "http_1conn_per_s",
        "HTTP tools/call, 1 connection",
        "calls/s",
        true,
    ),
    ("http_1conn_p50_us", "  p50 latency", "µs", false),
    ("http_1conn_p99_us", "  p99 latency", "µs", false),
    ("http_1conn_cpu_us", "  server CPU per request", "µs", false),
    (
        "http_32conn_per_s",
        "HTTP tools/call, 32 connections",
        "calls/s",
        true,
    ),
    ("http_32conn_p50_us", "  p50 latency", "µs", false),
    ("http_32conn_p99_us", "  p99 latency", "µs", false),
    (
        "http_32conn_cpu_us",
        "  server CPU per request",
        "µs",
        false,
    ),
    (
        "stdio_task_per_s",
        "stdio task round trip (tools/call as a task, then tasks/result), 1 at a time",
        "tasks/s",
        true,
    ),
    ("stdio_task_p50_us", "  p50 latency", "µs", false),
    ("stdio_task_p99_us", "  p99 latency", "µs", false),
    ("stdio_task_cpu_us", "  server CPU per task", "µs", false),
    (
        "task_live_kib",
        "RSS per live task (5,000 kept, results included)",
        "KiB",
        false,
    ),
    (
        "mount_seq_per_s",
        "stdio tools/call of `add` through `Server::mount`, 1 in flight",
        "calls/s",
        true,
    ),
    ("mount_seq_p50_us", "  p50 latency", "µs", false),
    ("mount_seq_p99_us", "  p99 latency", "µs", false),
    ("mount_seq_cpu_us", "  server CPU per request", "µs", false),
    (
        "proxy_seq_per_s",
        "stdio tools/call of `add` through `Server::proxy` to a stdio upstream (bench-ours), 1 in flight",
        "calls/s",
        true,
    ),
    ("proxy_seq_p50_us", "  p50 latency", "µs", false),
    ("proxy_seq_p99_us", "  p99 latency", "µs", false),
    ("proxy_seq_cpu_us", "  gateway CPU per request", "µs", false),
    (
        "proxy_seq_upstream_cpu_us",
        "  upstream CPU per request",
        "µs",
        false,
    ),
    (
        "proxy_pipe64_per_s",
        "stdio tools/call of `add` through `Server::proxy`, 64 in flight",
        "calls/s",
        true,
    ),
    ("proxy_pipe64_p50_us", "  p50 latency", "µs", false),
    ("proxy_pipe64_p99_us", "  p99 latency", "µs", false),
    (
        "proxy_pipe64_cpu_us",
        "  gateway CPU per request",
        "µs",
        false,
    ),
    ("startup_ms", "spawn to initialize reply", "ms", false),
    (
        "rss_idle_kib",
        "RSS idle (stdio, initialized)",
        "KiB",
        false,
    ),
    (
        "rss_after_load_kib",
        "RSS after the stdio load",
        "KiB",
        false,
    ),
    (
        "http_session_kib",
        "RSS per open HTTP session",
        "KiB",
        false,
    ),
    (
        "rss_after_http_load_kib",
        "RSS after 1,000 sessions and the HTTP load",
        "KiB",
        false,
    ),
    ("binary_bytes", "release binary size", "bytes", false),
    (
        "build_crate_s",
        "build of the server crate alone",
        "s",
        false,
    ),
    (
        "rebuild_edit_s",
        "rebuild after editing one tool",
        "s",
        false,
    ),
    ("clean_build_s", "clean build, all dependencies", "s", false),
];

pub struct Results {
    config: Config,
    runs: Vec<(String, usize, Metrics)>,
    /// Figures measured outside the repetitions (sizes, build times): every sample.
    samples: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    environment: BTreeMap<String, String>,
    /// Clean-build samples of the first example (issue 13), by row (`build::FIRST_EXAMPLE`).
    first_example: BTreeMap<String, Vec<f64>>,
}

/// The heading of the first example's section in `results.md`; `--build-rows-only` replaces
/// the file from this heading on.
const FIRST_EXAMPLE_HEADING: &str = "## Clean build of the first example (2 cores)";

/// The key of the first example's figures in `results.json`.
const FIRST_EXAMPLE_KEY: &str = "first_example_clean_build";

/// Issue 41's bound on the request path's throughput over the bare loops'.
const FLOOR: f64 = 0.9;

/// Issue 13's targets: (row, bound on its median over rmcp's).
const FIRST_EXAMPLE_TARGETS: [(&str, f64); 2] = [("ours-stdio", 0.6), ("ours-default", 1.0)];

fn shell(command: &str, args: &[&str]) -> String {
    std::process::Command::new(command)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

impl Results {
    pub fn new(config: Config) -> Self {
        let mut environment = BTreeMap::new();
        for (key, value) in [
            ("date", shell("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"])),
            ("cpus", shell("nproc", &[])),
            ("rustc", shell("rustc", &["-V"])),
            ("commit", shell("git", &["rev-parse", "--short", "HEAD"])),
            ("loadavg_start", loadavg()),
        ] {
            environment.insert(key.to_owned(), value);
        }
        Self {
            config,
            runs: Vec::new(),
            samples: BTreeMap::new(),
            environment,
            first_example: BTreeMap::new(),
        }
    }

    pub fn set_once(&mut self, server: &str, metric: &str, value: f64) {
        self.add_sample(server, metric, value);
    }

    pub fn add_sample(&mut self, server: &str, metric: &str, value: f64) {
        self.samples
            .entry(server.to_owned())
            .or_default()
            .entry(metric.to_owned())
            .or_default()
            .push(value);
    }

    pub fn set_first_example(&mut self, samples: BTreeMap<String, Vec<f64>>) {
        self.first_example = samples;
    }

    fn first_example_median(&self, row: &str) -> f64 {
        self.first_example
            .get(row)
            .map_or(f64::NAN, |samples| median(samples))
    }

    /// Issue 13's checks on the first example's clean builds: (what, ratio, pass).
    fn first_example_targets(&self) -> Vec<(String, f64, bool)> {
        let rmcp = self.first_example_median("rmcp");
        FIRST_EXAMPLE_TARGETS
            .iter()
            .map(|(row, bound)| {
                let ratio = self.first_example_median(row) / rmcp;
                (
                    format!("clean build of the first example: {row}/rmcp ≤ {bound}"),
                    ratio,
                    ratio <= *bound,
                )
            })
            .filter(|(_, ratio, _)| !ratio.is_nan())
            .collect()
    }

    /// The first example's section of `results.md` (empty when it was not measured).
    fn first_example_markdown(&self) -> String {
        let mut out = String::new();
        if self.first_example.is_empty() {
            return out;
        }
        let environment = |key: &str| self.environment.get(key).map_or("", String::as_str);
        let _ = writeln!(
            out,
            "{FIRST_EXAMPLE_HEADING}
"
        );
        let _ = writeln!(
            out,
            "`cargo build --release -p <package> --locked`, dependencies included (downloaded \
             before, by `cargo fetch`), each in its own empty target directory: the README's \
             first example (`firsthour/`) with mcp-runtime's default features, with the \
             stdio-only set (`default-features = false, features = [\"macros\"]`), and rmcp \
             3.11's equivalent. Median of {} round(s), the order alternated. Measured {} at `{}` \
             on {} CPUs; load average `{}` at the start, `{}` at the end.\n",
            self.config.clean_build_reps,
            environment("date"),
            environment("commit"),
            environment("cpus"),
            environment("loadavg_start"),
            environment("loadavg_end"),
        );
        let _ = writeln!(out, "| build | median (s) | samples (s) | x rmcp |");
        let _ = writeln!(out, "|---|---:|---|---:|");
        let rmcp = self.first_example_median("rmcp");
        for (row, label) in [
            ("ours-default", "ours, default features"),
            ("ours-stdio", "ours, stdio-only features"),
            ("rmcp", "rmcp 3.11"),
        ] {
            let samples = self.first_example.get(row).cloned().unwrap_or_default();
            let value = self.first_example_median(row);
            let listed: Vec<String> = samples.iter().map(|s| format!("{s:.1}")).collect();
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} |",
                number(value),
                listed.join(", "),
                ratio(value / rmcp),
            );
        }
        let _ = writeln!(out, "\n| target (issue 13) | ratio | met |");
        let _ = writeln!(out, "|---|---:|:---:|");
        for (what, value, pass) in self.first_example_targets() {
            let _ = writeln!(
                out,
                "| {what} | {} | {} |",
                ratio(value),
                if pass { "yes" } else { "**no**" }
            );
        }
        out
    }

    /// The first example's figures for `results.json`.
    fn first_example_json(&self) -> serde_json::Value {
        let medians: BTreeMap<&String, f64> = self
            .first_example
            .keys()
            .map(|row| (row, self.first_example_median(row)))
            .collect();
        json!({
            "reps": self.config.clean_build_reps,
            "environment": self.environment,
            "medians_s": medians,
            "samples_s": self.first_example,
            "targets": self.first_example_targets().iter().map(|(what, value, pass)| json!({"target": what, "ratio": value, "met": pass})).collect::<Vec<_>>(),
        })
    }

    /// For `--build-rows-only`: puts the first example's section into the `results.md` and
    /// `results.json` of `dir`, replacing an older one and keeping every other figure (the
    /// full run's). Returns the section.
    pub fn merge_first_example(&mut self, dir: &Path) -> std::io::Result<String> {
        self.environment.insert("loadavg_end".to_owned(), loadavg());
        let section = self.first_example_markdown();
        let markdown_path = dir.join("results.md");
        let mut markdown = std::fs::read_to_string(&markdown_path)
            .unwrap_or_else(|_| "# Benchmark results\n".to_owned());
        if let Some(at) = markdown.find(FIRST_EXAMPLE_HEADING) {
            markdown.truncate(at);
        }
        let markdown = format!("{}\n\n{section}", markdown.trim_end());
        let json_path = dir.join("results.json");
        let mut json: serde_json::Value = std::fs::read_to_string(&json_path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| json!({}));
        if let Some(object) = json.as_object_mut() {
            object.insert(FIRST_EXAMPLE_KEY.to_owned(), self.first_example_json());
        }
        std::fs::write(markdown_path, markdown)?;
        std::fs::write(
            json_path,
            serde_json::to_string_pretty(&json).map_err(std::io::Error::other)? + "\n",
        )?;
        Ok(section)
    }

    pub fn push(&mut self, server: &str, rep: usize, metrics: Metrics) {
        self.runs.push((server.to_owned(), rep, metrics));
    }

    /// Every sample of `metric` for `server`: one per repetition, or the outside samples.
    fn all(&self, server: &str, metric: &str) -> Vec<f64> {
        let mut values: Vec<f64> = self
            .runs
            .iter()
            .filter(|(s, _, _)| s == server)
            .filter_map(|(_, _, m)| m.get(metric).copied())
            .collect();
        if let Some(samples) = self.samples.get(server).and_then(|m| m.get(metric)) {
            values.extend(samples);
        }
        values
    }

    fn median(&self, server: &str, metric: &str) -> f64 {
        median(&self.all(server, metric))
    }

    fn ratio(&self, metric: &str, other: &str) -> f64 {
        self.median("ours", metric) / self.median(other, metric)
    }

    /// Ours over `other` in each repetition that measured both (the servers of a repetition
    /// run one after another, so each pair shares the machine's state of that moment).
    fn paired(&self, metric: &str, other: &str) -> Vec<f64> {
        let of = |server: &str, rep: usize| {
            self.runs
                .iter()
                .find(|(s, r, _)| s == server && *r == rep)
                .and_then(|(_, _, m)| m.get(metric).copied())
        };
        let mut reps: Vec<usize> = self.runs.iter().map(|(_, rep, _)| *rep).collect();
        reps.sort_unstable();
        reps.dedup();
        reps.into_iter()
            .filter_map(|rep| Some(of("ours", rep)? / of(other, rep)?))
            .collect()
    }

    /// The request path's throughput against the bare loops (issue 41): (what, ratio of the
    /// medians, median of the paired repetitions, met: both at least the bound).
    fn floor_targets(&self) -> Vec<(String, f64, f64, bool)> {
        [
            ("stdio tools/call, 64 in flight", "stdio_pipe64_per_s"),
            ("HTTP tools/call, 32 connections", "http_32conn_per_s"),
            ("HTTP tools/call, 1 connection", "http_1conn_per_s"),
        ]
        .into_iter()
        .map(|(what, metric)| {
            let of_medians = self.ratio(metric, "bare");
            let paired = median(&self.paired(metric, "bare"));
            let met = of_medians >= FLOOR && paired >= FLOOR;
            (
                format!("{what}: ours/bare ≥ {FLOOR}"),
                of_medians,
                paired,
                met,
            )
        })
        .filter(|(_, of_medians, paired, _)| !of_medians.is_nan() && !paired.is_nan())
        .collect()
    }

    /// The target checks of issue 8: (what, ratio, pass).
    fn targets(&self) -> Vec<(String, f64, bool)> {
        let mut checks = Vec::new();
        let mut at_least = |what: &str, metric: &str, other: &str, bound: f64| {
            let ratio = self.ratio(metric, other);
            checks.push((
                format!("{what}: ours/{other} ≥ {bound}"),
                ratio,
                ratio >= bound,
            ));
        };
        at_least("stdio 64 in flight", "stdio_pipe64_per_s", "rmcp", 2.0);
        at_least("stdio 1 in flight", "stdio_seq_per_s", "rmcp", 1.5);
        at_least("HTTP 32 connections", "http_32conn_per_s", "rmcp", 2.0);
        for metric in [
            "stdio_seq_per_s",
            "stdio_pipe64_per_s",
            "stdio_list_per_s",
            "http_1conn_per_s",
            "http_32conn_per_s",
        ] {
            at_least(metric, metric, "bare", 0.5);
        }
        let mut below = |what: &str, metric: &str, bound: f64| {
            let ratio = self.ratio(metric, "rmcp");
            let pass = ratio < bound;
            checks.push((format!("{what}: ours/rmcp < {bound}"), ratio, pass));
        };
        for metric in [
            "stdio_seq_p99_us",
            "stdio_pipe64_p99_us",
            "stdio_list_p99_us",
            "http_1conn_p99_us",
            "http_32conn_p99_us",
        ] {
            below(metric, metric, 1.0);
        }
        below("memory per HTTP session", "http_session_kib", 0.5);
        below("binary size", "binary_bytes", 1.0);
        below("crate build time", "build_crate_s", 1.0);
        below("rebuild after an edit", "rebuild_edit_s", 1.0);
        below("clean build time", "clean_build_s", 1.0);
        let startup = self.ratio("startup_ms", "rmcp");
        checks.push((
            "startup, no slower: ours/rmcp ≤ 1".to_owned(),
            startup,
            startup <= 1.0,
        ));
        checks.retain(|(_, ratio, _)| !ratio.is_nan());
        checks
    }

    fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# Benchmark results\n");
        let _ = writeln!(
            out,
            "Medians of {} repetitions (build figures: every build sample), servers alternated. \
             Ratios are ours/other: above 1 is better for ↑ rows, below 1 for ↓ rows.\n",
            self.config.reps
        );
        for (key, value) in &self.environment {
            let _ = writeln!(out, "- {key}: `{value}`");
        }
        let _ = writeln!(
            out,
            "- servers built with profile: `{}`{}",
            self.config.profile,
            if self.config.profile == "production" {
                " (release with `lto = \"fat\"`, `codegen-units = 1`; build rows: `release`)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            out,
            "- mode: {}\n",
            if self.config.quick { "--quick" } else { "full" }
        );
        let _ = writeln!(
            out,
            "| metric | | ours | rmcp 3.11 | bare | ours/rmcp | ours/bare |"
        );
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|");
        for (metric, label, unit, higher) in ROWS {
            let values: Vec<f64> = SERVERS
                .iter()
                .map(|(s, _)| self.median(s, metric))
                .collect();
            if values.iter().all(|v| v.is_nan()) {
                continue;
            }
            let arrow = if *higher { "↑" } else { "↓" };
            let _ = writeln!(
                out,
                "| {label} ({unit}) | {arrow} | {} | {} | {} | {} | {} |",
                number(values[0]),
                number(values[1]),
                number(values[2]),
                ratio(values[0] / values[1]),
                ratio(values[0] / values[2]),
            );
        }
        let _ = writeln!(out, "\n## Targets (issue 8)\n");
        let _ = writeln!(out, "| target | ratio | met |");
        let _ = writeln!(out, "|---|---:|:---:|");
        for (what, value, pass) in self.targets() {
            let _ = writeln!(
                out,
                "| {what} | {} | {} |",
                ratio(value),
                if pass { "yes" } else { "**no**" }
            );
        }
        let floor = self.floor_targets();
        if !floor.is_empty() {
            let _ = writeln!(
                out,
                "\n| target (issue 41) | ratio of the medians | median of the repetitions, \
                 each against the bare loop's beside it | met |\n|---|---:|---:|:---:|"
            );
            for (what, of_medians, paired, pass) in floor {
                let _ = writeln!(
                    out,
                    "| {what} | {} | {} | {} |",
                    ratio(of_medians),
                    ratio(paired),
                    if pass { "yes" } else { "**no**" }
                );
            }
        }
        let section = self.gateway_markdown();
        if !section.is_empty() {
            let _ = write!(out, "\n{section}");
        }
        let section = self.layers_markdown();
        if !section.is_empty() {
            let _ = write!(out, "\n{section}");
        }
        let section = self.first_example_markdown();
        if !section.is_empty() {
            let _ = write!(out, "\n{section}");
        }
        out
    }

    /// The gateway rows against the direct call of the same repetitions (issue 29): what the
    /// mount and the proxy add (empty when they were not measured).
    fn gateway_markdown(&self) -> String {
        let mut out = String::new();
        let direct = |metric: &str| self.median("ours", &format!("stdio_seq_{metric}"));
        if self.median("ours", "proxy_seq_per_s").is_nan() {
            return out;
        }
        let _ = writeln!(out, "## Gateways (issue 29)\n");
        let _ = writeln!(
            out,
            "`tools/call add` over stdio, one at a time, in the same repetitions: bench-ours \
             directly, its `add` mounted in-process (`bench-gateway mount`, `m_add`), and \
             bench-ours proxied as a stdio child (`bench-gateway proxy`, `p_add`, 2026-07-28 \
             between gateway and upstream). Medians; CPU is the serving process's (the \
             proxy's upstream apart).\n"
        );
        let _ = writeln!(
            out,
            "| path | calls/s | p50 µs | p99 µs | CPU µs/call | p50 added µs | x direct calls/s |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
        for (prefix, label) in [
            ("stdio_seq", "direct"),
            ("mount_seq", "Server::mount"),
            ("proxy_seq", "Server::proxy (stdio upstream)"),
        ] {
            let get = |metric: &str| self.median("ours", &format!("{prefix}_{metric}"));
            let mut cpu = number(get("cpu_us"));
            if prefix == "proxy_seq" {
                cpu = format!(
                    "{cpu} + {} upstream",
                    number(self.median("ours", "proxy_seq_upstream_cpu_us"))
                );
            }
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} | {cpu} | {} | {} |",
                number(get("per_s")),
                number(get("p50_us")),
                number(get("p99_us")),
                number(get("p50_us") - direct("p50_us")),
                ratio(get("per_s") / direct("per_s")),
            );
        }
        let _ = writeln!(
            out,
            "\nThrough the proxy with 64 in flight: {} calls/s (p50 {} µs; direct: {} calls/s).",
            number(self.median("ours", "proxy_pipe64_per_s")),
            number(self.median("ours", "proxy_pipe64_p50_us")),
            number(self.median("ours", "stdio_pipe64_per_s")),
        );
        out
    }

    /// The median of `metric` for bench-layers' `variant`.
    fn layer(&self, variant: &str, metric: &str) -> f64 {
        self.median(LAYERS.0, &format!("{variant}_{metric}"))
    }

    /// Issue 28's checks: (what, figure, met). An empty layer under 1 µs of server CPU per
    /// request; telemetry within 5 % of the throughput without it.
    fn layer_targets(&self) -> Vec<(String, f64, bool)> {
        let mut checks = Vec::new();
        for (scenario, label) in LAYER_SCENARIOS {
            let cpu = |variant| self.layer(variant, &format!("{scenario}_cpu_us"));
            let cost = cpu("empty") - cpu("none");
            checks.push((
                format!("{label}: empty layer's CPU per request < 1 µs"),
                cost,
                cost < 1.0,
            ));
            let rate = |variant| self.layer(variant, &format!("{scenario}_per_s"));
            let ratio = rate("telemetry") / rate("none");
            checks.push((
                format!("{label}: telemetry ≥ 0.95 of the throughput"),
                ratio,
                ratio >= 0.95,
            ));
            let ratio = rate("sampled") / rate("none");
            checks.push((
                format!("{label}: telemetry sampled out ≥ 0.95 of the throughput"),
                ratio,
                ratio >= 0.95,
            ));
        }
        checks.retain(|(_, value, _)| !value.is_nan());
        checks
    }

    fn layers_markdown(&self) -> String {
        if self.all(LAYERS.0, "none_stdio_seq_per_s").is_empty() {
            return String::new();
        }
        let mut out = String::new();
        let _ = writeln!(out, "## Middleware and telemetry (issue 28)\n");
        let _ = writeln!(
            out,
            "`bench-layers`: bench-ours' server in one binary with the `rate-limit`, `otel` and \
             `prometheus` features, run six ways (no layer; one `middleware::from_fn` layer that \
             passes requests on; `RateLimitLayer` at a rate never reached; `Server::telemetry` \
             with no `tracing` subscriber, so its metrics alone (kept by the server and recorded \
             on an SDK meter provider); and with spans too, each request's span made on an SDK \
             tracer (`Telemetry::tracer`) whose batch exporter drops them, `tracing-opentelemetry` \
             beside it for any other span; and the same with every request sampled out, \
             `Telemetry::sample_ratio(0.0)`), in the same repetitions as the table above. Δ CPU \
             is the server CPU per request over no layer.\n"
        );
        let _ = write!(out, "| scenario |");
        for label in LAYER_LABELS {
            let _ = write!(out, " {label} |");
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
        for (scenario, label) in LAYER_SCENARIOS {
            let _ = write!(out, "| {label} (calls/s) |");
            for variant in LAYER_VARIANTS {
                let _ = write!(
                    out,
                    " {} |",
                    number(self.layer(variant, &format!("{scenario}_per_s")))
                );
            }
            let _ = writeln!(out);
            let _ = write!(out, "|   server CPU per request (µs) |");
            for variant in LAYER_VARIANTS {
                let _ = write!(
                    out,
                    " {} |",
                    number(self.layer(variant, &format!("{scenario}_cpu_us")))
                );
            }
            let _ = writeln!(out);
            let none = self.layer("none", &format!("{scenario}_cpu_us"));
            let _ = write!(out, "|   Δ CPU over no layer (µs) | – |");
            for variant in &LAYER_VARIANTS[1..] {
                let cost = self.layer(variant, &format!("{scenario}_cpu_us")) - none;
                let _ = write!(out, " {cost:+.2} |");
            }
            let _ = writeln!(out);
            let _ = write!(out, "|   p99 (µs) |");
            for variant in LAYER_VARIANTS {
                let _ = write!(
                    out,
                    " {} |",
                    number(self.layer(variant, &format!("{scenario}_p99_us")))
                );
            }
            let _ = writeln!(out);
        }
        let ir = |mode: &str| self.median(LAYERS.0, &format!("ir_{mode}"));
        if !ir("none").is_nan() {
            let _ = writeln!(
                out,
                "\nInstructions a request under callgrind (`bench/callgrind.sh --layers`: stdio, \
                 one call at a time, the difference of 2,000 and 12,000 calls over 10,000), and \
                 the OpenTelemetry SDK's own cost of one `tools/call` span and one histogram \
                 record with their attributes (`bench-layers otel-floor`):\n"
            );
            let _ = writeln!(
                out,
                "| bench-layers mode | instructions a request | over no layer |"
            );
            let _ = writeln!(out, "|---|---:|---:|");
            let none = ir("none");
            for (mode, label) in IR_MODES {
                let value = ir(mode);
                if value.is_nan() {
                    continue;
                }
                let added = match mode {
                    "none" => "–".to_owned(),
                    _ => format!("{:+.0}", value - none),
                };
                let _ = writeln!(out, "| {label} | {value:.0} | {added} |");
            }
            let floor = ir("sdk_floor");
            let _ = writeln!(
                out,
                "| the SDK alone: a span and a histogram record | | {floor:.0} |"
            );
            let spans = ir("telemetry") - none;
            let metrics = ir("metrics") - none;
            let _ = writeln!(
                out,
                "\n| target (issue 41) | figure | met |\n|---|---:|:---:|\n\
                 | metrics alone: added instructions ≤ 1,000 | {metrics:.0} | {} |\n\
                 | spans and metrics: added instructions ≤ 1.25x the SDK's own | {:.2} | {} |",
                if metrics <= 1_000.0 { "yes" } else { "**no**" },
                spans / floor,
                if spans <= 1.25 * floor {
                    "yes"
                } else {
                    "**no**"
                },
            );
        }
        let _ = writeln!(out, "\n| target (issue 28) | figure | met |");
        let _ = writeln!(out, "|---|---:|:---:|");
        for (what, value, pass) in self.layer_targets() {
            let _ = writeln!(
                out,
                "| {what} | {value:.3} | {} |",
                if pass { "yes" } else { "**no**" }
            );
        }
        out
    }

    /// Issue 28's medians by variant, and its checks.
    fn layers_json(&self) -> serde_json::Value {
        let mut variants = serde_json::Map::new();
        for variant in LAYER_VARIANTS {
            let mut row = serde_json::Map::new();
            for (scenario, _) in LAYER_SCENARIOS {
                for figure in ["per_s", "cpu_us", "p50_us", "p99_us"] {
                    let value = self.layer(variant, &format!("{scenario}_{figure}"));
                    if !value.is_nan() {
                        row.insert(format!("{scenario}_{figure}"), json!(value));
                    }
                }
            }
            variants.insert(variant.to_owned(), row.into());
        }
        json!({
            "medians": variants,
            "targets": self.layer_targets().iter().map(|(what, value, pass)| json!({"target": what, "figure": value, "met": pass})).collect::<Vec<_>>(),
        })
    }

    /// Writes `results.md` and `results.json` into `dir`; returns the markdown.
    pub fn write(&mut self, dir: &Path) -> std::io::Result<String> {
        self.environment.insert("loadavg_end".to_owned(), loadavg());
        let markdown = self.markdown();
        let mut json = self.computed_json();
        if let Some(object) = json.as_object_mut() {
            object.insert("config".to_owned(), json!(self.config));
            object.insert("environment".to_owned(), json!(self.environment));
            object.insert("samples".to_owned(), json!(self.samples));
            object.insert(FIRST_EXAMPLE_KEY.to_owned(), self.first_example_json());
            object.insert("runs".to_owned(), json!(self.runs.iter().map(|(server, rep, metrics)| json!({"server": server, "rep": rep, "metrics": metrics})).collect::<Vec<_>>()));
        }
        std::fs::write(dir.join("results.md"), &markdown)?;
        std::fs::write(
            dir.join("results.json"),
            serde_json::to_string_pretty(&json).map_err(std::io::Error::other)? + "\n",
        )?;
        Ok(markdown)
    }

    /// What `results.json` holds that is computed from the measurements: the medians and the
    /// target checks.
    fn computed_json(&self) -> serde_json::Value {
        let mut medians = serde_json::Map::new();
        for (server, _) in SERVERS {
            let mut row = serde_json::Map::new();
            for (metric, _, _, _) in ROWS {
                let value = self.median(server, metric);
                if !value.is_nan() {
                    row.insert((*metric).to_owned(), json!(value));
                }
            }
            medians.insert(server.to_owned(), row.into());
        }
        json!({
            "medians": medians,
            "targets": self.targets().iter().map(|(what, value, pass)| json!({"target": what, "ratio": value, "met": pass})).collect::<Vec<_>>(),
            "floor_targets": self.floor_targets().iter().map(|(what, of_medians, paired, pass)| json!({"target": what, "ratio_of_medians": of_medians, "median_paired": paired, "met": pass})).collect::<Vec<_>>(),
            "layers": self.layers_json(),
        })
    }

    /// For `--render`: the measurements of the run in `dir/results.json`, to write its
    /// `results.md` again with this runner's tables and checks.
    pub fn load(dir: &Path) -> Result<(Self, serde_json::Value), String> {
        let path = dir.join("results.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|error| format!("reading {}: {error}", path.display()))?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?;
        let field = |key: &str| json.get(key).cloned().unwrap_or(serde_json::Value::Null);
        let bad =
            |key: &str, error: serde_json::Error| format!("{}: `{key}`: {error}", path.display());
        let config: Config =
            serde_json::from_value(field("config")).map_err(|e| bad("config", e))?;
        let environment: BTreeMap<String, String> =
            serde_json::from_value(field("environment")).map_err(|e| bad("environment", e))?;
        // A figure that was not a number (NaN) was written as `null`.
        let samples: BTreeMap<String, BTreeMap<String, Vec<Option<f64>>>> =
            serde_json::from_value(field("samples")).map_err(|e| bad("samples", e))?;
        let samples = samples
            .into_iter()
            .map(|(server, metrics)| {
                let metrics = metrics
                    .into_iter()
                    .map(|(metric, values)| (metric, values.into_iter().flatten().collect()))
                    .collect();
                (server, metrics)
            })
            .collect();
        #[derive(serde::Deserialize)]
        struct Run {
            server: String,
            rep: usize,
            metrics: BTreeMap<String, Option<f64>>,
        }
        let runs: Vec<Run> = serde_json::from_value(field("runs")).map_err(|e| bad("runs", e))?;
        let runs = runs
            .into_iter()
            .map(|run| {
                let metrics = run
                    .metrics
                    .into_iter()
                    .filter_map(|(metric, value)| Some((metric, value?)))
                    .collect();
                (run.server, run.rep, metrics)
            })
            .collect();
        let results = Self {
            config,
            runs,
            samples,
            environment,
            // The first example's section is kept as it was written (by this run or by a
            // later `--build-rows-only`, with its own date and load).
            first_example: BTreeMap::new(),
        };
        Ok((results, json))
    }

    /// `--render`: writes `dir/results.md` again from `dir/results.json`, and the computed
    /// figures of `results.json` (medians, checks), keeping every measurement and the first
    /// example's section as they are. Returns the markdown.
    pub fn render(dir: &Path) -> Result<String, String> {
        let (results, mut json) = Self::load(dir)?;
        let markdown_path = dir.join("results.md");
        let old = std::fs::read_to_string(&markdown_path).unwrap_or_default();
        let mut markdown = results.markdown();
        if let Some(at) = old.find(FIRST_EXAMPLE_HEADING) {
            markdown = format!("{}\n\n{}", markdown.trim_end(), &old[at..]);
        }
        if let (Some(object), serde_json::Value::Object(computed)) =
            (json.as_object_mut(), results.computed_json())
        {
            object.extend(computed);
        }
        let write = |path: &Path, text: &str| {
            std::fs::write(path, text)
                .map_err(|error| format!("writing {}: {error}", path.display()))
        };
        write(&markdown_path, &markdown)?;
        let text = serde_json::to_string_pretty(&json).map_err(|error| error.to_string())? + "\n";
        write(&dir.join("results.json"), &text)?;
        Ok(markdown)
    }
}

/// `/proc/loadavg`: how busy the machine was, since the figures depend on it.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_owned()
}

fn number(value: f64) -> String {
    if value.is_nan() {
        "–".to_owned()
    } else if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

fn ratio(value: f64) -> String {
    if value.is_nan() || value.is_infinite() {
        "–".to_owned()
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        serde_json::from_value(json!({
            "build_reps": 1, "build_rows_only": false, "build_times": false, "cap_seconds": 15,
            "clean_build_reps": 1, "full_clean_build": false, "http_1_calls": 10,
            "http_32_calls": 10, "http_connections": 32, "list_calls": 10, "live_tasks": 10,
            "no_build": true, "pipeline_window": 64, "profile": "production", "quick": true,
            "reps": 3, "servers": ["ours", "rmcp", "bare"], "sessions": 10,
            "startup_spawns": 1, "stdio_pipelined_calls": 10, "stdio_sequential_calls": 10,
            "task_calls": 10
        }))
        .expect("a whole config")
    }

    /// Three repetitions of HTTP at 32 connections whose medians are 0.9x apart, but where ours
    /// read below 0.9x of the bare loop beside it in two of the three.
    fn results() -> Results {
        let mut results = Results::new(config());
        for (rep, ours, bare) in [(0, 90.0, 80.0), (1, 100.0, 120.0), (2, 80.0, 100.0)] {
            for (server, value) in [("ours", ours), ("bare", bare), ("rmcp", 10.0)] {
                let metrics = Metrics::from([
                    ("http_32conn_per_s".to_owned(), value),
                    ("http_32conn_p99_us".to_owned(), f64::NAN),
                ]);
                results.push(server, rep, metrics);
            }
        }
        results
    }

    #[test]
    fn the_floor_is_checked_on_the_medians_and_on_each_repetition_against_its_pair() {
        let results = results();
        let paired = results.paired("http_32conn_per_s", "bare");
        assert_eq!(paired, [90.0 / 80.0, 100.0 / 120.0, 0.8]);
        let floor = results.floor_targets();
        assert_eq!(floor.len(), 1, "only the measured rows: {floor:?}");
        let (what, of_medians, paired, met) = &floor[0];
        assert_eq!(what, "HTTP tools/call, 32 connections: ours/bare ≥ 0.9");
        assert!((of_medians - 0.9).abs() < 1e-12, "{of_medians}");
        assert!((paired - 100.0 / 120.0).abs() < 1e-12, "{paired}");
        assert!(!met, "the paired median is under 0.9");
        let markdown = results.markdown();
        assert!(
            markdown.contains(
                "| HTTP tools/call, 32 connections: ours/bare ≥ 0.9 | 0.90 | 0.83 | **no** |"
            ),
            "{markdown}"
        );
    }

    #[test]
    fn render_writes_back_what_the_run_wrote() {
        let dir = std::env::temp_dir().join(format!("bench-render-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut results = results();
        results.set_once("ours", "binary_bytes", 3.0);
        results.set_first_example(BTreeMap::from([
            ("ours-default".to_owned(), vec![50.0, 52.5]),
            ("rmcp".to_owned(), vec![60.0]),
        ]));
        let written = results.write(&dir).unwrap();
        let json = std::fs::read_to_string(dir.join("results.json")).unwrap();
        assert!(written.contains(FIRST_EXAMPLE_HEADING));
        let rendered = Results::render(&dir).unwrap();
        assert_eq!(rendered, written);
        assert_eq!(
            std::fs::read_to_string(dir.join("results.md")).unwrap(),
            written
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("results.json")).unwrap(),
            json
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
