//! `ember top` on a folded file sums the lines as it reads them
//! (`formats::top_streamed`) instead of loading the profile: on every input
//! under `$EMBER_CORPUS/folded/` the streamed table must be the loaded one
//! (`TopTable::build` on the call tree): every function's self, total and
//! caller count, the total, the weight with no frames and the warnings.
//! Inputs the tally hands to the full load (two-count diff files, no samples)
//! are counted, not compared.
//!
//! `$EMBER_CORPUS` unset: skipped. Set to a missing folder: fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ember::formats::{self, LoadOptions};
use ember::model::{CallTree, Profile, TopTable, TreeOptions};
use ember::sources::input::{Progress, Source};

type Rows = BTreeMap<String, (i64, i64, u32)>;

fn rows(p: &Profile, t: &TopTable) -> Rows {
    t.rows
        .iter()
        .map(|r| {
            let name = String::from_utf8_lossy(p.frames.raw(r.frame)).into_owned();
            (name, (r.self_weight, r.total, r.sites))
        })
        .collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = e.expect("directory entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if path.is_dir() {
                todo.push(path);
            } else if name.is_some_and(|n| !n.contains(".speedscope-") && !n.ends_with(".md")) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_streamed_top_table_equals_the_loaded_one_on_every_folded_input() {
    let Some(corpus) = common::corpus("streamed top conformance") else {
        return;
    };
    let dir = corpus.join("folded");
    assert!(dir.is_dir(), "{} is missing", dir.display());
    let (mut same, mut fell_back) = (0, 0);
    let mut failures = Vec::new();
    for file in files(&dir) {
        let source = Source::Path(file.clone());
        let options = LoadOptions::default();
        let Some(streamed) = formats::top_streamed(&source, &options, &Progress::new()) else {
            fell_back += 1;
            continue;
        };
        let rel = file
            .strip_prefix(&dir)
            .unwrap_or(&file)
            .display()
            .to_string();
        let loaded = formats::load(&source, &options, &Progress::new());
        let (p, t) = match (streamed, loaded) {
            (Ok(s), Ok(l)) => (s, l),
            (Err(s), Err(l)) if s.to_string() == l.to_string() => {
                same += 1;
                continue;
            }
            (s, l) => {
                failures.push(format!(
                    "{rel}: streamed {:?}, loaded {:?}",
                    s.err(),
                    l.err()
                ));
                continue;
            }
        };
        let (sp, st) = p;
        let tree = CallTree::build(&t, TreeOptions::default());
        let lt = TopTable::build(&t, &tree);
        let mut problems = Vec::new();
        if (st.total, st.no_frames) != (lt.total, lt.no_frames) {
            problems.push(format!(
                "total/no frames {}/{} vs {}/{}",
                st.total, st.no_frames, lt.total, lt.no_frames
            ));
        }
        if sp.warnings.count != t.warnings.count {
            problems.push(format!(
                "warnings {} vs {}",
                sp.warnings.count, t.warnings.count
            ));
        }
        if sp.value_types != t.value_types {
            problems.push("value types differ".into());
        }
        let (a, b) = (rows(&sp, &st), rows(&t, &lt));
        if a != b {
            let first = a
                .iter()
                .zip(&b)
                .find(|(x, y)| x != y)
                .map(|(x, y)| format!("{x:?} vs {y:?}"));
            problems.push(format!(
                "{} vs {} rows, first difference {first:?}",
                a.len(),
                b.len()
            ));
        }
        if problems.is_empty() {
            same += 1;
        } else {
            failures.push(format!("{rel}: {}", problems.join("; ")));
        }
    }
    common::say(&format!(
        "streamed top: {same} inputs equal to the loaded table, {fell_back} sent to the full load \
         or not folded"
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(same >= 20, "only {same} folded inputs were streamed");
}
