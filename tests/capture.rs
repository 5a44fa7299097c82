//! `ember capture`, run as a user would run it: the bundle it writes, the logs'
//! layout, the profiler's exit, signals, and the directory rule.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use ember::capture::{CommandRole, FileRole, Manifest, Status, read_manifest};

fn ember() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ember"));
    c.stdin(Stdio::null()).env_remove("RUST_BACKTRACE");
    c
}

fn capture(dir: &Path, extra: &[&str]) -> Output {
    ember()
        .arg("capture")
        .arg("--out")
        .arg(dir)
        .args(extra)
        .output()
        .expect("running ember")
}

/// Runs a capture that must succeed; returns its manifest.
fn capture_ok(dir: &Path, extra: &[&str]) -> Manifest {
    let out = capture(dir, extra);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    read_manifest(dir).unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// vmstat data lines: 18 unsigned integers, a date and a time.
fn vmstat_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .filter(|w| w.len() == 20 && w[..18].iter().all(|v| v.parse::<u64>().is_ok()))
        .collect()
}

/// Lines alone before an `avg-cpu:` header: one per iostat report.
fn iostat_stamps(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .filter(|w| w[1].starts_with("avg-cpu:"))
        .map(|w| w[0].to_string())
        .collect()
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10 && b[4] == b'-' && b[7] == b'-' && s.replace('-', "").parse::<u32>().is_ok()
}

fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 8 && b[2] == b':' && b[5] == b':' && s.replace(':', "").parse::<u32>().is_ok()
}

/// Pids of every process whose process group is `pgid` (field 5 of /proc/PID/stat).
fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}

fn wait_until(limit: Duration, mut ok: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Starts a capture in the background (alone when `profiler` is empty), waits
/// for its `running` manifest, sends `signal`, and returns (exit code, manifest).
fn interrupt(dir: &Path, signal: &str, profiler: &[&str]) -> (Option<i32>, Manifest) {
    let mut cmd = ember();
    cmd.arg("capture").arg("--out").arg(dir);
    if !profiler.is_empty() {
        cmd.arg("--").args(profiler);
    }
    let mut child = cmd.stderr(Stdio::null()).spawn().expect("starting ember");
    let started = wait_until(Duration::from_secs(3), || {
        read_manifest(dir).is_ok_and(|m| m.status == Status::Running && !m.commands.is_empty())
    });
    assert!(started, "no running manifest");
    // Let the profiler's shell start its own child.
    std::thread::sleep(Duration::from_millis(300));
    let kill = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut status = None;
    wait_until(Duration::from_secs(4), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let Some(status) = status else {
        let _ = child.kill();
        panic!("ember did not exit after {signal}");
    };
    (status.code(), read_manifest(dir).unwrap())
}

#[test]
fn alone_writes_a_manifest_and_a_report_per_log() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bundle");
    let m = capture_ok(&dir, &["--duration", "2"]);
    assert_eq!(m.status, Status::Complete);
    assert_eq!(m.exit_code, Some(0));
    assert!(m.host.n_cpus >= 1);
    assert!(!m.host.kernel.is_empty());
    let end = m.end.as_ref().unwrap();
    let wall = end.realtime_ns - m.start.realtime_ns;
    let mono = i64::try_from(end.monotonic_ns - m.start.monotonic_ns).unwrap();
    assert!(wall >= 1_900_000_000, "captured {wall} ns");
    assert!(
        (wall - mono).abs() < 50_000_000,
        "clocks disagree: {wall} vs {mono}"
    );
    for role in [CommandRole::Vmstat, CommandRole::Iostat] {
        assert!(m.command(role).is_some(), "no {role:?} command recorded");
    }
    let vmstat = m.paths(&dir, FileRole::Vmstat);
    let iostat = m.paths(&dir, FileRole::Iostat);
    assert_eq!((vmstat.len(), iostat.len()), (1, 1));
    assert!(!vmstat_rows(&read(&vmstat[0])).is_empty());
    assert!(!iostat_stamps(&read(&iostat[0])).is_empty());
}

#[test]
fn fallback_logs_have_the_documented_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    let m = capture_ok(&dir, &["--duration", "2.2", "--no-tools"]);
    let io = m.command(CommandRole::Iostat).unwrap();
    assert!(io.builtin && io.pid.is_none());
    assert!(io.env.contains(&"S_TIME_FORMAT=ISO".to_string()));
    assert!(m.command(CommandRole::Vmstat).unwrap().builtin);

    // vmstat -t -n -w (procps-ng 4.0.x): one header block, 18 columns + timestamp.
    let vm = read(&dir.join("vmstat.log"));
    let lines: Vec<&str> = vm.lines().collect();
    assert!(lines[0].starts_with("--procs-- ---") && lines[0].ends_with(" -----timestamp-----"));
    assert_eq!(lines[0].split_whitespace().count(), 7);
    let names: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(names.len(), 19);
    assert_eq!(&names[..3], &["r", "b", "swpd"]);
    assert_eq!(&names[12..18], &["us", "sy", "id", "wa", "st", "gu"]);
    assert_eq!(names[18], m.start.zone);
    assert_eq!(
        lines[1].len(),
        lines[0].len(),
        "the zone ends under the group line"
    );
    let rows = vmstat_rows(&vm);
    assert_eq!(
        rows.len(),
        lines.len() - 2,
        "every other line is a data line"
    );
    assert!(
        rows.len() >= 2,
        "the since-boot line and at least one interval"
    );
    for row in &rows {
        assert!(is_date(&row[18]) && is_time(&row[19]), "{row:?}");
        let cpu: u64 = row[12..18].iter().map(|v| v.parse::<u64>().unwrap()).sum();
        assert!(
            (98..=102).contains(&cpu),
            "cpu split sums to {cpu}: {row:?}"
        );
    }
    if let Ok(real) = Command::new("vmstat")
        .args(["-t", "-n", "-w", "1", "1"])
        .env("LC_ALL", "C")
        .output()
    {
        let real = String::from_utf8_lossy(&real.stdout).into_owned();
        let real: Vec<&str> = real.lines().take(2).collect();
        if real.len() == 2 && real[1].split_whitespace().count() == 19 {
            assert_eq!(
                real,
                lines[..2],
                "the installed vmstat prints the same header"
            );
        }
    }

    // S_TIME_FORMAT=ISO iostat -x -t -y: banner, then reports of timestamp,
    // avg-cpu, device table, two blank lines.
    let io = read(&dir.join("iostat.log"));
    let lines: Vec<&str> = io.lines().collect();
    let banner: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(banner.len(), 4, "{:?}", lines[0]);
    assert!(banner[0].starts_with("Linux ") && banner[0].ends_with(") "));
    assert!(is_date(banner[1].trim_end()));
    assert!(banner[2].starts_with('_') && banner[2].ends_with('_'));
    assert_eq!(banner[3], format!("({} CPU)", m.host.n_cpus));
    assert_eq!(lines[1], "");
    let stamps = iostat_stamps(&io);
    assert!(!stamps.is_empty());
    for s in &stamps {
        let (date, rest) = s.split_once('T').unwrap();
        assert!(is_date(date) && is_time(&rest[..8]), "{s}");
        let zone = &rest[8..];
        assert!(
            zone.len() == 5 && (zone.starts_with('+') || zone.starts_with('-')),
            "{s}"
        );
    }
    let mut i = 2;
    for _ in &stamps {
        assert_eq!(
            lines[i + 1],
            "avg-cpu:  %user   %nice %system %iowait  %steal   %idle"
        );
        let cpu: Vec<f64> = lines[i + 2]
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(cpu.len(), 6);
        assert!((cpu.iter().sum::<f64>() - 100.0).abs() < 0.1, "{cpu:?}");
        assert_eq!(lines[i + 3], "");
        let header: Vec<&str> = lines[i + 4].split_whitespace().collect();
        assert_eq!(header.len(), 23);
        assert_eq!(
            (header[0], header[21], header[22]),
            ("Device", "aqu-sz", "%util")
        );
        i += 5;
        while !lines[i].is_empty() {
            let row: Vec<&str> = lines[i].split_whitespace().collect();
            assert_eq!(row.len(), 23, "{}", lines[i]);
            if row[0].len() <= 13 && row[1].len() <= 7 {
                // `%-13s` names, then r/s right-aligned under its header.
                assert_eq!(lines[i][13..21].trim_start(), row[1], "{}", lines[i]);
            }
            assert!(
                row[1..]
                    .iter()
                    .all(|v| v.split_once('.').is_some_and(|(_, f)| f.len() == 2))
            );
            i += 1;
        }
        assert_eq!((lines[i], lines[i + 1]), ("", ""));
        i += 2;
    }
    assert_eq!(i, lines.len(), "nothing after the last report");
}

#[test]
fn the_profilers_exit_and_output_are_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    let script = "sleep 1; echo done; echo oops >&2; echo data > \"$0/trace.txt\"; exit 3";
    let out = capture(&dir, &["--", "sh", "-c", script, dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "the profiler's exit code");
    assert_eq!(read(&dir.join("profiler.out")), "done\n");
    assert_eq!(read(&dir.join("profiler.err")), "oops\n");
    let m = read_manifest(&dir).unwrap();
    assert_eq!(m.status, Status::Complete);
    let p = m.command(CommandRole::Profiler).unwrap();
    assert_eq!(p.argv[..2], ["sh", "-c"]);
    assert_eq!(p.exit.unwrap().code, Some(3));
    assert_eq!(
        m.paths(&dir, FileRole::Profile),
        vec![dir.join("trace.txt")]
    );
    assert_eq!(
        m.paths(&dir, FileRole::ProfilerStdout),
        vec![dir.join("profiler.out")]
    );
}

#[test]
fn sigterm_stops_the_profiler_and_every_logger() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    let (code, m) = interrupt(&dir, "-TERM", &["sh", "-c", "sleep 30; echo never"]);
    assert_eq!(code, Some(143));
    assert_eq!(m.status, Status::Interrupted);
    assert_eq!(m.signal.as_deref(), Some("SIGTERM"));
    let p = m.command(CommandRole::Profiler).unwrap();
    assert_eq!(
        p.exit.unwrap().signal,
        Some(15),
        "the profiler got the forwarded SIGTERM"
    );
    let groups: Vec<u32> = m.commands.iter().filter_map(|c| c.pgid).collect();
    assert!(!groups.is_empty());
    for g in groups {
        assert_eq!(
            group_members(g),
            Vec::<u32>::new(),
            "group {g} still has processes"
        );
    }
    assert_eq!(read(&dir.join("profiler.out")), "");
}

#[test]
fn ctrl_c_ends_a_capture_without_a_profiler() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    let (code, m) = interrupt(&dir, "-INT", &[]);
    assert_eq!(code, Some(130));
    assert_eq!(
        (m.status, m.signal.as_deref()),
        (Status::Interrupted, Some("SIGINT"))
    );
    for g in m.commands.iter().filter_map(|c| c.pgid) {
        assert!(group_members(g).is_empty(), "group {g} still running");
    }
}

#[test]
fn refuses_a_non_empty_directory_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("keep.txt"), "mine").unwrap();
    let out = capture(dir, &["--duration", "0.2", "--no-tools"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not empty"));
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["keep.txt"], "nothing was written");

    let m = capture_ok(dir, &["--duration", "0.2", "--no-tools", "--force"]);
    assert_eq!(read(&dir.join("keep.txt")), "mine");
    assert!(
        m.files.iter().all(|f| f.path != "keep.txt"),
        "not claimed as part of the bundle"
    );
}
