//! Comparisons: merging two profiles, normalisation, the significance test, the
//! delta table and the regression gate, on inline profiles and the bundled samples.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{load_bytes, load_path, node_at};
use ember::model::diff::{
    self, Compare, DeltaSort, DeltaTable, DiffError, Gate, GateOptions, MergeOptions, Metric, Norm,
    Threshold, Verdict,
};
use ember::model::{CallTree, NodeId, Profile, TreeOptions, Unit, ValueType};

fn names() -> MergeOptions {
    MergeOptions {
        names: ["before".into(), "after".into()],
        strip_hex: false,
    }
}

fn merged(before: &str, after: &str) -> Profile {
    diff::merge(
        load_bytes(before.as_bytes()),
        load_bytes(after.as_bytes()),
        &names(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn tree(p: &Profile, value: usize) -> CallTree {
    CallTree::build(
        p,
        TreeOptions {
            value,
            ..TreeOptions::default()
        },
    )
}

const BEFORE: &str = "main;parse;lex 30\nmain;parse 10\nmain;eval 60\nmain;old 5\n";
const AFTER: &str = "main;parse;lex 20\nmain;parse 10\nmain;eval 90\nmain;new 40\n";

#[test]
fn both_sides_share_one_tree_matched_by_path() {
    let p = merged(BEFORE, AFTER);
    let meta = p.meta.diff.as_deref().expect("a diff");
    assert_eq!(meta.sides[0].value, 0);
    assert_eq!(meta.sides[1].value, 1);
    let t = tree(&p, 1);
    let lex = node_at(&p, &t, &["main", "parse", "lex"]).expect("lex on the after side");
    let pair = t.pair(lex).expect("a diff tree knows both sides");
    assert_eq!(pair.total, [30, 20]);
    // The same node id in a tree of the other side.
    let tb = tree(&p, 0);
    assert_eq!(tb.total(lex), 30);
    assert_eq!(tb.pair(lex).map(|x| x.total), Some([30, 20]));
    // A frame on one side only has zero on the other.
    let new = node_at(&p, &t, &["main", "new"]).expect("new in after");
    assert_eq!(t.pair(new).map(|x| x.total), Some([0, 40]));
    let old = node_at(&p, &tb, &["main", "old"]).expect("old in before");
    assert_eq!(tb.pair(old).map(|x| x.total), Some([5, 0]));
    // ... and is not drawn in the tree of the side it is missing from.
    assert!(node_at(&p, &t, &["main", "old"]).is_none());
    let parse = node_at(&p, &t, &["main", "parse"]).unwrap();
    assert_eq!(t.pair_self(parse).map(|x| x.total), Some([10, 10]));
}

#[test]
fn the_roots_change_is_the_sum_of_the_sides_under_every_normalisation() {
    let p = merged(BEFORE, AFTER);
    let t = tree(&p, 1);
    let root = t.pair(NodeId::ROOT).unwrap();
    assert_eq!(root.total, [105, 160]);
    let sum = |col: usize| -> i64 { p.samples.values.iter().skip(col).step_by(2).sum() };
    assert_eq!(sum(1) - sum(0), root.total[1] - root.total[0]);
    for norm in [Norm::Share, Norm::Raw, Norm::Scaled] {
        let cmp = diff::tree_compare(&p, &t, norm).unwrap().unwrap();
        let c = cmp.change(root.total, root.samples);
        let expected = match norm {
            Norm::Share | Norm::Scaled => 0.0,
            _ => 55.0,
        };
        assert!(
            (c.delta() - expected).abs() < 1e-9,
            "{norm:?}: {}",
            c.delta()
        );
        // Children's normalised totals add up to the root's on each side.
        let kids: Vec<NodeId> = t.child_ids(NodeId::ROOT).collect();
        for side in 0..2 {
            let sum: f64 = kids
                .iter()
                .map(|&k| cmp.change(t.pair(k).unwrap().total, [0.0; 2]).value[side])
                .sum();
            assert!((sum - c.value[side]).abs() < 1e-9);
        }
    }
    // Per second needs durations, which folded does not carry.
    assert!(
        diff::tree_compare(&p, &t, Norm::PerSecond)
            .unwrap()
            .is_err()
    );
}

#[test]
fn z_scores_follow_the_two_proportion_test() {
    let z = diff::z_score([50.0, 100.0], [1000.0, 1000.0]).unwrap();
    assert!((z - 4.2447).abs() < 1e-3, "{z}");
    assert_eq!(diff::z_score([10.0, 10.0], [100.0, 100.0]), Some(0.0));
    assert!(diff::z_score([1.0, 1.0], [0.0, 10.0]).is_none());
    assert_eq!(
        diff::verdict([50.0, 100.0], [1000.0, 1000.0]).0,
        Verdict::Significant
    );
    assert_eq!(
        diff::verdict([60.0, 70.0], [1000.0, 1000.0]).0,
        Verdict::Noise
    );
    assert_eq!(diff::verdict([3.0, 40.0], [1000.0, 1000.0]).0, Verdict::Few);
}

#[test]
fn the_delta_table_lists_new_and_gone_functions_and_sorts_by_change() {
    let p = merged(BEFORE, AFTER);
    let mut table = DeltaTable::build(&p, None).unwrap();
    let cmp = table.compare(&p, Norm::Raw).unwrap();
    table.sort(&p, &cmp, DeltaSort::SelfDelta);
    let name = |t: &DeltaTable, i: usize| p.frames.name(t.rows[i].frame).into_owned();
    assert_eq!(
        name(&table, 0),
        "new",
        "the largest self change first (+40)"
    );
    let row = |t: &DeltaTable, n: &str| {
        t.rows
            .iter()
            .find(|r| p.frames.name(r.frame) == n)
            .unwrap_or_else(|| panic!("{n} has a row"))
            .clone()
    };
    assert_eq!(row(&table, "new").self_w, [0, 40]);
    assert_eq!(row(&table, "old").self_w, [5, 0]);
    assert_eq!(row(&table, "parse").total, [40, 30]);
    assert_eq!(row(&table, "main").total, [105, 160]);
    table.sort(&p, &cmp, DeltaSort::Relative);
    let first_two: Vec<String> = (0..2).map(|i| name(&table, i)).collect();
    assert!(first_two.contains(&"new".to_string()) && first_two.contains(&"old".to_string()));
    // Shares: eval is 60/105 before and 90/160 after.
    let share = table.compare(&p, Norm::Share).unwrap();
    let c = share.change(row(&table, "eval").total, row(&table, "eval").total_samples);
    assert!((c.value[0] - 60.0 / 105.0).abs() < 1e-12);
    assert!((c.value[1] - 90.0 / 160.0).abs() < 1e-12);
}

#[test]
fn unrelated_value_types_are_refused_and_empty_sides_too() {
    let mut bytes = load_bytes(b"a;b 10\n");
    bytes.value_types = vec![ValueType::new("alloc_space", Unit::Bytes)];
    let mut time = load_bytes(b"a;b 10\n");
    time.value_types = vec![ValueType::new("cpu", Unit::Nanoseconds)];
    let e = diff::merge(bytes, time, &names()).unwrap_err();
    assert!(matches!(e, DiffError::NoCommonValue { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("alloc_space/bytes") && text.contains("cpu/nanoseconds"));

    let empty = Profile::new("folded", vec![ValueType::samples()]);
    let e = diff::merge(empty, load_bytes(b"a 1\n"), &names()).unwrap_err();
    assert!(e.to_string().starts_with("before: no samples"), "{e}");
}

#[test]
fn time_units_are_rescaled_to_the_finer_one() {
    let mut ms = load_bytes(b"a;b 3\n");
    ms.value_types = vec![ValueType::new("wall", Unit::Milliseconds)];
    let mut ns = load_bytes(b"a;b 2000000\n");
    ns.value_types = vec![ValueType::new("wall", Unit::Nanoseconds)];
    let p = diff::merge(ms, ns, &names()).unwrap();
    assert_eq!(p.value_types[0].unit, Unit::Nanoseconds);
    let t = tree(&p, 1);
    assert_eq!(t.pair(NodeId::ROOT).unwrap().total, [3_000_000, 2_000_000]);
    // No sample count on either side: each sample row counts once.
    let meta = p.meta.diff.as_deref().unwrap();
    assert!(meta.sides[0].rows_counted);
    assert_eq!(t.pair(NodeId::ROOT).unwrap().samples, [1.0, 1.0]);
}

#[test]
fn a_folded_baseline_compares_with_a_pprof_by_sample_counts() {
    let repo = common::repo();
    let folded = load_path(&repo.join("samples/perf-python-wordindex.folded")).unwrap();
    let pprof = load_path(&repo.join("samples/go-loganalytics.pb.gz")).unwrap();
    let pprof_samples: i64 = {
        let col = pprof
            .value_types
            .iter()
            .position(|v| v.kind == "samples")
            .expect("a samples/count type");
        let n = pprof.value_types.len();
        pprof.samples.values.iter().skip(col).step_by(n).sum()
    };
    let folded_total = folded.total(0);
    let p = diff::merge(folded, pprof, &names()).unwrap();
    let meta = p.meta.diff.as_deref().unwrap();
    assert_eq!(meta.sides[0].format, "folded");
    assert_eq!(meta.sides[1].format, "pprof (gzip)");
    assert_eq!(meta.sides[1].kind, "samples");
    let root = tree(&p, 1).pair(NodeId::ROOT).unwrap();
    assert_eq!(root.total, [folded_total, pprof_samples]);
}

#[test]
fn strip_hex_joins_addresses_that_moved() {
    assert_eq!(diff::strip_hex(b"f 0x1aF;0x;x0x12"), b"f 0x...;0x;x0x...");
    let opts = MergeOptions {
        strip_hex: true,
        ..names()
    };
    let p = diff::merge(
        load_bytes(b"main;0x1234 5\n"),
        load_bytes(b"main;0xabcd 7\n"),
        &opts,
    )
    .unwrap();
    let t = tree(&p, 1);
    let n = node_at(&p, &t, &["main", "0x..."]).expect("one frame for both");
    assert_eq!(t.pair(n).unwrap().total, [5, 7]);
}

#[test]
fn thresholds_parse_percent_and_points() {
    assert_eq!("10%".parse(), Ok(Threshold::Relative(0.1)));
    assert_eq!("2.5pp".parse(), Ok(Threshold::Points(0.025)));
    assert_eq!("5".parse(), Ok(Threshold::Relative(0.05)));
    assert!("ten".parse::<Threshold>().is_err());
    assert!("-1%".parse::<Threshold>().is_err());
}

/// `grow` samples of `hot` in `n` samples per side, the rest in `main;cold`.
fn sized(hot_before: u32, hot_after: u32, n: u32) -> Profile {
    let side = |hot: u32| format!("main;hot {hot}\nmain;cold {}\n", n - hot);
    merged(&side(hot_before), &side(hot_after))
}

fn gate(threshold: &str, metric: Metric) -> Gate {
    Gate {
        pattern: Some(regex::Regex::new("^hot$").unwrap()),
        threshold: threshold.parse().unwrap(),
        metric,
    }
}

fn offenders(p: &Profile, gates: &[Gate], include_noise: bool) -> Vec<String> {
    let table = DeltaTable::build(p, None).unwrap();
    let share = table.compare(p, Norm::Share).unwrap();
    diff::offenders(
        p,
        &table,
        &share,
        &share,
        gates,
        &GateOptions {
            min_samples: 50.0,
            include_noise,
        },
    )
    .iter()
    .map(|o| p.frames.name(o.frame).into_owned())
    .collect()
}

#[test]
fn the_gate_fails_on_significant_growth_only() {
    // 10% -> 15% of 2,000 samples: z about 4.8.
    let grew = sized(200, 300, 2000);
    assert_eq!(
        offenders(&grew, &[gate("10%", Metric::SelfWeight)], false),
        ["hot"]
    );
    assert_eq!(
        offenders(&grew, &[gate("4pp", Metric::Total)], false),
        ["hot"]
    );
    assert!(offenders(&grew, &[gate("60%", Metric::SelfWeight)], false).is_empty());
    assert!(offenders(&grew, &[gate("6pp", Metric::SelfWeight)], false).is_empty());
    // 10% -> 11% of 1,000 samples is within noise: passes unless asked.
    let noisy = sized(100, 110, 1000);
    assert!(offenders(&noisy, &[gate("5%", Metric::SelfWeight)], false).is_empty());
    assert_eq!(
        offenders(&noisy, &[gate("5%", Metric::SelfWeight)], true),
        ["hot"]
    );
    // A shrinking function never fails.
    let shrank = sized(300, 200, 2000);
    assert!(offenders(&shrank, &[gate("0%", Metric::SelfWeight)], true).is_empty());
}

#[test]
fn the_two_count_folded_form_is_a_diff_of_its_own() {
    let p = load_bytes(b"main;a 3 5\nmain;b 4 0\n");
    let meta = p.meta.diff.as_deref().expect("two counts open as a diff");
    assert_eq!((meta.sides[0].value, meta.sides[1].value), (0, 1));
    let t = tree(&p, p.default_value);
    assert_eq!(t.pair(NodeId::ROOT).unwrap().total, [7, 5]);
    let cmp: Compare = diff::tree_compare(&p, &t, Norm::Raw).unwrap().unwrap();
    let a = node_at(&p, &t, &["main", "a"]).unwrap();
    let c = cmp.change(t.pair(a).unwrap().total, t.pair(a).unwrap().samples);
    assert_eq!(c.value, [3.0, 5.0]);
    assert_eq!(c.verdict, Verdict::Few);
}

#[test]
fn transforms_act_on_both_sides_alike() {
    let p = merged(BEFORE, AFTER);
    let focused = ember::model::apply_all(
        &p,
        &[ember::model::Transform::Focus {
            pattern: "^parse$".into(),
        }],
    )
    .unwrap();
    let t = tree(&focused, 1);
    assert_eq!(t.pair(NodeId::ROOT).unwrap().total, [40, 30]);
    let table = DeltaTable::build(&focused, None).unwrap();
    assert_eq!(table.totals, [40, 30]);
}

/// `go tool pprof -top -diff_base` on two recordings of the same Go program
/// (tests/fixtures/src/go-diff, before and after a change; see
/// tests/fixtures/README.md): every function's flat and cum change equals
/// ember's self and total change in raw nanoseconds, and pprof's total is the
/// baseline's.
#[test]
fn the_delta_table_of_two_pprof_profiles_equals_pprof_diff_base() {
    let dir = common::repo().join("tests/fixtures");
    let fx = |n: &str| ember::sources::input::Source::Path(dir.join(n));
    let p = ember::formats::load_diff(
        [&fx("go-diff-before.pb.gz"), &fx("go-diff-after.pb.gz")],
        &ember::formats::LoadOptions::default(),
        false,
        &ember::sources::input::Progress::several(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.value_types[0].unit, Unit::Nanoseconds);
    let table = DeltaTable::build(&p, None).unwrap();
    let oracle = std::fs::read_to_string(dir.join("go-diff.pprof-top-diff.txt")).unwrap();
    let ns = |s: &str| -> i64 {
        if s == "0" {
            0
        } else {
            s.strip_suffix("ns")
                .expect("-unit=ns")
                .parse()
                .expect("a number")
        }
    };
    let mut rows = 0;
    let mut in_rows = false;
    for line in oracle.lines() {
        if let Some(rest) = line.strip_prefix("Duration: ") {
            let total = rest.split("Total samples = ").nth(1).unwrap();
            let total = total.split(' ').next().unwrap();
            assert_eq!(ns(total), table.totals[0], "pprof's total is the base's");
        }
        if let Some(rest) = line.strip_prefix("Showing nodes accounting for ") {
            let acc = rest.split(',').next().unwrap();
            assert_eq!(ns(acc), table.totals[1] - table.totals[0]);
        }
        if line.trim_start().starts_with("flat ") {
            in_rows = true;
            continue;
        }
        if !in_rows || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split_whitespace().collect();
        let tail = line
            .rsplit_once("%  ")
            .map(|(_, n)| n)
            .expect("a name after the last %");
        let tail = tail.strip_suffix(" (inline)").unwrap_or(tail);
        let row = table
            .rows
            .iter()
            .find(|r| p.frames.name(r.frame) == tail)
            .unwrap_or_else(|| panic!("ember has no row for {tail}"));
        assert_eq!(
            row.self_w[1] - row.self_w[0],
            ns(cols[0]),
            "{tail}: flat change"
        );
        assert_eq!(
            row.total[1] - row.total[0],
            ns(cols[3]),
            "{tail}: cum change"
        );
        rows += 1;
    }
    assert!(rows > 100, "{rows} rows compared");
    // And the other way: every function ember sees change is in pprof's list.
    let changed = table
        .rows
        .iter()
        .filter(|r| r.self_w[0] != r.self_w[1] || r.total[0] != r.total[1])
        .count();
    assert_eq!(changed, rows);
}

#[test]
fn different_sampling_rates_are_said() {
    let hz = |period: i64| {
        let mut p = load_bytes(b"main;a 10\n");
        p.meta.period = Some((period, ValueType::new("cpu", Unit::Nanoseconds)));
        p
    };
    let same = diff::merge(hz(10_101_010), hz(10_101_010), &names()).unwrap();
    assert!(same.meta.diff.as_deref().unwrap().cautions.is_empty());
    let p = diff::merge(hz(10_101_010), hz(1_001_001), &names()).unwrap();
    let cautions = &p.meta.diff.as_deref().unwrap().cautions;
    assert_eq!(cautions.len(), 1);
    assert!(
        cautions[0].starts_with("sampling rates differ (99 Hz vs 999 Hz): raw counts"),
        "{cautions:?}"
    );
}

#[test]
fn swapping_sides_in_place_equals_building_the_other_side() {
    let pprof = |n: &str| load_path(&common::repo().join("tests/fixtures").join(n)).unwrap();
    for p in [
        merged(BEFORE, AFTER),
        diff::merge(
            pprof("go-diff-before.pb.gz"),
            pprof("go-diff-after.pb.gz"),
            &names(),
        )
        .unwrap(),
    ] {
        let mut swapped = tree(&p, 1);
        assert!(swapped.swap_sides(&p));
        let built = tree(&p, 0);
        assert_eq!(swapped.options.value, 0);
        let all = common::all_nodes(&built);
        assert_eq!(common::all_nodes(&swapped), all);
        for n in all {
            assert_eq!(swapped.total(n), built.total(n));
            assert_eq!(swapped.self_weight(n), built.self_weight(n));
            assert!(swapped.child_ids(n).eq(built.child_ids(n)));
            assert_eq!(swapped.pair(n), built.pair(n));
            assert_eq!(swapped.pair_self(n), built.pair_self(n));
            assert_eq!(swapped.samples(n), built.samples(n));
        }
        // Not a diff side: nothing to swap.
        let plain = load_bytes(b"a;b 1\n");
        assert!(!tree(&plain, 0).swap_sides(&plain));
    }
}

/// The delta table's per-side numbers are each side's own function table
/// (recursion counted once per stack), on fixtures with recursion and on the
/// bundled samples compared with each other.
#[test]
fn the_delta_table_agrees_with_each_sides_function_table() {
    let fx = |n: &str| load_path(&common::repo().join(n)).unwrap();
    let pairs = [
        (
            "tests/fixtures/recursion.folded",
            "tests/fixtures/shared-callees.folded",
        ),
        (
            "samples/perf-python-wordindex.folded",
            "samples/pyspy-orders-report.folded",
        ),
        (
            "tests/fixtures/go-diff-before.pb.gz",
            "tests/fixtures/go-diff-after.pb.gz",
        ),
    ];
    for (b, a) in pairs {
        let p = diff::merge(fx(b), fx(a), &names()).unwrap();
        let table = DeltaTable::build(&p, None).unwrap();
        let meta = p.meta.diff.as_deref().unwrap();
        for side in 0..2 {
            let t = CallTree::build(
                &p,
                TreeOptions {
                    value: meta.sides[side].value,
                    one_side: true,
                    ..TreeOptions::default()
                },
            );
            let top = ember::model::TopTable::build(&p, &t);
            assert_eq!(table.totals[side], top.total, "{b} vs {a}");
            for r in &top.rows {
                let d = table
                    .rows
                    .iter()
                    .find(|d| d.frame == r.frame)
                    .unwrap_or_else(|| panic!("{b} vs {a}: a row for every function"));
                assert_eq!(d.self_w[side], r.self_weight, "{b} vs {a} self");
                assert_eq!(d.total[side], r.total, "{b} vs {a} total");
            }
            let present = table.rows.iter().filter(|d| d.total[side] != 0).count();
            assert_eq!(present, top.rows.iter().filter(|r| r.total != 0).count());
        }
    }
}

#[test]
fn widths_from_the_larger_side_cover_both_and_keep_the_real_numbers() {
    let p = merged(BEFORE, AFTER); // before 105 samples, after 160
    let after = tree(&p, 1);
    let larger = CallTree::build(
        &p,
        TreeOptions {
            value: 1,
            larger: true,
            ..TreeOptions::default()
        },
    );
    assert!(larger.options.larger);
    let k = 160.0 / 105.0;
    let nodes = common::all_nodes(&larger);
    // Frames of either side are in it: old (before only) and new (after only).
    assert!(node_at(&p, &larger, &["main", "old"]).is_some());
    assert!(node_at(&p, &larger, &["main", "new"]).is_some());
    for &n in &nodes {
        let real = larger.pair(n).unwrap();
        assert_eq!(Some(real), after.pair(n), "the sides' numbers stay theirs");
        assert_eq!(larger.pair_self(n), after.pair_self(n));
        let own = larger.self_weight(n);
        let s = real;
        let sp = larger.pair_self(n).unwrap();
        assert_eq!(
            own,
            sp.total[1].max((sp.total[0] as f64 * k).round() as i64),
            "self is the larger share in after's units"
        );
        assert!(larger.total(n) >= s.total[1]);
        assert!(larger.total(n) as f64 >= (s.total[0] as f64 * k).floor());
    }
    // The table of a larger tree is the sides' table.
    assert_eq!(
        DeltaTable::from_tree(&p, &larger).unwrap().rows.len(),
        DeltaTable::from_tree(&p, &after).unwrap().rows.len()
    );
    // Not a side: nothing to swap.
    let mut l = larger;
    assert!(!l.swap_sides(&p));
}

/// The table the viewer builds from the samples (on its job thread) is the
/// one read off the shown tree: every row's numbers, the totals, over all
/// samples and over a sample range.
#[test]
fn the_delta_table_from_the_samples_equals_the_one_from_the_tree() {
    let fx = |n: &str| load_path(&common::repo().join(n)).unwrap();
    let pairs = [
        (
            "tests/fixtures/recursion.folded",
            "tests/fixtures/shared-callees.folded",
        ),
        (
            "samples/perf-python-wordindex.folded",
            "samples/pyspy-orders-report.folded",
        ),
        (
            "tests/fixtures/go-diff-before.pb.gz",
            "tests/fixtures/go-diff-after.pb.gz",
        ),
    ];
    let close = |a: [f64; 2], b: [f64; 2]| {
        (0..2).all(|s| (a[s] - b[s]).abs() <= 1e-9 * b[s].abs().max(1.0))
    };
    for (b, a) in pairs {
        let p = diff::merge(fx(b), fx(a), &names()).unwrap();
        let n = p.samples.len();
        for range in [None, Some(n / 3..n)] {
            let meta = p.meta.diff.as_deref().unwrap();
            let t = CallTree::build(
                &p,
                TreeOptions {
                    value: meta.sides[1].value,
                    samples: range.clone(),
                    ..TreeOptions::default()
                },
            );
            let mut want = DeltaTable::from_tree(&p, &t).unwrap();
            let mut got = DeltaTable::from_samples(&p, range.clone()).unwrap();
            assert!(!want.rows.is_empty());
            assert_eq!(got.totals, want.totals, "{b} vs {a} {range:?}");
            assert!(close(got.sample_totals, want.sample_totals));
            want.rows.sort_by_key(|r| r.frame);
            got.rows.sort_by_key(|r| r.frame);
            assert_eq!(got.rows.len(), want.rows.len(), "{b} vs {a} {range:?}");
            for (g, w) in got.rows.iter().zip(&want.rows) {
                assert_eq!((g.frame, g.self_w, g.total), (w.frame, w.self_w, w.total));
                assert!(close(g.self_samples, w.self_samples), "{g:?} vs {w:?}");
                assert!(close(g.total_samples, w.total_samples), "{g:?} vs {w:?}");
            }
        }
    }
}

/// Sides that share no function get a caution saying so; sides that share
/// little (30% of after's samples in functions before has) get the share;
/// sides that share most get neither.
#[test]
fn sides_that_share_no_or_few_functions_are_cautioned() {
    let cautions = |b: &str, a: &str| merged(b, a).meta.diff.unwrap().cautions;
    let none = cautions(
        "py;run;parse 50\npy;run;lex 50\n",
        "main.main;main.work 100\n",
    );
    assert_eq!(none.len(), 1, "{none:?}");
    assert!(none[0].contains("share no function"), "{none:?}");
    let few = cautions(
        "main;a 50\nmain;b 50\n",
        "main;a 30\nother;x 40\nother;y 30\n",
    );
    assert_eq!(few.len(), 1, "{few:?}");
    assert!(
        few[0].starts_with("only 30% of after's total is in functions before also has"),
        "{few:?}"
    );
    let most = cautions("main;a 50\nmain;b 50\n", "main;a 70\nmain;c 30\n");
    assert!(most.is_empty(), "{most:?}");
}
