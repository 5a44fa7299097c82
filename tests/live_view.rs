//! Live reload through the viewer: a reloaded profile keeps the user's place
//! (zoom, selection, search, transforms, the callers/callees view), freeze holds
//! updates back, windows keep the last seconds, and the real worker follows a file
//! that a writer thread appends to, replaces and deletes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ember::formats::LoadOptions;
use ember::model::{NodeId, Profile, Transform};
use ember::sources::input::Progress;
use ember::ui::Msg;
use ember::ui::app::{App, Loaded, Phase, View};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::runtime::live::{self, Change, Live, Mode, Reload, Settings};
use ember::ui::views::flame_state::Orientation;

use common::load_bytes;

const BEFORE: &[u8] = b"main;parse;alloc 5
main;render;alloc 3
main;render 2
main;hash 4
";

/// BEFORE plus more of the same and a new function, in another line order.
const AFTER: &[u8] = b"main;hash 4
main;render;alloc 3
main;parse;alloc 5
main;render 2
main;render;draw 6
main;parse;alloc 10
";

fn view(p: Profile, transforms: Vec<Transform>) -> Box<Loaded> {
    let settings = Settings {
        transforms,
        ..Settings::default()
    };
    live::build(p, &settings, Orientation::Icicle, Instant::now()).0
}

fn app(live: bool) -> App {
    let mut app = App::new(
        "live.folded".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(view(load_bytes(BEFORE), Vec::new())),
        Orientation::Icicle,
    );
    if live {
        app.live = Some(Live::detached(live::Followed::File));
    }
    app
}

fn reload(p: Profile, transforms: Vec<Transform>, added: i64) -> Box<Reload> {
    Box::new(Reload {
        loaded: view(p, transforms),
        added,
        file: None,
        change: Change::Data,
        granularity: Default::default(),
    })
}

fn loaded(app: &App) -> &Loaded {
    app.loaded().expect("loaded")
}

/// The names from the root to a node of the shown tree.
fn path(app: &App, n: NodeId) -> Vec<String> {
    let l = loaded(app);
    l.tree
        .frame_path(&l.profile, n)
        .iter()
        .map(|&f| l.profile.frames.name(f).into_owned())
        .collect()
}

fn select(app: &mut App, names: &[&str]) {
    let l = match &mut app.phase {
        Phase::Ready(l) => l,
        Phase::Loading { .. } => panic!("loading"),
    };
    let n = common::node(&l.profile, &l.tree, names);
    l.flame.select(&l.tree, &l.profile, n);
}

#[test]
fn a_reload_keeps_zoom_selection_search_and_transforms() {
    let mut app = app(true);
    // A regex search (what Enter in the table starts), then edited.
    app.focus_function("alloc");
    app.search.query.text = "draw|alloc".into();
    select(&mut app, &["main", "parse"]);
    app.update(Action::Zoom);
    select(&mut app, &["main", "parse", "alloc"]);
    // A transform the reload must carry: drop hash.
    let drop = Transform::Drop {
        pattern: "^hash$".into(),
    };
    if let Phase::Ready(l) = &mut app.phase {
        l.push_transform(drop.clone());
    }
    app.reloaded(reload(load_bytes(AFTER), vec![drop.clone()], 19));

    let l = loaded(&app);
    assert_eq!(path(&app, l.flame.zoom), ["main", "parse"]);
    assert_eq!(path(&app, l.flame.selected), ["main", "parse", "alloc"]);
    assert_eq!(
        l.tree.total(l.flame.selected),
        15,
        "5 + 10 after the reload"
    );
    assert_eq!(l.transforms, [drop]);
    assert_eq!(l.tree.total(NodeId::ROOT), 26, "hash (4) dropped from 30");
    // The search was re-run over the new frames: draw is new.
    let m = app.search.matches.as_ref().expect("search kept");
    assert_eq!(m.count, 2, "alloc and draw");
    let status = &app.live.as_ref().expect("live").status;
    assert_eq!(status.added, 19);
    assert!(status.last_reload.is_some());
}

#[test]
fn a_reload_re_applies_transforms_added_while_it_was_built() {
    let mut app = app(true);
    let drop = Transform::Drop {
        pattern: "^render$".into(),
    };
    if let Phase::Ready(l) = &mut app.phase {
        l.push_transform(drop.clone());
    }
    // The worker built its view before the user's transform reached it: that
    // view is not shown, and the worker is told the transforms and asked again.
    app.reloaded(reload(load_bytes(AFTER), Vec::new(), 19));
    assert_eq!(
        loaded(&app).tree.total(NodeId::ROOT),
        14 - 5,
        "the old view"
    );
    let live = app.live.as_ref().expect("live");
    assert_eq!(
        live.settings.lock().expect("lock").transforms,
        std::slice::from_ref(&drop)
    );
    // A worker that keeps sending views without them (here: nobody listens)
    // gets its view transformed on the UI thread after three tries.
    for _ in 0..3 {
        app.reloaded(reload(load_bytes(AFTER), Vec::new(), 19));
    }
    let l = loaded(&app);
    assert_eq!(l.transforms, [drop]);
    assert_eq!(l.tree.total(NodeId::ROOT), 30 - 11);
    // Undo still reaches the untransformed reloaded profile.
    if let Phase::Ready(l) = &mut app.phase {
        l.undo_transform();
    }
    assert_eq!(loaded(&app).tree.total(NodeId::ROOT), 30);
}

#[test]
fn freeze_holds_updates_back_and_catches_up_on_resume() {
    let mut app = app(true);
    app.update(Action::Freeze);
    app.reloaded(reload(load_bytes(AFTER), Vec::new(), 19));
    app.reloaded(reload(load_bytes(AFTER), Vec::new(), 1));
    assert_eq!(
        loaded(&app).tree.total(NodeId::ROOT),
        14,
        "still the old view"
    );
    let live = app.live.as_ref().expect("live");
    assert!(live.status.frozen);
    assert_eq!(live.status.pending.as_ref().map(|p| p.added), Some(20));
    assert!(
        live.label().0.contains("+20 samples waiting"),
        "{}",
        live.label().0
    );
    app.update(Action::Freeze);
    assert_eq!(loaded(&app).tree.total(NodeId::ROOT), 30);
    let live = app.live.as_ref().expect("live");
    assert!(live.status.pending.is_none());
    assert_eq!(live.status.added, 20);
}

#[test]
fn the_callers_callees_view_survives_a_reload() {
    let mut app = app(true);
    select(&mut app, &["main", "render", "alloc"]);
    app.update(Action::Sandwich);
    assert_eq!(app.view, View::Sandwich);
    app.reloaded(reload(load_bytes(AFTER), Vec::new(), 19));
    assert_eq!(app.view, View::Sandwich);
    let sw = loaded(&app).sandwich.as_deref().expect("rebuilt");
    assert_eq!(sw.through, 18, "alloc: 3 + 5 + 10");
    // A reload without the function goes back to where the view was opened.
    app.reloaded(reload(load_bytes(b"main;other 3\n"), Vec::new(), -27));
    assert_eq!(app.view, View::Flame);
    assert!(loaded(&app).sandwich.is_none());
}

#[test]
fn a_window_keeps_only_the_last_seconds_of_timestamped_samples() {
    let bytes = std::fs::read(common::repo().join("samples/perf-python-wordindex-small.perf.gz"))
        .expect("sample");
    let input = common::write_input("w.perf.gz", &bytes);
    let p = common::load_path(&input.path).expect("loads");
    let times = p.samples.time.clone().expect("perf has timestamps");
    let last = *times.iter().max().expect("samples");
    let in_last_second = times.iter().filter(|&&t| t + 1_000_000_000 >= last).count();
    let all = p.samples.len();
    let settings = Settings {
        mode: Mode::Window(1),
        ..Settings::default()
    };
    let (l, no_time) = live::build(p, &settings, Orientation::Icicle, Instant::now());
    assert!(!no_time);
    assert_eq!(l.profile.samples.len(), in_last_second);
    assert!(in_last_second < all, "{in_last_second} of {all}");
    // Folded stacks have no timestamps: all is shown and the flag says why.
    let (l, no_time) = live::build(
        load_bytes(BEFORE),
        &settings,
        Orientation::Icicle,
        Instant::now(),
    );
    assert!(no_time);
    assert_eq!(l.tree.total(NodeId::ROOT), 14);
}

/// A live worker following `file` with default settings, and what it sends.
fn follow(file: &std::path::Path) -> (Live, mpsc::Receiver<Msg>) {
    let (tx, rx) = mpsc::channel();
    let live = live::spawn_file(
        ember::ui::live_report(tx),
        file.to_path_buf(),
        LoadOptions::default(),
        Progress::new(),
        Orientation::Icicle,
        Settings::default(),
    )
    .expect("worker starts");
    (live, rx)
}

#[test]
fn the_worker_follows_a_file_that_grows_is_replaced_and_comes_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("cpu.folded");
    // The file does not exist yet: the worker waits for it.
    let (_live, rx) = follow(&file);
    std::fs::write(&file, BEFORE).expect("write");
    let first = common::next_view(&rx);
    assert_eq!(first.change, Change::First);
    assert_eq!(first.loaded.tree.total(NodeId::ROOT), 14);

    // An append, with the last line cut in two writes.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("open");
    f.write_all(b"main;render;draw 6\nmain;pa").expect("append");
    f.flush().expect("flush");
    let grown = common::next_view(&rx);
    assert_eq!(grown.change, Change::Data);
    assert_eq!(grown.added, 6, "the cut line is not counted yet");
    f.write_all(b"rse;alloc 10\n").expect("append");
    drop(f);
    let grown = common::next_view(&rx);
    assert_eq!(grown.added, 10);
    assert_eq!(grown.loaded.tree.total(NodeId::ROOT), 30);

    // Replaced by rename: a smaller profile.
    let tmp = dir.path().join(".cpu.folded.tmp");
    std::fs::write(&tmp, b"main;other 3\n").expect("write");
    std::fs::rename(&tmp, &file).expect("rename");
    let replaced = common::next_view(&rx);
    assert_eq!(replaced.loaded.tree.total(NodeId::ROOT), 3);
    assert_eq!(replaced.added, -27);
}

#[test]
fn the_table_keeps_its_sort_and_row_across_a_reload() {
    let mut app = app(true);
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Table);
    app.update(Action::SortName);
    {
        let l = match &mut app.phase {
            Phase::Ready(l) => l,
            Phase::Loading { .. } => panic!("loading"),
        };
        l.table.ensure(&l.profile, &l.tree);
    }
    app.update(Action::MoveDown); // alloc, hash, main...: on hash
    let name = |app: &App| {
        let l = loaded(app);
        let f = l.table.selected().expect("a row");
        l.profile.frames.name(f).into_owned()
    };
    assert_eq!(name(&app), "hash");
    // AFTER adds draw, which sorts before hash: the row index moves, the
    // cursor stays on the function.
    app.reloaded(reload(load_bytes(AFTER), Vec::new(), 16));
    assert_eq!(loaded(&app).table.sort, ember::model::SortKey::Name);
    assert_eq!(name(&app), "hash");
    assert_eq!(loaded(&app).table.cursor, 2);
}

/// An App with a job thread and a live handle, as `ember FILE` runs.
fn live_app_with_jobs() -> (App, mpsc::Receiver<Msg>) {
    let mut app = app(true);
    let (tx, rx) = mpsc::channel();
    app.jobs =
        Some(ember::ui::runtime::jobs::spawn(ember::ui::jobs_report(tx)).expect("job thread"));
    (app, rx)
}

fn job_result(rx: &mpsc::Receiver<Msg>) -> ember::ui::runtime::jobs::Done {
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(Msg::Job(done)) => *done,
        Ok(_) => panic!("unexpected message"),
        Err(e) => panic!("no job result: {e}"),
    }
}

#[test]
fn a_transform_still_running_when_a_reload_lands_is_kept() {
    let (mut app, rx) = live_app_with_jobs();
    select(&mut app, &["main", "hash"]);
    app.update(Action::DropFunction);
    app.sync_live();
    // The worker builds with what it was told: the drop, though not done yet.
    let told = app
        .live
        .as_ref()
        .expect("live")
        .settings
        .lock()
        .expect("lock")
        .transforms
        .clone();
    assert_eq!(told.len(), 1);
    app.reloaded(reload(load_bytes(AFTER), told.clone(), 16));
    assert_eq!(loaded(&app).transforms, told);
    assert_eq!(
        loaded(&app).tree.total(NodeId::ROOT),
        26,
        "30 less hash's 4"
    );
    // The job's own result is stale now, and nothing more is needed.
    app.job_done(job_result(&rx));
    assert_eq!(loaded(&app).transforms, told);
    assert!(app.busy.is_none());
    assert!(rx.try_recv().is_err());
}

#[test]
fn a_reload_built_before_a_transform_is_replaced_not_shown() {
    let (mut app, rx) = live_app_with_jobs();
    select(&mut app, &["main", "hash"]);
    app.update(Action::DropFunction);
    app.sync_live();
    // This view was built before the worker heard of the drop.
    app.reloaded(reload(load_bytes(AFTER), Vec::new(), 16));
    assert_eq!(loaded(&app).tree.total(NodeId::ROOT), 14, "not shown");
    app.job_done(job_result(&rx));
    assert_eq!(loaded(&app).transforms.len(), 1);
    assert_eq!(
        loaded(&app).tree.total(NodeId::ROOT),
        10,
        "14 less hash's 4"
    );
}

#[test]
fn a_reload_keeps_the_value_type_and_order_picked_while_it_was_built() {
    let mut app = app(true);
    app.update(Action::ToggleOrder);
    let order = loaded(&app).tree.options.order;
    // The worker's view still has the old order.
    app.reloaded(reload(load_bytes(AFTER), Vec::new(), 16));
    assert_eq!(loaded(&app).tree.options.order, order);
}

#[test]
fn another_file_of_a_directory_shows_its_own_default_value() {
    let mut app = app(true);
    let p = common::load_path(&common::repo().join("samples/go-loganalytics.pb.gz"))
        .expect("sample loads");
    let default = p.default_value;
    assert_ne!(default, 0, "pprof CPU shows cpu time by default");
    app.reloaded(Box::new(Reload {
        loaded: view(p, Vec::new()),
        added: 0,
        file: Some(("cpu-2.pb.gz".into(), 2, 2)),
        change: Change::Switched,
        granularity: Default::default(),
    }));
    assert_eq!(loaded(&app).tree.options.value, default);
    let label = app.live.as_ref().expect("live").label().0;
    assert!(label.contains("cpu-2.pb.gz (2 of 2, newest)"), "{label}");
}

#[test]
fn a_range_past_the_end_is_said_on_the_first_frame_not_swallowed() {
    let bytes = std::fs::read(common::repo().join("samples/perf-python-wordindex-small.perf.gz"))
        .expect("sample");
    let input = common::write_input("w.perf.gz", &bytes);
    let p = common::load_path(&input.path).expect("loads");
    let all = p.samples.len();
    let settings = Settings {
        time: ember::model::timerange::TimeSelection {
            from: Some("99999".into()),
            ..Default::default()
        },
        ..Settings::default()
    };
    let (l, _) = live::build(p, &settings, Orientation::Icicle, Instant::now());
    let said = l.transform_error.clone().unwrap_or_default();
    assert!(said.contains("holds no samples"), "{said:?}");
    assert!(said.contains("showing the whole profile"), "{said:?}");
    assert_eq!(l.profile.samples.len(), all);
}

#[test]
fn an_empty_file_watched_says_it_waits_for_data_not_for_a_last_good_profile() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("empty.txt");
    std::fs::write(&file, b"").expect("write");
    let (_live, rx) = follow(&file);
    let deadline = Instant::now() + Duration::from_secs(20);
    let said = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Msg::LiveProblem(Some(text))) => break text,
            Ok(_) => {}
            Err(e) => panic!("no word from the worker: {e}"),
        }
    };
    assert!(said.contains("the input is empty"), "{said}");
    assert!(said.contains("waiting for data"), "{said}");
    assert!(!said.contains("last good"), "{said}");
}
