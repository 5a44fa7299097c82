//! The checks that read frames: debug builds and broken stacks.

use super::*;

#[test]
fn debug_build_fires_on_wrapper_glue_and_not_on_a_release_build() {
    let debug = perf(
        &[
            "app;_start;main;std::rt::lang_start;core::ops::function::FnOnce::call_once;app::main;core::iter::traits::iterator::Iterator::sum;<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold;app::main::{{closure}}",
            "app;_start;main;std::rt::lang_start;core::ops::function::FnOnce::call_once;app::main;app::points",
        ],
        60,
    );
    let f = must(&debug, LintKind::DebugBuild);
    assert!(
        f.saw
            .starts_with("50% of samples pass through two or more calls"),
        "{}",
        f.saw
    );
    assert!(
        f.saw.contains("core::ops::function::FnOnce::call_once"),
        "{}",
        f.saw
    );
    assert!(f.advice.contains("--release"));
    let release = perf(&[RELEASE, "app;_start;main;app::main"], 60);
    assert!(fires(&release, LintKind::DebugBuild).is_none());
}

#[test]
fn inlined_wrappers_do_not_count_as_a_debug_build() {
    let mut p = perf(
        &[
            "app;_start;main;core::ops::function::FnOnce::call_once;core::iter::traits::iterator::Iterator::sum;app::work",
        ],
        60,
    );
    for name in [
        "core::ops::function::FnOnce::call_once",
        "core::iter::traits::iterator::Iterator::sum",
    ] {
        let f = frame(&p, name.as_bytes());
        p.frame_meta.insert(
            f,
            FrameMeta {
                kind: FrameKind::Inlined,
                system_name: None,
                object: None,
                ..FrameMeta::default()
            },
        );
    }
    assert!(fires(&p, LintKind::DebugBuild).is_none());
}

#[test]
fn debug_build_fires_on_a_debug_path_in_a_source_file_or_the_command_line() {
    let mut p = perf(&[RELEASE], 60);
    let f = frame(&p, b"app::parse");
    p.frame_meta.insert(
        f,
        FrameMeta {
            file: Some("/src/app/cmake-build-debug/parse.c".into()),
            ..FrameMeta::default()
        },
    );
    let found = must(&p, LintKind::DebugBuild);
    assert!(found.saw.contains("debug build's path"), "{}", found.saw);

    let mut p = perf(&[RELEASE], 60);
    p.meta.extra.push((
        "cmdline".into(),
        "/usr/bin/perf record -g ./target/debug/app".into(),
    ));
    let found = must(&p, LintKind::DebugBuild);
    assert_eq!(
        found.saw,
        "the cmdline names a debug build: ./target/debug/app"
    );

    let mut p = perf(&[RELEASE], 60);
    p.meta.extra.push((
        "cmdline".into(),
        "/usr/bin/perf record -g ./target/release/app".into(),
    ));
    assert!(fires(&p, LintKind::DebugBuild).is_none());
}

#[test]
fn broken_stacks_fires_on_shallow_unrooted_perf_stacks_and_not_on_whole_ones() {
    let p = perf(&["app;mix", "app;mix;[unknown]"], 60);
    let f = must(&p, LintKind::BrokenStacks);
    assert!(
        f.saw
            .contains("50% of samples pass through [unknown] frames"),
        "{}",
        f.saw
    );
    assert!(
        f.saw.contains("100% of samples do not reach a root"),
        "{}",
        f.saw
    );
    assert!(f.advice.contains("-fno-omit-frame-pointer"));
    assert!(f.advice.contains("--call-graph dwarf"));
    let p = perf(&["app;mix"], 60);
    let f = must(&p, LintKind::BrokenStacks);
    assert!(
        f.saw.starts_with("100% of samples in stacks of depth <= 2"),
        "{}",
        f.saw
    );
    assert!(fires(&perf(&[RELEASE], 60), LintKind::BrokenStacks).is_none());
}

#[test]
fn an_unknown_frame_past_the_root_is_no_hole() {
    // What a frame-pointer walk reads past __libc_start_main.
    let p = perf(&["app;[unknown];__libc_start_main;main;delta;beta"], 60);
    assert!(
        fires(&p, LintKind::BrokenStacks).is_none(),
        "{:?}",
        codes(&p)
    );
    let p = perf(&["app;_start;main;[unknown];beta"], 60);
    let f = must(&p, LintKind::BrokenStacks);
    assert!(f.saw.contains("[unknown]"), "{}", f.saw);
}

#[test]
fn kernel_threads_and_whole_non_perf_stacks_are_not_broken() {
    let mut p = perf(
        &["kworker/0:1;ret_from_fork;kthread;worker_thread;process_one_work"],
        60,
    );
    assert!(fires(&p, LintKind::BrokenStacks).is_none());
    // A kernel frame at the outermost place starts a stack as well.
    let f = frame(&p, b"ret_from_fork");
    p.frame_meta.insert(
        f,
        FrameMeta {
            kind: FrameKind::Kernel,
            system_name: None,
            object: None,
            ..FrameMeta::default()
        },
    );
    assert!(fires(&p, LintKind::BrokenStacks).is_none());
    // py-spy's shallow stacks are no sign of missing frame pointers.
    let mut p = repeated(&["<module> (x.py:1);work (x.py:9)"], 60);
    p.format = "speedscope".into();
    assert!(fires(&p, LintKind::BrokenStacks).is_none());
    // Root reachability is judged for perf only (Go's roots differ).
    let p = repeated(&["runtime.goexit;main.main;main.work;main.hash"], 60);
    assert!(fires(&p, LintKind::BrokenStacks).is_none());
}

#[test]
fn broken_stacks_says_when_no_call_chain_was_recorded() {
    let p = perf(&["app;[no stack recorded]"], 60);
    let f = must(&p, LintKind::BrokenStacks);
    assert!(f.saw.contains("no call chain"), "{}", f.saw);
    assert!(f.advice.contains("-g"));
}
