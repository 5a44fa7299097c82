//! `manifest.toml`: what a capture bundle holds, written by `ember capture` and
//! read back by the viewer. Paths in it are relative to the bundle directory.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The manifest name inside a bundle directory.
pub const MANIFEST: &str = "manifest.toml";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// A capture bundle's description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    /// `running` while the capture is under way (the manifest is written at
    /// the start and rewritten at the end).
    pub status: Status,
    /// The signal that ended the capture (`SIGINT`, `SIGTERM`, `SIGHUP`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// Why ember itself failed, when `status` is `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What `ember capture` exited with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Seconds between host samples.
    pub interval_s: u64,
    /// `--duration`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    pub host: Host,
    pub start: Anchor,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Anchor>,
    #[serde(default)]
    pub commands: Vec<CommandRecord>,
    #[serde(default)]
    pub files: Vec<FileEntry>,
    /// The clock the profiler stamps samples with, when ember chose it
    /// (`CLOCK_MONOTONIC`: `perf record -k CLOCK_MONOTONIC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_clock: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Running,
    Complete,
    Interrupted,
    Failed,
}

/// The machine the capture ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    pub name: String,
    /// `uname -r`.
    pub kernel: String,
    /// `uname -m`.
    pub arch: String,
    /// Online CPUs (the `cpuN` lines of `/proc/stat`).
    pub n_cpus: u32,
    /// `/proc/stat` btime: the boot, seconds since the epoch (whole seconds).
    pub boot_time_s: u64,
}

/// The clocks read back to back: a profile stamped with CLOCK_MONOTONIC (perf
/// `-k CLOCK_MONOTONIC`) or CLOCK_BOOTTIME maps to the wall clock by the offset
/// `realtime_ns - monotonic_ns` (or `- boottime_ns`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    /// CLOCK_REALTIME, nanoseconds since the epoch (UTC).
    pub realtime_ns: i64,
    pub monotonic_ns: u64,
    pub boottime_ns: u64,
    /// How long the reads took: the anchor's uncertainty.
    pub read_ns: u64,
    /// The host's local offset from UTC (what vmstat/iostat timestamps are in).
    pub utc_offset_s: i32,
    /// Its abbreviation, as vmstat prints it (`UTC`, `CET`).
    pub zone: String,
}

/// A process ember ran, or the built-in sampler standing in for one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRecord {
    pub role: CommandRole,
    /// The command line as run. For the built-in sampler: the command whose
    /// output it reproduces.
    pub argv: Vec<String>,
    /// Variables set for it (`LC_ALL=C`).
    #[serde(default)]
    pub env: Vec<String>,
    /// True when ember sampled `/proc` itself instead of running `argv`.
    #[serde(default)]
    pub builtin: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Its process group (ember signals the whole group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<Exit>,
    /// What went wrong running it (the built-in sampler's error, a spawn failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommandRole {
    Profiler,
    Vmstat,
    Iostat,
    Mpstat,
}

/// How a process ended: an exit code, or the signal that killed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// One file of the bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Relative to the bundle directory.
    pub path: String,
    pub role: FileRole,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileRole {
    /// Whatever the profiler wrote into the directory (perf.data, …).
    Profile,
    Vmstat,
    Iostat,
    Mpstat,
    ProfilerStdout,
    ProfilerStderr,
    /// A log's arrival times (`vmstat.log.arrivals`), beside it.
    Arrivals,
}

impl Manifest {
    /// The bundle's files with `role`, as paths under `dir`.
    pub fn paths(&self, dir: &Path, role: FileRole) -> Vec<PathBuf> {
        self.files
            .iter()
            .filter(|f| f.role == role)
            .map(|f| dir.join(&f.path))
            .collect()
    }

    /// The command that played `role`.
    pub fn command(&self, role: CommandRole) -> Option<&CommandRecord> {
        self.commands.iter().find(|c| c.role == role)
    }
}

/// Reads `dir/manifest.toml`.
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let m: Manifest = toml::from_str(&text)
        .with_context(|| format!("{}: not a capture manifest", path.display()))?;
    if m.format_version > FORMAT_VERSION {
        bail!(
            "{}: format version {} is newer than this ember reads ({FORMAT_VERSION})",
            path.display(),
            m.format_version
        );
    }
    Ok(m)
}

/// Writes `dir/manifest.toml` through a temporary file and a rename, so a
/// reader never sees half of it.
pub(crate) fn write_manifest(dir: &Path, m: &Manifest) -> Result<()> {
    let text = toml::to_string(m).context("encoding the manifest")?;
    let tmp = dir.join(".manifest.toml.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    let path = dir.join(MANIFEST);
    std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips_through_toml() -> Result<()> {
        let anchor = Anchor {
            realtime_ns: 1_796_211_700_000_000_000,
            monotonic_ns: 53_000_000_000,
            boottime_ns: 53_100_000_000,
            read_ns: 200,
            utc_offset_s: 3600,
            zone: "CET".into(),
        };
        let m = Manifest {
            format_version: FORMAT_VERSION,
            status: Status::Interrupted,
            signal: Some("SIGTERM".into()),
            error: None,
            exit_code: Some(143),
            interval_s: 1,
            duration_s: None,
            host: Host {
                name: "vm".into(),
                kernel: "6.18.44".into(),
                arch: "x86_64".into(),
                n_cpus: 2,
                boot_time_s: 1_796_211_646,
            },
            start: anchor.clone(),
            end: Some(anchor),
            commands: vec![CommandRecord {
                role: CommandRole::Vmstat,
                argv: vec!["vmstat".into(), "-t".into()],
                env: vec!["LC_ALL=C".into()],
                builtin: false,
                pid: Some(42),
                pgid: Some(42),
                exit: Some(Exit {
                    code: None,
                    signal: Some(15),
                }),
                error: None,
            }],
            files: vec![
                FileEntry {
                    path: "vmstat.log".into(),
                    role: FileRole::Vmstat,
                },
                FileEntry {
                    path: "vmstat.log.arrivals".into(),
                    role: FileRole::Arrivals,
                },
            ],
            profile_clock: Some("CLOCK_MONOTONIC".into()),
        };
        let dir = tempfile::tempdir()?;
        write_manifest(dir.path(), &m)?;
        let back = read_manifest(dir.path())?;
        assert_eq!(back, m);
        assert_eq!(
            back.paths(dir.path(), FileRole::Vmstat),
            vec![dir.path().join("vmstat.log")]
        );
        Ok(())
    }
}
