//! `ember DIR` on a directory written by `ember capture`: the profile in it,
//! its host logs as context and its clock anchor, lined up by wall clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};

fn ember(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("running ember")
}

#[test]
fn a_capture_bundle_opens_with_its_logs_aligned_by_its_clock_anchor() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    let out_s = out.to_str().unwrap();
    // A "profiler" that writes one perf script sample a second for two
    // seconds, stamped with the time since boot (what perf's default clock
    // counts), into the bundle.
    let script = format!(
        "for i in 1 2 3; do read up idle < /proc/uptime; \
         printf 'prog 1/1 [000] %s: 1 cpu-clock:\\n\\tffff main (/bin/prog)\\n\\n' $up >> {out_s}/p.perf; \
         sleep 1; done"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_ember"))
        .args([
            "capture",
            "--no-tools",
            "--out",
            out_s,
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("ember capture");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = ember(&["info", out_s]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("format:        perf"), "{text}");
    assert!(text.contains("vmstat.log (vmstat"), "{text}");
    assert!(text.contains("iostat.log (iostat"), "{text}");
    // Both logs line up by clock (their lines' CLOCK_MONOTONIC arrival times
    // and the anchor), starting within two seconds of the first sample.
    let aligned: Vec<&str> = text.lines().filter(|l| l.contains("aligned:")).collect();
    assert_eq!(aligned.len(), 2, "{text}");
    for line in aligned {
        assert!(line.contains("by clock, error < 10 ms"), "{line}");
        let secs: f64 = line
            .split("the log starts ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN);
        assert!(secs.abs() < 2.0, "{line}");
    }
    // A bundle without a profile says what to do.
    let bare = dir.path().join("bare");
    let o = Command::new(env!("CARGO_BIN_EXE_ember"))
        .args([
            "capture",
            "--no-tools",
            "--duration",
            "1",
            "--out",
            bare.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .expect("ember capture");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = ember(&["top", bare.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("holds no profile"), "{err}");
    assert!(err.contains("--context"), "{err}");
}
