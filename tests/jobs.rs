//! Slow work off the UI thread: with a job thread, a transform key or the first
//! Tab to the inverted view returns at once, the header says what is under way,
//! and the result is installed when the job's message arrives, unless the view
//! changed meanwhile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::mpsc;
use std::time::Duration;

use ember::model::{NodeId, Transform};
use ember::ui::Msg;
use ember::ui::app::{App, Loaded, Phase, View};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::runtime::jobs::{self, Done};
use ember::ui::views::flame_state::Orientation;

use common::{default_tree, load_bytes};

const PROFILE: &[u8] = b"main;parse;alloc 5
main;render;alloc 3
main;render 2
main;hash 4
";

/// An App with a real job thread; the receiver gets the jobs' messages.
fn app() -> (App, mpsc::Receiver<Msg>) {
    app_of(PROFILE)
}

fn app_of(profile: &[u8]) -> (App, mpsc::Receiver<Msg>) {
    let p = load_bytes(profile);
    let tree = default_tree(&p);
    let loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
    let mut app = App::new(
        "jobs.folded".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    );
    let (tx, rx) = mpsc::channel();
    app.jobs = Some(jobs::spawn(ember::ui::jobs_report(tx)).expect("job thread"));
    (app, rx)
}

fn finished(rx: &mpsc::Receiver<Msg>) -> Done {
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Msg::Job(done)) => *done,
        Ok(_) => panic!("unexpected message"),
        Err(e) => panic!("no job result: {e}"),
    }
}

fn loaded(app: &App) -> &Loaded {
    app.loaded().expect("loaded")
}

fn loaded_mut(app: &mut App) -> &mut Loaded {
    match &mut app.phase {
        Phase::Ready(l) => l,
        Phase::Loading { .. } => panic!("loading"),
    }
}

fn select(app: &mut App, names: &[&str]) {
    let l = loaded_mut(app);
    let n = common::node(&l.profile, &l.tree, names);
    l.flame.select(&l.tree, &l.profile, n);
}

#[test]
fn a_transform_runs_on_the_job_thread_and_keeps_the_place() {
    let (mut app, rx) = app();
    select(&mut app, &["main", "render", "alloc"]);
    app.update(Action::DropFunction);
    // Nothing changed yet; the header has something to say.
    assert!(loaded(&app).transforms.is_empty());
    assert_eq!(app.busy.as_deref(), Some("applying drop: ^alloc$"));
    // A second transform waits for the first instead of being lost.
    app.update(Action::Focus);
    assert!(
        loaded(&app)
            .transform_error
            .as_deref()
            .is_some_and(|e| e.contains("try again"))
    );
    app.job_done(finished(&rx));
    assert!(app.busy.is_none());
    let l = loaded(&app);
    assert_eq!(l.transforms.len(), 1);
    assert_eq!(l.tree.total(NodeId::ROOT), 6, "alloc's 8 of 14 dropped");
    // alloc is gone: the selection falls back to its caller.
    let sel = l.tree.frame(&l.profile, l.flame.selected).expect("a frame");
    assert_eq!(l.profile.frames.name(sel), "render");
    assert!(l.base.is_some(), "kept for undo");

    app.update(Action::Undo);
    app.job_done(finished(&rx));
    let l = loaded(&app);
    assert!(l.transforms.is_empty());
    assert!(l.base.is_none());
    assert_eq!(l.tree.total(NodeId::ROOT), 14);
}

#[test]
fn min_width_cycles_through_the_job_thread_and_switches_off() {
    let (mut app, rx) = app();
    let mut seen = Vec::new();
    for _ in 0..4 {
        app.update(Action::MinWidth);
        app.job_done(finished(&rx));
        seen.push(loaded(&app).transforms.clone());
    }
    let w = |percent| vec![Transform::MinWidth { percent }];
    assert_eq!(seen, [w(0.5), w(1.0), w(2.0), vec![]]);
}

#[test]
fn the_inverted_view_is_built_off_the_ui_thread() {
    let (mut app, rx) = app();
    app.update(Action::ToggleView); // table
    app.update(Action::ToggleView); // inverted: asked for
    assert_eq!(app.view, View::Inverted);
    assert!(!loaded(&app).inverted, "not built yet");
    // Keys other than Tab wait for it.
    app.update(Action::MoveDown);
    assert_eq!(loaded(&app).flame.selected, NodeId::ROOT);
    app.job_done(finished(&rx));
    let l = loaded(&app);
    assert!(l.inverted);
    // Bottom-up: alloc (self 8) is a root.
    let roots: Vec<String> = l
        .tree
        .child_ids(NodeId::ROOT)
        .map(|n| {
            let f = l.tree.frame(&l.profile, n).expect("frame");
            l.profile.frames.name(f).into_owned()
        })
        .collect();
    assert!(roots.contains(&"alloc".to_string()), "{roots:?}");
    // Back and forth again needs no job.
    app.update(Action::ToggleView);
    app.update(Action::ToggleView);
    app.update(Action::ToggleView);
    assert!(loaded(&app).inverted);
    assert!(rx.try_recv().is_err());
}

#[test]
fn a_result_for_a_view_that_changed_is_dropped() {
    let (mut app, rx) = app();
    let job = loaded(&app).job_push(Transform::CollapseRecursion { indirect: false });
    app.update(Action::ToggleView);
    app.update(Action::ToggleView); // the inverted view is asked for
    // The profile changes (a reload, say) before either job is done.
    let l = loaded_mut(&mut app);
    let tree = default_tree(&l.profile);
    *l = Loaded::new(l.profile.clone(), tree, Orientation::Icicle, Duration::ZERO);
    assert!(!loaded_mut(&mut app).install(jobs::run(job)));
    assert!(loaded(&app).transforms.is_empty());
    // The stale inverted view is not shown; it is asked for again, of the new
    // profile, and that one is.
    app.job_done(finished(&rx));
    assert!(!loaded(&app).inverted);
    assert!(app.busy.is_some(), "asked again");
    app.job_done(finished(&rx));
    assert!(loaded(&app).inverted);
}

#[test]
fn an_inverted_view_asked_for_during_a_transform_still_comes() {
    let (mut app, rx) = app();
    select(&mut app, &["main", "hash"]);
    app.update(Action::DropFunction); // job 1
    app.update(Action::ToggleView); // table
    app.update(Action::ToggleView); // inverted: job 2, made for the old view
    assert!(app.busy.is_some());
    app.job_done(finished(&rx)); // the drop: renews the view, job 2 goes stale
    assert!(app.busy.is_some(), "the inverted view is still under way");
    app.job_done(finished(&rx)); // stale: dropped, and asked for again
    app.job_done(finished(&rx));
    assert!(app.busy.is_none());
    let l = loaded(&app);
    assert!(l.inverted, "the inverted view is shown");
    assert_eq!(
        l.tree.total(NodeId::ROOT),
        10,
        "of the transformed profile (hash dropped)"
    );
    assert!(rx.try_recv().is_err());
}

#[test]
fn callers_and_callees_open_off_the_ui_thread() {
    let (mut app, rx) = app();
    app.update(Action::ToggleView); // table
    app.update(Action::ToggleView); // inverted
    app.job_done(finished(&rx));
    assert!(loaded(&app).inverted);
    // In the bottom-up view, select the root alloc and ask for its sandwich.
    let alloc = {
        let l = loaded(&app);
        l.tree
            .child_ids(NodeId::ROOT)
            .find(|&n| {
                let f = l.tree.frame(&l.profile, n).expect("frame");
                l.profile.frames.name(f) == "alloc"
            })
            .expect("alloc root")
    };
    {
        let l = loaded_mut(&mut app);
        l.flame.select(&l.tree, &l.profile, alloc);
    }
    app.update(Action::Sandwich);
    // Nothing replaced yet: the inverted view stays, the header says why.
    assert_eq!(app.view, View::Inverted);
    assert!(loaded(&app).sandwich.is_none());
    assert_eq!(app.busy.as_deref(), Some("finding the callers and callees"));
    app.job_done(finished(&rx));
    assert!(app.busy.is_none());
    assert_eq!(app.view, View::Sandwich);
    let l = loaded(&app);
    let sw = l.sandwich.as_deref().expect("sandwich");
    assert_eq!(l.profile.frames.name(sw.function), "alloc");
    // From the top-down profile: alloc is reached through 8 samples of 14, and
    // its callers are parse (5) and render (3).
    assert_eq!((sw.through, sw.all), (8, 14));
    assert!(!l.inverted);
    let home = sw.callers.home;
    let callers: Vec<i64> = sw
        .callers
        .tree
        .child_ids(home)
        .map(|n| sw.callers.tree.total(n))
        .collect();
    assert_eq!(callers, [5, 3]);
    // Esc goes back to the view it was opened from.
    app.update(Action::Unzoom);
    assert_eq!(app.view, View::Inverted);
}

#[test]
fn a_sandwich_for_a_view_that_changed_is_dropped() {
    let (mut app, rx) = app();
    select(&mut app, &["main", "hash"]);
    app.update(Action::Sandwich);
    // The profile is replaced (a reload) before the job is done.
    let l = loaded_mut(&mut app);
    let tree = default_tree(&l.profile);
    *l = Loaded::new(l.profile.clone(), tree, Orientation::Icicle, Duration::ZERO);
    app.job_done(finished(&rx));
    assert_eq!(app.view, View::Flame);
    assert!(loaded(&app).sandwich.is_none());
}

#[test]
fn the_header_counts_the_seconds_of_a_long_job() {
    let (mut app, rx) = app();
    app.update(Action::ToggleView);
    app.update(Action::ToggleView); // the inverted view is asked for
    assert_eq!(
        app.busy_text().as_deref(),
        Some("building the inverted view")
    );
    // As if it had been running for a while.
    app.busy_since = app
        .busy_since
        .and_then(|t| t.checked_sub(Duration::from_secs(3)));
    assert_eq!(
        app.busy_text().as_deref(),
        Some("building the inverted view (3 s)")
    );
    app.job_done(finished(&rx));
    assert_eq!(app.busy_text(), None);
}

/// A comparison of the diff fixtures with a real job thread.
fn diff_app() -> (App, mpsc::Receiver<Msg>) {
    use ember::formats::{self, LoadOptions};
    use ember::sources::input::{Progress, Source};
    let fx = |n: &str| Source::Path(common::repo().join("tests/fixtures").join(n));
    let p = formats::load_diff(
        [&fx("diff-before.folded"), &fx("diff-after.folded")],
        &LoadOptions::default(),
        false,
        &Progress::several(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let tree = default_tree(&p);
    let loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
    let mut app = App::new(
        "diff".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    );
    let (tx, rx) = mpsc::channel();
    app.jobs = Some(jobs::spawn(ember::ui::jobs_report(tx)).expect("job thread"));
    (app, rx)
}

#[test]
fn the_linked_pane_is_built_off_the_ui_thread() {
    let (mut app, rx) = diff_app();
    app.update(Action::SplitPanes);
    app.ensure_pair();
    // This side is drawn at once; the other says it is coming.
    assert!(loaded(&app).pair.is_none());
    let text = common::screen_of(&mut app, 120, 24);
    assert!(
        text.contains(" before · diff-before.folded · building this side…"),
        "{text}"
    );
    assert_eq!(text.matches("▲lex").count(), 1, "{text}");
    // Asked once, however often the loop comes round.
    app.ensure_pair();
    let done = finished(&rx);
    assert!(matches!(done, Done::Paired { .. }));
    assert!(
        rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "one job"
    );
    app.job_done(done);
    assert!(loaded(&app).pair.is_some());
    assert!(
        app.busy.is_none(),
        "the pane says it is coming, not the header"
    );
    let text = common::screen_of(&mut app, 120, 24);
    assert!(!text.contains("building this side"), "{text}");
    assert_eq!(
        text.matches("▲lex").count(),
        2,
        "lex on both sides:\n{text}"
    );
}

#[test]
fn a_linked_pane_for_a_side_no_longer_shown_is_dropped() {
    let (mut app, rx) = diff_app();
    app.update(Action::SplitPanes);
    app.ensure_pair(); // before's pane, for after's view
    app.update(Action::NextValue);
    app.ensure_pair(); // after's pane, for before's view
    let first = finished(&rx);
    app.job_done(first);
    assert!(loaded(&app).pair.is_none(), "the first pane is stale");
    let text = common::screen_of(&mut app, 120, 24);
    assert!(
        text.contains(" after · diff-after.folded · building this side…"),
        "{text}"
    );
    app.job_done(finished(&rx));
    let text = common::screen_of(&mut app, 120, 24);
    assert!(
        text.contains(" before · diff-before.folded · keys move this side"),
        "{text}"
    );
    assert!(text.contains(" after · diff-after.folded"), "{text}");
    assert!(!text.contains("building this side"), "{text}");
}

/// 70,000 distinct stacks: big enough for the function table's job.
fn wide_profile() -> Vec<u8> {
    (0..70_000)
        .map(|i| format!("main;mid{};leaf{i} {}\n", i % 300, 1 + i % 5))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn the_function_table_of_a_big_profile_is_built_off_the_ui_thread() {
    let (mut app, rx) = app_of(&wide_profile());
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Table);
    assert_eq!(app.busy.as_deref(), Some("building the function table"));
    assert!(loaded(&app).table.is_empty(), "not built on the UI thread");
    // Keys wait for it rather than building it here.
    app.update(Action::MoveDown);
    assert!(loaded(&app).table.is_empty());
    let done = finished(&rx);
    app.job_done(done);
    assert_eq!(app.busy, None);
    let l = loaded(&app);
    let mut want = ember::model::TopTable::build(&l.profile, &l.tree);
    want.sort(&l.profile, l.table.sort, l.table.descending);
    assert_eq!(l.table.len(), want.rows.len());
    assert_eq!(l.table.len(), 70_000 + 300 + 1);
    // On the first row, of the table as the UI thread would have built it.
    assert_eq!(l.table.selected(), Some(want.rows[0].frame));
    assert!(want.rows[0].self_weight > 0);
}

#[test]
fn a_function_table_for_a_view_that_changed_is_built_again() {
    let (mut app, rx) = app_of(&wide_profile());
    app.update(Action::ToggleView);
    loaded_mut(&mut app).id += 1; // a reload came first
    let done = finished(&rx);
    app.job_done(done);
    let l = loaded_mut(&mut app);
    assert!(l.table.is_empty(), "the stale table is dropped");
    assert_eq!(l.table.pending, None);
    l.table.ensure(&l.profile, &l.tree);
    assert_eq!(l.table.len(), 70_000 + 300 + 1);
}
