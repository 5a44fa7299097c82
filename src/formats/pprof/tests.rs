use super::convert::object_name;
use super::proto::{Function, Label, Line, Location, Mapping, Sample};
use super::prune::simplify_func;
use super::*;
use crate::model::testing::stack_names;
use crate::model::{FrameId, FrameKind, Unit, ValueType};

/// A builder for small test profiles: strings are interned as they are named.
#[derive(Default)]
struct Build {
    p: proto::Profile,
}

impl Build {
    fn new(types: &[(&str, &str)]) -> Build {
        let mut b = Build::default();
        b.p.string_table.push(Vec::new());
        for (t, u) in types {
            let vt = proto::ValueType {
                r#type: b.s(t),
                unit: b.s(u),
            };
            b.p.sample_type.push(vt);
        }
        b
    }

    fn s(&mut self, text: &str) -> i64 {
        if let Some(i) = self
            .p
            .string_table
            .iter()
            .position(|x| x == text.as_bytes())
        {
            return i as i64;
        }
        self.p.string_table.push(text.as_bytes().to_vec());
        self.p.string_table.len() as i64 - 1
    }

    fn function(&mut self, name: &str, file: &str) -> u64 {
        let id = self.p.function.len() as u64 + 1;
        let f = Function {
            id,
            name: self.s(name),
            system_name: 0,
            filename: self.s(file),
            start_line: 0,
        };
        self.p.function.push(f);
        id
    }

    /// A location with (function, line) pairs, innermost first.
    fn location(&mut self, lines: &[(u64, i64)], mapping: u64, address: u64) -> u64 {
        let id = self.p.location.len() as u64 + 1;
        self.p.location.push(Location {
            id,
            mapping_id: mapping,
            address,
            line: lines
                .iter()
                .map(|&(f, l)| Line {
                    function_id: f,
                    line: l,
                    column: 0,
                })
                .collect(),
            is_folded: false,
        });
        id
    }

    /// A one-line location for a new function `name`.
    fn frame(&mut self, name: &str) -> u64 {
        let f = self.function(name, "x.go");
        self.location(&[(f, 1)], 0, 0)
    }

    fn sample(&mut self, locations: &[u64], values: &[i64]) -> &mut Sample {
        self.p.sample.push(Sample {
            location_id: locations.to_vec(),
            value: values.to_vec(),
            label: Vec::new(),
        });
        let n = self.p.sample.len() - 1;
        &mut self.p.sample[n]
    }

    fn bytes(&self) -> Vec<u8> {
        self.p.encode_to_vec()
    }
}

fn load(bytes: &[u8]) -> Result<Profile, String> {
    parse(bytes, &Progress::default()).map_err(|e| match e {
        ParseError::Invalid { message, .. } => message,
        other => format!("{other:?}"),
    })
}

fn stacks(p: &Profile) -> Vec<(String, Vec<i64>)> {
    let n = p.value_types.len();
    (0..p.samples.len())
        .map(|i| {
            let names = stack_names(p, i).join(";");
            (names, p.samples.values[i * n..(i + 1) * n].to_vec())
        })
        .collect()
}

#[test]
fn reverses_locations_and_inlined_lines_into_root_first_stacks() {
    let mut b = Build::new(&[("samples", "count"), ("cpu", "nanoseconds")]);
    let main = b.function("main", "main.go");
    let outer = b.function("outer", "a.go");
    let inl = b.function("inlined", "b.go");
    let root = b.location(&[(main, 10)], 0, 0);
    // One location: `inlined` (innermost) inlined into `outer`.
    let both = b.location(&[(inl, 3), (outer, 7)], 0, 0);
    b.sample(&[both, root], &[1, 10]);
    b.sample(&[root], &[2, 20]);
    let p = load(&b.bytes()).unwrap_or_default();
    assert_eq!(
        stacks(&p),
        [
            ("main;outer;inlined".to_string(), vec![1, 10]),
            ("main".to_string(), vec![2, 20]),
        ]
    );
    assert_eq!(p.default_value, 1, "the last sample type");
    assert_eq!(p.value_types[1].unit, Unit::Nanoseconds);
    assert_eq!(p.value_types[0].kind, "samples");
    let inlined = p.frames.get(b"inlined").unwrap_or(FrameId(0));
    let meta = p.frame_meta.get(&inlined).cloned().unwrap_or_default();
    assert_eq!(meta.kind, FrameKind::Inlined);
    assert_eq!(meta.file.as_deref(), Some("b.go"));
    assert_eq!(meta.line, Some(3));
    let outer = p.frames.get(b"outer").unwrap_or(FrameId(0));
    assert_eq!(
        p.frame_meta.get(&outer).map(|m| m.kind),
        Some(FrameKind::Normal)
    );
}

#[test]
fn default_sample_type_wins_over_the_last() {
    let mut b = Build::new(&[("alloc_space", "bytes"), ("inuse_space", "bytes")]);
    b.p.default_sample_type = b.s("alloc_space");
    let f = b.frame("f");
    b.sample(&[f], &[5, 6]);
    let p = load(&b.bytes()).unwrap_or_default();
    assert_eq!(p.default_value, 0);
    assert_eq!(p.value_types[0].unit, Unit::Bytes);
}

#[test]
fn names_unsymbolized_code_after_its_mapping_like_pprof() {
    let mut b = Build::new(&[("cpu", "nanoseconds")]);
    let file = b.s("/usr/lib/libc-2.31.so");
    b.p.mapping.push(Mapping {
        id: 1,
        filename: file,
        ..Mapping::default()
    });
    b.p.mapping.push(Mapping {
        id: 2,
        ..Mapping::default()
    });
    let a = b.location(&[], 1, 0x1234);
    let c = b.location(&[], 2, 0x99);
    let nameless = b.function("", "");
    let d = b.location(&[(nameless, 0)], 1, 0x55);
    b.sample(&[a, c, d], &[7]);
    let p = load(&b.bytes()).unwrap_or_default();
    assert_eq!(p.warnings.count, 0, "{:?}", p.warnings);
    assert_eq!(stacks(&p)[0].0, "[libc-2.31.so];<unknown>;[libc-2.31.so]");
    assert_eq!(object_name(b"/a/b/"), b"[b]");
    assert_eq!(object_name(b"node"), b"[node]");
}

#[test]
fn bad_ids_become_warnings_not_panics() {
    let mut b = Build::new(&[("samples", "count")]);
    let f = b.frame("f");
    let g = b.location(&[(77, 1)], 9, 0);
    b.sample(&[f, 0x4242], &[1]);
    b.sample(&[g], &[1]);
    b.sample(&[f], &[1, 2]);
    b.p.function[0].name = 1000;
    let p = load(&b.bytes()).unwrap_or_default();
    let st = stacks(&p);
    assert_eq!(st.len(), 2);
    assert_eq!(st[0].0, "[unknown location 0x4242];<unknown>");
    assert_eq!(st[1].0, "<unknown>");
    let text: Vec<&str> = p
        .warnings
        .first
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert!(
        text.iter().any(|w| w.contains("number of values")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|w| w.contains("missing locations")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|w| w.contains("missing function")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|w| w.contains("outside the string table")),
        "{text:?}"
    );
}

#[test]
fn refuses_stacks_far_larger_than_the_input() {
    let mut b = Build::new(&[("samples", "count")]);
    let f = b.function("f", "f.go");
    let lines: Vec<(u64, i64)> = vec![(f, 1); 20_000];
    let deep = b.location(&lines, 0, 0);
    for _ in 0..200 {
        b.sample(&[deep; 400], &[1]);
    }
    let e = load(&b.bytes()).err().unwrap_or_default();
    assert!(e.contains("frames"), "{e}");
}

#[test]
fn keeps_negative_values() {
    let mut b = Build::new(&[("alloc_space", "bytes")]);
    let f = b.frame("f");
    b.sample(&[f], &[-300]);
    b.sample(&[f], &[100]);
    let p = load(&b.bytes()).unwrap_or_default();
    assert_eq!(p.total(0), -200);
}

#[test]
fn labels_become_deduplicated_sets_and_threads() {
    let mut b = Build::new(&[("samples", "count")]);
    let f = b.frame("f");
    let (k_thread, v_main, k_bytes, u_bytes) =
        (b.s("thread"), b.s("main"), b.s("bytes"), b.s("bytes"));
    b.sample(&[f], &[1]);
    b.sample(&[f], &[1]).label = vec![
        Label {
            key: k_thread,
            str: v_main,
            ..Label::default()
        },
        Label {
            key: k_bytes,
            num: 4096,
            num_unit: u_bytes,
            ..Label::default()
        },
    ];
    let again = b.p.sample[1].label.clone();
    b.sample(&[f], &[1]).label = again;
    let p = load(&b.bytes()).unwrap_or_default();
    let column = p.samples.labels.clone().unwrap_or_default();
    assert_eq!(column.len(), 3);
    assert_eq!(column[1], column[2]);
    assert_eq!(
        p.label_sets[column[1] as usize],
        [
            ("bytes".to_string(), "4096 bytes".to_string()),
            ("thread".to_string(), "main".to_string())
        ]
    );
    assert!(p.label_sets[column[0] as usize].is_empty());
    let threads = p.samples.thread.clone().unwrap_or_default();
    assert_eq!(p.threads[threads[1] as usize].name, "main");
    assert_ne!(threads[0], threads[1]);
}

#[test]
fn no_labels_no_column() {
    let mut b = Build::new(&[("samples", "count")]);
    let f = b.frame("f");
    b.sample(&[f], &[1]);
    let p = load(&b.bytes()).unwrap_or_default();
    assert!(p.samples.labels.is_none());
    assert!(p.samples.thread.is_none());
}

#[test]
fn reads_profile_facts() {
    let mut b = Build::new(&[("cpu", "nanoseconds")]);
    b.p.time_nanos = 1_500_000_000_000_000_000;
    b.p.duration_nanos = 2_000_000_000;
    b.p.period = 10_000_000;
    b.p.period_type = Some(proto::ValueType {
        r#type: b.s("cpu"),
        unit: b.s("nanoseconds"),
    });
    b.p.comment = vec![b.s("hello")];
    let f = b.frame("f");
    b.sample(&[f], &[1]);
    let p = load(&b.bytes()).unwrap_or_default();
    assert_eq!(p.meta.start_unix_ns, Some(1_500_000_000_000_000_000));
    assert_eq!(p.meta.duration_ns, Some(2_000_000_000));
    let (period, vt) = p.meta.period.clone().unwrap_or((0, ValueType::samples()));
    assert_eq!((period, vt.kind.as_str()), (10_000_000, "cpu"));
    assert!(p.meta.extra.contains(&("comment".into(), "hello".into())));
}

#[test]
fn empty_and_sampleless_messages_are_invalid() {
    assert!(load(b"").is_err());
    let b = Build::new(&[("samples", "count")]);
    let e = load(&b.bytes()).err().unwrap_or_default();
    assert!(e.contains("no samples"), "{e}");
}

#[test]
fn applies_literal_drop_frames_like_pprof_prune() {
    let mut b = Build::new(&[("samples", "count")]);
    let main = b.frame("main");
    let work = b.frame("work");
    let handler = b.frame("prof_handler");
    let leaf = b.frame("ProfileData::Add(int)");
    b.p.drop_frames = b.s("ProfileData::Add|prof_handler");
    b.sample(&[leaf, handler, work, main], &[1]);
    // A dropped frame at the root stays: nothing user-level above it.
    b.sample(&[work, handler], &[1]);
    let p = load(&b.bytes()).unwrap_or_default();
    let st: Vec<String> = stacks(&p).into_iter().map(|s| s.0).collect();
    assert_eq!(st, ["main;work", "prof_handler;work"]);
    assert_eq!(simplify_func(b".f(int)"), b"f");
    assert_eq!(
        simplify_func(b"(anonymous namespace)::g(x)"),
        b"(anonymous namespace)::g"
    );
    assert_eq!(simplify_func(b"S::operator()(int)"), b"S::operator()");
}

#[test]
fn regex_drop_frames_is_noted_not_applied() {
    let mut b = Build::new(&[("samples", "count")]);
    let main = b.frame("main");
    let leaf = b.frame("malloc");
    b.p.drop_frames = b.s("mal.*");
    b.sample(&[leaf, main], &[1]);
    let p = load(&b.bytes()).unwrap_or_default();
    assert_eq!(stacks(&p)[0].0, "main;malloc");
    assert!(p.notes.iter().any(|n| n.contains("drop_frames")));
}

#[test]
fn salvages_a_truncated_message_or_says_where_it_broke() {
    let mut b = Build::new(&[("samples", "count")]);
    let f = b.frame("f");
    for _ in 0..10 {
        b.sample(&[f], &[1]);
    }
    // Samples last: a cut in them keeps the first ones.
    let samples = proto::Profile {
        sample: std::mem::take(&mut b.p.sample),
        ..proto::Profile::default()
    };
    let mut bytes = b.p.encode_to_vec();
    bytes.extend(samples.encode_to_vec());
    let p = load(&bytes[..bytes.len() - 3]).unwrap_or_default();
    assert_eq!(p.samples.len(), 9);
    assert!(
        p.warnings
            .first
            .iter()
            .any(|w| w.message.contains("truncated")),
        "{:?}",
        p.warnings
    );
    assert!(
        p.meta
            .incomplete
            .as_deref()
            .is_some_and(|m| m.contains("truncated"))
    );
    let whole = load(&bytes).unwrap_or_default();
    assert_eq!(whole.meta.incomplete, None);
    // Strings last (as Go writes them): a cut there loses the names.
    let mut head = b.p.clone();
    head.sample = samples.sample;
    let tail = proto::Profile {
        string_table: std::mem::take(&mut head.string_table),
        ..proto::Profile::default()
    };
    let mut go_order = head.encode_to_vec();
    go_order.extend(tail.encode_to_vec());
    let cut = head.encoded_len() + 1;
    let e = load(&go_order[..cut]).err().unwrap_or_default();
    assert!(e.contains("truncated or corrupt protobuf"), "{e}");
    assert!(e.contains(&format!("({cut} bytes)")), "{e}");
    assert!(e.contains("no string table"), "{e}");
}

#[test]
fn probe_claims_profiles_and_never_text() {
    let mut b = Build::new(&[("samples", "count")]);
    let f = b.frame("f");
    b.sample(&[f], &[1]);
    let bytes = b.bytes();
    assert_eq!(probe(&bytes, true), Some(true));
    // A cut head is still the start of a profile.
    assert_eq!(probe(&bytes[..bytes.len() - 1], false), Some(true));
    for text in [
        &b"a;b;c 1\nd;e 2\n"[..],
        b"{\"shared\": {}}",
        b"[{\"name\": 1}]",
        b"java 12345 [001] 1.0: cpu-clock:\n\t4005 main (/bin/x)\n",
        b"--- heapz 1 ---\n0 0 @ 0\n",
        b"\n\n\x01",
        b"",
    ] {
        assert_eq!(probe(text, true), Some(false), "{text:?}");
    }
    // Other binaries.
    assert_eq!(probe(b"\x7fELF\x02\x01\x01\0\0\0", true), Some(false));
    assert_eq!(probe(b"PK\x03\x04\x14\0\0\0", true), Some(false));
    assert_eq!(probe(b"\x89PNG\r\n\x1a\n", true), Some(false));
    // A lone string field cut by the head: cannot tell yet.
    assert_eq!(probe(b"\x32\xff\x7f\x01abc", false), None);
}

/// A tiny deterministic generator for the robustness test.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn never_panics_on_mutated_or_cut_profiles() {
    let mut b = Build::new(&[("samples", "count"), ("cpu", "nanoseconds")]);
    let m = b.s("/bin/app");
    b.p.mapping.push(Mapping {
        id: 1,
        filename: m,
        ..Mapping::default()
    });
    let f = b.function("f", "f.go");
    let g = b.function("g", "g.go");
    let l1 = b.location(&[(f, 1), (g, 2)], 1, 0x10);
    let l2 = b.location(&[], 1, 0x20);
    let k = b.s("k");
    let v = b.s("v");
    b.sample(&[l1, l2], &[1, 2]).label = vec![Label {
        key: k,
        str: v,
        ..Label::default()
    }];
    b.sample(&[l2], &[3, 4]);
    let good = b.bytes();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let mut bytes = good.clone();
        match rng.below(3) {
            0 => {
                let i = rng.below(bytes.len());
                bytes[i] = rng.next() as u8;
            }
            1 => bytes.truncate(rng.below(bytes.len())),
            _ => {
                let i = rng.below(bytes.len());
                let x = rng.next() as u8;
                bytes.insert(i, x);
            }
        }
        let _ = probe(&bytes, true);
        let _ = probe(&bytes, false);
        let _ = load(&bytes);
    }
}

#[test]
fn samples_without_locations_are_counted() {
    let mut b = Build::new(&[("samples", "count"), ("cpu", "nanoseconds")]);
    let main = b.frame("main");
    b.sample(&[main], &[3, 30]);
    b.sample(&[], &[2, 20]);
    let p = load(&b.bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.samples.len(), 2);
    assert_eq!(p.samples.stack_of(1), None);
    assert_eq!(
        p.total(0),
        5,
        "every sample counts, with or without a stack"
    );
    assert_eq!(p.total(1), 50);
}
