//! Event and frame lines read, and frame names tidied, as inferno does.

use super::*;

#[test]
fn parses_event_lines_in_their_variants() {
    let ev = parse_event_line(b"V8 WorkerThread 24636/25607 [000] 94564.109216: cycles:");
    assert_eq!(
        ev,
        Some(EventLine {
            comm: b"V8 WorkerThread",
            pid: Some(24636),
            tid: Some(25607),
            cpu: Some(0),
            time_ns: Some(94_564_109_216_000),
            event: b"cycles",
            ..EventLine::default()
        })
    );
    let ev = parse_event_line(b"vote   913    72.176760:     257597 cycles:uppp:");
    let ev = ev.unwrap_or_default();
    assert_eq!((ev.comm, ev.tid, ev.pid), (&b"vote"[..], Some(913), None));
    assert_eq!((ev.period, ev.event), (Some(257_597), &b"cycles:uppp"[..]));
    let ev = parse_event_line(b"java 19983 cycles:").unwrap_or_default();
    assert_eq!((ev.time_ns, ev.event), (None, &b"cycles"[..]));
    let ev = parse_event_line(
        b"false 64414 20110.539270:      34467 cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])",
    )
    .unwrap_or_default();
    assert_eq!(ev.rest, b"ffffffff9aa3c8de [unknown] ([unknown])");
    let ev = parse_event_line(b"Gecko\t25122 [007] 115539.936601:\t\t1000000 task-clock:u:")
        .unwrap_or_default();
    assert_eq!(
        (ev.comm, ev.cpu, ev.period),
        (&b"Gecko"[..], Some(7), Some(1_000_000))
    );
    let ev = parse_event_line(
        b"python3  7027 2026-12-02 13:32:50.592966  1949.125231:    1001001 cpu-clock:ppp:",
    )
    .unwrap_or_default();
    assert_eq!(ev.tod_ns, Some(1_796_218_370_592_966_000));
    assert_eq!(ev.time_ns, Some(1_949_125_231_000));
    let ev = parse_event_line(b"a 1 1.123456789123: e:").unwrap_or_default();
    assert_eq!(ev.time_ns, Some(1_123_456_789));
    let ev = parse_event_line(b":-1    -1 [000]   795.771404:    2004008 cpu-clock:ppp:")
        .unwrap_or_default();
    assert_eq!((ev.comm, ev.pid, ev.tid), (&b":-1"[..], None, None));
    assert_eq!(ev.period, Some(2_004_008));
    assert_eq!(parse_event_line(b"   0 [unknown] ([unknown])"), None);
    assert_eq!(parse_event_line(b"a;b;c 12"), None);
    assert_eq!(parse_event_line(b"THIS_IS_A_WEIRD_LINE"), None);
    assert_eq!(event_base(b"cycles:uppp"), b"cycles");
    assert_eq!(event_base(b"sched:sched_switch"), b"sched:sched_switch");
    assert_eq!(event_base(b"cpu-clock"), b"cpu-clock");
}

#[test]
fn splits_frame_lines_like_inferno() {
    let f = split_frame(b"\t    7f53389994d0 foo(int) const+0x1f (/usr/lib/x (deleted))");
    assert_eq!(
        f,
        Some(FrameLine {
            pc: b"7f53389994d0",
            sym: b"foo(int) const+0x1f",
            module: b"/usr/lib/x (deleted)"
        })
    );
    let f = split_frame(b"7f1e2215d058  (/lib/libc.so)");
    assert_eq!(f.map(|f| f.sym), Some(&b" "[..]));
    assert_eq!(split_frame(b"THIS_IS_A_WEIRD_LINE"), None);
    assert_eq!(split_frame(b"  ffff (x)"), None);
    assert_eq!(strip_offset(b"main+0x1f"), b"main");
    assert_eq!(strip_offset(b"a+0x1+b"), b"a+0x1+b");
    assert_eq!(strip_offset(b"a+0xzz"), b"a+0xzz");
    assert_eq!(
        split_srcline(b"  foo.c:12 (inlined)"),
        Some((&b"foo.c"[..], Some(12), true))
    );
    assert_eq!(split_srcline(b"  ??:0"), Some((&b"??"[..], Some(0), false)));
    assert_eq!(
        split_srcline(b"  [kernel.kallsyms][ffffffff81655f70]"),
        Some((&b"??"[..], None, false))
    );
    assert_eq!(split_srcline(b"  [a b][ff]"), None);
    assert_eq!(split_srcline(b"  :0"), Some((&b"??"[..], None, false)));
    assert_eq!(
        split_srcline(b"  libpython3.11.so.1.0[f9460]"),
        Some((&b"??"[..], None, false))
    );
    assert_eq!(split_srcline(b"  [x][zz]"), None);
    assert_eq!(split_srcline(b"  ffff foo:12"), None);
}

#[test]
fn tidies_names_like_inferno() {
    let cases: &[(&str, &str)] = &[
        (
            "go/build.(*importReader).readByte",
            "go/build.(*importReader).readByte",
        ),
        ("foo<Vec::<usize>>(Vec<usize>)", "foo<Vec::<usize>>"),
        (".run()V", ".run"),
        ("base(BasicType) const", "base"),
        (
            "std::function<void (int, int)>::operator(int, int)",
            "std::function<void (int, int)>::operator",
        ),
        (
            "{lambda(int, int)#2}::operator()",
            "{lambda(int, int)#2}::operator",
        ),
        (
            "(anonymous namespace)::myBar()",
            "(anonymous namespace)::myBar",
        ),
        ("[(foo)]::bar()", "[(foo)]::bar"),
        ("Lfoo;::bar", "Lfoo:::bar"),
    ];
    for (input, want) in cases {
        let mut v = input.as_bytes().to_vec();
        tidy_generic(&mut v);
        assert_eq!(String::from_utf8_lossy(&v), *want, "{input}");
    }
    let fixed = |s: &str| String::from_utf8_lossy(&fix_rust(s.as_bytes())).into_owned();
    assert_eq!(
        fixed("std::sys::unix::fs::File::open::hb90e1c1c787080f0"),
        "std::sys::unix::fs::File::open"
    );
    assert_eq!(
        fixed(
            "_$LT$std..fs..ReadDir$u20$as$u20$core..iter..traits..iterator..Iterator$GT$::next::hc14f1750ca79129b"
        ),
        "<std::fs::ReadDir as core::iter::traits::iterator::Iterator>::next"
    );
    assert_eq!(fixed("plain"), "plain");
    assert!(is_kernel(b"[kernel.kallsyms]"));
    assert!(is_kernel(
        b"/usr/lib/debug/boot/vmlinux-5.4.14-cloudflare-2020.1.11"
    ));
    assert!(is_kernel(b"nf.ko"));
    assert!(!is_kernel(b"[unknown]"));
    assert!(!is_kernel(b"vmlinux/"));
    assert!(is_jit(b"/tmp/perf-19982.map"));
    assert!(is_jit(b"/home/x/.debug/jit/jitted-123-4.so"));
    assert!(!is_jit(b"/usr/lib/libc.so"));
}

#[test]
fn names_frames_like_inferno_and_marks_their_kinds() {
    let text = b"\
java 10488  9962.523711:   10101010 cpu-clock: 
\t    7f89cc45c5c3 Ljava/io/BufferedWriter;::flushBuffer->Ljava/io/OutputStreamWriter;::write+0x4b (/tmp/perf-10487.map)
\t    7f89c4991c43 Interpreter+0x1743 (/tmp/perf-10487.map)
\t    7f89e278d702 [unknown] (/usr/lib/jvm/java-11-openjdk/lib/server/libjvm.so)
\t               0 [unknown] ([unknown])
\tffffffffaee8017b [unknown] ([kernel.kallsyms])

rustc 10 1.0: 1 cycles:
\t    5d4d847 std::rt::lang_start::h0123456789abcdef+0x1 (/bin/rustc)
\t    5d4d847 inlined_helper (inlined)
\t    5d4d847 _start (/bin/rustc)

";
    let p = load(text);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(
        folded(&p, 0, false),
        [
            "java;[[kernel.kallsyms]];[unknown];[libjvm.so];Interpreter;java/io/BufferedWriter:::flushBuffer;java/io/OutputStreamWriter:::write_[i] 1",
            "rustc;_start;inlined_helper;std::rt::lang_start 1",
        ]
    );
    assert_eq!(
        folded(&p, 0, true),
        [
            "java;[[kernel.kallsyms]]_[k];[unknown];[libjvm.so];Interpreter_[j];java/io/BufferedWriter:::flushBuffer_[j];java/io/OutputStreamWriter:::write_[i] 1",
            "rustc;_start;inlined_helper;std::rt::lang_start 1",
        ]
    );
    let kind = |n: &[u8]| {
        p.frames
            .get(n)
            .and_then(|f| p.frame_meta.get(&f))
            .map(|m| m.kind)
    };
    assert_eq!(kind(b"inlined_helper"), Some(FrameKind::Inlined));
    assert_eq!(
        kind(b"java/io/OutputStreamWriter:::write_[i]"),
        Some(FrameKind::Inlined)
    );
    assert_eq!(kind(b"Interpreter"), Some(FrameKind::Jit));
    // A plain frame has meta only for its DSO, which is kept as written.
    assert_eq!(kind(b"_start"), Some(FrameKind::Normal));
    let object = p
        .frames
        .get(b"_start")
        .and_then(|f| p.frame_meta.get(&f))
        .and_then(|m| m.object.clone());
    assert!(object.is_some_and(|o| o.starts_with('/')));
    // Two different events: per-event pairs, and `cycles` counted as a count.
    let kinds: Vec<&str> = p.value_types.iter().map(|v| v.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "samples",
            "period",
            "cpu-clock samples",
            "cpu-clock period",
            "cycles samples",
            "cycles period"
        ]
    );
    assert_eq!(p.value_types[3].unit, Unit::Nanoseconds);
    assert_eq!(p.value_types[5].unit, Unit::Count);
    assert_eq!(
        p.samples.values,
        [1, 10_101_010, 1, 10_101_010, 0, 0, 1, 1, 0, 0, 1, 1]
    );
}
