//! `ember report`: the ticket-ready summary, as markdown, text and JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::{Command, Output};

fn ember(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(args)
        .env("EMBER_NO_SUPERVISOR", "1")
        .output()
        .unwrap()
}

fn sample(name: &str) -> String {
    common::repo()
        .join("samples")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn json_report_has_the_facts_the_tables_and_amdahl() {
    let o = ember(&[
        "report",
        &sample("go-loganalytics.pb.gz"),
        "--format",
        "json",
        "--limit",
        "5",
        "--frame",
        "runtime.main;main.main",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["format"], "pprof (gzip)");
    assert_eq!(r["value"], "cpu [nanoseconds]");
    assert_eq!(r["samples"], 281.0);
    assert_eq!(r["rate_hz"], 100.0, "from the 10 ms period");
    assert_eq!(r["top_self"].as_array().unwrap().len(), 5);
    let first = &r["top_self"][0];
    assert_eq!(first["name"], "runtime.asyncPreempt");
    assert_eq!(first["self_percent"], 11.03);
    assert_eq!(first["samples"], 31.0, "31 samples of 10 ms");
    assert_eq!(first["few_samples"], true);
    let sel = &r["selected"];
    assert_eq!(
        sel["path"],
        serde_json::json!(["runtime.main", "main.main"])
    );
    let share = sel["total_percent"].as_f64().unwrap() / 100.0;
    let limit = sel["amdahl_limit"].as_f64().unwrap();
    assert!(
        (limit - 1.0 / (1.0 - share)).abs() < 0.01,
        "{limit} vs {share}"
    );
}

#[test]
fn markdown_escapes_pipes_and_backticks_in_names() {
    let input = common::write_input(
        "odd.folded",
        &b"main;a|b 60\nmain;c`d 30\nmain;\x1b[2Je 10\n"[..],
    );
    let o = ember(&["report", input.path.to_str().unwrap()]);
    assert!(o.status.success());
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(md.contains("| `a\\|b` |"), "{md}");
    assert!(md.contains("| ``c`d`` |"), "{md}");
    assert!(md.contains("`\\x1b[2Je`"), "{md}");
    assert!(!md.contains('\x1b'));
}

#[test]
fn a_small_profile_reports_its_lint() {
    let input = common::write_input("small.folded", &b"main;a 3\nmain;b 2\n"[..]);
    let o = ember(&["report", input.path.to_str().unwrap(), "--format", "text"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("Warnings about the profile itself:"),
        "{text}"
    );
    assert!(text.contains("few-samples"), "{text}");
}

#[test]
fn an_unknown_frame_is_an_error_naming_it() {
    let o = ember(&[
        "report",
        &sample("perf-python-wordindex.folded"),
        "--frame",
        "no;such",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--frame no;such"));
}
