//! Invariants of the call tree and the function table, on the bundled samples
//! (`samples/*.folded`), the test fixtures and small inline profiles.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use common::{default_tree, load_bytes, load_path, node, row};
use ember::model::{CallTree, ChildOrder, NodeId, Profile, SortKey, TopTable, TreeOptions};

/// The bundled samples and the fixtures: every real and hand-made profile we have.
fn profile_files() -> Vec<PathBuf> {
    let mut files = common::folded_files(&common::repo().join("samples"));
    assert!(
        files.len() >= 2,
        "expected the bundled samples in samples/*.folded"
    );
    files.extend(common::folded_files(&common::repo().join("tests/fixtures")));
    files
}

fn each_profile(mut check: impl FnMut(&str, &Profile)) {
    for file in profile_files() {
        let p = load_path(&file).unwrap_or_else(|e| panic!("{e}"));
        check(&file.display().to_string(), &p);
    }
}

/// Sum of the default value over the samples, straight from the sample columns.
fn sample_weight_sum(p: &Profile) -> i64 {
    let n = p.value_types.len();
    (0..p.samples.len())
        .map(|i| p.samples.values[i * n + p.default_value])
        .sum()
}

/// The function table computed naively from the samples: per sample, self goes to
/// the leaf frame and total to each distinct frame on the stack once.
fn naive_table(p: &Profile) -> HashMap<String, (i64, i64)> {
    let n = p.value_types.len();
    let mut out: HashMap<String, (i64, i64)> = HashMap::new();
    for i in 0..p.samples.len() {
        let w = p.samples.values[i * n + p.default_value];
        let Some(s) = p.samples.stack_of(i) else {
            continue;
        };
        let path = p.stacks.path(s);
        let distinct: HashSet<_> = path.iter().copied().collect();
        for f in distinct {
            out.entry(p.frames.name(f).into_owned()).or_default().1 += w;
        }
        if let Some(&leaf) = path.last() {
            out.entry(p.frames.name(leaf).into_owned()).or_default().0 += w;
        }
    }
    out.retain(|_, (s, t)| *s != 0 || *t != 0);
    out
}

#[test]
fn root_total_equals_the_sum_of_sample_weights() {
    each_profile(|name, p| {
        let tree = default_tree(p);
        assert!(!p.samples.is_empty(), "{name}");
        assert_eq!(tree.total(NodeId::ROOT), sample_weight_sum(p), "{name}");
        assert_eq!(tree.total(NodeId::ROOT), p.total(p.default_value), "{name}");
    });
}

#[test]
fn matches_the_documented_sample_facts() {
    // samples/README.md: totals, distinct stacks and distinct frame names.
    let cases = [
        ("perf-python-wordindex.folded", 8_913, 827, 830),
        ("pyspy-orders-report.folded", 1_243, 224, 149),
    ];
    for (file, total, lines, frames) in cases {
        let p = load_path(&common::repo().join("samples").join(file)).expect(file);
        assert!(p.warnings.is_empty(), "{file}: {:?}", p.warnings);
        assert_eq!(p.total(0), total, "{file}");
        assert_eq!(p.samples.len(), lines, "{file}");
        assert_eq!(p.frames.len(), frames, "{file}");
        let tree = default_tree(&p);
        let leaves = common::all_nodes(&tree)
            .into_iter()
            .filter(|&n| tree.self_weight(n) != 0)
            .count();
        assert_eq!(leaves, lines, "{file}: no stack appears twice");
    }
}

fn check_node_totals(name: &str, p: &Profile, tree: &CallTree) {
    for n in common::all_nodes(tree) {
        let children: i64 = tree.child_ids(n).map(|c| tree.total(c)).sum();
        assert_eq!(
            tree.total(n),
            tree.self_weight(n) + children,
            "{name}: node {n:?} ({})",
            common::stack_text(p, tree, n)
        );
        for c in tree.child_ids(n) {
            assert_eq!(tree.parent(p, c), Some(n), "{name}: parent of {c:?}");
            assert_ne!(tree.total(c), 0, "{name}: dead child {c:?} listed");
        }
    }
}

#[test]
fn every_node_total_is_self_plus_children() {
    each_profile(|name, p| {
        let tree = default_tree(p);
        check_node_totals(name, p, &tree);
        let heavy = CallTree::build(
            p,
            TreeOptions {
                value: p.default_value,
                order: ChildOrder::Weight,
                ..TreeOptions::default()
            },
        );
        check_node_totals(name, p, &heavy);
    });
}

#[test]
fn orders_siblings_by_name_or_by_weight() {
    each_profile(|name, p| {
        let mut tree = default_tree(p);
        for n in common::all_nodes(&tree) {
            let names: Vec<&[u8]> = tree
                .child_ids(n)
                .map(|c| p.frames.raw(tree.frame(p, c).expect("a child has a frame")))
                .collect();
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{name}: {n:?}");
        }
        let before: Vec<(NodeId, i64)> = common::all_nodes(&tree)
            .into_iter()
            .map(|n| (n, tree.total(n)))
            .collect();
        tree.set_order(p, ChildOrder::Weight);
        for n in common::all_nodes(&tree) {
            let totals: Vec<i64> = tree.child_ids(n).map(|c| tree.total(c)).collect();
            assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{name}: {n:?}");
        }
        // Re-ordering keeps every node and weight.
        let mut after: Vec<(NodeId, i64)> = common::all_nodes(&tree)
            .into_iter()
            .map(|n| (n, tree.total(n)))
            .collect();
        let mut before = before;
        before.sort();
        after.sort();
        assert_eq!(before, after, "{name}");
    });
}

#[test]
fn trees_of_sample_ranges_add_up_to_the_whole() {
    each_profile(|name, p| {
        let whole = default_tree(p);
        let mid = p.samples.len() / 2;
        let part = |r: std::ops::Range<usize>| {
            CallTree::build(
                p,
                TreeOptions {
                    value: p.default_value,
                    samples: Some(r),
                    ..TreeOptions::default()
                },
            )
        };
        let (a, b) = (part(0..mid), part(mid..p.samples.len()));
        for n in common::all_nodes(&whole) {
            assert_eq!(whole.total(n), a.total(n) + b.total(n), "{name}: {n:?}");
        }
    });
}

#[test]
fn top_table_matches_a_naive_count_of_the_samples() {
    each_profile(|name, p| {
        let tree = default_tree(p);
        let table = TopTable::build(p, &tree);
        let root = tree.total(NodeId::ROOT);
        assert_eq!(table.total, root, "{name}");
        let mut seen = HashSet::new();
        for r in &table.rows {
            assert!(seen.insert(r.frame), "{name}: frame listed twice");
            assert!(
                r.total <= root,
                "{name}: {} total {}",
                p.frames.name(r.frame),
                r.total
            );
            assert!(
                r.self_weight <= r.total,
                "{name}: {}",
                p.frames.name(r.frame)
            );
        }
        let self_sum: i64 = table.rows.iter().map(|r| r.self_weight).sum();
        assert_eq!(self_sum, root, "{name}: self weights sum to the root total");
        let got: HashMap<String, (i64, i64)> = table
            .rows
            .iter()
            .map(|r| {
                (
                    p.frames.name(r.frame).into_owned(),
                    (r.self_weight, r.total),
                )
            })
            .collect();
        assert_eq!(got, naive_table(p), "{name}");
    });
}

#[test]
fn counts_recursion_once_in_function_totals() {
    let p = load_bytes(b"a;b;a;b 5\n");
    let tree = default_tree(&p);
    let t = TopTable::build(&p, &tree);
    let a = row(&p, &t, "a").expect("a");
    let b = row(&p, &t, "b").expect("b");
    assert_eq!((a.self_weight, a.total), (0, 5));
    assert_eq!((b.self_weight, b.total), (5, 5));
    assert_eq!(t.total, 5);
}

#[test]
fn counts_recursion_once_across_mixed_stacks() {
    let p = load_bytes(b"main;f;g;f;g;f 3\nmain;f 2\nmain;g;g;g 4\nf;f 1\n");
    let tree = default_tree(&p);
    let t = TopTable::build(&p, &tree);
    let get = |n: &str| {
        let r = row(&p, &t, n).expect(n);
        (r.self_weight, r.total)
    };
    assert_eq!(get("main"), (0, 9));
    assert_eq!(get("f"), (6, 6));
    assert_eq!(get("g"), (4, 7));
    assert_eq!(t.total, 10);
    // The tree itself keeps every recursive level apart.
    let deep = node(&p, &tree, &["main", "f", "g", "f", "g", "f"]);
    assert_eq!(tree.self_weight(deep), 3);
    assert_eq!(tree.depth(&p, deep), 6);
}

#[test]
fn sorts_the_top_table_with_name_as_tie_break() {
    let p = load_bytes(b"m;b 2\nm;a 2\nm;c 5\nm;d 1\nx 3\n");
    let tree = default_tree(&p);
    let mut t = TopTable::build(&p, &tree);
    let names = |t: &TopTable| -> Vec<String> {
        t.rows
            .iter()
            .map(|r| common::frame_name(&p, r.frame))
            .collect()
    };
    t.sort(&p, SortKey::SelfWeight, true);
    assert_eq!(names(&t), ["c", "x", "a", "b", "d", "m"]);
    t.sort(&p, SortKey::Total, true);
    assert_eq!(names(&t), ["m", "c", "x", "a", "b", "d"]);
    t.sort(&p, SortKey::Name, false);
    assert_eq!(names(&t), ["a", "b", "c", "d", "m", "x"]);
    t.sort(&p, SortKey::SelfWeight, false);
    assert_eq!(names(&t), ["m", "d", "a", "b", "x", "c"]);
}

#[test]
fn differential_trees_are_built_per_value() {
    let p = load_bytes(b"a;b 10 12\na;c 5 1\nd 0 4\n");
    let tree_for = |value| {
        CallTree::build(
            &p,
            TreeOptions {
                value,
                ..TreeOptions::default()
            },
        )
    };
    let (before, after) = (tree_for(0), tree_for(1));
    assert_eq!(before.total(NodeId::ROOT), 15);
    assert_eq!(after.total(NodeId::ROOT), 17);
    // `d` has no weight before, so it is not in the `before` tree at all.
    assert!(common::node_at(&p, &before, &["d"]).is_none());
    assert_eq!(after.total(node(&p, &after, &["d"])), 4);
    // An out-of-range value falls back to the last one.
    assert_eq!(tree_for(9).total(NodeId::ROOT), 17);
}

#[test]
fn finds_the_deepest_live_node_along_a_path() {
    let p = load_bytes(b"a;b;c 1\na;x 2\n");
    let tree = default_tree(&p);
    let ids = |names: &[&str]| -> Vec<_> {
        names
            .iter()
            .map(|n| p.frames.get(n.as_bytes()).expect(n))
            .collect()
    };
    let (n, found) = tree.find_path(&p, &ids(&["a", "b", "x"]));
    assert_eq!((n, found), (node(&p, &tree, &["a", "b"]), 2));
    let (n, found) = tree.find_path(&p, &ids(&["a", "b", "c"]));
    assert_eq!((n, found), (node(&p, &tree, &["a", "b", "c"]), 3));
    assert_eq!(tree.find_path(&p, &[]), (NodeId::ROOT, 0));
}

/// Readers that append stacks without a lookup (pprof's radix walk) must still
/// never create the same (prefix, frame) twice.
#[test]
fn every_reader_interns_each_stack_once() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/samples");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() || path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let p = ember::formats::load(
            &ember::sources::input::Source::Path(path.clone()),
            &ember::formats::LoadOptions::default(),
            &ember::sources::input::Progress::new(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut seen = std::collections::HashSet::new();
        for s in 0..p.stacks.len() as u32 {
            let id = ember::model::StackId(s);
            let key = (p.stacks.prefix(id), p.stacks.frame(id));
            assert!(
                seen.insert(key),
                "{}: stack {s} is a duplicate",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 7, "only {checked} samples found");
}

#[test]
fn noise_is_judged_by_sample_counts_even_when_time_is_shown() {
    use ember::model::{Unit, ValueType};
    // pprof's CPU shape as the reader makes it: samples/count next to
    // cpu/nanoseconds.
    let mut p = Profile::new(
        "test",
        vec![
            ValueType::new("samples", Unit::Count),
            ValueType::new("cpu", Unit::Nanoseconds),
        ],
    );
    let hot = p.intern_path([&b"main"[..], b"hot"]);
    let cold = p.intern_path([&b"main"[..], b"cold"]);
    p.push_sample(hot, &[120, 1_200_000_000]);
    p.push_sample(cold, &[3, 30_000_000]);
    let time = CallTree::build(
        &p,
        TreeOptions {
            value: 1,
            ..TreeOptions::default()
        },
    );
    assert_eq!(time.samples(node(&p, &time, &["main", "hot"])), Some(120.0));
    assert_eq!(time.samples(node(&p, &time, &["main", "cold"])), Some(3.0));
    assert_eq!(time.samples(NodeId::ROOT), Some(123.0));
    // Shown as samples, the counts are the values themselves.
    let count = CallTree::build(&p, TreeOptions::default());
    assert_eq!(count.samples(node(&p, &count, &["main"])), Some(123.0));
    // Other counts (objects, bytes) are no sample counts.
    let mut objects = Profile::new("test", vec![ValueType::new("objects", Unit::Count)]);
    let s = objects.intern_path([&b"main"[..]]);
    objects.push_sample(s, &[5]);
    let tree = CallTree::build(&objects, TreeOptions::default());
    assert_eq!(tree.samples(NodeId::ROOT), None);
    // Time alone says nothing about how many samples there were.
    let mut bare = Profile::new("test", vec![ValueType::new("cpu", Unit::Nanoseconds)]);
    let s = bare.intern_path([&b"main"[..]]);
    bare.push_sample(s, &[5]);
    let tree = CallTree::build(&bare, TreeOptions::default());
    assert_eq!(tree.samples(NodeId::ROOT), None);
}

#[test]
fn info_counts_a_threads_samples_not_its_records() {
    use ember::model::{Samples, ThreadInfo, Unit, ValueType};
    // Three pprof-like records of one thread carrying 5, 7 and 9 samples, and
    // one record of another carrying 2: the count column is what info sums.
    let mut p = Profile::new(
        "pprof",
        vec![
            ValueType::new("samples", Unit::Count),
            ValueType::new("cpu", Unit::Nanoseconds),
        ],
    );
    p.default_value = 1;
    p.threads = vec![
        ThreadInfo {
            name: "worker".into(),
            ..ThreadInfo::default()
        },
        ThreadInfo {
            name: "idle".into(),
            ..ThreadInfo::default()
        },
    ];
    p.samples = Samples {
        stack: vec![u32::MAX; 4],
        values: vec![5, 50, 7, 70, 9, 90, 2, 20],
        thread: Some(vec![0, 0, 0, 1]),
        ..Samples::default()
    };
    let tree = default_tree(&p);
    let mut out = Vec::new();
    ember::output::info(&mut out, &p, &tree, "t.pb").unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("  worker: 21 samples (3 records)\n"),
        "{text}"
    );
    assert!(text.contains("  idle: 2 samples (1 record)\n"), "{text}");
    assert!(text.find("worker") < text.find("idle"), "{text}");
}
