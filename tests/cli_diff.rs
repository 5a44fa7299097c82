//! `ember diff` (delta table, two-count folded) and `ember check` (the gate's exit
//! codes), run as a user would run them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn ember(args: &[&str], paths: &[&Path]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ember"));
    c.stdin(Stdio::null()).env_remove("RUST_BACKTRACE");
    c.args(&args[..1]).args(paths).args(&args[1..]);
    c.output().expect("running ember")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `hot` takes `hot` of `n` samples, `cold` the rest.
fn side(name: &str, hot: u32, n: u32) -> common::Input {
    common::write_input(
        name,
        format!("main;hot {hot}\nmain;cold {}\nmain;gone 0\n", n - hot).as_bytes(),
    )
}

#[test]
fn diff_prints_the_delta_table_as_json() {
    let before = common::write_input("before.folded", b"main;a 300\nmain;b 700\nmain;old 50\n");
    let after = common::write_input("after.folded", b"main;a 600\nmain;b 700\nmain;new 100\n");
    let o = ember(&["diff", "--format", "json"], &[&before.path, &after.path]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(doc["normalisation"], "share");
    assert_eq!(doc["before"]["total"], 1050.0);
    assert_eq!(doc["after"]["total"], 1400.0);
    assert_eq!(doc["before"]["name"], "before.folded");
    let f = doc["functions"].as_array().expect("functions");
    let by = |n: &str| {
        f.iter()
            .find(|x| x["name"] == n)
            .unwrap_or_else(|| panic!("{n} listed"))
    };
    assert_eq!(by("new")["status"], "new");
    assert_eq!(by("old")["status"], "gone");
    assert_eq!(by("b")["status"], "both");
    // a: 300/1050 -> 600/1400 of each side, significant on these counts.
    let a = &by("a")["self"];
    assert!((a["before"].as_f64().unwrap() - 300.0 / 1050.0).abs() < 1e-12);
    assert!((a["after"].as_f64().unwrap() - 600.0 / 1400.0).abs() < 1e-12);
    assert_eq!(a["verdict"], "significant");
    assert_eq!(a["raw"], serde_json::json!([300.0, 600.0]));
    // Sorted by the absolute change of self share: b fell 16.7pp, a rose 14.3pp.
    assert_eq!(f[0]["name"], "b");
    assert_eq!(f[1]["name"], "a");
    // --limit and --norm raw.
    let o = ember(
        &["diff", "--format", "json", "--limit", "2", "--norm", "raw"],
        &[&before.path, &after.path],
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(doc["functions"].as_array().unwrap().len(), 2);
    assert_eq!(doc["functions"][0]["self"]["delta"], 300.0);
}

#[test]
fn diff_text_names_both_sides_and_the_test() {
    let before = side("b.folded", 100, 1000);
    let after = side("a.folded", 150, 1000);
    let o = ember(&["diff", "--format", "text"], &[&before.path, &after.path]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("before: b.folded (folded, samples): 1,000 samples\n"),
        "{text}"
    );
    assert!(text.contains("two-proportion test"), "{text}");
    let hot = text
        .lines()
        .find(|l| l.ends_with("  hot"))
        .expect("a hot row");
    assert!(
        hot.contains("+5.00pp") && hot.contains("significant"),
        "{hot}"
    );
}

#[test]
fn diff_writes_the_two_count_form_and_never_over_an_input() {
    let before = common::write_input("b.folded", b"main;a 3\nmain;b 1\n");
    let after = common::write_input("a.folded", b"main;a 5\nmain;c 2\n");
    let o = ember(&["diff", "--to", "folded"], &[&before.path, &after.path]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "main;a 3 5\nmain;b 1 0\nmain;c 0 2\n");
    // What it wrote opens as a diff again and says the same.
    let again = common::write_input("two.folded", stdout(&o).as_bytes());
    let p = common::load_path(&again.path).unwrap();
    assert!(p.meta.diff.is_some());
    let o = Command::new(env!("CARGO_BIN_EXE_ember"))
        .arg("diff")
        .args([&before.path, &after.path])
        .args(["--to", "folded", "-o"])
        .arg(&before.path)
        .output()
        .expect("running ember");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("refusing to overwrite"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(&before.path).unwrap(),
        b"main;a 3\nmain;b 1\n"
    );
}

#[test]
fn diff_names_the_side_that_cannot_be_read() {
    let good = side("good.folded", 10, 100);
    let missing = good.dir.path().join("missing.pb.gz");
    let o = ember(&["diff", "--format", "text"], &[&good.path, &missing]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.pb.gz"), "{}", stderr(&o));
    let empty = common::write_input("empty.folded", b"# nothing\n");
    let o = ember(&["diff", "--format", "text"], &[&empty.path, &good.path]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("empty.folded"), "{}", stderr(&o));
}

#[test]
fn check_exits_0_when_within_budget_1_when_not_and_2_on_bad_input() {
    let base = side("base.folded", 200, 2000);
    let same = side("same.folded", 205, 2000);
    let grew = side("grew.folded", 300, 2000);
    let o = ember(&["check"], &[&base.path, &same.path]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("ok: "), "{}", stdout(&o));

    let o = ember(&["check"], &[&base.path, &grew.path]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(text.starts_with("FAIL: 1 function grew"), "{text}");
    assert!(
        text.contains("hot  self 10.00% -> 15.00% (+50.0%, significant"),
        "{text}"
    );

    // A larger budget, or another function, passes.
    let o = ember(
        &["check", "--max-increase", "60%"],
        &[&base.path, &grew.path],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = ember(
        &["check", "--function", "^cold$"],
        &[&base.path, &grew.path],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // Percentage points of the total.
    let o = ember(
        &["check", "--max-increase", "4pp"],
        &[&base.path, &grew.path],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));

    // Bad usage and unreadable inputs: 2.
    let o = ember(
        &["check", "--max-increase", "lots"],
        &[&base.path, &grew.path],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--max-increase"), "{}", stderr(&o));
    let missing = base.dir.path().join("nope.folded");
    let o = ember(&["check"], &[&base.path, &missing]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nope.folded"), "{}", stderr(&o));
    let o = ember(&["check"], &[&base.path]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn check_reads_budgets_from_a_recipe() {
    let base = side("base.folded", 200, 2000);
    let grew = side("grew.folded", 300, 2000);
    let recipe = common::write_input(
        "budgets.toml",
        b"[[budgets]]\nfunction = \"^hot$\"\nmax_increase = \"60%\"\n\n[[budgets]]\nfunction = \"^cold$\"\nmax_increase = \"1%\"\nmetric = \"total\"\n",
    );
    let r = recipe.path.to_str().unwrap();
    let o = ember(&["check", "--recipe", r], &[&base.path, &grew.path]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let strict = common::write_input(
        "strict.toml",
        b"[[budgets]]\nfunction = \"^hot$\"\nmax_increase = \"2pp\"\n",
    );
    let r = strict.path.to_str().unwrap();
    let o = ember(&["check", "--recipe", r], &[&base.path, &grew.path]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let bad = common::write_input("bad.toml", b"[[budgets]]\nmax_increase = \"much\"\n");
    let r = bad.path.to_str().unwrap();
    let o = ember(&["check", "--recipe", r], &[&base.path, &grew.path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("budget 1"), "{}", stderr(&o));
}

#[test]
fn sample_type_picks_the_value_for_both_sides() {
    let fx = |n: &str| common::repo().join("tests/fixtures").join(n);
    let (b, a) = (fx("go-diff-before.pb.gz"), fx("go-diff-after.pb.gz"));
    let o = ember(&["diff", "--format", "json", "--limit", "1"], &[&b, &a]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(doc["before"]["unit"], "nanoseconds");
    assert_eq!(doc["before"]["samples"], 588.0);
    assert_eq!(doc["after"]["samples"], 618.0);
    let o = ember(
        &[
            "diff",
            "--format",
            "json",
            "--limit",
            "1",
            "--sample-type",
            "samples",
        ],
        &[&b, &a],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(doc["before"]["unit"], "samples");
    assert_eq!(doc["before"]["value_type"], "samples");
    assert_eq!(doc["before"]["total"], 588.0);
    // A type one side lacks: that side's error, naming its file.
    let folded = side("plain.folded", 10, 100);
    let o = ember(
        &["diff", "--format", "json", "--sample-type", "cpu"],
        &[&b, &folded.path],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("plain.folded"), "{}", stderr(&o));
}

/// An A/A pair where most functions are under `--min-samples`: `check` says
/// how many it weighed and how many it skipped, never "N checked" for all.
#[test]
fn check_counts_checked_and_skipped_functions_apart() {
    let mut text = String::from("main;hot 500\nmain;warm 300\n");
    for i in 0..20 {
        text.push_str(&format!("main;rare{i} 3\n"));
    }
    let a = common::write_input("a.folded", text.as_bytes());
    let b = common::write_input("b.folded", text.as_bytes());
    let o = ember(&["check"], &[&a.path, &b.path]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let out = stdout(&o);
    // The budget is on self time: hot and warm weighed; rare0..19 and main
    // (no self samples) skipped.
    assert!(out.starts_with("ok: no function grew past its budget (2 functions checked, 21 skipped with fewer than 50 samples on both sides (--min-samples)"), "{out}");
    let o = ember(&["check", "--function", "^hot$"], &[&a.path, &b.path]);
    let out = stdout(&o);
    assert!(
        out.contains("1 function checked, 22 matched by no budget's pattern"),
        "{out}"
    );
}
