//! `ember capture`: records host context (vmstat, iostat, mpstat, or ember's
//! own `/proc` sampler in their formats) next to a profiler run and writes a
//! bundle directory the viewer can open: `manifest.toml` plus the raw logs.
//!
//! Order on the way out, whatever ends the capture: the profiler first (it is
//! signalled and given time to write its file), then the loggers, then the
//! manifest. Every child runs in its own process group and is killed and
//! reaped on every path out of [`run`], errors included (see [`children`]).

mod children;
mod clock;
mod manifest;
mod procfs;
mod sampler;
mod stamp;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rustix::process::Signal;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

pub use manifest::{
    Anchor, CommandRecord, CommandRole, Exit, FORMAT_VERSION, FileEntry, FileRole, Host, MANIFEST,
    Manifest, Status, read_manifest,
};

use children::{Children, Output};
use sampler::Sampler;

/// How long the profiler gets to write its file after being signalled.
const PROFILER_GRACE: Duration = Duration::from_secs(30);
/// How long a logger gets after SIGTERM before SIGKILL.
const LOGGER_GRACE: Duration = Duration::from_secs(1);
const POLL: Duration = Duration::from_millis(50);

#[derive(clap::Args, Debug)]
#[command(
    about = "Record host context (vmstat, iostat, mpstat) alongside a profiler into a bundle DIR",
    after_help = "Examples:\n  ember capture --out run1 -- perf record -F 99 -g -p 1234 -- sleep 30\n  ember capture --out idle --duration 60"
)]
pub struct CaptureArgs {
    /// The bundle directory: created if missing; must be empty unless --force.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Seconds to capture. Alone: how long. With a profiler: a limit, after
    /// which the profiler gets SIGINT. Without either: until Ctrl-C.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Seconds between host samples.
    #[arg(long, value_name = "S", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub interval: u64,
    /// Write into a non-empty DIR (files of the same names are replaced).
    #[arg(long)]
    pub force: bool,
    /// Sample /proc with ember's own sampler even where vmstat/iostat exist
    /// (and skip mpstat). For tests.
    #[arg(long, hide = true)]
    pub no_tools: bool,
    /// The profiler command, after `--` (e.g. `perf record -F 99 -g -p PID -- sleep 30`).
    #[arg(last = true, value_name = "PROFILER")]
    pub profiler: Vec<String>,
}

/// Runs a capture; returns the exit code: the profiler's (0 when alone),
/// 128 + the signal when one ended it.
pub fn run(args: &CaptureArgs) -> Result<i32> {
    if let Some(d) = args.duration
        && !(d.is_finite() && d > 0.0)
    {
        bail!("--duration {d}: must be a positive number of seconds");
    }
    let preexisting = prepare_dir(&args.out, args.force)?;
    let mut signals =
        Signals::new([SIGINT, SIGTERM, SIGHUP]).context("installing signal handlers")?;
    let mut session = Session::new(args, preexisting)?;
    let outcome = session
        .start(args)
        .and_then(|()| session.wait(args, &mut signals));
    session.finish(outcome)
}

/// Creates `dir` or checks that it may be written; returns the names already
/// in it (left alone, and left out of the manifest).
fn prepare_dir(dir: &Path, force: bool) -> Result<BTreeSet<OsString>> {
    if !dir.exists() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        return Ok(BTreeSet::new());
    }
    if !dir.is_dir() {
        bail!("--out {}: not a directory", dir.display());
    }
    let names: BTreeSet<OsString> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    if !names.is_empty() && !force {
        bail!(
            "--out {}: not empty ({} entries); choose a new directory or pass --force",
            dir.display(),
            names.len()
        );
    }
    Ok(names)
}

/// Whether `name` is an executable on PATH.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            std::fs::metadata(d.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// `perf record` without an output option gets `-o DIR/perf.data`, so the
/// profile lands in the bundle whatever the working directory.
fn with_perf_output(argv: &[String], dir: &Path) -> Vec<String> {
    let is_perf = argv
        .first()
        .is_some_and(|p| Path::new(p).file_name().is_some_and(|n| n == "perf"));
    if !is_perf || argv.get(1).map(String::as_str) != Some("record") {
        return argv.to_vec();
    }
    let has_output = argv[2..].iter().take_while(|a| *a != "--").any(|a| {
        a == "-o" || (a.starts_with("-o") && !a.starts_with("--")) || a.starts_with("--output")
    });
    if has_output {
        return argv.to_vec();
    }
    let mut out = argv[..2].to_vec();
    out.push("-o".into());
    out.push(dir.join("perf.data").to_string_lossy().into_owned());
    out.extend_from_slice(&argv[2..]);
    out
}

/// `perf record` without a clock option gets `-k CLOCK_MONOTONIC`: samples
/// then carry the clock the capture's anchor and the loggers' arrival times
/// are read with, so they line up exactly. Returns the clock chosen.
fn with_perf_clock(argv: &[String]) -> (Vec<String>, Option<String>) {
    let is_perf = argv
        .first()
        .is_some_and(|p| Path::new(p).file_name().is_some_and(|n| n == "perf"));
    if !is_perf || argv.get(1).map(String::as_str) != Some("record") {
        return (argv.to_vec(), None);
    }
    let has_clock = argv[2..].iter().take_while(|a| *a != "--").any(|a| {
        a == "-k" || (a.starts_with("-k") && !a.starts_with("--")) || a.starts_with("--clockid")
    });
    if has_clock {
        return (argv.to_vec(), None);
    }
    let mut out = argv[..2].to_vec();
    out.push("-k".into());
    out.push("CLOCK_MONOTONIC".into());
    out.extend_from_slice(&argv[2..]);
    (out, Some("CLOCK_MONOTONIC".into()))
}

/// A command the sampler reproduces the output of, with its environment.
type Emulated = (Vec<String>, Vec<(String, String)>);

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// One capture in progress.
struct Session {
    dir: PathBuf,
    manifest: Manifest,
    children: Children,
    profiler: Option<usize>,
    sampler: Option<(Sender<()>, JoinHandle<Result<()>>)>,
    /// Manifest records for the roles the built-in sampler plays.
    builtin: Vec<CommandRecord>,
    /// The threads copying the loggers' output into the bundle.
    relays: Vec<JoinHandle<()>>,
    /// Names in the directory before the capture (with --force): not ours.
    preexisting: BTreeSet<OsString>,
}

/// How the waiting ended.
struct Ended {
    /// The first signal ember received.
    signal: Option<i32>,
}

impl Session {
    fn new(a: &CaptureArgs, preexisting: BTreeSet<OsString>) -> Result<Session> {
        let uname = rustix::system::uname();
        let stat = procfs::read_stat()?;
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            status: Status::Running,
            signal: None,
            error: None,
            exit_code: None,
            interval_s: a.interval,
            duration_s: a.duration,
            host: Host {
                name: uname.nodename().to_string_lossy().into_owned(),
                kernel: uname.release().to_string_lossy().into_owned(),
                arch: uname.machine().to_string_lossy().into_owned(),
                n_cpus: stat.n_cpus,
                boot_time_s: stat.btime,
            },
            start: clock::anchor(),
            end: None,
            commands: Vec::new(),
            files: Vec::new(),
            profile_clock: None,
        };
        Ok(Session {
            dir: a.out.clone(),
            manifest,
            children: Children::default(),
            profiler: None,
            sampler: None,
            builtin: Vec::new(),
            relays: Vec::new(),
            preexisting,
        })
    }

    /// Starts the loggers (tools where present, else the sampler), then the
    /// profiler, and writes the `running` manifest.
    fn start(&mut self, a: &CaptureArgs) -> Result<()> {
        let n = a.interval.to_string();
        let c_locale = [("LC_ALL", "C"), ("S_TIME_FORMAT", "ISO")];
        let vmstat = args(&["vmstat", "-t", "-n", "-w", &n]);
        let iostat = args(&["iostat", "-x", "-t", "-y", &n]);
        let mpstat = args(&["mpstat", "-P", "ALL", &n]);
        // vmstat's headers are translated under other locales (§2.2): C keeps them readable.
        let vm_tool = self.logger(
            a,
            CommandRole::Vmstat,
            &vmstat,
            env(&c_locale[..1]),
            "vmstat.log",
        );
        let io_tool = self.logger(
            a,
            CommandRole::Iostat,
            &iostat,
            env(&c_locale),
            "iostat.log",
        );
        self.logger(
            a,
            CommandRole::Mpstat,
            &mpstat,
            env(&c_locale),
            "mpstat.log",
        );
        if !vm_tool || !io_tool {
            let vm = (!vm_tool).then(|| (vmstat, env(&c_locale[..1])));
            let io = (!io_tool).then(|| (iostat, env(&c_locale)));
            self.start_sampler(a, vm, io)?;
        }
        if !a.profiler.is_empty() {
            let (argv, clock) = with_perf_clock(&with_perf_output(&a.profiler, &self.dir));
            self.manifest.profile_clock = clock;
            let out = Output {
                stdout: Some(self.dir.join("profiler.out")),
                stderr: Some(self.dir.join("profiler.err")),
            };
            let i = self
                .children
                .spawn(CommandRole::Profiler, argv, Vec::new(), &out)?;
            self.profiler = Some(i);
        }
        self.write(Status::Running)
    }

    /// Runs `argv` as the `role` logger when it is installed (and tools are
    /// allowed); false when the sampler must stand in.
    fn logger(
        &mut self,
        a: &CaptureArgs,
        role: CommandRole,
        argv: &[String],
        env: Vec<(String, String)>,
        file: &str,
    ) -> bool {
        if a.no_tools || !on_path(&argv[0]) {
            return false;
        }
        let out = Output {
            stdout: None,
            stderr: None,
        };
        let started = self
            .children
            .spawn(role, argv.to_vec(), env, &out)
            .and_then(|i| {
                let pipe = self
                    .children
                    .take_stdout(i)
                    .context("the logger's stdout")?;
                let log = self.stamped(file)?;
                self.relays.push(stamp::relay(pipe, log)?);
                Ok(())
            });
        match started {
            Ok(()) => true,
            Err(e) => {
                eprintln!("ember: {e:#}; sampling /proc instead");
                false
            }
        }
    }

    /// `DIR/name` and its arrivals file, on the anchor's clock.
    fn stamped(&self, name: &str) -> Result<stamp::Stamped> {
        let s = &self.manifest.start;
        let offset = s.realtime_ns - i64::try_from(s.monotonic_ns).unwrap_or(0);
        stamp::Stamped::create(&self.dir.join(name), offset, s.utc_offset_s)
    }

    fn start_sampler(
        &mut self,
        a: &CaptureArgs,
        vmstat: Option<Emulated>,
        iostat: Option<Emulated>,
    ) -> Result<()> {
        let sampler = Sampler {
            vmstat: vmstat
                .is_some()
                .then(|| self.stamped("vmstat.log"))
                .transpose()?,
            iostat: iostat
                .is_some()
                .then(|| self.stamped("iostat.log"))
                .transpose()?,
            interval: Duration::from_secs(a.interval),
            utc_offset_s: self.manifest.start.utc_offset_s,
            zone: self.manifest.start.zone.clone(),
            kernel: self.manifest.host.kernel.clone(),
            host: self.manifest.host.name.clone(),
            arch: self.manifest.host.arch.clone(),
        };
        for (role, argv) in [(CommandRole::Vmstat, vmstat), (CommandRole::Iostat, iostat)] {
            if let Some((argv, env)) = argv {
                self.builtin.push(CommandRecord {
                    role,
                    argv,
                    env: env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                    builtin: true,
                    pid: None,
                    pgid: None,
                    exit: None,
                    error: None,
                });
            }
        }
        let (tx, rx) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("ember-sampler".into())
            .spawn(move || sampler.run(&rx))
            .context("starting the sampler thread")?;
        self.sampler = Some((tx, handle));
        Ok(())
    }

    /// Waits for the profiler, the duration or a signal, and sees the
    /// profiler out (signalled and given [`PROFILER_GRACE`]).
    fn wait(&mut self, a: &CaptureArgs, signals: &mut Signals) -> Result<Ended> {
        let started = Instant::now();
        let limit = a.duration.map(Duration::from_secs_f64);
        let mut signal = None;
        let mut stop_sent: Option<Instant> = None;
        loop {
            for sig in signals.pending() {
                if signal.is_some() {
                    // A second signal: no more waiting for the profiler.
                    self.signal_profiler(Signal::KILL);
                } else {
                    signal = Some(sig);
                }
            }
            let profiler_done = match self.profiler {
                Some(i) => self.children.list[i].poll(),
                None => signal.is_some() || limit.is_some_and(|l| started.elapsed() >= l),
            };
            if profiler_done {
                return Ok(Ended { signal });
            }
            let due = signal.is_some() || limit.is_some_and(|l| started.elapsed() >= l);
            match stop_sent {
                None if due => {
                    // SIGHUP is forwarded as SIGINT: perf writes its file on
                    // INT and TERM, a hang-up would leave it truncated.
                    let sig = match signal {
                        Some(SIGTERM) => Signal::TERM,
                        _ => Signal::INT,
                    };
                    self.signal_profiler(sig);
                    stop_sent = Some(Instant::now());
                }
                Some(t) if t.elapsed() > PROFILER_GRACE => {
                    eprintln!("ember: the profiler did not stop in {PROFILER_GRACE:?}; killing it");
                    self.signal_profiler(Signal::KILL);
                    stop_sent = Some(Instant::now());
                }
                _ => {}
            }
            std::thread::sleep(POLL);
        }
    }

    fn signal_profiler(&self, sig: Signal) {
        if let Some(i) = self.profiler {
            self.children.list[i].signal(sig);
        }
    }

    /// Stops everything, writes the final manifest and returns the exit code
    /// (or the error that ended the capture, after recording it).
    fn finish(mut self, outcome: Result<Ended>) -> Result<i32> {
        if let Some(i) = self.profiler {
            self.children.list[i].stop(Signal::INT, Duration::from_secs(2));
        }
        self.children.stop_all(LOGGER_GRACE);
        // The loggers are gone: their pipes end, and so do the relays.
        for r in self.relays.drain(..) {
            let _ = r.join();
        }
        if let Some((tx, handle)) = self.sampler.take() {
            drop(tx);
            let result = handle
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the sampler panicked")));
            if let Err(e) = result {
                eprintln!("ember: built-in sampler: {e:#}");
                for r in &mut self.builtin {
                    r.error = Some(format!("{e:#}"));
                }
            }
        }
        self.manifest.end = Some(clock::anchor());
        let (status, code) = match &outcome {
            Ok(Ended { signal: Some(sig) }) => {
                self.manifest.signal = Some(signal_name(*sig).to_string());
                (Status::Interrupted, 128 + sig)
            }
            Ok(Ended { signal: None }) => {
                let code = self
                    .profiler
                    .and_then(|i| self.children.list[i].status)
                    .map_or(0, children::shell_code);
                (Status::Complete, code)
            }
            Err(e) => {
                self.manifest.error = Some(format!("{e:#}"));
                (Status::Failed, 1)
            }
        };
        self.manifest.exit_code = Some(code);
        let written = self.write(status);
        outcome?;
        written?;
        eprintln!("ember: capture written to {}", self.dir.display());
        Ok(code)
    }

    /// What is in the bundle now, by role; names that were there before are left out.
    fn files(&self) -> Vec<FileEntry> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut files: Vec<FileEntry> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name();
                let text = name.to_string_lossy().into_owned();
                let role = match text.as_str() {
                    MANIFEST | ".manifest.toml.tmp" => return None,
                    "vmstat.log" => FileRole::Vmstat,
                    "iostat.log" => FileRole::Iostat,
                    "mpstat.log" => FileRole::Mpstat,
                    "profiler.out" => FileRole::ProfilerStdout,
                    _ if text.ends_with(crate::context::arrivals::SUFFIX) => FileRole::Arrivals,
                    "profiler.err" => FileRole::ProfilerStderr,
                    _ if self.preexisting.contains(&name) => return None,
                    _ => FileRole::Profile,
                };
                Some(FileEntry { path: text, role })
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files
    }

    fn write(&mut self, status: Status) -> Result<()> {
        self.manifest.status = status;
        self.manifest.commands = self.children.list.iter().map(|c| c.record()).collect();
        self.manifest.commands.extend(self.builtin.iter().cloned());
        self.manifest.files = self.files();
        manifest::write_manifest(&self.dir, &self.manifest)
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_record_gets_an_output_in_the_bundle() {
        let dir = Path::new("/b");
        let argv = args(&["perf", "record", "-g", "--", "sleep", "1"]);
        assert_eq!(
            with_perf_output(&argv, dir),
            args(&[
                "perf",
                "record",
                "-o",
                "/b/perf.data",
                "-g",
                "--",
                "sleep",
                "1"
            ])
        );
        for given in [
            args(&["perf", "record", "-o", "x.data", "sleep", "1"]),
            args(&["/usr/bin/perf", "record", "--output=x.data"]),
            args(&["perf", "stat", "sleep", "1"]),
        ] {
            assert_eq!(with_perf_output(&given, dir), given);
        }
        // perf record samples on the capture's clock unless told another.
        let (argv, clock) = with_perf_clock(&args(&["perf", "record", "-g", "--", "sleep", "1"]));
        assert_eq!(
            argv[..4],
            args(&["perf", "record", "-k", "CLOCK_MONOTONIC"])
        );
        assert_eq!(clock.as_deref(), Some("CLOCK_MONOTONIC"));
        for given in [
            args(&["perf", "record", "-k", "realtime", "sleep", "1"]),
            args(&["perf", "record", "--clockid=mono", "sleep", "1"]),
            args(&["perf", "top"]),
        ] {
            assert_eq!(with_perf_clock(&given), (given.clone(), None));
        }
        // The workload's own -o is not perf's.
        let w = args(&["/usr/bin/perf", "record", "--", "cc", "-o", "a.out"]);
        assert_eq!(with_perf_output(&w, dir)[3], "/b/perf.data");
    }
}
