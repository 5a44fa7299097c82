use super::*;
use crate::model::testing::{folded_by, stack_names};

/// `a;b;c value` lines of the first value, zero sums left out.
fn folded(p: &Profile) -> Vec<String> {
    folded_by(p, "<none>", true, |v| v[0])
}

fn cpu(text: &str) -> Profile {
    parse_cpuprofile(text.as_bytes(), &Progress::default()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn trace(text: &str) -> Profile {
    parse_trace(text.as_bytes(), &Progress::default()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn node(id: u32, name: &str, children: &[u32]) -> String {
    format!(
        r#"{{"id": {id}, "callFrame": {{"functionName": "{name}", "url": "file:///x/app.js", "lineNumber": {id}, "columnNumber": 0}}, "children": {children:?}}}"#
    )
}

#[test]
fn weighs_each_sample_by_the_time_to_the_next() {
    let nodes = [
        node(1, "(root)", &[2, 5]),
        node(2, "main", &[3, 4]),
        node(3, "work", &[]),
        node(4, "(garbage collector)", &[]),
        node(5, "(idle)", &[]),
    ]
    .join(",");
    let p = cpu(&format!(
        r#"{{"nodes": [{nodes}], "startTime": 1000, "endTime": 2000, "samples": [3, 3, 4, 2, 5, 3], "timeDeltas": [5, 10, 20, 40, 80, 160]}}"#
    ));
    // GC sits on top of main;work, the sample before it; the last sample weighs 0.
    assert_eq!(
        folded(&p),
        [
            "(idle) 160",
            "main 80",
            "main;work 30",
            "main;work;(garbage collector) 40"
        ]
    );
    assert_eq!(p.value_types[0].unit, Unit::Microseconds);
    assert_eq!(p.samples.time.as_deref().map(|t| t[0]), Some(1_005_000));
    assert_eq!(p.meta.duration_ns, Some(1_000_000));
    assert_eq!(p.total(1), 6);
    let work = p.frames.get(b"work").unwrap_or(FrameId(0));
    assert_eq!(p.frame_meta[&work].line, Some(4));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn bad_ids_and_cycles_warn() {
    let p = cpu(
        r#"{"nodes": [{"id": 1, "callFrame": {"functionName": "a"}, "children": [2, 9]},
            {"id": 2, "callFrame": {"functionName": "b"}, "children": [1]}],
            "samples": [2, 7, 1], "timeDeltas": [1, 2]}"#,
    );
    assert!(p.warnings.count >= 3, "{:?}", p.warnings);
    assert_eq!(p.samples.len(), 3);
}

#[test]
fn reads_the_old_nested_format() {
    let p = cpu(
        r#"{"head": {"functionName": "(root)", "id": 1, "url": "", "lineNumber": 0, "hitCount": 0,
              "children": [{"functionName": "", "id": 2, "url": "", "lineNumber": 0, "hitCount": 1, "children": []}]},
            "startTime": 1, "endTime": 2, "samples": [2, 2], "timestamps": [1000010, 1000030]}"#,
    );
    assert_eq!(folded(&p), ["(anonymous) 20"]);
}

#[test]
fn reads_profile_chunks_per_id() {
    let p = trace(
        r#"{"traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "CrRendererMain"}},
            {"ph": "P", "name": "Profile", "id": "0x1", "pid": 1, "tid": 2, "ts": 10, "args": {"data": {"startTime": 100}}},
            {"ph": "P", "name": "ProfileChunk", "id": "0x1", "pid": 1, "tid": 2, "ts": 11, "args": {"data": {
                "cpuProfile": {"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}},
                    {"id": 2, "parent": 1, "callFrame": {"functionName": "f", "url": "a.js", "lineNumber": 0}}],
                  "samples": [2, 2]}, "timeDeltas": [1, 7]}}},
            {"ph": "P", "name": "ProfileChunk", "id": "0x1", "pid": 1, "tid": 2, "ts": 12, "args": {"data": {
                "cpuProfile": {"samples": [1, 2]}, "timeDeltas": [3, 5]}}}]}"#,
    );
    assert_eq!(folded(&p), ["<none> 5", "f 10"]);
    assert_eq!(p.threads[0].name, "CrRendererMain");
    assert_eq!(p.threads[0].tid, Some(2));
}

#[test]
fn duration_events_nest_and_recover_a_missing_bracket() {
    let p = trace(
        r#"[
            {"pid": 0, "tid": 0, "ph": "B", "name": "alpha", "ts": 0},
            {"pid": 0, "tid": 0, "ph": "B", "name": "beta", "ts": 1},
            {"pid": 0, "tid": 0, "ph": "X", "name": "gamma", "ts": 2, "dur": 5},
            {"pid": 0, "tid": 0, "ph": "E", "name": "beta", "ts": 13},
            {"pid": 0, "tid": 0, "ph": "E", "name": "alpha", "ts": 14},
            {"pid": 1, "tid": 0, "ph": "X", "name": "other", "ts": 0, "dur": 3},
            "#,
    );
    assert_eq!(
        folded(&p),
        ["alpha 2", "alpha;beta 7", "alpha;beta;gamma 5", "other 3"]
    );
    assert_eq!(p.threads.len(), 2);
    assert!(
        p.notes.iter().any(|n| n.contains("closing")),
        "{:?}",
        p.notes
    );
}

/// speedscope's algorithm as written (prevStack + indexOf), for comparison.
fn reference_stacks(
    names: &[&str],
    parent: &[Option<usize>],
    samples: &[usize],
) -> Vec<Vec<String>> {
    let on_top = |n: usize| matches!(names[n], "(program)" | "(garbage collector)");
    let ignored = |n: usize| matches!(names[n], "(root)" | "(idle)");
    let mut prev: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for &top in samples {
        let next = |n: usize, prev: &Vec<usize>| {
            if on_top(n) {
                prev.last().copied()
            } else {
                parent[n]
            }
        };
        let mut lca = Some(top);
        while let Some(l) = lca {
            if prev.contains(&l) {
                break;
            }
            lca = next(l, &prev);
        }
        while prev.last().is_some() && prev.last().copied() != lca {
            prev.pop();
        }
        let mut to_open = Vec::new();
        let mut node = Some(top);
        while let Some(n) = node {
            if Some(n) == lca || ignored(n) {
                break;
            }
            to_open.push(n);
            node = next(n, &prev);
        }
        prev.extend(to_open.into_iter().rev());
        let mut stack: Vec<String> = prev.iter().map(|&n| names[n].to_string()).collect();
        if names[top] == "(idle)" {
            stack = vec!["(idle)".into()];
        }
        out.push(stack);
    }
    out
}

#[test]
fn stacks_match_speedscope_walk_on_random_trees() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for _ in 0..30 {
        let count = 2 + rand(40);
        let mut names = vec!["(root)".to_string()];
        let mut parent = vec![None];
        for i in 1..count {
            let p = rand(i);
            let name = match rand(12) {
                0 => "(garbage collector)".to_string(),
                1 => "(program)".to_string(),
                2 => "(idle)".to_string(),
                _ => format!("f{}", rand(8)),
            };
            names.push(name);
            parent.push(Some(p));
        }
        let samples: Vec<usize> = (0..200).map(|_| rand(count)).collect();
        let nodes: Vec<String> = (0..count)
            .map(|i| {
                let p = parent[i].map_or(String::new(), |p| format!(r#","parent":{}"#, p + 1));
                format!(
                    r#"{{"id":{},"callFrame":{{"functionName":"{}"}}{p}}}"#,
                    i + 1,
                    names[i]
                )
            })
            .collect();
        let ids: Vec<String> = samples.iter().map(|s| (s + 1).to_string()).collect();
        let p = cpu(&format!(
            r#"{{"nodes":[{}],"samples":[{}],"timeDeltas":[{}]}}"#,
            nodes.join(","),
            ids.join(","),
            vec!["1"; samples.len()].join(",")
        ));
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let want = reference_stacks(&refs, &parent, &samples);
        for (i, w) in want.iter().enumerate() {
            let got = stack_names(&p, i);
            assert_eq!(
                &got, w,
                "sample {i} of {samples:?} in {names:?} / {parent:?}"
            );
        }
    }
}

#[test]
fn deep_trees_and_deep_json_are_handled_without_recursion() {
    const DEPTH: u32 = 100_000;
    let nodes: Vec<String> = (1..=DEPTH)
        .map(|i| {
            let children = if i < DEPTH {
                format!("[{}]", i + 1)
            } else {
                "[]".into()
            };
            format!(r#"{{"id":{i},"callFrame":{{"functionName":"f{i}"}},"children":{children}}}"#)
        })
        .collect();
    let text = format!(
        r#"{{"nodes":[{}],"samples":[{DEPTH},2,{DEPTH},1],"timeDeltas":[1,1,1,1]}}"#,
        nodes.join(",")
    );
    let p = cpu(&text);
    let deepest = p.samples.stack_of(0).map(|s| p.stacks.path(s).len());
    assert_eq!(deepest, Some(DEPTH as usize));
    // A parent cycle through every node is cut, not followed forever.
    let cyclic = text.replace(r#""children":[]"#, r#""children":[1]"#);
    assert!(cpu(&cyclic).warnings.count > 0);
    let mut events = String::from("[");
    for i in 0..DEPTH {
        events.push_str(&format!(
            r#"{{"ph":"B","name":"b{i}","ts":{i},"pid":1,"tid":1}},"#
        ));
    }
    events.push_str(&format!(
        r#"{{"ph":"E","name":"b{}","ts":{DEPTH},"pid":1,"tid":1}}]"#,
        DEPTH - 1
    ));
    assert!(trace(&events).samples.len() >= DEPTH as usize - 1);
    let nested = "[".repeat(200_000);
    for parse in [parse_cpuprofile, parse_trace] {
        assert!(matches!(
            parse(nested.as_bytes(), &Progress::default()),
            Err(ParseError::Invalid { .. })
        ));
    }
}

#[test]
fn cancelled_loads_stop() {
    let progress = Progress::default();
    progress.cancel();
    let text = br#"{"nodes": [], "samples": [], "timeDeltas": []}"#;
    assert!(matches!(
        parse_cpuprofile(&text[..], &progress),
        Err(ParseError::Cancelled)
    ));
    assert!(matches!(
        parse_trace(&b"[]"[..], &progress),
        Err(ParseError::Cancelled)
    ));
}

#[test]
fn probes_tell_the_json_formats_apart() {
    let cpuprofile = br#"{"nodes": [{"id": 1}], "startTime": 1, "samples": []}"#;
    let trace_array = br#"[{"pid": 1, "ph": "X", "ts": 1}]"#;
    let trace_obj = br#"{"traceEvents": [{"pid": 1, "ph": "X"}]}"#;
    assert_eq!(probe_cpuprofile(cpuprofile, true), Some(true));
    assert_eq!(probe_trace(cpuprofile, true), Some(false));
    assert_eq!(probe_trace(trace_array, true), Some(true));
    assert_eq!(probe_trace(trace_obj, true), Some(true));
    assert_eq!(probe_cpuprofile(trace_obj, true), Some(false));
    assert_eq!(
        probe_cpuprofile(br#"{"head": {"selfSize": 1}, "samples": []}"#, true),
        Some(false)
    );
    for other in [
        &b"a;b 3\n"[..],
        b"perf 123 [000] 1.0: cpu-clock:\n",
        b"\x1f\x8b\x08",
    ] {
        assert_eq!(probe_cpuprofile(other, true), Some(false));
        assert_eq!(probe_trace(other, true), Some(false));
    }
}

#[test]
fn samples_on_the_root_node_are_counted() {
    let nodes = [node(1, "(root)", &[2]), node(2, "main", &[])].join(",");
    let p = cpu(&format!(
        r#"{{"nodes": [{nodes}], "startTime": 0, "endTime": 100, "samples": [2, 1, 2], "timeDeltas": [10, 10, 10]}}"#
    ));
    // Three samples, whatever their stack: the one on the root counts too.
    assert_eq!(p.samples.len(), 3, "{:?}", folded(&p));
    let total: i64 = p.total(0);
    assert_eq!(total, 20, "{:?}", folded(&p));
}
