//! The corpus's perf profiles and the vmstat/iostat logs of the same windows,
//! lined up by ember, against `events-<run>.txt`'s ground truth (realtime and
//! monotonic clocks read together when each phase began). Needs
//! `$EMBER_CORPUS`; skipped (and says so) without it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;
use std::path::Path;

use ember::context::{ContextSource, Entity, Metric};
use ember::model::Profile;
use ember::timeline::flags::flags;
use ember::timeline::{AlignHow, Aligned, align, profile_window};

const NS: i64 = 1_000_000_000;

fn gunzip(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

fn context(dir: &Path, name: &str) -> ContextSource {
    ember::context::load(&dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `event realtime=... monotonic=...` lines: (event, realtime ns, monotonic ns).
fn events(dir: &Path, run: &str) -> Vec<(String, i64, i64)> {
    let text = std::fs::read_to_string(dir.join(format!("events-{run}.txt"))).expect("events");
    let secs = |l: &str, key: &str| -> i64 {
        let v = l
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .unwrap_or_else(|| panic!("{key} in {l}"));
        (v.parse::<f64>().expect("seconds") * 1e9) as i64
    };
    text.lines()
        .filter(|l| l.contains("realtime="))
        .map(|l| {
            let name = l.split_whitespace().next().unwrap_or_default().to_string();
            (name, secs(l, "realtime="), secs(l, "monotonic="))
        })
        .collect()
}

fn event(all: &[(String, i64, i64)], name: &str) -> (i64, i64) {
    all.iter()
        .find(|(n, _, _)| n == name)
        .map(|&(_, r, m)| (r, m))
        .unwrap_or_else(|| panic!("no {name} event"))
}

/// The value of `metric` at profile time `t` (monotonic ns) in `log`.
fn at(log: &Aligned, metric: Metric, entity: &Entity, t: i64) -> Option<f32> {
    let i = log.interval_at(t as u64)?;
    log.source.series(metric, entity)?.values.get(i).copied()
}

fn load(bytes: &[u8]) -> Profile {
    common::try_load_bytes(bytes).expect("the perf profile")
}

#[test]
fn the_iowaitperf_profile_lines_up_with_its_logs_by_wall_clock() {
    let Some(root) = common::corpus("context alignment") else {
        return;
    };
    let dir = root.join("context");
    let profile = load(&gunzip(
        &dir.join("perf-iowaitperf.script-tod-nodso.txt.gz"),
    ));
    let ev = events(&dir, "iowaitperf");
    // The truth: monotonic + (realtime - monotonic) is wall time.
    let (real, mono) = event(&ev, "perf_start");
    let truth = real - mono;
    for name in [
        "vmstat-t-n-1s-iowaitperf.txt",
        "iostat-x-t-1s-ISO-iowaitperf.txt",
    ] {
        let log = align(context(&dir, name), &profile, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(log.how, AlignHow::WallClock, "{name}");
        // Log time + shift = profile (monotonic) time, so -shift is the
        // wall-minus-monotonic offset; within one interval of the truth.
        let err = (-log.shift_ns - truth).abs();
        assert!(err <= NS, "{name}: off by {} ms", err / 1_000_000);
    }
    let vm = align(context(&dir, "vmstat-t-n-1s-iowaitperf.txt"), &profile, 0).unwrap();
    let io = align(
        context(&dir, "iostat-x-t-1s-ISO-iowaitperf.txt"),
        &profile,
        0,
    )
    .unwrap();
    // During fio's read (from its start event + 2 s to + 10 s, in the
    // profile's monotonic clock) a task is blocked and vda is busy; before
    // it, during xz, neither.
    let (_, fio) = event(&ev, "xz_end_fio_seqread_start");
    for s in 2..10 {
        let t = fio + s * NS;
        assert!(
            at(&vm, Metric::Blocked, &Entity::System, t) >= Some(1.0),
            "b at fio+{s}s"
        );
        let util = at(&io, Metric::DiskUtil, &Entity::Device("vda".into()), t);
        assert!(util > Some(50.0), "vda %util at fio+{s}s: {util:?}");
    }
    let (_, xz) = event(&ev, "xz_start");
    let util = at(
        &io,
        Metric::DiskUtil,
        &Entity::Device("vda".into()),
        xz + 4 * NS,
    );
    assert!(util < Some(50.0), "vda %util during xz: {util:?}");
    let (lo, hi) = profile_window(&profile).unwrap();
    let found = flags(&[vm, io], &profile, lo as i64, hi as i64 + 1, 29_549);
    assert!(
        found.iter().any(|f| f.short == "waiting on I/O"),
        "{found:?}"
    );
}

#[test]
fn the_phased_profile_lines_up_by_its_header_and_else_by_start_time() {
    let Some(root) = common::corpus("context alignment") else {
        return;
    };
    let dir = root.join("context");
    let script = gunzip(&dir.join("perf-phased.script-nodso.txt.gz"));
    let ev = events(&dir, "phased");
    let (real, mono) = event(&ev, "perf_start");
    let truth = real - mono;
    // `perf script --header` puts the header before the samples: its
    // `captured on` is the wall-clock anchor.
    let mut with_header = std::fs::read(dir.join("perf-phased.header.txt")).expect("header");
    with_header.extend_from_slice(&script);
    let profile = load(&with_header);
    let log = align(context(&dir, "vmstat-t-n-1s-phased.txt"), &profile, 0).unwrap();
    assert_eq!(log.how, AlignHow::WallClock);
    let err = (-log.shift_ns - truth).abs();
    assert!(err <= NS, "off by {} ms", err / 1_000_000);
    // Without it, by start time, which says so; --align moves it.
    let bare = load(&script);
    let log = align(context(&dir, "vmstat-t-n-1s-phased.txt"), &bare, 0).unwrap();
    assert_eq!(log.how, AlignHow::StartTime);
    let nudged = align(context(&dir, "vmstat-t-n-1s-phased.txt"), &bare, -2 * NS).unwrap();
    assert_eq!(nudged.shift_ns, log.shift_ns - 2 * NS);
}

/// A profile of one sample a second over the log's own window (no profile
/// was recorded for these runs): what the flags see of the log alone.
fn covering(log: &ContextSource) -> Profile {
    let (a, b) = log.span_ns().expect("a span");
    let n = ((b - a) / NS) as usize;
    let mut p = common::load_bytes(&b"a;b 1\n".repeat(n));
    p.samples.time = Some((0..n as u64).map(|i| a as u64 + i * NS as u64).collect());
    p
}

#[test]
fn the_iowait_flag_fires_for_iowaitperf_and_not_for_cpuload() {
    let Some(root) = common::corpus("context alignment") else {
        return;
    };
    let dir = root.join("context");
    // vmstat for r, b and wa; iostat for the CPU count and the disks.
    let fires = |names: [&str; 2]| -> Vec<String> {
        let srcs: Vec<ContextSource> = names.iter().map(|n| context(&dir, n)).collect();
        let p = covering(&srcs[0]);
        let logs: Vec<Aligned> = srcs
            .into_iter()
            .map(|s| align(s, &p, 0).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        let (lo, hi) = profile_window(&p).unwrap();
        flags(&logs, &p, lo as i64, hi as i64 + 1, 1000)
            .into_iter()
            .map(|f| f.short)
            .collect()
    };
    let io = fires([
        "vmstat-t-n-1s-iowaitperf.txt",
        "iostat-x-t-1s-ISO-iowaitperf.txt",
    ]);
    assert!(io.iter().any(|s| s == "waiting on I/O"), "{io:?}");
    let cpu = fires(["vmstat-t-n-1s-cpuload.txt", "iostat-x-t-1s-C-cpuload.txt"]);
    assert!(!cpu.iter().any(|s| s == "waiting on I/O"), "{cpu:?}");
    assert!(cpu.iter().any(|s| s.starts_with("run queue")), "{cpu:?}");
}

#[test]
fn a_host_log_given_as_the_profile_says_to_pass_it_with_context() {
    let vmstat =
        b"procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n \
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n \
 1  0      0 15807492  33624 8359400    0    0     0   336  760  996 76 17  2  0  4\n";
    let e = common::try_load_bytes(vmstat)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("vmstat output, not a profile"), "{e}");
    assert!(e.contains("--context"), "{e}");
}

/// The case: the on-CPU perf profile of the fio/fsync run with its
/// vmstat and iostat. Every host flag `ember info --context` prints is a
/// `host-*` warning of `ember lint --context`, with the same words.
#[test]
fn lint_with_context_says_every_host_flag_info_says() {
    let Some(root) = common::corpus("context alignment") else {
        return;
    };
    let dir = root.join("context");
    let arg = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let (vm, io) = (
        arg("vmstat-t-n-1s-iowaitperf.txt"),
        arg("iostat-x-t-1s-ISO-iowaitperf.txt"),
    );
    let profile = arg("perf-iowaitperf.script-tod-nodso.txt.gz");
    let run = |cmd: &str| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ember"))
            .args([cmd, "--context", &vm, "--context", &io, &profile])
            .env("EMBER_NO_SUPERVISOR", "1")
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let info = run("info");
    let lint = run("lint");
    let flags: Vec<&str> = info
        .lines()
        .filter_map(|l| l.strip_prefix("host flag:     [warn] "))
        .collect();
    assert!(flags.len() >= 3, "{info}");
    let host: Vec<&str> = lint
        .lines()
        .filter(|l| l.starts_with("warning[host-"))
        .collect();
    assert_eq!(host.len(), flags.len(), "{lint}");
    for f in flags {
        let saw = f.split(". ").next().unwrap();
        assert!(host.iter().any(|l| l.ends_with(saw)), "{saw} not in {lint}");
    }
    for code in ["host-io-wait", "host-run-queue", "host-disk"] {
        assert!(lint.contains(&format!("warning[{code}]")), "{code}: {lint}");
    }
}
