//! Profile lint on real recordings made for it (`tests/fixtures/lint/`, how
//! each was made is in `tests/fixtures/README.md`), and `ember lint` as a CI
//! job runs it: exit codes, text and JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use ember::model::lint::{LintKind, lint};

fn fixture(name: &str) -> PathBuf {
    common::repo().join("tests/fixtures/lint").join(name)
}

/// The warnings' codes for a fixture, as the library finds them.
fn codes(name: &str) -> Vec<&'static str> {
    let p = common::load_path(&fixture(name)).expect("the fixture loads");
    let tree = common::default_tree(&p);
    lint(&p, &tree).iter().map(|f| f.kind.code()).collect()
}

fn ember(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(args)
        .stdin(Stdio::null())
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("running ember")
}

fn path_str(name: &str) -> String {
    fixture(name).to_string_lossy().into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

#[test]
fn a_rust_debug_build_is_flagged_and_its_release_build_is_not() {
    assert!(codes("rust-debug.perf.gz").contains(&"debug-build"));
    assert_eq!(codes("rust-release.perf.gz"), Vec::<&str>::new());
}

/// The same program recorded with frame-pointer call graphs (`perf record
/// -g`): the debug build's stacks are as broken as the release build's, so
/// names say little, but perf's DSO path (`.../target/debug/lint-rust`) says
/// which build ran. Both get `broken-stacks`; only the debug one `debug-build`.
#[test]
fn a_frame_pointer_recording_of_a_debug_build_is_told_by_its_binary_path() {
    let debug = codes("rust-debug-fp.perf.gz");
    assert!(debug.contains(&"debug-build"), "{debug:?}");
    assert!(debug.contains(&"broken-stacks"), "{debug:?}");
    let release = codes("rust-release-fp.perf.gz");
    assert_eq!(release, vec!["broken-stacks"]);
    let p = common::load_path(&fixture("rust-debug-fp.perf.gz")).unwrap();
    let f = lint(&p, &common::default_tree(&p));
    let saw = &f
        .iter()
        .find(|f| f.kind == LintKind::DebugBuild)
        .unwrap()
        .saw;
    assert!(saw.contains("e.g. /tmp/lr/target/debug/lint-rust"), "{saw}");
}

/// With the binary at a path that says nothing (the DSO renamed), the DWARF
/// recordings are told apart by their frames alone: the debug build's calls
/// that optimised builds inline, against perf's `(inlined)` marks in the
/// release build.
#[test]
fn without_a_telling_path_the_frame_names_still_tell_the_builds_apart() {
    let neutral = |name: &str, from: &str| {
        let text = common::gunzip_text(&fixture(name));
        let text = text.replace(from, "/usr/local/bin/lint-rust");
        assert!(!text.contains("target/"), "{name}: a path is left");
        let p = common::load_bytes(text.as_bytes());
        lint(&p, &common::default_tree(&p))
            .iter()
            .map(|f| f.kind.code())
            .collect::<Vec<_>>()
    };
    let debug = neutral(
        "rust-debug.perf.gz",
        "/tmp/lint-rust-target/debug/lint-rust",
    );
    assert_eq!(debug, vec!["debug-build"]);
    let release = neutral(
        "rust-release.perf.gz",
        "/tmp/lint-rust-target/release/lint-rust",
    );
    assert_eq!(release, Vec::<&str>::new());
}

/// pprof-rs writes every inlined frame as a location of its own and names no
/// binary, so a release build looks like a debug one by names: lint says it
/// may be either (`maybe-debug-build`), never the verdict. A Go profile,
/// whose locations hold inlined lines, keeps the plain checks.
#[test]
fn a_pprof_rs_release_profile_gets_no_debug_build_verdict() {
    let path = common::repo().join("tests/fixtures/export/rust-pprofrs.cpu.pb");
    let p = common::load_path(&path).unwrap();
    let found = lint(&p, &common::default_tree(&p));
    assert!(
        found.iter().all(|f| f.kind != LintKind::DebugBuild),
        "{found:?}"
    );
    let soft = found
        .iter()
        .find(|f| f.kind == LintKind::MaybeDebugBuild)
        .expect("the soft word");
    assert!(
        soft.saw
            .starts_with("may be a debug build, or a symboliser"),
        "{}",
        soft.saw
    );
    let go = common::load_path(&common::repo().join("samples/go-loganalytics.pb.gz")).unwrap();
    let found = lint(&go, &common::default_tree(&go));
    assert!(
        found
            .iter()
            .all(|f| !matches!(f.kind, LintKind::DebugBuild | LintKind::MaybeDebugBuild)),
        "{found:?}"
    );
}

#[test]
fn c_without_frame_pointers_has_broken_stacks_and_with_them_not() {
    assert!(codes("c-omit-fp.perf.gz").contains(&"broken-stacks"));
    assert_eq!(codes("c-fp.perf.gz"), Vec::<&str>::new());
}

#[test]
fn an_event_loop_polling_with_nothing_to_do_is_idle() {
    assert_eq!(codes("idle-epoll.perf.gz"), vec!["idle"]);
}

#[test]
fn a_tiny_recording_has_too_few_samples() {
    let found = codes("few.perf.gz");
    assert!(found.contains(&"few-samples"), "{found:?}");
    assert!(found.contains(&"short-profile"), "{found:?}");
    assert!(!codes("c-fp.perf.gz").contains(&"few-samples"));
}

#[test]
fn recursion_deeper_than_perfs_limit_is_truncated_not_broken() {
    let found = codes("deep.perf.gz");
    assert!(found.contains(&"truncated-stacks"), "{found:?}");
    assert!(!found.contains(&"broken-stacks"), "{found:?}");
}

#[test]
fn a_perf_event_without_call_chain_is_named_as_the_lint_expects() {
    assert_eq!(ember::formats::perf::NO_STACK, "[no stack recorded]");
    let mut text = String::new();
    for i in 0..60 {
        text.push_str(&format!("app 7 10.{i:03}: 1001001 cpu-clock:\n\n"));
    }
    let p = common::load_bytes(text.as_bytes());
    let tree = common::default_tree(&p);
    let found = lint(&p, &tree);
    let broken = found
        .iter()
        .find(|f| f.kind == LintKind::BrokenStacks)
        .expect("broken-stacks fires");
    assert!(broken.saw.contains("no call chain"), "{}", broken.saw);
}

#[test]
fn lint_exits_0_without_warnings_and_says_so() {
    let o = ember(&["lint", &path_str("rust-release.perf.gz")]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(stdout(&o), "no warnings\n");
}

#[test]
fn lint_exits_1_with_a_warning_and_its_help() {
    let o = ember(&["lint", &path_str("c-omit-fp.perf.gz")]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("warning[broken-stacks]: 100% of samples in stacks of depth <= 2"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("  help: ") && lines[1].contains("-fno-omit-frame-pointer"),
        "{text}"
    );
    assert_eq!(lines.last(), Some(&"1 warning"));
}

#[test]
fn lint_exits_2_on_unreadable_input_and_bad_usage() {
    let missing = ember(&["lint", "/nonexistent/profile.folded"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("ember lint:"));
    assert!(missing.stdout.is_empty());
    let input = common::write_input("garbage.txt", b"\x00\x01\x02 not a profile\n");
    let garbage = ember(&["lint", &input.path.to_string_lossy()]);
    assert_eq!(
        garbage.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&garbage.stderr)
    );
    let usage = ember(&["lint", "--format", "xml", &path_str("c-fp.perf.gz")]);
    assert_eq!(usage.status.code(), Some(2));
    let bundle = tempfile::tempdir().expect("a directory");
    std::fs::write(bundle.path().join("manifest.toml"), "not = [toml").expect("writing");
    let o = ember(&["lint", &bundle.path().to_string_lossy()]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn lint_json_names_the_file_the_format_and_each_finding() {
    let path = path_str("few.perf.gz");
    let o = ember(&["lint", "--format", "json", &path]);
    assert_eq!(o.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["file"], path.as_str());
    assert_eq!(doc["format"], "perf");
    let findings = doc["findings"].as_array().expect("a list");
    let codes: Vec<&str> = findings
        .iter()
        .map(|f| f["code"].as_str().expect("a code"))
        .collect();
    assert_eq!(codes, vec!["few-samples", "short-profile"]);
    for f in findings {
        let mut keys: Vec<&String> = f.as_object().expect("an object").keys().collect();
        keys.sort_unstable();
        assert_eq!(keys, vec!["advice", "code", "saw"]);
    }
    // Keys in the order a reader expects them.
    let text = stdout(&o);
    let at = |k: &str| text.find(&format!("\"{k}\"")).expect("the key");
    assert!(
        at("file") < at("format") && at("format") < at("findings"),
        "{text}"
    );
    assert!(at("code") < at("saw") && at("saw") < at("advice"), "{text}");
    assert_eq!(findings[0]["saw"], "only 18 samples");

    let o = ember(&["lint", "--format", "json", &path_str("c-fp.perf.gz")]);
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["findings"], serde_json::json!([]));
}

#[test]
fn info_lists_the_lint_findings() {
    let o = ember(&["info", &path_str("idle-epoll.perf.gz")]);
    assert!(o.status.success());
    let text = stdout(&o);
    let line = text
        .lines()
        .find(|l| l.starts_with("lint:"))
        .expect("a lint line");
    assert!(
        line.starts_with("lint:          idle: 74% of samples in idle or waiting code (epoll_wait"),
        "{line}"
    );
    let o = ember(&["info", &path_str("c-fp.perf.gz")]);
    assert!(
        stdout(&o).contains("\nlint:          no warnings\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn lint_respects_the_time_range_given() {
    // The first 0.3 s of a 1.5 s recording is a short profile.
    let o = ember(&["lint", "--until", "0.3", &path_str("c-fp.perf.gz")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("warning[short-profile]"),
        "{}",
        stdout(&o)
    );
}

/// The viewer's lint (from the samples, no tree) finds what the tree's does,
/// on every fixture, whole and over a sample range.
#[test]
fn lint_of_the_samples_equals_lint_of_the_tree() {
    use ember::model::TreeOptions;
    use ember::model::lint::{lint, lint_view};
    let dir = common::repo().join("tests/fixtures/lint");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    for f in files {
        let p = common::load_path(&f).unwrap_or_else(|e| panic!("{e}"));
        let n = p.samples.len();
        for samples in [None, Some(n / 3..n)] {
            let options = TreeOptions {
                value: p.default_value,
                samples: samples.clone(),
                ..TreeOptions::default()
            };
            let tree = ember::model::CallTree::build(&p, options.clone());
            assert_eq!(
                lint_view(&p, &options),
                lint(&p, &tree),
                "{}: {samples:?}",
                f.display()
            );
        }
    }
}

/// An on-CPU perf profile of 6 s while the host (vmstat, lined up by start
/// time) sat in iowait 40% with a blocked task: `ember lint --context` says
/// what `ember info --context` says, as `host-io-wait`, in text and JSON; and
/// a calm log (wa 0) adds nothing.
#[test]
fn lint_with_context_carries_the_host_flags() {
    let mut script = String::new();
    for i in 0..600 {
        let t = 1000.0 + f64::from(i) * 0.01;
        script.push_str(&format!(
            "app 100 [000] {t:.6}: 10000000 cpu-clock:u:\n\
             \t    55550010 work+0x10 (/usr/bin/app)\n\
             \t    55550020 main+0x20 (/usr/bin/app)\n\
             \t    55550030 _start+0x5 (/usr/bin/app)\n\n"
        ));
    }
    let profile = common::write_input("app.perf", script.as_bytes());
    let vmstat = |wa: u32, b: u32| {
        let mut log = String::from(
            "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n \
             r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n",
        );
        for _ in 0..8 {
            log.push_str(&format!(
                " 1  {b}      0 204863  29256 338222    0    0     0  9000  506  955 20 10 {} {wa}  0\n",
                70 - wa
            ));
        }
        log
    };
    let busy = common::write_input("vmstat-busy.txt", vmstat(40, 1).as_bytes());
    let calm = common::write_input("vmstat-calm.txt", vmstat(0, 0).as_bytes());
    let p = profile.path.to_str().unwrap();
    let info = ember(&["info", "--context", busy.path.to_str().unwrap(), p]);
    let said = stdout(&info);
    assert!(
        said.contains("host flag:     [warn] the host was waiting on I/O (iowait up to 40%"),
        "{said}"
    );
    let text = ember(&["lint", "--context", busy.path.to_str().unwrap(), p]);
    let out = stdout(&text);
    assert_eq!(text.status.code(), Some(1), "{out}");
    assert!(
        out.contains("warning[host-io-wait]: the host was waiting on I/O (iowait up to 40% and 1 blocked tasks)"),
        "{out}"
    );
    assert!(
        out.contains("  help: Take a wall-clock or off-CPU profile"),
        "{out}"
    );
    let json = ember(&[
        "lint",
        "--format",
        "json",
        "--context",
        busy.path.to_str().unwrap(),
        p,
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let codes: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"host-io-wait"), "{codes:?}");
    let quiet = ember(&["lint", "--context", calm.path.to_str().unwrap(), p]);
    let out = stdout(&quiet);
    assert!(!out.contains("host-"), "{out}");
}
