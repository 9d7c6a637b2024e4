//! The user's crate: which package and binary serve (from `cargo metadata`), and building it
//! (`cargo build --message-format=json`, whose artifact messages name the executable).

use std::ffi::OsString;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::cli::TargetArgs;

/// The package a job works on, and the target that serves.
#[derive(Debug, Clone)]
pub(crate) struct Project {
    /// The package's name.
    pub(crate) package: String,
    /// Its directory (where its Cargo.toml is).
    pub(crate) package_dir: PathBuf,
    /// The workspace root: a client's project configuration goes here.
    pub(crate) workspace_root: PathBuf,
    /// Where cargo builds (`target/`, or `CARGO_TARGET_DIR`).
    pub(crate) target_directory: PathBuf,
    /// The package's version.
    pub(crate) version: String,
    /// The binary (or example) that serves.
    pub(crate) target: Target,
    /// `description`, `homepage` and `repository` from the package's manifest.
    pub(crate) description: Option<String>,
    pub(crate) homepage: Option<String>,
    pub(crate) repository: Option<String>,
}

/// A binary or an example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Bin(String),
    Example(String),
}

impl Target {
    /// The target's name, which is also its executable's.
    pub(crate) fn name(&self) -> &str {
        match self {
            Self::Bin(name) | Self::Example(name) => name,
        }
    }
}

/// The `cargo` that ran us (cargo sets `CARGO` for its subcommands), else the one on `PATH`.
pub(crate) fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

impl Project {
    /// Finds the package and its serving target from the command line and the current
    /// directory.
    pub(crate) fn find(args: &TargetArgs) -> anyhow::Result<Self> {
        let mut command = Command::new(cargo());
        command.args(["metadata", "--format-version", "1", "--no-deps"]);
        if let Some(path) = &args.manifest_path {
            command.arg("--manifest-path").arg(path);
        }
        let output = command
            .stderr(Stdio::inherit())
            .output()
            .context("running `cargo metadata`")?;
        if !output.status.success() {
            bail!("`cargo metadata` failed: is this inside a Cargo project?");
        }
        let metadata: Value =
            serde_json::from_slice(&output.stdout).context("reading `cargo metadata`")?;
        let cwd = std::env::current_dir().context("reading the current directory")?;
        Self::from_metadata(&metadata, args, &cwd)
    }

    fn from_metadata(metadata: &Value, args: &TargetArgs, cwd: &Path) -> anyhow::Result<Self> {
        let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
        let workspace_root = PathBuf::from(metadata["workspace_root"].as_str().unwrap_or("."));
        let dir_of = |package: &Value| {
            Path::new(package["manifest_path"].as_str().unwrap_or(""))
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        let package = if let Some(name) = &args.package {
            packages
                .iter()
                .find(|p| p["name"] == name.as_str())
                .with_context(|| format!("no package `{name}` in this workspace"))?
        } else if let Some(manifest) = &args.manifest_path {
            let manifest = manifest
                .canonicalize()
                .with_context(|| format!("reading {}", manifest.display()))?;
            packages
                .iter()
                .find(|p| Path::new(p["manifest_path"].as_str().unwrap_or("")) == manifest)
                .or_else(|| only_server(&packages))
                .context("this manifest is a workspace of several packages: choose one with `-p`")?
        } else {
            // The package whose directory holds the current one, the innermost if nested.
            packages
                .iter()
                .filter(|p| cwd.starts_with(dir_of(p)))
                .max_by_key(|p| dir_of(p).components().count())
                .or_else(|| only_server(&packages))
                .context("no package here serves: run inside the server's crate, or choose one with `-p`")?
        };
        let name = package["name"].as_str().unwrap_or_default().to_owned();
        let target = choose_target(package, args)?;
        let text = |key: &str| package[key].as_str().map(str::to_owned);
        let target_directory = metadata["target_directory"]
            .as_str()
            .map_or_else(|| workspace_root.join("target"), PathBuf::from);
        Ok(Self {
            package_dir: dir_of(package),
            target_directory,
            version: text("version").unwrap_or_else(|| "0.0.0".to_owned()),
            workspace_root,
            target,
            description: text("description"),
            homepage: text("homepage"),
            repository: text("repository"),
            package: name,
        })
    }

    /// The `cargo build` of the serving target in `profile` (`dev`, `release` or one of the
    /// manifest's), its messages as JSON on stdout (`message_format`: `json`, or
    /// `json-render-diagnostics` to leave the diagnostics to cargo).
    pub(crate) fn build_command(
        &self,
        args: &TargetArgs,
        profile: &str,
        message_format: &str,
    ) -> Command {
        let mut command = Command::new(cargo());
        command.args([
            "build",
            &format!("--message-format={message_format}"),
            "-p",
            &self.package,
        ]);
        match &self.target {
            Target::Bin(name) => command.args(["--bin", name]),
            Target::Example(name) => command.args(["--example", name]),
        };
        match profile {
            "dev" => {}
            "release" => {
                command.arg("--release");
            }
            other => {
                command.args(["--profile", other]);
            }
        }
        if let Some(features) = &args.features {
            command.args(["--features", features]);
        }
        if let Some(path) = &args.manifest_path {
            command.arg("--manifest-path").arg(path);
        }
        command
    }

    /// The executable a `compiler-artifact` message names, when it is the serving target's.
    pub(crate) fn artifact(&self, message: &Value) -> Option<Built> {
        if message["reason"] == "compiler-artifact"
            && message["target"]["name"] == self.target.name()
        {
            let path = message["executable"].as_str()?;
            return Some(Built {
                executable: PathBuf::from(path),
                fresh: message["fresh"] == true,
            });
        }
        None
    }

    /// Builds the serving target in `profile` (`dev`, `release` or one of the manifest's) and
    /// returns its executable. Cargo's progress and errors go to stderr as usual.
    pub(crate) fn build(&self, args: &TargetArgs, profile: &str) -> anyhow::Result<Built> {
        let mut command = self.build_command(args, profile, "json-render-diagnostics");
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("running `cargo build`")?;
        let mut built = None;
        if let Some(stdout) = child.stdout.take() {
            for line in std::io::BufReader::new(stdout).lines() {
                let line = line.context("reading `cargo build`'s messages")?;
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if let Some(artifact) = self.artifact(&message) {
                    built = Some(artifact);
                }
            }
        }
        let status = child.wait().context("waiting for `cargo build`")?;
        if !status.success() {
            bail!("`cargo build` failed (above)");
        }
        built.with_context(|| {
            format!(
                "`cargo build` named no executable for `{}`",
                self.target.name()
            )
        })
    }
}

/// What `cargo build` made.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    /// The executable.
    pub(crate) executable: PathBuf,
    /// Whether cargo found it up to date and compiled nothing of it.
    pub(crate) fresh: bool,
}

/// The one package of the workspace that has a binary, when there is exactly one.
fn only_server(packages: &[Value]) -> Option<&Value> {
    let mut servers = packages.iter().filter(|p| !bins(p).is_empty());
    let first = servers.next()?;
    servers.next().is_none().then_some(first)
}

/// The names of a package's binary targets.
fn bins(package: &Value) -> Vec<String> {
    package["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bin"))
        })
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// `--bin`, `--example`, the package's only binary, or its `default-run`.
fn choose_target(package: &Value, args: &TargetArgs) -> anyhow::Result<Target> {
    let name = package["name"].as_str().unwrap_or_default();
    if let Some(example) = &args.example {
        return Ok(Target::Example(example.clone()));
    }
    let bins = bins(package);
    if let Some(bin) = &args.bin {
        if !bins.contains(bin) {
            bail!(
                "package `{name}` has no binary `{bin}`; it has: {}",
                list(&bins)
            );
        }
        return Ok(Target::Bin(bin.clone()));
    }
    match bins.as_slice() {
        [] => bail!("package `{name}` has no binary: choose an example with `--example`"),
        [only] => Ok(Target::Bin(only.clone())),
        _ => match package["default_run"].as_str() {
            Some(default) => Ok(Target::Bin(default.to_owned())),
            None => bail!(
                "package `{name}` has several binaries ({}): choose one with `--bin`",
                list(&bins)
            ),
        },
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metadata() -> Value {
        json!({
            "workspace_root": "/w",
            "packages": [
                {"name": "server", "version": "1.2.3", "manifest_path": "/w/server/Cargo.toml",
                 "description": "Weather tools", "default_run": null,
                 "targets": [{"name": "server", "kind": ["bin"]}, {"name": "server", "kind": ["lib"]}]},
                {"name": "two", "version": "0.1.0", "manifest_path": "/w/two/Cargo.toml",
                 "default_run": null,
                 "targets": [{"name": "a", "kind": ["bin"]}, {"name": "b", "kind": ["bin"]}]},
                {"name": "lib", "version": "0.1.0", "manifest_path": "/w/lib/Cargo.toml",
                 "targets": [{"name": "lib", "kind": ["lib"]}]}
            ]
        })
    }

    fn args() -> TargetArgs {
        TargetArgs {
            manifest_path: None,
            package: None,
            bin: None,
            example: None,
            features: None,
            server_args: Vec::new(),
        }
    }

    #[test]
    fn the_package_of_the_current_directory_serves_its_only_binary() {
        let project =
            Project::from_metadata(&metadata(), &args(), Path::new("/w/server/src")).unwrap();
        assert_eq!(project.package, "server");
        assert_eq!(project.target, Target::Bin("server".into()));
        assert_eq!(project.workspace_root, Path::new("/w"));
        assert_eq!(project.description.as_deref(), Some("Weather tools"));
    }

    #[test]
    fn several_binaries_need_a_choice() {
        let error = Project::from_metadata(&metadata(), &args(), Path::new("/w/two"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("several binaries (a, b)"), "{error}");
        let chosen = TargetArgs {
            bin: Some("b".into()),
            ..args()
        };
        let project = Project::from_metadata(&metadata(), &chosen, Path::new("/w/two")).unwrap();
        assert_eq!(project.target, Target::Bin("b".into()));
        let wrong = TargetArgs {
            bin: Some("c".into()),
            ..args()
        };
        assert!(Project::from_metadata(&metadata(), &wrong, Path::new("/w/two")).is_err());
    }

    #[test]
    fn at_the_workspace_root_the_only_package_with_a_binary_is_chosen_or_asked_for() {
        // Two packages have binaries: the root is ambiguous.
        assert!(Project::from_metadata(&metadata(), &args(), Path::new("/w")).is_err());
        let named = TargetArgs {
            package: Some("server".into()),
            ..args()
        };
        let project = Project::from_metadata(&metadata(), &named, Path::new("/w")).unwrap();
        assert_eq!(project.package, "server");
        let example = TargetArgs {
            package: Some("lib".into()),
            example: Some("demo".into()),
            ..args()
        };
        let project = Project::from_metadata(&metadata(), &example, Path::new("/")).unwrap();
        assert_eq!(project.target, Target::Example("demo".into()));
    }
}
