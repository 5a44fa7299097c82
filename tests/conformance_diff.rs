//! Conformance of `ember diff --to folded` (the two-count folded form) with
//! `inferno-diff-folded` on the corpus pairs (`folded/inferno-diff/`, see the
//! corpus MANIFEST.md): default, `--normalize` and `--strip-hex`.
//!
//! `$EMBER_CORPUS` unset: skipped. Set to a missing folder: fails.
//!
//! Lines are compared as a set: inferno writes them in hash-map order, ember sorted.
//!
//! Intended deviations:
//!
//! | case | inferno | ember | why |
//! |---|---|---|---|
//! | fractional counts (`before_fractionals.txt`) | truncates each count to an integer (`14.23` -> `14`) | keeps them (`14.2343983249`, to the folded reader's precision) | the fraction is data; ember's folded reader keeps it everywhere. The suite checks that ember's counts truncate to inferno's |
//! | stacks whose counts are `0 0` | written | left out | they carry no weight on either side; the corpus has none |
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// `stack -> (before, after)` from two-count folded text.
fn two_counts(text: &str) -> BTreeMap<String, (f64, f64)> {
    let mut out = BTreeMap::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let (rest, after) = l.rsplit_once(' ').expect("stack before after");
        let (stack, before) = rest.rsplit_once(' ').expect("stack before after");
        let prev = out.insert(
            stack.to_string(),
            (
                before.parse::<f64>().expect("a count"),
                after.parse::<f64>().expect("a count"),
            ),
        );
        assert!(prev.is_none(), "stack {stack} twice");
    }
    out
}

fn ember_diff(before: &Path, after: &Path, flags: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ember"))
        .arg("diff")
        .arg(before)
        .arg(after)
        .args(["--to", "folded"])
        .args(flags)
        .output()
        .expect("running ember");
    assert!(
        out.status.success(),
        "ember diff {flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn two_count_folded_equals_inferno_diff_folded() {
    let Some(corpus) = common::corpus("inferno-diff-folded conformance") else {
        return;
    };
    let dir = corpus.join("folded/inferno-diff");
    let cases: &[(&str, &[&str], &str)] = &[
        ("before.txt", &[], "default.txt"),
        ("before.txt", &["--normalize"], "normalize.txt"),
        ("before.txt", &["--strip-hex"], "strip_hex.txt"),
    ];
    for (before, flags, expected) in cases {
        let ours = two_counts(&ember_diff(
            &dir.join(before),
            &dir.join("after.txt"),
            flags,
        ));
        let theirs = two_counts(
            &std::fs::read_to_string(dir.join("results").join(expected)).expect("oracle"),
        );
        assert_eq!(ours, theirs, "{expected} ({flags:?})");
        common::say(&format!(
            "inferno-diff-folded {expected}: {} stacks equal",
            ours.len()
        ));
    }
    // Fractional counts: ember keeps them; truncated, they are inferno's.
    let ours = two_counts(&ember_diff(
        &dir.join("before_fractionals.txt"),
        &dir.join("after.txt"),
        &[],
    ));
    let theirs =
        two_counts(&std::fs::read_to_string(dir.join("results/fractionals.txt")).expect("oracle"));
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    let mut fractional = 0;
    for (stack, (b, a)) in &ours {
        let (tb, ta) = theirs[stack];
        assert_eq!((b.trunc(), a.trunc()), (tb, ta), "{stack}");
        if b.fract() != 0.0 {
            fractional += 1;
        }
    }
    assert!(fractional >= 3, "ember keeps the fractions ({fractional})");
    // A bad line on one side is a counted warning, not a failure.
    let out = Command::new(env!("CARGO_BIN_EXE_ember"))
        .arg("diff")
        .arg(dir.join("bad_before.txt"))
        .arg(dir.join("after.txt"))
        .args(["--to", "folded"])
        .output()
        .expect("running ember");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 warning (line 3"), "{err}");
}
