use super::*;
use crate::model::testing::profile_from_lines;
use crate::model::{FrameMeta, TreeOptions, Unit, ValueType};

mod build_and_stacks;

fn findings(p: &Profile) -> Vec<Finding> {
    let tree = CallTree::build(p, TreeOptions::default());
    lint(p, &tree)
}

fn codes(p: &Profile) -> Vec<&'static str> {
    findings(p).iter().map(|f| f.kind.code()).collect()
}

fn fires(p: &Profile, kind: LintKind) -> Option<Finding> {
    findings(p).into_iter().find(|f| f.kind == kind)
}

/// The finding of `kind`, which must fire.
fn must(p: &Profile, kind: LintKind) -> Finding {
    match fires(p, kind) {
        Some(f) => f,
        None => panic!("{} does not fire: {:?}", kind.code(), codes(p)),
    }
}

fn frame(p: &Profile, name: &[u8]) -> crate::model::FrameId {
    match p.frames.get(name) {
        Some(f) => f,
        None => panic!("no frame {:?}", String::from_utf8_lossy(name)),
    }
}

/// `n` samples of each stack, as `stack 1` lines.
fn repeated(stacks: &[&str], n: usize) -> Profile {
    let lines: Vec<String> = stacks
        .iter()
        .flat_map(|s| std::iter::repeat_n(format!("{s} 1"), n))
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    profile_from_lines(&refs)
}

/// As perf's reader makes them: the comm at the root, a thread per comm.
fn perf(stacks: &[&str], n: usize) -> Profile {
    let mut p = repeated(stacks, n);
    p.format = "perf".into();
    let mut comms: Vec<&str> = stacks.iter().filter_map(|s| s.split(';').next()).collect();
    comms.sort_unstable();
    comms.dedup();
    p.threads = comms
        .iter()
        .map(|c| crate::model::ThreadInfo {
            name: (*c).to_string(),
            pid: None,
            tid: None,
        })
        .collect();
    p
}

const RELEASE: &str = "app;_start;__libc_start_call_main;main;app::run;app::parse;memchr";

#[test]
fn codes_are_distinct_and_kebab_case() {
    let all = [
        LintKind::DebugBuild,
        LintKind::BrokenStacks,
        LintKind::FewSamples,
        LintKind::ShortProfile,
        LintKind::UnusualRate,
        LintKind::Idle,
        LintKind::OnCpuOnly,
        LintKind::UnresolvedJit,
        LintKind::TruncatedStacks,
        LintKind::LostSamples,
    ];
    let mut seen: Vec<&str> = all.iter().map(LintKind::code).collect();
    assert!(
        seen.iter()
            .all(|c| c.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'))
    );
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), all.len());
}

#[test]
fn a_healthy_profile_has_no_warnings() {
    let p = perf(&[RELEASE, "app;_start;main;app::run;app::hash"], 100);
    assert_eq!(codes(&p), Vec::<&str>::new());
}

#[test]
fn few_samples_fires_under_50() {
    let p = perf(&[RELEASE], 49);
    let f = must(&p, LintKind::FewSamples);
    assert_eq!(f.saw, "only 49 samples");
    assert!(fires(&perf(&[RELEASE], 50), LintKind::FewSamples).is_none());
}

#[test]
fn few_samples_counts_samples_not_the_shown_value() {
    // 60 samples of 1 ms each, shown as time: still 60 samples.
    let mut p = Profile::new(
        "pprof",
        vec![
            ValueType::new("samples", Unit::Count),
            ValueType::new("cpu", Unit::Nanoseconds),
        ],
    );
    p.default_value = 1;
    let s = p.intern_path(["runtime.goexit", "main.main", "main.work"].map(str::as_bytes));
    for _ in 0..60 {
        p.push_sample(s, &[1, 1_000_000]);
    }
    let tree = CallTree::build(
        &p,
        TreeOptions {
            value: 1,
            ..TreeOptions::default()
        },
    );
    let found = lint(&p, &tree);
    assert!(
        found.iter().all(|f| f.kind != LintKind::FewSamples),
        "{found:?}"
    );
    let keep: Vec<bool> = (0..60).map(|i| i < 10).collect();
    p.samples.retain(&keep, 2);
    let tree = CallTree::build(
        &p,
        TreeOptions {
            value: 1,
            ..TreeOptions::default()
        },
    );
    let found = lint(&p, &tree);
    assert!(
        found.iter().any(|f| f.saw == "only 10 samples"),
        "{found:?}"
    );
}

fn timed(p: &mut Profile, span_ns: u64) {
    let n = p.samples.len() as u64;
    p.samples.time = Some((0..n).map(|i| i * span_ns / (n - 1).max(1)).collect());
}

#[test]
fn short_profile_fires_under_a_second_of_sample_times() {
    let mut p = perf(&[RELEASE], 100);
    timed(&mut p, 400_000_000);
    let f = must(&p, LintKind::ShortProfile);
    assert_eq!(f.saw, "the profile covers 400 ms");
    timed(&mut p, 2_000_000_000);
    assert!(fires(&p, LintKind::ShortProfile).is_none());
    // Without times the duration the format states counts; unknown: no warning.
    let mut p = repeated(&["a;b;c"], 100);
    assert!(fires(&p, LintKind::ShortProfile).is_none());
    p.meta.duration_ns = Some(300_000_000);
    assert!(fires(&p, LintKind::ShortProfile).is_some());
}

#[test]
fn short_profile_judges_the_samples_the_tree_was_built_from() {
    let mut p = perf(&[RELEASE], 100);
    timed(&mut p, 2_000_000_000);
    let tree = CallTree::build(
        &p,
        TreeOptions {
            samples: Some(0..20),
            ..TreeOptions::default()
        },
    );
    let found = lint(&p, &tree);
    assert!(
        found.iter().any(|f| f.kind == LintKind::ShortProfile),
        "{found:?}"
    );
}

#[test]
fn unusual_rate_fires_only_on_extreme_rates() {
    let mut p = perf(&[RELEASE], 100);
    let ns = ValueType::new("period", Unit::Nanoseconds);
    p.meta.period = Some((200_000_000, ns.clone()));
    let f = must(&p, LintKind::UnusualRate);
    assert_eq!(f.saw, "sampling at 5.0 Hz (a sample every 200 ms)");
    p.meta.period = Some((50_000, ns.clone()));
    let f = must(&p, LintKind::UnusualRate);
    assert_eq!(f.saw, "sampling at 20000 Hz (a sample every 50 µs)");
    for period in [1_001_001, 10_000_000, 250_000, 1_010_101] {
        p.meta.period = Some((period, ns.clone()));
        assert!(fires(&p, LintKind::UnusualRate).is_none(), "{period}");
    }
    // A period stored scaled (1 ms as 1_000_000 with six decimals) is 1 ms.
    let mut scaled = ValueType::new("time", Unit::Milliseconds);
    scaled.decimals = 6;
    p.meta.period = Some((1_000_000, scaled));
    assert!(fires(&p, LintKind::UnusualRate).is_none());
    // A period of events (cycles, bytes) is no rate.
    p.meta.period = Some((1, ValueType::new("cycles", Unit::Count)));
    assert!(fires(&p, LintKind::UnusualRate).is_none());
}

#[test]
fn idle_fires_when_most_samples_idle() {
    let p = perf(
        &[
            "swapper;secondary_startup_64_no_verify;start_secondary;cpu_startup_entry;do_idle;default_idle_call",
            "swapper;secondary_startup_64_no_verify;start_secondary;cpu_startup_entry;do_idle;default_idle_call",
            "server;_start;main;event_loop;epoll_wait",
            RELEASE,
        ],
        30,
    );
    let f = must(&p, LintKind::Idle);
    assert!(
        f.saw
            .starts_with("75% of samples in idle or waiting code (default_idle_call, epoll_wait)"),
        "{}",
        f.saw
    );
    let p = perf(&["server;_start;main;event_loop;epoll_wait", RELEASE], 30);
    assert!(fires(&p, LintKind::Idle).is_none());
}

#[test]
fn idle_respects_the_trees_sample_range() {
    let p = perf(&["server;_start;main;epoll_wait", RELEASE, RELEASE], 30);
    assert!(fires(&p, LintKind::Idle).is_none());
    let tree = CallTree::build(
        &p,
        TreeOptions {
            samples: Some(0..40),
            ..TreeOptions::default()
        },
    );
    let found = lint(&p, &tree);
    assert!(found.iter().any(|f| f.kind == LintKind::Idle), "{found:?}");
}

#[test]
fn on_cpu_only_fires_on_blocking_calls_in_a_cpu_profile() {
    let p = perf(
        &[
            "db;_start;main;flush;__GI___libc_write;entry_SYSCALL_64;__x64_sys_write",
            "db;_start;main;flush;fsync",
            RELEASE,
        ],
        30,
    );
    let f = must(&p, LintKind::OnCpuOnly);
    assert!(
        f.saw.starts_with("67% of samples in blocking system calls"),
        "{}",
        f.saw
    );
    assert!(f.advice.contains("--off-cpu") && f.advice.contains("-e wall"));
    let good = perf(&[RELEASE], 60);
    assert!(fires(&good, LintKind::OnCpuOnly).is_none());
}

#[test]
fn on_cpu_only_leaves_wall_clock_profiles_alone() {
    let mut p = repeated(
        &["runtime.goexit;main.main;os.(*File).Read;syscall.read;read"],
        60,
    );
    p.format = "pprof".into();
    p.value_types = vec![ValueType::new("wall", Unit::Nanoseconds)];
    assert!(fires(&p, LintKind::OnCpuOnly).is_none());
    p.value_types = vec![ValueType::new("cpu", Unit::Nanoseconds)];
    assert!(fires(&p, LintKind::OnCpuOnly).is_some());
}

#[test]
fn unresolved_jit_fires_on_perf_map_frames_and_unknown_frames_of_node() {
    let p = perf(
        &[
            "node;_start;main;v8::internal::Execution::Call;[perf-4242.map];[perf-4242.map]",
            "node;_start;main;uv_run",
            "node;_start;main;uv_run",
        ],
        30,
    );
    let f = must(&p, LintKind::UnresolvedJit);
    assert_eq!(
        f.saw,
        "33% of samples pass through code without symbols, as JIT code without a symbol map leaves it ([perf-4242.map])"
    );
    assert!(f.advice.contains("--perf-basic-prof"));
    assert!(f.advice.contains("PreserveFramePointer"));
    let p = perf(
        &[
            "node;_start;main;uv_run;[unknown];[unknown]",
            "node;_start;main;uv_run",
        ],
        30,
    );
    assert!(fires(&p, LintKind::UnresolvedJit).is_some());
    // ... which are then no sign of broken stacks.
    assert!(fires(&p, LintKind::BrokenStacks).is_none());
    let p = perf(
        &["node;_start;main;v8::internal::Execution::Call;LazyCompile:~handler app.js:3"],
        60,
    );
    assert!(fires(&p, LintKind::UnresolvedJit).is_none());
}

#[test]
fn truncated_stacks_fires_at_perfs_maximum_depth() {
    let deep = |n: usize| {
        let mut s = String::from("app");
        for _ in 0..n {
            s.push_str(";rec");
        }
        s
    };
    let p = perf(&[&deep(127), RELEASE], 30);
    let f = must(&p, LintKind::TruncatedStacks);
    assert!(
        f.saw
            .starts_with("50% of samples have stacks of 127 frames"),
        "{}",
        f.saw
    );
    let p = perf(
        &[&format!("app;_start;main{}", &deep(120)[3..]), RELEASE],
        30,
    );
    assert!(fires(&p, LintKind::TruncatedStacks).is_none());
}

#[test]
fn truncated_stacks_fires_on_go_stacks_cut_at_64_frames() {
    let frames = |n: usize, root: bool| {
        let mut v: Vec<String> = (0..n).map(|i| format!("main.f{i}")).collect();
        if root {
            v[0] = "runtime.goexit".into();
        }
        v.join(";")
    };
    let mut p = repeated(&[&frames(64, false), &frames(10, true)], 30);
    p.format = "pprof".into();
    assert!(fires(&p, LintKind::TruncatedStacks).is_some());
    let mut p = repeated(&[&frames(64, true), &frames(10, true)], 30);
    p.format = "pprof".into();
    assert!(fires(&p, LintKind::TruncatedStacks).is_none());
}

#[test]
fn frame_names_in_messages_are_sanitized() {
    let p = perf(
        &["app;_start;main;core::iter::evil\x1b[2J;core::iter::more\x07;app::work"],
        60,
    );
    let f = must(&p, LintKind::DebugBuild);
    assert!(!f.saw.chars().any(char::is_control), "{:?}", f.saw);
    assert!(f.saw.contains("core::iter::more\\x07"), "{}", f.saw);
}

#[test]
fn long_names_are_shortened() {
    let long = format!("core::iter::{}", "x".repeat(200));
    let p = perf(
        &[&format!("app;_start;main;core::cmp::min;{long};app::work")],
        60,
    );
    let f = must(&p, LintKind::DebugBuild);
    assert!(f.saw.contains('…'), "{}", f.saw);
    assert!(f.saw.len() < 300);
}

#[test]
fn classes_follow_the_names() {
    use names::{bare, classify};
    assert_eq!(bare("__x64_sys_epoll_wait"), "epoll_wait");
    assert_eq!(bare("__GI___libc_write"), "write");
    assert_eq!(bare("__clone3"), "clone3");
    assert_eq!(bare("runtime.goexit.abi0"), "runtime.goexit");
    assert_eq!(bare("__"), "__");
    assert!(classify("__futex_abstimed_wait_common64") & Class::IDLE != 0);
    assert!(classify("__x64_sys_read") & Class::BLOCKING != 0);
    assert!(classify("epoll_wait") & Class::BLOCKING == 0);
    assert!(classify("__libc_start_call_main") & Class::ROOT != 0);
    assert!(
        classify("core::ops::function::FnOnce::call_once{{vtable.shim}}") & Class::WRAPPER == 0
    );
    assert!(classify("core::ptr::drop_in_place<alloc::vec::Vec<u8>>") & Class::WRAPPER == 0);
    assert!(
        classify("<alloc::vec::Vec<T,A> as core::ops::index::Index<I>>::index") & Class::WRAPPER
            != 0
    );
    assert!(classify("std::__invoke_impl<void, void (*&)()>") & Class::WRAPPER != 0);
    assert!(classify("std::__1::__invoke<void (*&)()>") & Class::WRAPPER != 0);
    assert!(classify("std::vector<int, std::allocator<int> >::operator[]") & Class::WRAPPER != 0);
    assert!(classify("std::__introsort_loop<int*, long>") & Class::WRAPPER == 0);
    assert!(
        classify("std::__cxx11::basic_string<char>::_M_construct<char const*>") & Class::WRAPPER
            == 0
    );
    assert!(classify("[perf-123.map]") & Class::JIT != 0);
    assert!(classify("0x7f3a1c0a1234") & Class::JIT != 0);
    assert!(classify("[libc.so.6]") & Class::JIT == 0);
    assert!(classify("process 12") & Class::SYNTH != 0);
    assert!(classify("worker (tid 77)") & Class::SYNTH != 0);
    assert!(classify("f (int)") & Class::SYNTH == 0);
}

#[test]
fn added_process_and_thread_roots_do_not_count_as_depth() {
    let app = |stack: &str| {
        let mut p = perf(&[stack], 60);
        p.threads[0].name = "app".into();
        p
    };
    assert!(
        fires(
            &app("process 7;app (tid 7);app;_start;main;work"),
            LintKind::BrokenStacks
        )
        .is_none()
    );
    let f = must(
        &app("process 7;app (tid 7);app;work;leaf"),
        LintKind::BrokenStacks,
    );
    assert!(f.saw.contains("depth <= 2"));
}

#[test]
fn a_gzipped_perf_profile_is_judged_as_perf() {
    let mut p = perf(&["app;mix"], 60);
    p.format = "perf (gzip)".into();
    let f = must(&p, LintKind::BrokenStacks);
    assert!(f.saw.contains("do not reach a root"), "{}", f.saw);
    assert_eq!(base_format("pprof (gzip)"), "pprof");
    assert_eq!(base_format("folded"), "folded");
}
