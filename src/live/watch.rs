//! Telling when a followed file (or a folder of profiles) changed.
//!
//! The parent directory is watched, not the file: a watch on the file itself dies at
//! the first rename-over or delete. notify's inotify backend also reports every
//! open and read-only close, ember's own reads included; those are dropped before
//! the debouncer ([`NoReads`]), or each reload would wake the next poll.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventHandler, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use notify_debouncer_mini::{Config, DebounceEventResult, Debouncer, new_debouncer_opt};

/// A burst of writes within this long wakes the follower once; an append reaches
/// the screen well within 100 ms.
const DEBOUNCE: Duration = Duration::from_millis(40);
/// The fallback when the OS cannot watch: a `stat` this often.
const POLL: Duration = Duration::from_secs(1);

/// Keeps a watch running; dropping it stops the watch.
pub struct WatchHandle {
    inner: Inner,
}

enum Inner {
    Notify {
        _debouncer: Debouncer<NoReads>,
    },
    /// The polling thread ends when this sender goes.
    Poll {
        _stop: mpsc::Sender<()>,
    },
}

impl WatchHandle {
    /// Whether the OS watcher runs (else a 1 s poll does).
    pub fn is_native(&self) -> bool {
        matches!(self.inner, Inner::Notify { .. })
    }
}

/// Watches `path`'s parent directory (non-recursive) and calls `on_change` (from
/// another thread) whenever an entry named like `path`'s file changes, appears or
/// disappears, at most once per 40 ms burst. Falls back to polling (a `stat` every
/// second) if the OS watcher cannot be set up. The file need not exist.
pub fn watch_file(
    path: &Path,
    on_change: impl FnMut() + Send + 'static,
) -> Result<WatchHandle, String> {
    let Some(name) = path.file_name() else {
        return Err(format!("{}: not a file name", path.display()));
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file = path.to_path_buf();
    watch(dir, Some(name.to_os_string()), on_change, move || {
        file_signature(&file)
    })
}

/// Like [`watch_file`] for every entry of `dir`.
pub fn watch_dir(
    dir: &Path,
    on_change: impl FnMut() + Send + 'static,
) -> Result<WatchHandle, String> {
    let folder = dir.to_path_buf();
    watch(dir.to_path_buf(), None, on_change, move || {
        dir_signature(&folder)
    })
}

/// The profiles in `dir`, oldest first by modification time (then name): regular
/// files, without dotfiles and editor or download leftovers (`~`, `.tmp`, `.swp`,
/// `.part`, `.crdownload`, `#name#`).
pub fn profiles_in(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found: Vec<(SystemTime, OsString, PathBuf)> = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if is_leftover(&name.to_string_lossy()) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        if meta.is_file() {
            let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            found.push((mtime, name, path));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, _, p)| p).collect())
}

/// A name no profile has: hidden, or an editor's or downloader's temporary file.
fn is_leftover(name: &str) -> bool {
    const SUFFIXES: &[&str] = &[".tmp", ".swp", ".swo", ".part", ".crdownload"];
    let lower = name.to_ascii_lowercase();
    name.starts_with('.')
        || name.ends_with('~')
        || (name.starts_with('#') && name.ends_with('#'))
        || SUFFIXES.iter().any(|s| lower.ends_with(s))
}

/// Watches `dir` through notify and the debouncer, or failing that polls
/// `signature` every second.
fn watch<S: PartialEq + Send + 'static>(
    dir: PathBuf,
    name: Option<OsString>,
    on_change: impl FnMut() + Send + 'static,
    signature: impl Fn() -> S + Send + 'static,
) -> Result<WatchHandle, String> {
    let on_change = Arc::new(Mutex::new(on_change));
    let fire = {
        let on_change = on_change.clone();
        move || {
            if let Ok(mut f) = on_change.lock() {
                f();
            }
        }
    };
    let handler = {
        let fire = fire.clone();
        let dir = dir.clone();
        move |result: DebounceEventResult| {
            let relevant = match result {
                Ok(events) => events.iter().any(|e| {
                    e.path != dir
                        && name
                            .as_ref()
                            .is_none_or(|n| e.path.file_name() == Some(n.as_os_str()))
                }),
                // Missed events (a full queue): better look.
                Err(_) => true,
            };
            if relevant {
                fire();
            }
        }
    };
    let config = Config::default()
        .with_timeout(DEBOUNCE)
        .with_batch_mode(false);
    if let Ok(mut debouncer) = new_debouncer_opt::<_, NoReads>(config, handler)
        && debouncer
            .watcher()
            .watch(&dir, RecursiveMode::NonRecursive)
            .is_ok()
    {
        return Ok(WatchHandle {
            inner: Inner::Notify {
                _debouncer: debouncer,
            },
        });
    }
    let (stop, stopped) = mpsc::channel::<()>();
    // Taken now: a change right after this returns must count.
    let mut last = signature();
    thread::Builder::new()
        .name("ember-watch-poll".into())
        .spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(POLL) {
                let now = signature();
                if now != last {
                    last = now;
                    fire();
                }
            }
        })
        .map_err(|e| format!("{}: cannot watch: {e}", dir.display()))?;
    Ok(WatchHandle {
        inner: Inner::Poll { _stop: stop },
    })
}

/// What a poll compares for one file: identity, size and modification time.
fn file_signature(path: &Path) -> Option<(u64, u64, Option<SystemTime>)> {
    let meta = fs::metadata(path).ok()?;
    #[cfg(unix)]
    let id = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let id = 0;
    Some((id, meta.len(), meta.modified().ok()))
}

/// What a poll compares for a folder: every entry's name, size and modification time.
fn dir_signature(dir: &Path) -> Vec<(OsString, u64, Option<SystemTime>)> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let meta = e.metadata().ok();
            (
                e.file_name(),
                meta.as_ref().map_or(0, |m| m.len()),
                meta.and_then(|m| m.modified().ok()),
            )
        })
        .collect();
    entries.sort();
    entries
}

/// The OS watcher without read-only accesses (opens, reads, closes after reading),
/// which change nothing.
struct NoReads(RecommendedWatcher);

fn is_read_only(event: &Event) -> bool {
    matches!(event.kind, EventKind::Access(kind) if kind != AccessKind::Close(AccessMode::Write))
}

impl Watcher for NoReads {
    fn new<F: EventHandler>(mut handler: F, config: notify::Config) -> notify::Result<Self> {
        let filtered = move |event: notify::Result<Event>| {
            if !event.as_ref().is_ok_and(is_read_only) {
                handler.handle_event(event);
            }
        };
        RecommendedWatcher::new(filtered, config).map(NoReads)
    }

    fn watch(&mut self, path: &Path, recursive_mode: RecursiveMode) -> notify::Result<()> {
        self.0.watch(path, recursive_mode)
    }

    fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        self.0.unwatch(path)
    }

    fn kind() -> notify::WatcherKind {
        RecommendedWatcher::kind()
    }
}
