//! Opening a directory written by `ember capture`: its profile, its host
//! logs as `--context`, and its clock anchor, so `ember DIR` shows everything
//! aligned.
//!
//! A `perf.data` profile is turned into text by the `perf script` found on
//! PATH, into a private temporary directory removed when ember exits (ember
//! reads perf's text formats, not its binary one; the bundle is never written).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::capture::{FileRole, MANIFEST, read_manifest};

/// What a bundle directory holds, ready to open.
pub struct Bundle {
    pub profile: PathBuf,
    pub contexts: Vec<PathBuf>,
    /// Add to perf's default clock (CLOCK_MONOTONIC) for wall-clock ns: the
    /// manifest's realtime minus monotonic, read back to back at the start.
    pub anchor_ns: i64,
    /// The text `perf script` made of perf.data, removed on drop.
    _temp: Option<TempDir>,
}

/// A directory of our own under the system's temporary directory.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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
        let (text, temp) = perf_script(&profile)?;
        (text, Some(temp))
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

fn is_perf_data(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"PERFILE2"
}

/// Runs `perf script --header -i DATA` into a temporary file.
fn perf_script(data: &Path) -> Result<(PathBuf, TempDir)> {
    let dir = std::env::temp_dir().join(format!("ember-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let temp = TempDir(dir.clone());
    let out = dir.join("perf-script.txt");
    let file =
        std::fs::File::create(&out).with_context(|| format!("creating {}", out.display()))?;
    eprintln!("ember: reading {} with perf script…", data.display());
    let status = Command::new("perf")
        .arg("script")
        .arg("--header")
        .arg("-i")
        .arg(data)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(Stdio::inherit())
        .status();
    match status {
        Ok(s) if s.success() => Ok((out, temp)),
        Ok(s) => bail!("{}: perf script failed ({s})", data.display()),
        Err(e) => bail!(
            "{}: is perf's binary format; ember reads it through `perf script`, which could not be run ({e}). Run `perf script --header -i {} > perf.txt` where perf is installed and open perf.txt",
            data.display(),
            data.display()
        ),
    }
}
