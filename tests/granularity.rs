//! Line and file granularity against `go tool pprof -lines` / `-files` on a
//! profile the project recorded (tests/fixtures/README.md says how the
//! oracles were made), and on perf script text with `--srcline` lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn ember(args: &[&str]) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(args)
        .output()
        .expect("ember runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// pprof's `-top` rows: name (its ` (inline)` labels removed) -> (flat, cum).
fn pprof_rows(text: &str) -> BTreeMap<String, (i64, i64)> {
    let mut rows = BTreeMap::new();
    let mut body = false;
    for line in text.lines() {
        if line.trim_start().starts_with("flat  flat%") {
            body = true;
            continue;
        }
        if !body {
            continue;
        }
        // Five columns, then the name (which may hold spaces).
        let mut rest = line.trim_start();
        let mut cols = Vec::new();
        for _ in 0..5 {
            let end = rest.find(' ').expect("five columns");
            cols.push(&rest[..end]);
            rest = rest[end..].trim_start();
        }
        let ns = |c: &str| c.trim_end_matches("ns").parse::<i64>().expect("ns value");
        let name = rest
            .trim_end_matches(" (inline)")
            .trim_end_matches(" (partial-inline)")
            .to_string();
        assert!(
            rows.insert(name.clone(), (ns(cols[0]), ns(cols[3])))
                .is_none(),
            "{name} twice"
        );
    }
    rows
}

/// ember's `top --format json` rows: name -> (self, total), zero rows left out
/// as pprof leaves them out.
fn ember_rows(json: &str) -> BTreeMap<String, (i64, i64)> {
    let v: serde_json::Value = serde_json::from_str(json).expect("json");
    v["functions"]
        .as_array()
        .expect("functions")
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                (f["self"].as_i64().unwrap(), f["total"].as_i64().unwrap()),
            )
        })
        .filter(|(_, (s, t))| *s != 0 || *t != 0)
        .collect()
}

fn check_against_pprof(granularity: &str, oracle: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profile = root.join("samples/go-loganalytics.pb.gz");
    let text = std::fs::read_to_string(root.join("tests/fixtures/granularity").join(oracle))
        .expect("oracle");
    let (out, err, code) = ember(&[
        "top",
        profile.to_str().unwrap(),
        "--granularity",
        granularity,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let want = pprof_rows(&text);
    let got = ember_rows(&out);
    assert!(want.len() > 50, "the oracle has {} rows", want.len());
    let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    let extra: Vec<_> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "names differ: missing {missing:?}, extra {extra:?}"
    );
    for (name, w) in &want {
        assert_eq!(got[name], *w, "{name}: (flat, cum)");
    }
}

#[test]
fn line_granularity_equals_pprof_lines() {
    check_against_pprof("line", "go-loganalytics.pprof-top-lines.txt");
}

#[test]
fn file_granularity_equals_pprof_files() {
    check_against_pprof("file", "go-loganalytics.pprof-top-files.txt");
}

#[test]
fn function_granularity_is_unchanged_by_the_flag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profile = root.join("samples/go-loganalytics.pb.gz");
    let p = profile.to_str().unwrap();
    let plain = ember(&["top", p, "--format", "json"]);
    let function = ember(&["top", p, "--granularity", "function", "--format", "json"]);
    assert_eq!(plain.0, function.0);
    let lines = ember(&["top", p, "--granularity", "line", "--format", "json"]);
    assert_ne!(plain.0, lines.0);
}

#[test]
fn perf_srclines_name_frames_by_line_or_file() {
    let dir = tempfile::tempdir().unwrap();
    let perf = dir.path().join("srcline.perf");
    std::fs::write(
        &perf,
        "prog 1 10.000000: 1 cpu-clock:\n\
         \t1000 work+0x10 (/bin/prog)\n  work.c:12\n\
         \t2000 main+0x5 (/bin/prog)\n  main.c:3\n\
         \tffffffff81000000 entry+0x1 ([kernel.kallsyms])\n  [kernel.kallsyms][ffffffff81000000]\n\n\
         prog 1 10.001000: 1 cpu-clock:\n\
         \t1004 work+0x14 (/bin/prog)\n  work.c:14\n\
         \t2000 main+0x5 (/bin/prog)\n  main.c:3\n\
         \tffffffff81000000 entry+0x1 ([kernel.kallsyms])\n  :0\n\n",
    )
    .unwrap();
    let p = perf.to_str().unwrap();
    let rows = |g: &str| {
        let (out, err, code) = ember(&["top", p, "--granularity", g, "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("warning"), "{err}");
        ember_rows(&out)
    };
    let line = rows("line");
    assert_eq!(line.get("work work.c:12"), Some(&(1, 1)));
    assert_eq!(line.get("work work.c:14"), Some(&(1, 1)));
    assert_eq!(line.get("main main.c:3"), Some(&(0, 2)));
    // No location: the function's name stays.
    assert_eq!(line.get("entry"), Some(&(0, 2)));
    let file = rows("file");
    assert_eq!(file.get("work.c"), Some(&(2, 2)));
    assert_eq!(file.get("main.c"), Some(&(0, 2)));
    let function = rows("function");
    assert_eq!(function.get("work"), Some(&(2, 2)));
}
