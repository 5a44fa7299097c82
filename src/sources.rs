//! Where a profile comes from, up to the bytes a format reads: a file, stdin
//! or gzip of either ([`input`]: `Source`, `Progress`); a capture bundle
//! ([`bundle`]: its profile, logs and clock anchor); and profiles that are not
//! a file ember can read as it stands: a `perf.data` (perf's binary format,
//! read through `perf script`) and a URL that answers with a profile
//! (`/debug/pprof/profile?seconds=30`). Those two become a file in a private
//! temporary directory, removed when the command ends, that the usual loaders
//! read; the original is never written. Nothing here parses a profile.
//!
//! Both show their progress on stderr before the viewer takes the screen, and
//! both end in one clear error naming what was asked for: perf's own stderr
//! when `perf script` fails, the HTTP status or what the server sent instead
//! of a profile, a timeout that says how long ember waited.

pub mod bundle;
mod fetch;
pub mod input;
mod perf_data;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};

pub use fetch::{FetchOptions, is_url};
pub use perf_data::{is_perf_data, perf_script};

/// A profile made into a readable file: where it is now, kept until drop.
pub struct Prepared {
    pub path: PathBuf,
    _temp: TempDir,
}

/// Turns `arg` into a file ember reads when it is a URL or a perf.data
/// (`None` for anything else, which is read as it is); `perf_extra` are
/// more `perf script` arguments (`-F +srcline` for line granularity).
pub fn prepare(arg: &Path, fetch: &FetchOptions, perf_extra: &[&str]) -> Result<Option<Prepared>> {
    if let Some(url) = arg.to_str().filter(|s| is_url(s)) {
        return fetch::fetch(url, fetch).map(Some);
    }
    if is_perf_data(arg) {
        return perf_script(arg, perf_extra).map(Some);
    }
    Ok(None)
}

/// A directory of our own under the system's temporary directory, removed
/// with what it holds on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    /// A new private (0700) directory.
    pub(crate) fn new() -> Result<TempDir> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ember-{}-{n}", std::process::id()));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder
            .create(&dir)
            .with_context(|| format!("creating {}", dir.display()))?;
        Ok(TempDir(dir))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One line of progress on stderr, rewritten in place on a terminal; off a
/// terminal (a log, a pipe) only `intro` is printed, once.
pub(crate) struct Status {
    tty: bool,
    said: bool,
}

impl Status {
    pub(crate) fn new(intro: &str) -> Status {
        let tty = std::io::stderr().is_terminal();
        if !tty {
            eprintln!("ember: {intro}");
        }
        Status { tty, said: false }
    }

    /// Shows `text` on a terminal, replacing the line before it (cut to the
    /// terminal's width: a wrapped line could not be rewritten).
    pub(crate) fn show(&mut self, text: &str) {
        if self.tty {
            let width = crossterm::terminal::size().map_or(80, |(w, _)| usize::from(w));
            let text = format!("ember: {text}");
            let cut: String = text.chars().take(width.saturating_sub(1)).collect();
            eprint!("\r\x1b[K{cut}");
            self.said = true;
        }
    }

    /// Ends the line.
    pub(crate) fn done(&mut self) {
        if self.tty && self.said {
            eprintln!();
        }
        self.said = false;
    }
}

/// Bytes for people: 812 B, 4.2 KB, 13.0 MB, 2.4 GB.
pub(crate) fn human_bytes(n: u64) -> String {
    let f = n as f64;
    if n < 1000 {
        format!("{n} B")
    } else if f < 1e6 {
        format!("{:.1} KB", f / 1e3)
    } else if f < 1e9 {
        format!("{:.1} MB", f / 1e6)
    } else {
        format!("{:.1} GB", f / 1e9)
    }
}

/// How often the progress line is redrawn.
const TICK: Duration = Duration::from_millis(200);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_dirs_are_private_distinct_and_removed() {
        let (Ok(a), Ok(b)) = (TempDir::new(), TempDir::new()) else {
            panic!("no temporary directory")
        };
        assert_ne!(a.path(), b.path());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(a.path()).map(|m| m.permissions().mode() & 0o777);
            assert_eq!(mode.ok(), Some(0o700));
        }
        assert!(std::fs::write(a.path().join("x"), b"x").is_ok());
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }

    #[test]
    fn human_bytes_picks_the_unit() {
        assert_eq!(human_bytes(812), "812 B");
        assert_eq!(human_bytes(4_200), "4.2 KB");
        assert_eq!(human_bytes(13_000_000), "13.0 MB");
        assert_eq!(human_bytes(2_400_000_000), "2.4 GB");
    }
}
