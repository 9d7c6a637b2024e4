//! Saves in the crate, with the `notify` crate: the package's directory (its top level, and every
//! folder in it but the build's and version control's) and the workspace's manifest. Saves come
//! in bursts (an editor writes, renames, touches); [`Saves::next`] returns once a burst is over.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::Context;
use notify::{EventKind, RecursiveMode, Watcher};

/// The changes to the crate's files, as they come.
pub(crate) struct Saves {
    events: Receiver<notify::Result<notify::Event>>,
    /// The package's directory: paths are judged by what follows it.
    root: PathBuf,
    ignored: Vec<PathBuf>,
    debounce: Duration,
    // Watching stops when it is dropped.
    _watcher: notify::RecommendedWatcher,
}

/// Folders never watched: the build's, version control's, editors' and tools' own.
fn skipped_folder(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "target" | "node_modules")
}

/// Files editors write beside the one being saved, and the lock file cargo itself rewrites.
fn scratch_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name == "Cargo.lock"
        || name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.starts_with(".#")
        || name == "4913"
}

impl Saves {
    /// Watches `package_dir` and `workspace_root`'s manifest; `target_dir` (where the builds
    /// write) is ignored wherever it is.
    pub(crate) fn watch(
        package_dir: &Path,
        workspace_root: &Path,
        target_dir: &Path,
        debounce: Duration,
    ) -> anyhow::Result<Self> {
        let (sender, events) = channel();
        let mut watcher = notify::recommended_watcher(sender).context("watching files")?;
        watcher
            .watch(package_dir, RecursiveMode::NonRecursive)
            .with_context(|| format!("watching {}", package_dir.display()))?;
        let entries = std::fs::read_dir(package_dir)
            .with_context(|| format!("reading {}", package_dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() && !skipped_folder(&name) && !target_dir.starts_with(&path) {
                watcher
                    .watch(&path, RecursiveMode::Recursive)
                    .with_context(|| format!("watching {}", path.display()))?;
            }
        }
        let manifest = workspace_root.join("Cargo.toml");
        if workspace_root != package_dir && manifest.is_file() {
            watcher
                .watch(&manifest, RecursiveMode::NonRecursive)
                .with_context(|| format!("watching {}", manifest.display()))?;
        }
        Ok(Self {
            events,
            root: package_dir.to_path_buf(),
            ignored: vec![target_dir.to_path_buf()],
            debounce,
            _watcher: watcher,
        })
    }

    /// Whether an event is a change to a source file.
    fn relevant(&self, event: &notify::Event) -> bool {
        let kind = matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
        );
        let metadata_only = matches!(
            event.kind,
            EventKind::Modify(notify::event::ModifyKind::Metadata(_))
        );
        kind && !metadata_only
            && event.paths.iter().any(|path| {
                !scratch_file(path)
                    && !self.ignored.iter().any(|dir| path.starts_with(dir))
                    && !path
                        .strip_prefix(&self.root)
                        .unwrap_or(path)
                        .components()
                        .any(|c| skipped_folder(&c.as_os_str().to_string_lossy()))
            })
    }

    /// Waits for the next burst of changes and returns once none came for the debounce time.
    /// `None` when watching has stopped.
    pub(crate) fn next(&self) -> Option<Vec<PathBuf>> {
        let mut changed = Vec::new();
        loop {
            let event = self.events.recv().ok()?;
            if let Ok(event) = event
                && self.relevant(&event)
            {
                changed.extend(event.paths);
                break;
            }
        }
        // Until `debounce` has passed since the last relevant change.
        let mut quiet_from = Instant::now();
        loop {
            let left = self.debounce.saturating_sub(quiet_from.elapsed());
            match self.events.recv_timeout(left) {
                Ok(Ok(event)) if self.relevant(&event) => {
                    changed.extend(event.paths);
                    quiet_from = Instant::now();
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
        changed.sort();
        changed.dedup();
        Some(changed)
    }
}
