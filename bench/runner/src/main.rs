//! The benchmark runner: builds the three servers (this framework, rmcp, bare), drives them in
//! turn, several repetitions, and writes `bench/results.md` and `bench/results.json`.
//!
//! Usage: `bench/run.sh [--quick] [--reps N] [--no-build-times] [--full-clean-build] [--servers ours,rmcp,bare]`,
//! or `bench/run.sh --build-rows-only [--clean-build-reps N]` for the first example's clean
//! builds alone (see `bench/README.md`).

mod build;
mod http;
mod measure;
mod report;
mod stdio;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use measure::{Run, cpu_us, rss_kib};

/// The servers, in the order of the report: (short name, cargo package).
/// bench-ours' server with middleware and telemetry variants (issue 28), driven after ours.
pub const LAYERS: (&str, &str) = ("layers", "bench-layers");

/// The variants of bench-layers' request path: no layer, an empty layer, the rate limiter,
/// telemetry's metrics alone, telemetry (spans and metrics), telemetry with every request
/// sampled out.
pub const LAYER_VARIANTS: [&str; 6] = ["none", "empty", "rate", "metrics", "telemetry", "sampled"];

pub const SERVERS: [(&str, &str); 3] = [
    ("ours", "bench-ours"),
    ("rmcp", "bench-rmcp"),
    ("bare", "bench-bare"),
];

/// How much load each scenario sends. Every loop stops at its count or its time cap.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Config {
    pub quick: bool,
    pub reps: usize,
    pub build_times: bool,
    pub build_reps: usize,
    pub full_clean_build: bool,
    /// Only the first example's clean builds (`--build-rows-only`): no servers driven, and the
    /// other figures in `results.md` / `results.json` are kept.
    pub build_rows_only: bool,
    /// Rounds of the first example's clean builds (3, `--quick` 1, `--clean-build-reps N`).
    pub clean_build_reps: usize,
    /// Use the binaries already in `bench/target/<profile>` (`--no-build`, for A/B runs).
    pub no_build: bool,
    /// The cargo profile the servers are built with: `production` (the workspace's release
    /// profile with fat LTO and one codegen unit, as a deployment builds), or `release`
    /// (`--profile release`, cargo's default one). The build-time rows always time `release`.
    pub profile: String,
    /// The servers to drive (all three unless `--servers` names some).
    pub servers: Vec<String>,
    pub stdio_sequential_calls: usize,
    pub stdio_pipelined_calls: usize,
    pub pipeline_window: usize,
    pub list_calls: usize,
    pub http_1_calls: usize,
    pub http_32_calls: usize,
    pub http_connections: usize,
    pub startup_spawns: usize,
    pub sessions: usize,
    pub task_calls: usize,
    pub live_tasks: usize,
    pub cap_seconds: u64,
}

impl Config {
    fn from_args() -> Result<Self, String> {
        let mut args = std::env::args().skip(1);
        let mut quick = false;
        let mut reps = None;
        let mut build_times = true;
        let mut full_clean_build = false;
        let mut build_rows_only = false;
        let mut clean_build_reps = None;
        let mut no_build = false;
        let mut profile = "production".to_owned();
        let mut servers: Vec<String> = SERVERS.iter().map(|(s, _)| (*s).to_owned()).collect();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quick" => quick = true,
                "--no-build" => no_build = true,
                "--profile" => {
                    profile = args.next().ok_or("`--profile` needs a profile name")?;
                    if !matches!(profile.as_str(), "production" | "release") {
                        return Err(format!(
                            "unknown profile `{profile}`; expected production or release"
                        ));
                    }
                }
                "--reps" => {
                    let n = args.next().ok_or("`--reps` needs a number")?;
                    reps = Some(n.parse().map_err(|_| format!("bad `--reps` {n}"))?);
                }
                "--no-build-times" => build_times = false,
                "--full-clean-build" => full_clean_build = true,
                "--build-rows-only" => build_rows_only = true,
                "--clean-build-reps" => {
                    let n = args.next().ok_or("`--clean-build-reps` needs a number")?;
                    clean_build_reps = Some(
                        n.parse()
                            .map_err(|_| format!("bad `--clean-build-reps` {n}"))?,
                    );
                }
                "--servers" => {
                    let list = args
                        .next()
                        .ok_or("`--servers` needs a list, e.g. `ours,rmcp`")?;
                    servers = list.split(',').map(str::to_owned).collect();
                    if let Some(bad) = servers
                        .iter()
                        .find(|s| !SERVERS.iter().any(|(n, _)| n == s))
                    {
                        return Err(format!("unknown server `{bad}`; expected ours, rmcp, bare"));
                    }
                }
                other => {
                    return Err(format!(
                        "unknown argument `{other}`; expected `--quick`, `--reps N`, `--no-build-times`, `--full-clean-build`, `--servers LIST`, `--no-build`, `--profile production|release`, `--build-rows-only`, `--clean-build-reps N`"
                    ));
                }
            }
        }
        let scale = if quick { 5 } else { 1 };
        Ok(Self {
            quick,
            reps: reps.unwrap_or(if quick { 2 } else { 5 }).max(1),
            build_times,
            build_reps: if quick { 1 } else { 2 },
            full_clean_build,
            build_rows_only,
            clean_build_reps: clean_build_reps.unwrap_or(if quick { 1 } else { 3 }).max(1),
            no_build,
            profile,
            servers,
            stdio_sequential_calls: 20_000 / scale,
            stdio_pipelined_calls: 100_000 / scale,
            pipeline_window: 64,
            list_calls: 5_000 / scale,
            http_1_calls: 10_000 / scale,
            http_32_calls: 50_000 / scale,
            http_connections: 32,
            startup_spawns: if quick { 10 } else { 50 },
            sessions: 1_000,
            task_calls: 10_000 / scale,
            live_tasks: 5_000,
            cap_seconds: if quick { 5 } else { 15 },
        })
    }

    fn cap(&self) -> Duration {
        Duration::from_secs(self.cap_seconds)
    }
}

/// One repetition's figures for one server, by metric name.
pub type Metrics = BTreeMap<String, f64>;

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("runner/ sits in bench/")
        .to_path_buf()
}

/// Records a run, with the server's CPU time per call since `cpu_before` (a noise-robust
/// figure on a shared machine: other processes slow the wall clock, not this).
fn put_run(metrics: &mut Metrics, prefix: &str, mut run: Run, pid: u32, cpu_before: f64) {
    let cpu = cpu_us(pid) - cpu_before;
    metrics.insert(format!("{prefix}_cpu_us"), cpu / run.calls.max(1) as f64);
    if run.errors > 0 {
        eprintln!("  warning: {prefix}: {} error replies", run.errors);
    }
    metrics.insert(format!("{prefix}_per_s"), run.per_second());
    metrics.insert(format!("{prefix}_p50_us"), run.percentile_us(0.50));
    metrics.insert(format!("{prefix}_p99_us"), run.percentile_us(0.99));
    metrics.insert(format!("{prefix}_errors"), run.errors as f64);
}

/// Startup, then the stdio scenarios in one process (idle RSS first, RSS after all of them).
async fn stdio_scenarios(
    binary: &Path,
    config: &Config,
    metrics: &mut Metrics,
) -> std::io::Result<()> {
    let mut startups = Vec::new();
    for _ in 0..config.startup_spawns {
        startups.push(stdio::startup(binary).await?.as_secs_f64() * 1_000.0);
    }
    metrics.insert("startup_ms".into(), measure::median(&startups));

    let mut server = stdio::StdioServer::spawn(binary)?;
    server.initialize().await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    metrics.insert("rss_idle_kib".into(), rss_kib(server.pid()));
    // Warm-up, not measured.
    server
        .sequential(500, config.cap(), stdio::call_add)
        .await?;
    let pid = server.pid();
    let cpu = cpu_us(pid);
    let run = server
        .sequential(config.stdio_sequential_calls, config.cap(), stdio::call_add)
        .await?;
    put_run(metrics, "stdio_seq", run, pid, cpu);
    let cpu = cpu_us(pid);
    let run = server
        .sequential(
            config.stdio_sequential_calls,
            config.cap(),
            stdio::call_add_sync,
        )
        .await?;
    put_run(metrics, "stdio_sync_seq", run, pid, cpu);
    let cpu = cpu_us(pid);
    let run = server
        .pipelined(
            config.stdio_pipelined_calls,
            config.pipeline_window,
            config.cap() * 4,
        )
        .await?;
    put_run(metrics, "stdio_pipe64", run, pid, cpu);
    let cpu = cpu_us(pid);
    let run = server
        .sequential(config.list_calls, config.cap(), stdio::list_tools)
        .await?;
    put_run(metrics, "stdio_list", run, pid, cpu);
    tokio::time::sleep(Duration::from_millis(200)).await;
    metrics.insert("rss_after_load_kib".into(), rss_kib(server.pid()));
    server.close().await;
    Ok(())
}

/// Ours only, in a server with a task tool (`bench-ours stdio-tasks`): a task's round trip one
/// at a time, then the RSS of `live_tasks` tasks left alive (their results kept), per task.
async fn task_scenarios(
    binary: &Path,
    config: &Config,
    metrics: &mut Metrics,
) -> std::io::Result<()> {
    let mut server = stdio::StdioServer::spawn_mode(binary, "stdio-tasks")?;
    server.initialize().await?;
    server.task_round_trips(200, config.cap()).await?; // warm-up
    let pid = server.pid();
    let cpu = cpu_us(pid);
    let run = server
        .task_round_trips(config.task_calls, config.cap())
        .await?;
    put_run(metrics, "stdio_task", run, pid, cpu);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rss_kib(pid);
    let started = std::time::Instant::now();
    let mut created = 0usize;
    while created < config.live_tasks && started.elapsed() < config.cap() * 2 {
        server.create_task(1_000_000 + created).await?;
        created += 1;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    metrics.insert(
        "task_live_kib".into(),
        (rss_kib(pid) - before) / created.max(1) as f64,
    );
    server.close().await;
    Ok(())
}

/// Ours only (issue 29): `add` through `Server::mount` and through `Server::proxy` to a
/// `bench-ours stdio` child, over stdio, in the same repetition as the direct call
/// (`stdio_seq`): one at a time, and 64 in flight through the proxy. The proxy's CPU is the
/// gateway's own; its upstream's is recorded apart (`proxy_seq_upstream_cpu_us`).
async fn gateway_scenarios(
    ours: &Path,
    gateway: &Path,
    config: &Config,
    metrics: &mut Metrics,
) -> std::io::Result<()> {
    let mut mount = stdio::StdioServer::spawn_args(gateway, &["mount"])?;
    mount.initialize().await?;
    mount
        .sequential(500, config.cap(), stdio::call_mounted_add)
        .await?; // warm-up
    let pid = mount.pid();
    let cpu = cpu_us(pid);
    let run = mount
        .sequential(
            config.stdio_sequential_calls,
            config.cap(),
            stdio::call_mounted_add,
        )
        .await?;
    put_run(metrics, "mount_seq", run, pid, cpu);
    mount.close().await;

    let upstream = ours.to_string_lossy();
    let mut proxy = stdio::StdioServer::spawn_args(gateway, &["proxy", &upstream])?;
    proxy.initialize().await?;
    proxy
        .sequential(500, config.cap(), stdio::call_proxied_add)
        .await?; // warm-up (the upstream is connected by then: the gateway waits for it)
    let pid = proxy.pid();
    let children = measure::children(pid);
    let upstream_cpu = || children.iter().map(|&child| cpu_us(child)).sum::<f64>();
    let (cpu, child_cpu) = (cpu_us(pid), upstream_cpu());
    let run = proxy
        .sequential(
            config.stdio_sequential_calls,
            config.cap(),
            stdio::call_proxied_add,
        )
        .await?;
    let calls = run.calls.max(1) as f64;
    metrics.insert(
        "proxy_seq_upstream_cpu_us".into(),
        (upstream_cpu() - child_cpu) / calls,
    );
    put_run(metrics, "proxy_seq", run, pid, cpu);
    let cpu = cpu_us(pid);
    let run = proxy
        .pipelined_with(
            config.stdio_pipelined_calls,
            config.pipeline_window,
            config.cap() * 4,
            stdio::call_proxied_add,
        )
        .await?;
    put_run(metrics, "proxy_pipe64", run, pid, cpu);
    proxy.close().await;
    Ok(())
}

/// In a fresh HTTP server: 1,000 idle sessions (RSS before and after), then the load with 1
/// and with 32 connections, then RSS again. Sessions come first so their memory is new heap,
/// not memory the load run freed and the allocator hands out again.
async fn http_scenarios(
    binary: &Path,
    config: &Config,
    metrics: &mut Metrics,
) -> std::io::Result<()> {
    let server = http::HttpServer::spawn(binary).await?;
    let result = async {
        http::load(server.addr, 1, 200, config.cap()).await?; // warm-up
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = rss_kib(server.pid());
        let opened = http::open_sessions(server.addr, config.sessions, config.cap() * 2).await?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = rss_kib(server.pid());
        metrics.insert(
            "http_session_kib".into(),
            (after - before) / opened.max(1) as f64,
        );
        let pid = server.pid();
        let cpu = cpu_us(pid);
        let run = http::load(server.addr, 1, config.http_1_calls, config.cap()).await?;
        put_run(metrics, "http_1conn", run, pid, cpu);
        let cpu = cpu_us(pid);
        let run = http::load(
            server.addr,
            config.http_connections,
            config.http_32_calls,
            config.cap(),
        )
        .await?;
        put_run(metrics, "http_32conn", run, pid, cpu);
        tokio::time::sleep(Duration::from_millis(300)).await;
        metrics.insert("rss_after_http_load_kib".into(), rss_kib(pid));
        Ok::<(), std::io::Error>(())
    }
    .await;
    server.stop().await;
    result
}

/// One variant of bench-layers: stdio with 1 and 64 in flight, HTTP with 1 and 32 connections,
/// each figure under `<variant>_<scenario>_...`.
async fn layer_scenarios(
    binary: &Path,
    variant: &str,
    config: &Config,
    metrics: &mut Metrics,
) -> std::io::Result<()> {
    let mut server = stdio::StdioServer::spawn_mode(binary, &format!("stdio-{variant}"))?;
    server.initialize().await?;
    server
        .sequential(500, config.cap(), stdio::call_add)
        .await?;
    let pid = server.pid();
    let cpu = cpu_us(pid);
    let run = server
        .sequential(config.stdio_sequential_calls, config.cap(), stdio::call_add)
        .await?;
    put_run(metrics, &format!("{variant}_stdio_seq"), run, pid, cpu);
    let cpu = cpu_us(pid);
    let run = server
        .pipelined(
            config.stdio_pipelined_calls,
            config.pipeline_window,
            config.cap() * 4,
        )
        .await?;
    put_run(metrics, &format!("{variant}_stdio_pipe64"), run, pid, cpu);
    server.close().await;

    let server = http::HttpServer::spawn_mode(binary, &format!("http-{variant}")).await?;
    let result = async {
        http::load(server.addr, 1, 200, config.cap()).await?; // warm-up
        let pid = server.pid();
        let cpu = cpu_us(pid);
        let run = http::load(server.addr, 1, config.http_1_calls, config.cap()).await?;
        put_run(metrics, &format!("{variant}_http_1conn"), run, pid, cpu);
        let cpu = cpu_us(pid);
        let run = http::load(
            server.addr,
            config.http_connections,
            config.http_32_calls,
            config.cap(),
        )
        .await?;
        put_run(metrics, &format!("{variant}_http_32conn"), run, pid, cpu);
        Ok::<(), std::io::Error>(())
    }
    .await;
    server.stop().await;
    result
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // For profiling: `bench-runner --drive-http 127.0.0.1:PORT [CONNECTIONS] [CALLS]` loads a
    // server started by hand (e.g. under `perf record`) and prints what it measured.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--drive-http") {
        std::process::exit(drive_http(&args[1..]).await);
    }
    // `bench-runner --drive-stdio BINARY [IN_FLIGHT] [CALLS]` spawns `BINARY stdio` (a wrapper
    // that runs the server under `valgrind --tool=callgrind`, say) and loads it the same way.
    if args.first().map(String::as_str) == Some("--drive-stdio") {
        std::process::exit(drive_stdio(&args[1..]).await);
    }
    // `bench-runner --render` writes `results.md` again from `results.json` (after a change to
    // the tables or checks), without measuring anything.
    if args.first().map(String::as_str) == Some("--render") {
        match report::Results::render(&bench_dir()) {
            Ok(markdown) => {
                print!("{markdown}");
                std::process::exit(0);
            }
            Err(message) => {
                eprintln!("bench-runner: {message}");
                std::process::exit(1);
            }
        }
    }
    let config = match Config::from_args() {
        Ok(config) => config,
        Err(message) => {
            eprintln!("bench-runner: {message}");
            std::process::exit(2);
        }
    };
    let dir = bench_dir();
    if config.build_rows_only {
        std::process::exit(build_rows_only(&dir, &config));
    }
    eprintln!("building the servers (profile {})...", config.profile);
    let binaries = match build::build_all(&dir, &config.profile, config.no_build) {
        Ok(binaries) => binaries,
        Err(message) => {
            eprintln!("bench-runner: {message}");
            std::process::exit(1);
        }
    };
    let mut results = report::Results::new(config.clone());
    for (name, binary) in &binaries {
        results.set_once(name, "binary_bytes", build::size(binary));
    }
    if config.build_times
        && let Err(message) = build::time_builds(&dir, &config, &mut results)
    {
        eprintln!("bench-runner: {message}");
        std::process::exit(1);
    }
    if config.build_times {
        match build::first_example_clean_builds(&dir, config.clean_build_reps) {
            Ok(samples) => results.set_first_example(samples),
            Err(message) => {
                eprintln!("bench-runner: {message}");
                std::process::exit(1);
            }
        }
    }
    for rep in 0..config.reps {
        // Alternate: each repetition starts with the next server. The servers take turns
        // scenario group by scenario group (all stdio rows, then all HTTP rows), so the rows
        // compared are measured minutes closer together than a server's whole turn would put
        // them: what else the machine is doing moves both sides of a ratio alike.
        let order: Vec<&str> = (0..SERVERS.len())
            .map(|k| SERVERS[(rep + k) % SERVERS.len()].0)
            .filter(|name| config.servers.iter().any(|s| s == name))
            .collect();
        let mut metrics: Vec<Metrics> = order.iter().map(|_| Metrics::new()).collect();
        for (name, metrics) in order.iter().zip(&mut metrics) {
            eprintln!("rep {}/{} {name} stdio", rep + 1, config.reps);
            if let Err(error) = stdio_scenarios(&binaries[*name], &config, metrics).await {
                eprintln!("  {name} stdio failed: {error}");
            }
        }
        for (name, metrics) in order.iter().zip(&mut metrics) {
            eprintln!("rep {}/{} {name} http", rep + 1, config.reps);
            if let Err(error) = http_scenarios(&binaries[*name], &config, metrics).await {
                eprintln!("  {name} http failed: {error}");
            }
        }
        for (name, mut metrics) in order.into_iter().zip(metrics) {
            let binary = &binaries[name];
            if name == "ours"
                && let Err(error) = task_scenarios(binary, &config, &mut metrics).await
            {
                eprintln!("  {name} tasks failed: {error}");
            }
            if name == "ours"
                && let Some(gateway) = binaries.get("gateway")
                && let Err(error) = gateway_scenarios(binary, gateway, &config, &mut metrics).await
            {
                eprintln!("  {name} gateway failed: {error}");
            }
            results.push(name, rep, metrics);
        }
        if config.servers.iter().any(|s| s == "ours") {
            let mut metrics = Metrics::new();
            // Alternate the variants' order too, so none always runs first.
            for k in 0..LAYER_VARIANTS.len() {
                let variant = LAYER_VARIANTS[(rep + k) % LAYER_VARIANTS.len()];
                eprintln!("rep {}/{} layers: {variant}", rep + 1, config.reps);
                let binary = &binaries[LAYERS.0];
                if let Err(error) = layer_scenarios(binary, variant, &config, &mut metrics).await {
                    eprintln!("  layers {variant} failed: {error}");
                }
            }
            results.push(LAYERS.0, rep, metrics);
        }
    }
    // The telemetry rows' instructions a request, counted by callgrind (which other work on
    // the machine does not move), in a full run that drove bench-layers.
    if !config.quick
        && config.servers.iter().any(|s| s == "ours")
        && let Some(binary) = binaries.get(LAYERS.0)
    {
        eprintln!("counting the telemetry rows' instructions (bench/callgrind.sh --layers)...");
        match callgrind_layers(&dir, binary) {
            Ok(counts) => {
                for (key, value) in counts {
                    results.set_once(LAYERS.0, &key, value);
                }
            }
            Err(message) => eprintln!("  callgrind failed: {message}"),
        }
    }
    match results.write(&dir) {
        Ok(table) => println!("{table}"),
        Err(error) => {
            eprintln!("bench-runner: writing the results: {error}");
            std::process::exit(1);
        }
    }
}

/// `bench/callgrind.sh --layers` on `binary`: instructions a request by bench-layers mode
/// (`ir_none`, `ir_metrics`, ...) and the SDK's own for a span and a histogram record
/// (`ir_sdk_floor`).
fn callgrind_layers(dir: &Path, binary: &Path) -> Result<Vec<(String, f64)>, String> {
    let out = std::env::temp_dir().join(format!("bench-callgrind-{}", std::process::id()));
    let output = std::process::Command::new(dir.join("callgrind.sh"))
        .arg("--layers")
        .arg(&out)
        .arg(binary)
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&out);
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut counts = Vec::new();
    for line in text.lines() {
        let number = |after: &str| {
            line.split_once(after)?
                .1
                .split_whitespace()
                .next()?
                .parse::<f64>()
                .ok()
        };
        // `stdio (stdio-metrics), 1 in flight: 25689 instructions per request`
        if let Some(mode) = line
            .strip_prefix("stdio (stdio-")
            .and_then(|rest| rest.split_once(')'))
            .map(|(mode, _)| mode)
            && let Some(value) = number("in flight: ")
        {
            counts.push((format!("ir_{mode}"), value));
        } else if line.starts_with("the SDK alone: ")
            && let Some(value) = number("the SDK alone: ")
        {
            counts.push(("ir_sdk_floor".to_owned(), value));
        }
    }
    match counts.is_empty() {
        true => Err(format!("no counts in: {text}")),
        false => Ok(counts),
    }
}

/// `--build-rows-only`: the first example's clean builds alone, merged into the result files
/// of the last full run (their section replaced, the rest kept). Returns the exit code.
fn build_rows_only(dir: &Path, config: &Config) -> i32 {
    // Made first, so its date and start load average are those of the builds.
    let mut results = report::Results::new(config.clone());
    let samples = match build::first_example_clean_builds(dir, config.clean_build_reps) {
        Ok(samples) => samples,
        Err(message) => {
            eprintln!("bench-runner: {message}");
            return 1;
        }
    };
    results.set_first_example(samples);
    match results.merge_first_example(dir) {
        Ok(section) => {
            println!("{section}");
            0
        }
        Err(error) => {
            eprintln!("bench-runner: writing the results: {error}");
            1
        }
    }
}

/// `--drive-http ADDR [CONNECTIONS] [CALLS]`: the HTTP load alone, against a running server.
async fn drive_http(args: &[String]) -> i32 {
    let parsed = (|| {
        let addr = args.first()?.parse().ok()?;
        let connections = args.get(1).map_or(Some(32), |n| n.parse().ok())?;
        let calls = args.get(2).map_or(Some(200_000), |n| n.parse().ok())?;
        Some((addr, connections, calls))
    })();
    let Some((addr, connections, calls)) = parsed else {
        eprintln!("usage: bench-runner --drive-http 127.0.0.1:PORT [CONNECTIONS] [CALLS]");
        return 2;
    };
    match http::load(addr, connections, calls, Duration::from_secs(120)).await {
        Ok(mut run) => {
            let (p50, p99) = (run.percentile_us(0.50), run.percentile_us(0.99));
            println!(
                "{} calls, {} errors, {:.0} calls/s, p50 {p50:.1} µs, p99 {p99:.1} µs",
                run.calls,
                run.errors,
                run.per_second(),
            );
            0
        }
        Err(error) => {
            eprintln!("bench-runner: {error}");
            1
        }
    }
}

/// `--drive-stdio BINARY [IN_FLIGHT] [CALLS]`: the stdio load alone (64 in flight and 100,000
/// calls by default; 1 in flight is the sequential row), against `BINARY stdio`.
async fn drive_stdio(args: &[String]) -> i32 {
    let parsed = (|| {
        let binary = PathBuf::from(args.first()?);
        let in_flight = args.get(1).map_or(Some(64), |n| n.parse().ok())?;
        let calls = args.get(2).map_or(Some(100_000), |n| n.parse().ok())?;
        Some((binary, in_flight, calls))
    })();
    let Some((binary, in_flight, calls)) = parsed else {
        eprintln!("usage: bench-runner --drive-stdio BINARY [IN_FLIGHT] [CALLS]");
        return 2;
    };
    let cap = Duration::from_secs(600);
    let result = async {
        let mut server = stdio::StdioServer::spawn(&binary)?;
        server.initialize().await?;
        let run = match in_flight {
            1 => server.sequential(calls, cap, stdio::call_add).await?,
            window => server.pipelined(calls, window, cap).await?,
        };
        server.close().await;
        Ok::<_, std::io::Error>(run)
    }
    .await;
    match result {
        Ok(mut run) => {
            let (p50, p99) = (run.percentile_us(0.50), run.percentile_us(0.99));
            println!(
                "{} calls, {} errors, {:.0} calls/s, p50 {p50:.1} µs, p99 {p99:.1} µs",
                run.calls,
                run.errors,
                run.per_second(),
            );
            0
        }
        Err(error) => {
            eprintln!("bench-runner: {error}");
            1
        }
    }
}
