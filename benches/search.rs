//! Search cost per keystroke (issue 4): re-filtering 100k distinct function names.
//! Not a timed test: it prints figures for BENCHMARKS.md.
//!
//!   cargo bench --bench search [-- FOLDED_FILE]
//!
//! Builds 100,000 distinct, realistic names (Rust, C++, Go and kernel shapes) and
//! types queries one character at a time, timing `Searcher::run` per keystroke.
//! With a folded file, also times the coverage pass on its tree.

mod common;

use std::time::Instant;

use common::ms;
use ember::formats::{self, LoadOptions};
use ember::model::search::{self, Query, SearchMode, Searcher};
use ember::model::{CallTree, Frames, NodeId, TreeOptions};
use ember::sources::input::{Progress, Source};

fn names(n: usize) -> Frames {
    let crates = [
        "serde_json",
        "tokio",
        "hyper",
        "regex",
        "std",
        "alloc",
        "core",
        "rayon",
        "clang",
        "folly",
        "grpc",
        "runtime",
    ];
    let types = [
        "HashMap<K,V>",
        "Vec<T>",
        "Parser",
        "Reader",
        "Server",
        "Executor",
        "Terminal",
        "Slice",
        "Deserializer",
        "Task",
    ];
    let verbs = [
        "insert",
        "get",
        "poll",
        "read",
        "write_u64",
        "flush",
        "next",
        "parse_value",
        "drop_in_place",
        "schedule",
        "run",
    ];
    let mut f = Frames::new();
    let mut i = 0usize;
    while f.len() < n {
        let (c, t, v) = (
            crates[i % crates.len()],
            types[(i / 7) % types.len()],
            verbs[(i / 13) % verbs.len()],
        );
        let name = match i % 4 {
            0 => format!(
                "{c}::{t}::{v}::h{:016x}",
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ),
            1 => format!("{c}::detail::{t}::{v}_{i}(int, std::vector<int>&)"),
            2 => format!("{c}.(*{t}).{v}{i}"),
            _ => format!("{v}_{c}_{i}_[k]"),
        };
        f.intern(name.as_bytes());
        i += 1;
    }
    f
}

fn main() {
    let frames = names(100_000);
    let mut s = Searcher::default();
    for (mode, typed) in [
        (SearchMode::Fuzzy, "hashmapinsert"),
        (SearchMode::Fuzzy, "tokio poll"),
        (SearchMode::Regex, "HashMap.*insert"),
    ] {
        let mut times = Vec::new();
        let mut hits = 0;
        for end in 1..=typed.len() {
            let q = Query {
                text: typed[..end].to_string(),
                mode,
                case_sensitive: false,
            };
            let t = Instant::now();
            let m = s.run(&frames, &q).unwrap_or_default();
            times.push(t.elapsed());
            hits = m.count;
        }
        let max = times.iter().max().copied().unwrap_or_default();
        times.sort();
        println!(
            "{mode:?} {typed:?} over {} names: median {} max {} per keystroke ({hits} matches at the end)",
            frames.len(),
            ms(times[times.len() / 2]),
            ms(max)
        );
    }
    if let Some(file) = common::files().into_iter().next() {
        let Ok(p) = formats::load(
            &Source::Path(file.clone().into()),
            &LoadOptions::default(),
            &Progress::new(),
        ) else {
            eprintln!("{file}: cannot load");
            return;
        };
        let tree = CallTree::build(&p, TreeOptions::default());
        let q = Query {
            text: "alloc".into(),
            mode: SearchMode::Fuzzy,
            case_sensitive: false,
        };
        let m = s.run(&p.frames, &q).unwrap_or_default();
        let mut times = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            std::hint::black_box(search::coverage(&p, &tree, &m, NodeId::ROOT));
            times.push(t.elapsed());
        }
        times.sort();
        println!(
            "coverage pass on {file} ({} nodes): median {}",
            tree.len(),
            ms(times[2])
        );
    }
}
