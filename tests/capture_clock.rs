//! `ember capture` lines a profile up with its host logs by clock, not by
//! printed seconds: the loggers' lines are stamped with CLOCK_MONOTONIC as
//! they arrive, the profiler samples on CLOCK_MONOTONIC (`perf record -k
//! CLOCK_MONOTONIC`, which capture adds), and `ember info` says "by clock".
//!
//! The workload has known phases: a CPU burst, a sleep, a burst (2.5 s each).
//! It is this test binary run again as the capture's profiler (the ignored
//! `phased_workload` below): it burns one CPU and writes its own samples,
//! `perf script` text stamped with CLOCK_MONOTONIC every 5 ms of a burst.
//! The check: every host report that lies inside a burst is busier than every
//! one inside the sleep, on the profile's clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ember::context::{Entity, Metric};
use ember::timeline::{AlignHow, align_anchored};

const PHASE: Duration = Duration::from_millis(2500);

fn monotonic_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

/// The capture's profiler: run by the test below with `EMBER_PHASED_OUT` set.
#[test]
#[ignore = "the profiler child of a_capture_aligns_the_profile_with_its_logs_by_clock"]
fn phased_workload() {
    let Some(out) = std::env::var_os("EMBER_PHASED_OUT") else {
        return;
    };
    let mut text = String::new();
    let sample = |text: &mut String, leaf: &str| {
        text.push_str(&format!(
            "work 4242 [000] {:.6}: 5000000 cpu-clock:\n\
             \t    401010 {leaf}+0x10 (/usr/local/bin/work)\n\
             \t    401100 main+0x20 (/usr/local/bin/work)\n\
             \t    401200 _start+0x5 (/usr/local/bin/work)\n\n",
            monotonic_s()
        ));
    };
    for (i, busy) in [true, false, true].into_iter().enumerate() {
        let start = Instant::now();
        if !busy {
            std::thread::sleep(PHASE);
            continue;
        }
        let mut next = Instant::now();
        let mut x = 1u64;
        while start.elapsed() < PHASE {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if Instant::now() >= next {
                sample(&mut text, if i == 0 { "burst_one" } else { "burst_two" });
                next += Duration::from_millis(5);
            }
        }
        std::hint::black_box(x);
    }
    let mut f = std::fs::File::create(Path::new(&out)).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[test]
fn a_capture_aligns_the_profile_with_its_logs_by_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let me = std::env::current_exe().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ember"))
        .arg("capture")
        .arg("--out")
        .arg(&dir)
        .arg("--")
        .arg(&me)
        .args([
            "--ignored",
            "--exact",
            "phased_workload",
            "--test-threads=1",
        ])
        .env("EMBER_PHASED_OUT", dir.join("work.perf"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every log has its arrivals beside it.
    assert!(dir.join("vmstat.log.arrivals").is_file());

    let info = Command::new(env!("CARGO_BIN_EXE_ember"))
        .arg("info")
        .arg(&dir)
        .env("EMBER_NO_SUPERVISOR", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&info.stdout);
    assert!(
        said.contains("aligned:     by clock, error < 10 ms"),
        "{said}{}",
        String::from_utf8_lossy(&info.stderr)
    );

    let bundle = ember::sources::bundle::open(&dir).unwrap();
    let profile = common_load(&bundle.profile);
    let vm = bundle
        .contexts
        .iter()
        .find(|p| p.ends_with("vmstat.log"))
        .unwrap();
    let log = ember::context::load(vm).unwrap();
    let a = align_anchored(log, &profile, 0, Some(bundle.anchor_ns)).unwrap();
    assert_eq!(a.how, AlignHow::Clock);
    // The phases on the profile's clock, from the samples' own times.
    let times = profile.samples.time.as_ref().expect("sample times");
    let (first, last) = (times[0] as i64, *times.last().unwrap() as i64);
    let gap = times
        .windows(2)
        .max_by_key(|w| w[1] - w[0])
        .map(|w| (w[0] as i64, w[1] as i64))
        .unwrap();
    let busy_phases = [(first, gap.0), (gap.1, last)];
    let us = a.source.series(Metric::CpuUser, &Entity::System).unwrap();
    let sy = a.source.series(Metric::CpuSys, &Entity::System).unwrap();
    let (mut busy, mut idle) = (Vec::new(), Vec::new());
    for (i, iv) in a.source.reports() {
        let end = iv.end_ns + a.shift_ns;
        let start = end - iv.len_ns;
        let cpu = us.values[i] + sy.values[i];
        if busy_phases.iter().any(|&(b0, b1)| start >= b0 && end <= b1) {
            busy.push(cpu);
        } else if start >= gap.0 && end <= gap.1 {
            idle.push(cpu);
        }
    }
    assert!(!busy.is_empty() && !idle.is_empty(), "{busy:?} {idle:?}");
    let least_busy = busy.iter().copied().fold(f32::MAX, f32::min);
    let most_idle = idle.iter().copied().fold(f32::MIN, f32::max);
    assert!(
        least_busy > most_idle,
        "reports inside bursts {busy:?}, inside the sleep {idle:?}"
    );
}

fn common_load(path: &Path) -> ember::model::Profile {
    ember::formats::load(
        &ember::sources::input::Source::Path(path.to_path_buf()),
        &ember::formats::LoadOptions::default(),
        &ember::sources::input::Progress::new(),
    )
    .unwrap()
}
