//! Building the servers, and timing the builds.
//!
//! What is timed, per server, with the dependencies already compiled in `bench/target`:
//! - `build_crate_s`: `cargo clean --release -p <server>` then `cargo build --release -p <server>`:
//!   compiling and linking the server crate alone (the user's crate, in a real project);
//! - `rebuild_edit_s`: after changing the doc comment of the `add` tool (its description), the
//!   same build again; the edit is then reverted and that rebuild is a second sample;
//! - `clean_build_s` (only with `--full-clean-build`): everything, dependencies included, in a
//!   fresh target directory `bench/target/clean-<server>`.
//!
//! And the build rows of issue 13 (`first_example_clean_builds`): the clean release build,
//! dependencies included, of the README's first example (a one-tool stdio server) with our
//! default features, with the stdio-only feature set, and of rmcp's equivalent, each in its
//! own empty target directory, as a new user's first `cargo build --release` would be.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::report::Results;
use crate::{Config, SERVERS};

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Runs `cargo <args>` on the bench workspace; returns how long it took.
fn run_cargo(dir: &Path, args: &[&str], target_dir: Option<&Path>) -> Result<f64, String> {
    let mut command = Command::new(cargo());
    command
        .args(args)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"));
    if let Some(target_dir) = target_dir {
        command.env("CARGO_TARGET_DIR", target_dir);
    }
    let start = Instant::now();
    let output = command
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    let elapsed = start.elapsed().as_secs_f64();
    if !output.status.success() {
        return Err(format!(
            "`cargo {}` failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(elapsed)
}

/// Builds every server in `profile`, each on its own (`-p`), so no server's features leak
/// into another's dependencies, and bench-layers (issue 28's rows). Returns the binaries.
pub fn build_all(
    dir: &Path,
    profile: &str,
    no_build: bool,
) -> Result<BTreeMap<&'static str, PathBuf>, String> {
    let mut binaries = BTreeMap::new();
    let target = dir.join("target").join(profile);
    for (name, package) in SERVERS.iter().chain([&crate::LAYERS]) {
        if !no_build {
            run_cargo(dir, &["build", "--profile", profile, "-p", package], None)?;
        }
        binaries.insert(*name, target.join(package));
    }
    // The gateway rows' server (issue 29): not one of the three compared, so no build rows.
    if !no_build {
        run_cargo(
            dir,
            &["build", "--profile", profile, "-p", "bench-gateway"],
            None,
        )?;
    }
    binaries.insert("gateway", target.join("bench-gateway"));
    Ok(binaries)
}

pub fn size(binary: &Path) -> f64 {
    std::fs::metadata(binary).map_or(f64::NAN, |m| m.len() as f64)
}

/// Restores a source file when dropped, so an interrupted run leaves no edit behind.
struct Edit {
    path: PathBuf,
    original: String,
}

impl Edit {
    fn apply(path: PathBuf) -> Result<Self, String> {
        let original =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let marker = "Add two integers.";
        if !original.contains(marker) {
            return Err(format!("{} has no `{marker}` to edit", path.display()));
        }
        let edited = original.replacen(marker, "Add two integers (edited).", 1);
        std::fs::write(&path, edited).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Self { path, original })
    }
}

impl Drop for Edit {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, &self.original);
    }
}

/// The first-example packages whose clean builds are compared (report order): (row, package).
pub const FIRST_EXAMPLE: [(&str, &str); 3] = [
    ("ours-default", "firsthour-ours-default"),
    ("ours-stdio", "firsthour-ours-stdio"),
    ("rmcp", "firsthour-rmcp"),
];

/// A fresh empty directory under the system temp dir (what `mktemp -d` gives), removed when
/// dropped, so each timed build starts with nothing compiled and leaves nothing behind.
struct TempTarget(PathBuf);

impl TempTarget {
    fn new(name: &str, round: usize) -> Result<Self, String> {
        let path =
            std::env::temp_dir().join(format!("bench-clean-{name}-{}-{round}", std::process::id()));
        // A leftover of an interrupted run with the same pid must not count as a warm cache.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Self(path))
    }
}

impl Drop for TempTarget {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Times `cargo build --release -p <package> --locked` of each first-example package in its
/// own empty target directory, `reps` rounds, each round starting with the next package (so
/// no package always runs first, or right after the same one). Returns every sample by row.
///
/// `cargo fetch` runs first: downloading crates is not compiling them, and a new user's
/// network is not ours to measure.
pub fn first_example_clean_builds(
    dir: &Path,
    reps: usize,
) -> Result<BTreeMap<String, Vec<f64>>, String> {
    run_cargo(dir, &["fetch", "--locked"], None)?;
    let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for round in 0..reps {
        for k in 0..FIRST_EXAMPLE.len() {
            let (name, package) = FIRST_EXAMPLE[(round + k) % FIRST_EXAMPLE.len()];
            eprintln!(
                "clean build of the first example {}/{reps} {name}",
                round + 1
            );
            let target = TempTarget::new(name, round)?;
            // `--timings` costs nothing measurable and says which crates the time went to.
            let seconds = run_cargo(
                dir,
                &["build", "--release", "-p", package, "--locked", "--timings"],
                Some(&target.0),
            )?;
            eprintln!("  {seconds:.1} s");
            keep_timings(dir, &target.0, name, round);
            samples.entry(name.to_owned()).or_default().push(seconds);
        }
    }
    Ok(samples)
}

/// Keeps cargo's timing report of a clean build, which would go with its temporary target
/// directory, as `bench/target/first-example-timings/<row>-<round>.html`.
fn keep_timings(dir: &Path, target: &Path, name: &str, round: usize) {
    let kept = dir.join("target/first-example-timings");
    let report = target.join("cargo-timings/cargo-timing.html");
    let copied = std::fs::create_dir_all(&kept)
        .and_then(|()| std::fs::copy(&report, kept.join(format!("{name}-{round}.html"))));
    if let Err(error) = copied {
        eprintln!("  (timing report not kept: {error})");
    }
}

pub fn time_builds(dir: &Path, config: &Config, results: &mut Results) -> Result<(), String> {
    for round in 0..config.build_reps {
        for k in 0..SERVERS.len() {
            let (name, package) = SERVERS[(round + k) % SERVERS.len()];
            eprintln!("build times {}/{} {name}", round + 1, config.build_reps);
            run_cargo(dir, &["clean", "--release", "-p", package], None)?;
            let crate_only = run_cargo(dir, &["build", "--release", "-p", package], None)?;
            results.add_sample(name, "build_crate_s", crate_only);
            let edit = Edit::apply(dir.join(name).join("src/main.rs"))?;
            let edited = run_cargo(dir, &["build", "--release", "-p", package], None)?;
            drop(edit);
            let reverted = run_cargo(dir, &["build", "--release", "-p", package], None)?;
            results.add_sample(name, "rebuild_edit_s", edited);
            results.add_sample(name, "rebuild_edit_s", reverted);
        }
    }
    if config.full_clean_build {
        for (name, package) in SERVERS {
            eprintln!("full clean build {name}");
            let target = dir.join("target").join(format!("clean-{name}"));
            let _ = std::fs::remove_dir_all(&target);
            let full = run_cargo(dir, &["build", "--release", "-p", package], Some(&target))?;
            results.add_sample(name, "clean_build_s", full);
            let _ = std::fs::remove_dir_all(&target);
        }
    }
    Ok(())
}
