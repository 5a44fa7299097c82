//! Opening a directory written by `ember capture`: its profile, its host
//! logs as `--context`, and its clock anchor, so `ember DIR` shows everything
//! aligned.
//!
//! A `perf.data` profile is turned into text by the `perf script` found on
//! PATH, into a private temporary directory removed when ember exits (ember
//! reads perf's text formats, not its binary one; the bundle is never written).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::capture::{FileRole, MANIFEST, read_manifest};
use crate::sources::{Prepared, is_perf_data, perf_script};

/// What a bundle directory holds, ready to open.
pub struct Bundle {
    pub profile: PathBuf,
    pub contexts: Vec<PathBuf>,
    /// Add to perf's default clock (CLOCK_MONOTONIC) for wall-clock ns: the
    /// manifest's realtime minus monotonic, read back to back at the start.
    pub anchor_ns: i64,
    /// The text `perf script` made of perf.data, removed on drop.
    _temp: Option<Prepared>,
}

/// Whether `path` is a capture bundle (a directory with a manifest).
pub fn is_bundle(path: &Path) -> bool {
    path.is_dir() && path.join(MANIFEST).is_file()
}

/// Reads the bundle at `dir`.
pub fn open(dir: &Path) -> Result<Bundle> {
    let m = read_manifest(dir)?;
    let mut contexts = m.paths(dir, FileRole::Vmstat);
    contexts.extend(m.paths(dir, FileRole::Iostat));
    contexts.extend(m.paths(dir, FileRole::Mpstat));
    contexts.retain(|p| p.is_file());
    let Some(profile) = m
        .paths(dir, FileRole::Profile)
        .into_iter()
        .find(|p| p.is_file())
    else {
        bail!(
            "{}: the capture holds no profile (it recorded host context only; open a profile with --context {})",
            dir.display(),
            contexts
                .first()
                .map_or_else(|| "LOG".to_string(), |p| p.display().to_string())
        );
    };
    let anchor_ns = m.start.realtime_ns - m.start.monotonic_ns as i64;
    let (profile, temp) = if is_perf_data(&profile) {
        let text = perf_script(&profile, &[])?;
        (text.path.clone(), Some(text))
    } else {
        (profile, None)
    };
    Ok(Bundle {
        profile,
        contexts,
        anchor_ns,
        _temp: temp,
    })
}
