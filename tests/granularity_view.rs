//! The viewer's granularity key (`g`): function -> line -> file -> function,
//! the profile read again each time, the place and the transforms carried
//! over by their keys. Driven through the App as the event loop drives it
//! (jobs run inline without a job thread).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ember::formats::{Granularity, LoadOptions};
use ember::model::Transform;
use ember::sources::input::{Progress, Source};
use ember::ui::app::{App, Loaded, Phase};
use ember::ui::chrome::keymap::Keymap;
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;

fn open(path: &Path, transforms: Vec<Transform>) -> App {
    let source = Source::Path(path.to_path_buf());
    let options = LoadOptions::default();
    let loaded = ember::ui::load_and_build(
        &source,
        &options,
        &Progress::new(),
        Orientation::Icicle,
        transforms,
        &Default::default(),
    )
    .expect("the sample loads");
    let mut app = App::new(
        "sample".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    );
    app.inputs = vec![path.to_path_buf()];
    app.reread = Some((source, options));
    app
}

fn press(app: &mut App, c: char) {
    app.handle_event(&Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )));
}

fn loaded(app: &App) -> &Loaded {
    match &app.phase {
        Phase::Ready(l) => l,
        _ => panic!("the view is ready"),
    }
}

fn name_of(l: &Loaded, n: ember::model::NodeId) -> String {
    let f = l.tree.frame(&l.profile, n).expect("a frame, not the root");
    l.profile.frames.name(f).into_owned()
}

/// The names of every frame that has a node in the tree on screen.
fn shown_names(l: &Loaded) -> Vec<String> {
    common::all_nodes(&l.tree)
        .into_iter()
        .filter_map(|n| l.tree.frame(&l.profile, n))
        .map(|f| l.profile.frames.name(f).into_owned())
        .collect()
}

fn message(app: &App) -> String {
    app.prompt
        .message
        .as_ref()
        .map(|(m, _)| m.clone())
        .unwrap_or_default()
}

fn sample(name: &str) -> std::path::PathBuf {
    common::repo().join("samples").join(name)
}

/// Moves the selection down `depth` levels along the heaviest child.
fn select_heaviest(app: &mut App, depth: usize) {
    let Phase::Ready(l) = &mut app.phase else {
        panic!("ready")
    };
    let mut n = l.tree.root();
    for _ in 0..depth {
        let Some(c) = l.tree.child_ids(n).max_by_key(|&c| l.tree.total(c)) else {
            break;
        };
        n = c;
    }
    l.flame.selected = n;
}

#[test]
fn g_cycles_function_line_file_and_keeps_the_place() {
    let mut app = open(&sample("go-loganalytics.pb.gz"), Vec::new());
    select_heaviest(&mut app, 4);
    let before = loaded(&app);
    let function = name_of(before, before.flame.selected);
    let root_total = before.tree.total(before.tree.root());
    let function_names = {
        let mut v = shown_names(before);
        v.sort();
        v
    };

    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Line, "{}", message(&app));
    let l = loaded(&app);
    let line = name_of(l, l.flame.selected);
    assert!(
        line.starts_with(&format!("{function} ")) && line.contains(".go:"),
        "the selection became a line of {function}: {line}"
    );
    assert_eq!(l.tree.total(l.tree.root()), root_total, "same samples");
    assert!(
        message(&app).starts_with("granularity: line"),
        "{}",
        message(&app)
    );

    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::File);
    let l = loaded(&app);
    let file = name_of(l, l.flame.selected);
    assert!(
        line.contains(&format!(" {file}:")),
        "the selection became the file of {line}: {file}"
    );
    assert!(shown_names(l).iter().all(|n| !n.contains(".go:")));

    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Function);
    let l = loaded(&app);
    let mut names = shown_names(l);
    names.sort();
    assert_eq!(names, function_names, "back where it began");
    assert_eq!(l.tree.total(l.tree.root()), root_total);
}

#[test]
fn a_focus_is_carried_to_every_line_of_its_function() {
    let focus = Transform::Focus {
        pattern: r"^main\.buildIndex$".into(),
    };
    let mut app = open(&sample("go-loganalytics.pb.gz"), vec![focus]);
    let before = loaded(&app).tree.total(loaded(&app).tree.root());
    assert!(before > 0);

    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Line, "{}", message(&app));
    let l = loaded(&app);
    assert_eq!(l.transforms.len(), 1, "the focus is still there");
    let Transform::Focus { pattern } = &l.transforms[0] else {
        panic!("a focus: {:?}", l.transforms)
    };
    assert!(pattern.contains("main\\.buildIndex "), "{pattern}");
    assert_eq!(l.tree.total(l.tree.root()), before, "the same samples");
    let lines: Vec<_> = shown_names(l)
        .into_iter()
        .filter(|n| n.starts_with("main.buildIndex "))
        .collect();
    assert!(!lines.is_empty());

    // And back: the same focus, the same total.
    press(&mut app, 'g');
    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Function);
    let l = loaded(&app);
    assert_eq!(l.tree.total(l.tree.root()), before);
}

#[test]
fn a_hidden_path_is_not_carried_over_and_says_so() {
    let mut app = open(&sample("go-loganalytics.pb.gz"), Vec::new());
    select_heaviest(&mut app, 3);
    let hidden = name_of(loaded(&app), loaded(&app).flame.selected);
    press(&mut app, 'H');
    let l = loaded(&app);
    assert!(
        matches!(l.transforms.last(), Some(Transform::Hide { .. })),
        "h hides: {:?}",
        l.transforms
    );
    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Line);
    assert!(loaded(&app).transforms.is_empty());
    let m = message(&app);
    assert!(m.contains("not carried over") && m.contains(&hidden), "{m}");
    // Back at the granularity it was made at, the same path is hidden again.
    press(&mut app, 'g');
    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Function);
    let l = loaded(&app);
    assert!(
        matches!(l.transforms.as_slice(), [Transform::Hide { path }] if path.last() == Some(&hidden)),
        "{:?}",
        l.transforms
    );
}

#[test]
fn a_profile_without_source_files_refuses_and_says_why() {
    let mut app = open(&sample("pyspy-orders-report.folded"), Vec::new());
    let frames = loaded(&app).profile.frames.len();
    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Function);
    assert_eq!(loaded(&app).profile.frames.len(), frames);
    let m = message(&app);
    assert!(
        m.starts_with("granularity:") && m.contains("function is all"),
        "{m}"
    );
}

#[test]
fn an_input_that_cannot_be_read_again_refuses() {
    let mut app = open(&sample("go-loganalytics.pb.gz"), Vec::new());
    app.reread = None;
    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Function);
    assert!(
        message(&app).contains("cannot be read again"),
        "{}",
        message(&app)
    );
}

#[test]
fn the_table_keeps_its_row_by_function() {
    let mut app = open(&sample("go-loganalytics.pb.gz"), Vec::new());
    app.handle_event(&Event::Key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)));
    assert_eq!(app.view, ember::ui::app::View::Table);
    // Down to a row of a Go function with lines: main.buildIndex.
    let target = "main.buildIndex";
    for _ in 0..200 {
        let l = loaded(&app);
        if let Some(f) = l.table.selected()
            && l.profile.frames.name(f) == target
        {
            break;
        }
        press(&mut app, 'j');
    }
    let l = loaded(&app);
    assert_eq!(
        l.table
            .selected()
            .map(|f| l.profile.frames.name(f).into_owned())
            .as_deref(),
        Some(target)
    );
    press(&mut app, 'g');
    let l = loaded(&app);
    let row = l
        .table
        .selected()
        .map(|f| l.profile.frames.name(f).into_owned());
    assert!(
        row.as_deref()
            .is_some_and(|r| r.starts_with("main.buildIndex ")),
        "{row:?}"
    );
    assert_eq!(app.view, ember::ui::app::View::Table);
}

#[test]
fn a_followed_file_is_read_again_by_its_worker() {
    use ember::ui::runtime::live::{self, Settings};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cpu.pb.gz");
    std::fs::copy(sample("go-loganalytics.pb.gz"), &file).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = live::spawn_file(
        ember::ui::live_report(tx),
        file.clone(),
        LoadOptions::default(),
        Progress::new(),
        Orientation::Icicle,
        Settings::default(),
    )
    .unwrap();
    let first = common::next_view(&rx);
    assert_eq!(first.granularity, Granularity::Function);
    let mut app = App::new(
        "cpu.pb.gz".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(first.loaded),
        Orientation::Icicle,
    );
    app.live = Some(worker);
    let total = loaded(&app).tree.total(loaded(&app).tree.root());
    press(&mut app, 'g');
    assert!(
        message(&app).starts_with("reading at line"),
        "{}",
        message(&app)
    );
    let again = common::next_view(&rx);
    assert_eq!(again.granularity, Granularity::Line);
    app.reloaded(again);
    assert_eq!(app.granularity, Granularity::Line);
    let l = loaded(&app);
    assert!(shown_names(l).iter().any(|n| n.contains(".go:")));
    assert_eq!(l.tree.total(l.tree.root()), total);
}

#[test]
fn a_stream_or_a_focused_live_view_refuses() {
    use ember::ui::runtime::live::{Followed, Live};
    let mut app = open(&sample("go-loganalytics.pb.gz"), Vec::new());
    app.live = Some(Live::detached(Followed::Stdin));
    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Function);
    assert!(message(&app).contains("stream"), "{}", message(&app));

    let focus = Transform::Focus {
        pattern: "main".into(),
    };
    let mut app = open(&sample("go-loganalytics.pb.gz"), vec![focus]);
    app.live = Some(Live::detached(Followed::File));
    press(&mut app, 'g');
    assert_eq!(app.granularity, Granularity::Function);
    assert!(message(&app).contains("undo"), "{}", message(&app));
}
