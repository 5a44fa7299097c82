//! `--from/--until/--exclude`: a profile cut to a time range equals the same
//! profile cut by another route (perf script events filtered by their
//! timestamps, then loaded), and bad ranges are one clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;
use std::process::{Command, Output, Stdio};

fn ember(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("running ember")
}

fn sample_text() -> String {
    let path = common::repo().join("samples/perf-python-wordindex-small.perf.gz");
    let bytes = std::fs::read(path).expect("the sample");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .expect("gzip");
    text
}

/// The event time of a perf script block (`comm pid/tid [cpu] 2185.979059: ...`).
fn block_time(block: &str) -> Option<f64> {
    let line = block
        .lines()
        .find(|l| !l.starts_with('#') && !l.is_empty())?;
    line.split_whitespace()
        .find_map(|w| w.strip_suffix(':').and_then(|t| t.parse::<f64>().ok()))
}

/// The perf script text with only the blocks whose time `keep` accepts.
fn filtered(text: &str, keep: impl Fn(f64) -> bool) -> String {
    let mut out = String::new();
    for block in text.split("\n\n") {
        if block_time(block).is_some_and(&keep) {
            out.push_str(block.trim_start_matches('\n'));
            out.push_str("\n\n");
        }
    }
    out
}

fn top_json(args: &[&str]) -> serde_json::Value {
    let o = ember(args);
    assert!(
        o.status.success(),
        "ember {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("top JSON")
}

#[test]
fn a_range_is_the_profile_of_the_events_inside_it() {
    let text = sample_text();
    let first = text
        .split("\n\n")
        .filter_map(block_time)
        .fold(f64::INFINITY, f64::min);
    let dir = tempfile::tempdir().unwrap();
    let sample = common::repo().join("samples/perf-python-wordindex-small.perf.gz");
    let sample = sample.to_str().unwrap();
    type Keep = Box<dyn Fn(f64) -> bool>;
    let cases: [(&[&str], Keep); 3] = [
        (
            &["--from", "1", "--until", "2.5s"],
            Box::new(move |t| t - first >= 1.0 && t - first < 2.5),
        ),
        (
            &["--exclude", "1-2500ms"],
            Box::new(move |t| !(t - first >= 1.0 && t - first < 2.5)),
        ),
        (
            &["--from", "3", "--exclude", "3.5..4"],
            Box::new(move |t| t - first >= 3.0 && !(t - first >= 3.5 && t - first < 4.0)),
        ),
    ];
    for (i, (range, keep)) in cases.iter().enumerate() {
        let cut = filtered(&text, keep);
        let path = dir.path().join(format!("cut{i}.perf"));
        std::fs::write(&path, &cut).unwrap();
        let want = top_json(&["top", "--format", "json", path.to_str().unwrap()]);
        let mut args = vec!["top", "--format", "json", sample];
        args.extend_from_slice(range);
        let got = top_json(&args);
        assert!(
            got["total"].as_i64().unwrap() > 0,
            "{range:?}: the range holds samples"
        );
        assert!(
            got["total"].as_i64() < Some(1828),
            "{range:?}: the range cuts something"
        );
        assert_eq!(got, want, "{range:?}");
    }
}

#[test]
fn bad_ranges_are_one_clear_error() {
    let sample = common::repo().join("samples/perf-python-wordindex-small.perf.gz");
    let sample = sample.to_str().unwrap();
    let folded = common::repo().join("samples/perf-python-wordindex.folded");
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["top", sample, "--from", "11:00:00"], "wall-clock"),
        (vec!["top", sample, "--from", "100"], "holds no samples"),
        (
            vec!["top", sample, "--from", "3", "--until", "1"],
            "before it starts",
        ),
        (vec!["top", sample, "--from", "soon"], "bad time"),
        (
            vec!["top", folded.to_str().unwrap(), "--from", "1"],
            "no sample times",
        ),
    ];
    let before = common::repo().join("tests/fixtures/diff-before.folded");
    let after = common::repo().join("tests/fixtures/diff-after.folded");
    let (b, a) = (before.to_str().unwrap(), after.to_str().unwrap());
    let diffs: [(Vec<&str>, &str); 2] = [
        (
            vec!["diff", b, a, "--format", "text", "--from", "1"],
            "cut each side first",
        ),
        (
            vec!["diff", b, a, "--format", "text", "--context", b],
            "go with one profile",
        ),
    ];
    for (args, says) in cases.into_iter().chain(diffs) {
        let o = ember(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
