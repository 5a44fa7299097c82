use super::*;
use crate::model::ValueType;
use crate::model::testing::folded_by;

fn profile(lines: &[&str]) -> Profile {
    crate::model::testing::profile_from_lines(lines)
}

/// The profile as sorted "a;b;c weight" lines, summing samples per stack; the
/// empty stack prints as "-".
fn folded(p: &Profile) -> Vec<String> {
    folded_by(p, "-", false, |v| v[p.default_value])
}

fn run(p: &Profile, t: Transform) -> Profile {
    match apply(p, &t) {
        Ok(out) => out,
        Err(e) => panic!("{t}: {e}"),
    }
}

fn pattern(kind: fn(String) -> Transform, re: &str) -> Transform {
    kind(re.to_string())
}

fn focus_on(re: &str) -> Transform {
    pattern(|pattern| Transform::Focus { pattern }, re)
}

fn drop_on(re: &str) -> Transform {
    pattern(|pattern| Transform::Drop { pattern }, re)
}

fn merge_on(re: &str) -> Transform {
    pattern(|pattern| Transform::Merge { pattern }, re)
}

fn hide_at(path: &[&str]) -> Transform {
    Transform::Hide {
        path: path.iter().map(|s| s.to_string()).collect(),
    }
}

/// Recursion, a callee shared by several callers, a function at several depths.
fn sample() -> Profile {
    profile(&[
        "main;parse;lex 5",
        "main;parse;malloc 2",
        "main;run;eval;eval;eval;malloc 3",
        "main;run;eval 4",
        "main;run;eval;print;eval 1",
        "main;malloc 1",
        "main 2",
        "gc;mark 6",
        " 7",
    ])
}

fn lines(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn the_helper_prints_what_was_built() {
    let p = sample();
    assert_eq!(p.total(0), 31);
    assert_eq!(
        folded(&p),
        lines(&[
            "- 7",
            "gc;mark 6",
            "main 2",
            "main;malloc 1",
            "main;parse;lex 5",
            "main;parse;malloc 2",
            "main;run;eval 4",
            "main;run;eval;eval;eval;malloc 3",
            "main;run;eval;print;eval 1",
        ])
    );
}

#[test]
fn focus_re_roots_at_the_outermost_match() {
    let p = sample();
    let out = run(&p, focus_on("^eval$"));
    assert_eq!(
        folded(&out),
        lines(&["eval 4", "eval;eval;eval;malloc 3", "eval;print;eval 1"])
    );
    assert_eq!(out.total(0), 8);
    // Focus on a function at several depths merges its subtrees.
    let out = run(&p, focus_on("malloc"));
    assert_eq!(folded(&out), lines(&["malloc 6"]));
    assert_eq!(out.total(0), 6);
}

#[test]
fn focus_matches_any_part_of_the_name() {
    let out = run(&sample(), focus_on("ar"));
    assert_eq!(
        folded(&out),
        lines(&["parse;lex 5", "parse;malloc 2", "mark 6"])
    );
}

#[test]
fn drop_removes_samples_through_a_match() {
    let p = sample();
    let out = run(&p, drop_on("^eval$"));
    assert_eq!(
        folded(&out),
        lines(&[
            "- 7",
            "gc;mark 6",
            "main 2",
            "main;malloc 1",
            "main;parse;lex 5",
            "main;parse;malloc 2",
        ])
    );
    assert_eq!(out.total(0), p.total(0) - 8);
    let out = run(&p, drop_on("malloc"));
    assert_eq!(out.total(0), p.total(0) - 6);
    // The samples that are kept keep their order and values.
    assert_eq!(out.samples.values, vec![5, 4, 1, 2, 6, 7]);
}

#[test]
fn focus_and_drop_partition_the_samples() {
    let p = sample();
    for re in ["eval", "malloc", "main", "^gc$", "x"] {
        let kept = run(&p, focus_on(re)).total(0);
        let rest = run(&p, drop_on(re)).total(0);
        assert_eq!(kept + rest, p.total(0), "{re}");
    }
}

#[test]
fn merge_gives_self_and_callees_to_the_caller() {
    let p = sample();
    let out = run(&p, merge_on("^eval$"));
    assert_eq!(
        folded(&out),
        lines(&[
            "- 7",
            "gc;mark 6",
            "main 2",
            "main;malloc 1",
            "main;parse;lex 5",
            "main;parse;malloc 2",
            "main;run 4",
            "main;run;malloc 3",
            "main;run;print 1",
        ])
    );
    assert_eq!(out.total(0), p.total(0));
    // A merged root frame gives its self weight to the empty stack.
    let out = run(&p, merge_on("^main$"));
    assert_eq!(
        folded(&out),
        lines(&[
            "- 9",
            "gc;mark 6",
            "malloc 1",
            "parse;lex 5",
            "parse;malloc 2",
            "run;eval 4",
            "run;eval;eval;eval;malloc 3",
            "run;eval;print;eval 1",
        ])
    );
    assert_eq!(out.total(0), p.total(0));
}

#[test]
fn merging_consecutive_frames_merges_them_all() {
    let p = profile(&["a;x;y;b 1", "a;x;y 2", "a;b 3"]);
    let out = run(&p, merge_on("^[xy]$"));
    assert_eq!(folded(&out), lines(&["a 2", "a;b 4"]));
}

#[test]
fn hide_merges_one_node_only() {
    let p = sample();
    let out = run(&p, hide_at(&["main", "run", "eval"]));
    assert_eq!(
        folded(&out),
        lines(&[
            "- 7",
            "gc;mark 6",
            "main 2",
            "main;malloc 1",
            "main;parse;lex 5",
            "main;parse;malloc 2",
            "main;run 4",
            // Only the outer eval is hidden; the recursive ones stay.
            "main;run;eval;eval;malloc 3",
            "main;run;print;eval 1",
        ])
    );
    assert_eq!(out.total(0), p.total(0));
    // Only this malloc node, not the one under parse.
    let out = run(&p, hide_at(&["main", "malloc"]));
    assert!(folded(&out).contains(&"main 3".to_string()));
    assert!(folded(&out).contains(&"main;parse;malloc 2".to_string()));
    // Hiding a root frame.
    let out = run(&p, hide_at(&["gc"]));
    assert!(folded(&out).contains(&"mark 6".to_string()));
    assert_eq!(out.total(0), p.total(0));
}

#[test]
fn hide_of_a_missing_path_changes_nothing() {
    let p = sample();
    for path in [
        &["main", "nope"][..],
        &["run"],
        &["main", "run", "eval", "x"],
    ] {
        assert_eq!(folded(&run(&p, hide_at(path))), folded(&p), "{path:?}");
    }
    assert_eq!(
        apply(&p, &hide_at(&[])).err(),
        Some(TransformError::EmptyPath)
    );
}

#[test]
fn collapse_direct_recursion() {
    let p = sample();
    let out = run(&p, Transform::CollapseRecursion { indirect: false });
    assert_eq!(
        folded(&out),
        lines(&[
            "- 7",
            "gc;mark 6",
            "main 2",
            "main;malloc 1",
            "main;parse;lex 5",
            "main;parse;malloc 2",
            "main;run;eval 4",
            "main;run;eval;malloc 3",
            // Indirect recursion stays.
            "main;run;eval;print;eval 1",
        ])
    );
    assert_eq!(out.total(0), p.total(0));
    let p = profile(&["a;a;a;b 1", "a;a 2", "a;b;b;a;a 3"]);
    let out = run(&p, Transform::CollapseRecursion { indirect: false });
    assert_eq!(folded(&out), lines(&["a 2", "a;b 1", "a;b;a 3"]));
}

#[test]
fn collapse_indirect_recursion() {
    let p = sample();
    let out = run(&p, Transform::CollapseRecursion { indirect: true });
    assert_eq!(
        folded(&out),
        lines(&[
            "- 7",
            "gc;mark 6",
            "main 2",
            "main;malloc 1",
            "main;parse;lex 5",
            "main;parse;malloc 2",
            "main;run;eval 5",
            "main;run;eval;malloc 3",
        ])
    );
    assert_eq!(out.total(0), p.total(0));
    let p = profile(&[
        "a;b;a;c 1",
        "a;b;a 2",
        "a;b;c;b;d 4",
        "a;b;c;b 8",
        "x;f;x;f 16",
        "x;f;x;g;f;h 32",
        "a;a;b;b;a 64",
    ]);
    let out = run(&p, Transform::CollapseRecursion { indirect: true });
    assert_eq!(
        folded(&out),
        lines(&["a 66", "a;b 8", "a;b;d 4", "a;c 1", "x;f 16", "x;g;f;h 32",])
    );
    assert_eq!(out.total(0), p.total(0));
}

#[test]
fn collapse_indirect_restores_the_path_between_siblings() {
    // Siblings that collapse (a;b;c;a) and that push (a;b;c;d) under one node,
    // with deeper frames below each: the state must be undone between them.
    let p = profile(&[
        "a;b;c;a;e 1",
        "a;b;c;d;b;e 2",
        "a;b;c;a;b;c 4",
        "a;b;c;e;a 8",
        "a;b;c 16",
    ]);
    let out = run(&p, Transform::CollapseRecursion { indirect: true });
    assert_eq!(
        folded(&out),
        lines(&["a 8", "a;b;c 20", "a;b;e 2", "a;e 1"])
    );
}

#[test]
fn collapse_indirect_undoes_each_subtree() {
    // The depth-first walk visits a node's children from the highest stack id
    // down, so the first line of each pair is walked after the second one has
    // changed (and must have restored) the collapsed path.
    let collapse = |lines: &[&str]| {
        folded(&run(
            &profile(lines),
            Transform::CollapseRecursion { indirect: true },
        ))
    };
    // `a;b;c;a;d` returns to depth 0 and pushes d where b was.
    assert_eq!(
        collapse(&["a;b;c;b 1", "a;b;c;a;d 2"]),
        lines(&["a;b 1", "a;d 2"])
    );
    // `x;y;f;x;g;f` opens f again at another place.
    assert_eq!(
        collapse(&["x;y;f;z;f 1", "x;y;f;x;g;f 2"]),
        lines(&["x;g;f 2", "x;y;f 1"])
    );
}

#[test]
fn min_width_cuts_narrow_nodes_into_their_parent() {
    let p = sample();
    // 31 in all: 10% is 3.1, so nodes of 3 or less are cut.
    let out = run(&p, Transform::MinWidth { percent: 10.0 });
    assert_eq!(
        folded(&out),
        lines(&[
            "- 7",
            "gc;mark 6",
            "main 3",
            "main;parse 2",
            "main;parse;lex 5",
            "main;run;eval 8",
        ])
    );
    assert_eq!(out.total(0), p.total(0));
    // A narrow root frame goes to the empty stack.
    let out = run(&p, Transform::MinWidth { percent: 50.0 });
    assert_eq!(folded(&out), lines(&["- 13", "main 18"]));
    assert_eq!(out.total(0), p.total(0));
    // Zero percent keeps everything.
    let out = run(&p, Transform::MinWidth { percent: 0.0 });
    assert_eq!(folded(&out), folded(&p));
}

#[test]
fn min_width_rejects_what_is_not_a_percentage() {
    let p = sample();
    for percent in [-1.0, 101.0, f64::NAN] {
        let err = apply(&p, &Transform::MinWidth { percent });
        assert!(
            matches!(err, Err(TransformError::BadPercent { .. })),
            "{percent}"
        );
    }
}

#[test]
fn a_bad_pattern_is_an_error() {
    let p = sample();
    for t in [focus_on("(unclosed"), drop_on("[z-a]"), merge_on("*")] {
        let Err(TransformError::BadPattern { pattern, reason }) = apply(&p, &t) else {
            panic!("{t} should fail");
        };
        assert!(!pattern.is_empty());
        assert!(!reason.is_empty() && !reason.contains('\n'), "{reason}");
    }
    let err = apply(&p, &focus_on("(x")).err().map(|e| e.to_string());
    assert_eq!(err.as_deref(), Some("bad pattern \"(x\": unclosed group"));
}

#[test]
fn no_matching_frame_changes_nothing() {
    let p = sample();
    for t in [
        drop_on("^nothing$"),
        merge_on("^nothing$"),
        Transform::CollapseRecursion { indirect: false },
    ] {
        let q = profile(&["a;b 1", "c 2", " 3"]);
        assert_eq!(folded(&run(&q, t.clone())), folded(&q), "{t}");
    }
    assert_eq!(folded(&run(&p, drop_on("^nothing$"))), folded(&p));
    assert_eq!(run(&p, focus_on("^nothing$")).samples.len(), 0);
    // Focus on every root frame is the identity, less the empty stacks.
    let out = run(&p, focus_on("^(main|gc)$"));
    assert_eq!(out.total(0), p.total(0) - 7);
}

#[test]
fn dropping_samples_keeps_every_column_in_step() {
    let mut p = Profile::new(
        "test",
        vec![
            ValueType::samples(),
            ValueType::new("bytes", crate::model::Unit::Bytes),
        ],
    );
    let a = p.intern_path([&b"main"[..], b"a"]);
    let b = p.intern_path([&b"main"[..], b"b"]);
    for i in 0..6i64 {
        p.push_sample(if i % 2 == 0 { a } else { b }, &[i, 10 * i]);
    }
    p.samples.time = Some(vec![100, 101, 102, 103, 104, 105]);
    p.samples.thread = Some(vec![0, 1, 2, 3, 4, 5]);
    p.samples.cpu = Some(vec![7, 6, 5, 4, 3, 2]);
    p.samples.labels = Some(vec![9, 8, 7, 6, 5, 4]);
    p.default_value = 1;
    p.notes.push("a note".into());
    let out = run(&p, drop_on("^b$"));
    assert_eq!(out.samples.len(), 3);
    assert_eq!(out.samples.values, vec![0, 0, 2, 20, 4, 40]);
    assert_eq!(out.samples.time, Some(vec![100, 102, 104]));
    assert_eq!(out.samples.thread, Some(vec![0, 2, 4]));
    assert_eq!(out.samples.cpu, Some(vec![7, 5, 3]));
    assert_eq!(out.samples.labels, Some(vec![9, 7, 5]));
    assert_eq!(out.default_value, 1);
    assert_eq!(out.notes, p.notes);
    assert_eq!(out.value_types, p.value_types);
    // Focus keeps the other half.
    let out = run(&p, focus_on("^b$"));
    assert_eq!(out.samples.time, Some(vec![101, 103, 105]));
    assert_eq!(folded(&out), lines(&["b 90"]));
    // Nothing dropped: columns carried over as they were.
    let out = run(&p, merge_on("main"));
    assert_eq!(out.samples.cpu, p.samples.cpu);
    assert_eq!(out.samples.values, p.samples.values);
}

#[test]
fn min_width_uses_the_default_value() {
    let mut p = Profile::new("test", vec![ValueType::samples(), ValueType::samples()]);
    let a = p.intern_path([&b"main"[..], b"a"]);
    let b = p.intern_path([&b"main"[..], b"b"]);
    p.push_sample(a, &[1, 99]);
    p.push_sample(b, &[99, 1]);
    let out = run(&p, Transform::MinWidth { percent: 5.0 });
    assert_eq!(folded(&out), lines(&["main 1", "main;b 99"]));
    p.default_value = 1;
    let out = run(&p, Transform::MinWidth { percent: 5.0 });
    assert_eq!(folded(&out), lines(&["main 1", "main;a 99"]));
}

#[test]
fn transforms_chain_in_order() {
    let p = sample();
    let ts = [
        drop_on("^gc$"),
        merge_on("^run$"),
        Transform::CollapseRecursion { indirect: false },
        focus_on("^main$"),
    ];
    let out = match apply_all(&p, &ts) {
        Ok(out) => out,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(
        folded(&out),
        lines(&[
            "main 2",
            "main;eval 4",
            "main;eval;malloc 3",
            "main;eval;print;eval 1",
            "main;malloc 1",
            "main;parse;lex 5",
            "main;parse;malloc 2",
        ])
    );
    let out = apply_all(&p, &[]).map(|o| folded(&o));
    assert_eq!(out.ok(), Some(folded(&p)));
    // The first bad transform stops the chain.
    assert!(apply_all(&p, &[drop_on("x"), focus_on("(")]).is_err());
}

#[test]
fn describes_itself_for_a_breadcrumb() {
    assert_eq!(focus_on("main").describe(), "focus: main");
    assert_eq!(drop_on("^runtime\\.").describe(), "drop: ^runtime\\.");
    assert_eq!(hide_at(&["main", "malloc"]).describe(), "hide: malloc");
    assert_eq!(merge_on("fmt::write").describe(), "merge: fmt::write");
    assert_eq!(
        Transform::CollapseRecursion { indirect: false }.describe(),
        "collapse recursion"
    );
    assert_eq!(
        Transform::CollapseRecursion { indirect: true }.to_string(),
        "collapse indirect recursion"
    );
    assert_eq!(
        Transform::MinWidth { percent: 0.5 }.describe(),
        "min width 0.5%"
    );
    assert_eq!(
        Transform::MinWidth { percent: 1.0 }.describe(),
        "min width 1%"
    );
}

#[test]
fn invalid_utf8_names_match_as_replaced_text() {
    let mut p = Profile::new("test", vec![ValueType::samples()]);
    let s = p.intern_path([&b"main"[..], b"caf\xe9"]);
    p.push_sample(s, &[3]);
    let t = p.intern_path([&b"main"[..], b"tea"]);
    p.push_sample(t, &[1]);
    let out = run(&p, drop_on("caf\u{fffd}"));
    assert_eq!(folded(&out), lines(&["main;tea 1"]));
    let out = run(&p, hide_at(&["main", "caf\u{fffd}"]));
    assert_eq!(folded(&out), lines(&["main 3", "main;tea 1"]));
}
