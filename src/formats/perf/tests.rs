use super::lines::{EventLine, FrameLine, event_base, split_srcline};
use super::names::{fix_rust, is_jit, is_kernel, strip_offset, tidy_generic};
use super::*;
use crate::model::{FrameKind, ThreadInfo};

mod lines_and_names;

fn load(text: &[u8]) -> Profile {
    match parse(text, &Progress::default()) {
        Ok(p) => p,
        Err(e) => panic!("parse failed: {e:?}"),
    }
}

/// A frame's name as inferno prints it with `--annotate-kernel --annotate-jit`
/// (`--all`): `_[k]` after kernel frames, `_[j]` after JIT frames.
fn annotated(p: &Profile, f: FrameId) -> String {
    let name = p.frames.name(f).into_owned();
    match p.frame_meta.get(&f).map(|m| m.kind) {
        Some(FrameKind::Kernel) => format!("{name}_[k]"),
        Some(FrameKind::Jit) if !name.contains("_[j]") => format!("{name}_[j]"),
        _ => name,
    }
}

/// `stack value` lines of value type `v`, summed per stack and sorted.
fn folded(p: &Profile, v: usize, annotate: bool) -> Vec<String> {
    let n = p.value_types.len();
    let mut sums: std::collections::BTreeMap<String, i64> = Default::default();
    for i in 0..p.samples.len() {
        let Some(s) = p.samples.stack_of(i) else {
            continue;
        };
        let path: Vec<String> = p
            .stacks
            .path(s)
            .into_iter()
            .map(|f| {
                if annotate {
                    annotated(p, f)
                } else {
                    p.frames.name(f).into_owned()
                }
            })
            .collect();
        *sums.entry(path.join(";")).or_default() += p.samples.values[i * n + v];
    }
    sums.into_iter()
        .filter(|(_, v)| *v != 0)
        .map(|(s, v)| format!("{s} {v}"))
        .collect()
}

const SIMPLE: &[u8] = b"\
# ========
# hostname : box
# cmdline : /usr/bin/perf record -g
second line of the command
# reference time: 2026-12-02 13:32:50.514950 = 1796218370.514950 (TOD) = 1949.047215595 (monotonic)
# ========
#
my app  7027/7030 [001] 1949.125231:    1001001 cpu-clock:ppp: 
\t           329d4 _nl_find_locale+0x174 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t           3238c setlocale+0x11c (/usr/lib/x86_64-linux-gnu/libc.so.6)
\tffffffff81000130 entry_SYSCALL_64+0x76 ([kernel.kallsyms])

my app  7027/7030 [000] 1949.126230:    1001001 cpu-clock:ppp: 
\t           3238c setlocale+0x11c (/usr/lib/x86_64-linux-gnu/libc.so.6)
\tffffffff81000130 entry_SYSCALL_64+0x76 ([kernel.kallsyms])

bash  7000/7000 [000] 1949.127230:    1001001 cpu-clock:ppp: 
\t               0 [unknown] ([unknown])

";

#[test]
fn reads_events_stacks_threads_times_and_header() {
    let p = load(SIMPLE);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(
        folded(&p, 1, false),
        [
            "bash;[unknown] 1001001",
            "my_app;entry_SYSCALL_64;setlocale 1001001",
            "my_app;entry_SYSCALL_64;setlocale;_nl_find_locale 1001001",
        ]
    );
    assert_eq!(folded(&p, 0, false).len(), 3);
    assert_eq!(p.total(0), 3);
    assert_eq!(
        p.value_types[1],
        ValueType::new("period", Unit::Nanoseconds)
    );
    assert_eq!(p.default_value, 0);
    assert_eq!(
        p.threads,
        [
            ThreadInfo {
                name: "my app".into(),
                pid: Some(7027),
                tid: Some(7030)
            },
            ThreadInfo {
                name: "bash".into(),
                pid: Some(7000),
                tid: Some(7000)
            }
        ]
    );
    assert_eq!(p.samples.thread.as_deref(), Some(&[0, 0, 1][..]));
    assert_eq!(p.samples.cpu.as_deref(), Some(&[1, 0, 0][..]));
    assert_eq!(
        p.samples.time.as_deref(),
        Some(&[1_949_125_231_000, 1_949_126_230_000, 1_949_127_230_000][..])
    );
    // 1796218370.514950 - 1949.047215595 s, exactly.
    assert_eq!(p.meta.time_to_unix_ns, Some(1_796_216_421_467_734_405));
    assert_eq!(p.meta.duration_ns, Some(1_999_000));
    assert_eq!(
        p.meta.period,
        Some((1_001_001, ValueType::new("period", Unit::Nanoseconds)))
    );
    let extra = |k: &str| {
        p.meta
            .extra
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(extra("hostname").as_deref(), Some("box"));
    assert_eq!(
        extra("cmdline").as_deref(),
        Some("/usr/bin/perf record -g\nsecond line of the command")
    );
    assert_eq!(
        extra("events").as_deref(),
        Some("cpu-clock:ppp (3 samples)")
    );
    let kernel = p
        .frames
        .get(b"entry_SYSCALL_64")
        .map(|f| p.frame_meta[&f].kind);
    assert_eq!(kernel, Some(FrameKind::Kernel));
}

#[test]
fn probe_is_sure_of_perf_and_rejects_folded() {
    assert_eq!(probe(SIMPLE, true), Some(true));
    assert_eq!(
        probe(
            b"java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n",
            true
        ),
        Some(true)
    );
    assert_eq!(probe(b"a;b;c 12\na;b 3\n", true), Some(false));
    assert_eq!(probe(b"a;b;c 12 \nx;y 3 \n", true), Some(false));
    assert_eq!(probe(b"# just a comment\n\n", true), None);
    assert_eq!(
        probe(b"java 123 1.5: cycles:\n\tffff foo (bar)\n\tffff ba", false),
        Some(true)
    );
    assert_eq!(probe(b"java 123 1.5: cycles:\n", true), None);
    assert_eq!(
        probe(b"false 64414 20110.539270:      34467 cycles:u:  ffffffff9aa3c8de [unknown] ([unknown])\n", true),
        Some(true)
    );
    assert_eq!(probe(b"Gecko\t25122 [007] 115539.936601:\t\t1000000 task-clock:u:\n        b3cea6c4\tLock::unlock() (/system/lib/libc.so)\n", true), Some(true));
    assert_eq!(probe(b"{\"traceEvents\": []}\n", true), Some(false));
}

#[test]
fn keeps_source_lines_and_srcline_inlined_frames() {
    let text = b"\
app 1 1.0: 1 cycles:
\t    55d3 leaf+0x3 (/bin/app)
  app.c:12
\t    55d3 helper
  app.c:30 (inlined)
\t    55d9 main+0x9 (/bin/app)
  ??:0

";
    let p = load(text);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(folded(&p, 0, false), ["app;main;helper;leaf 1"]);
    let meta = |n: &[u8]| p.frames.get(n).and_then(|f| p.frame_meta.get(&f)).cloned();
    let leaf = meta(b"leaf").unwrap_or_default();
    assert_eq!((leaf.file.as_deref(), leaf.line), (Some("app.c"), Some(12)));
    assert_eq!(meta(b"helper").map(|m| m.kind), Some(FrameKind::Inlined));
}

#[test]
fn reads_tabs_single_line_stacks_and_missing_blank_lines() {
    let text = b"\
           false 39654 19115.489713:          1 cycles:u:  ffffffff9b201293 [unknown] ([unknown])
           false 39654 19115.489719:          1 cycles:      7fa68b1f2d84 _dl_start+0x4 (/usr/lib/ld-2.31.so)
Gecko\t25122 [007] 115539.936601:\t\t1000000 task-clock:u:
        b3cea6c4\tLock::unlock() (/system/lib/libc.so)
        b3cea535\tshould_trace() (/system/lib/libc.so)
Gecko\t25122 [007] 115539.937601:\t\t1000000 task-clock:u:
        b3cea535\tshould_trace() (/system/lib/libc.so)";
    let p = load(text);
    assert_eq!(
        folded(&p, 0, false),
        [
            "Gecko;should_trace 1",
            "Gecko;should_trace;Lock::unlock 1",
            "false;[unknown] 1",
            "false;_dl_start 1"
        ]
    );
    // The last stack ends without a newline: it may be cut short.
    assert_eq!(p.warnings.count, 1, "{:?}", p.warnings);
    assert_eq!(p.warnings.first[0].line, 7);
}

#[test]
fn warns_about_bad_lines_and_rejects_what_is_no_perf_text() {
    let text = b"\
inline-counter 26037  8801.193547:     250000 cpu-clock:uhH:
\t          401b97 main+0x1f (./inline-counter)

inline-counter 26037  8801.194312:     250000 cpu-clock:uhH:
\t          THIS_IS_A_WEIRD_LINE

inline-counter 26037  8801.194312:     250000 cpu-clock:uhH:

\t          401b94 main+0x1c (./inline-counter)
";
    let p = load(text);
    // The two events left with no frame are still events: counted, as perf report
    // counts them, under a frame that says no stack was recorded.
    assert_eq!(
        folded(&p, 1, false),
        [
            "inline-counter;[no stack recorded] 500000",
            "inline-counter;main 250000"
        ]
    );
    let lines: Vec<u64> = p.warnings.first.iter().map(|w| w.line).collect();
    assert_eq!(lines, [5, 9]);
    assert!(
        p.notes.iter().any(|n| n.starts_with("2 events without")),
        "{:?}",
        p.notes
    );
    match parse(&b"a;b;c 12\nnot perf\n"[..], &Progress::default()) {
        Err(ParseError::Invalid { line: 1, message }) => {
            assert!(message.contains("a;b;c 12"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn reads_frame_lines_without_a_dso() {
    // `perf script -F comm,tid,cpu,time,tod,period,event,ip,sym,symoff`
    let text = b"\
bash 13128 [000] 2026-12-02 11:56:16.061054   929.134222:    2004008 cpu-clock:ppp: 
\tffffffff8161e0ac unlink_anon_vmas+0xdc
\tffffffff81000130 entry_SYSCALL_64_after_hwframe+0x76
\t    7f97578a5f40 [unknown]
\t           1ab78 _dl_start_user+0x0

";
    assert_eq!(probe(text, true), Some(true));
    let p = load(text);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(
        folded(&p, 0, true),
        ["bash;_dl_start_user;[unknown];entry_SYSCALL_64_after_hwframe_[k];unlink_anon_vmas_[k] 1"]
    );
    assert_eq!(
        p.meta.time_to_unix_ns,
        Some(1_796_212_576_061_054_000 - 929_134_222_000)
    );
}

#[test]
fn keeps_anonymous_namespaces_but_skips_other_parenthesised_names() {
    let text = b"\
lto cgu.00  9712 [001]   790.282537:    2004008 cpu-clock:ppp: 
\t         8894f57 (anonymous namespace)::IRLinker::run(int)+0x58b (/usr/lib/libLLVM.so)
\t         8894f00 (process) (/usr/lib/libLLVM.so)
\t         8894e00 main+0x1 (/usr/bin/lto)

";
    let p = load(text);
    assert_eq!(
        folded(&p, 0, false),
        ["lto_cgu.00;main;(anonymous namespace)::IRLinker::run 1"]
    );
}

#[test]
fn an_event_line_where_a_frame_was_expected_starts_a_new_sample() {
    // No blank lines between samples, and a comm (`dd`) that is a hex number.
    let text = b"\
dd 29776 666709.771979:   10101010 cpu-clock:
\t    7f00 write+0x1 (/lib/libc.so)
dd 29776 666709.782078:   10101010 cpu-clock:
\t    7f10 read
\t    7f20 main+0x2
";
    let p = load(text);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(
        folded(&p, 1, false),
        ["dd;main;read 10101010", "dd;write 10101010"]
    );
}

#[test]
fn a_header_block_without_its_closing_rule_ends_at_the_first_event() {
    let text = b"\
# ========
# cmdline : /usr/bin/perf record -g -- python3 -c x = 1
y = 2
a 1 1.0: 1 cycles:
\t1 f (x)

";
    let p = load(text);
    assert_eq!(folded(&p, 0, false), ["a;f 1"]);
    let cmdline = p.meta.extra.iter().find(|(k, _)| k == "cmdline");
    assert_eq!(
        cmdline.map(|(_, v)| v.as_str()),
        Some("/usr/bin/perf record -g -- python3 -c x = 1\ny = 2")
    );
}

#[test]
fn reads_deep_stacks_without_recursion() {
    let mut text = b"deep 1 1.0: 1 cycles:\n".to_vec();
    for i in 0..20_000 {
        text.extend_from_slice(format!("\t{i:x} f{i} (/bin/deep)\n").as_bytes());
    }
    text.push(b'\n');
    let p = load(&text);
    let s = p.samples.stack_of(0).unwrap_or(StackId(0));
    let path = p.stacks.path(s);
    assert_eq!(path.len(), 20_001);
    assert_eq!(p.frames.name(path[1]), "f19999");
}

#[test]
fn shares_prefixes_between_samples() {
    let text = b"\
a 1 1.0: cycles:
\t1 c (x)
\t2 b (x)

a 1 1.1: cycles:
\t1 d (x)
\t2 b (x)

a 1 1.2: cycles:
\t1 c (x)
\t2 b (x)

";
    let p = load(text);
    // a, a;b, a;b;c, a;b;d
    assert_eq!(p.stacks.len(), 4);
    assert_eq!(p.samples.stack[0], p.samples.stack[2]);
    assert_eq!(p.meta.period, None);
    assert_eq!(p.value_types[1], ValueType::new("period", Unit::Count));
}

#[test]
fn tod_times_give_the_unix_offset() {
    let text = b"\
python3  7027 2026-12-02 13:32:50.592966  1949.125231:    1001001 cpu-clock:ppp: 
\t           329d4 _nl_find_locale+0x174 (/usr/lib/x86_64-linux-gnu/libc.so.6)

";
    let p = load(text);
    assert_eq!(
        p.meta.time_to_unix_ns,
        Some(1_796_218_370_592_966_000 - 1_949_125_231_000)
    );
    assert_eq!(p.meta.start_unix_ns, Some(1_796_218_370_592_966_000));
}

#[test]
fn cancels_and_survives_garbage() {
    let progress = Progress::default();
    progress.cancel();
    assert!(matches!(
        parse(SIMPLE, &progress),
        Err(ParseError::Cancelled)
    ));
    // Every prefix and a byte-scrambled copy of a real input: no panic.
    for cut in 0..SIMPLE.len() {
        let _ = parse(&SIMPLE[..cut], &Progress::default());
        let _ = probe(&SIMPLE[..cut], false);
    }
    let mut x: u32 = 12345;
    for round in 0..200 {
        let mut v = SIMPLE.to_vec();
        for _ in 0..(round % 20 + 1) {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let i = (x >> 8) as usize % v.len();
            let alphabet = b"()[]:;/ \t\n0123456789ab+x->#$.";
            v[i] = alphabet[(x >> 20) as usize % alphabet.len()];
        }
        let _ = parse(&v[..], &Progress::default());
        let _ = probe(&v, true);
    }
}
