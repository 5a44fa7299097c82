//! The source pane (`L`): the selected function's lines beside its code, the
//! same figures as `ember list`, at 80x24 and 200x50; its keys; and the way
//! it is made when the view is at function granularity (the input read again
//! at line granularity on the job thread, here run inline).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use ember::formats::LoadOptions;
use ember::model::granularity::Granularity;
use ember::output::listing::SourceOptions;
use ember::sources::input::Source;
use ember::ui::app::{App, Loaded, Phase};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;

/// The bundled Go profile read at `granularity`, its source found by
/// trimming the recorded prefix and looking under `samples/src`.
fn app_at(granularity: Granularity) -> App {
    let path = common::repo().join("samples/go-loganalytics.pb.gz");
    let options = LoadOptions {
        granularity,
        ..LoadOptions::default()
    };
    let p = ember::formats::load(
        &Source::Path(path.clone()),
        &options,
        &ember::sources::input::Progress::new(),
    )
    .unwrap();
    let tree = common::default_tree(&p);
    let loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
    let mut app = App::new(
        "go-loganalytics.pb.gz".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    );
    app.granularity = granularity;
    app.reread = Some((Source::Path(path), options));
    app.source_options = SourceOptions {
        source_paths: vec![common::repo().join("samples/src")],
        trim_paths: vec!["/work/main/samples/src".into()],
    };
    app
}

/// Selects the heaviest node of `function` through the search (exact).
fn select(app: &mut App, function: &str) {
    let l = app.loaded().unwrap();
    let (p, tree) = (&l.profile, &l.tree);
    let n = (1..tree.len() as u32)
        .map(ember::model::NodeId)
        .filter(|&n| {
            tree.frame(p, n).is_some_and(|f| {
                let name = p.frames.name(f);
                name == function || name.starts_with(&format!("{function} "))
            })
        })
        .max_by_key(|&n| tree.total(n))
        .unwrap();
    let l = match &mut app.phase {
        Phase::Ready(l) => l,
        Phase::Loading { .. } => unreachable!(),
    };
    l.flame.select(&l.tree, &l.profile, n);
}

#[test]
fn the_pane_lists_the_selected_functions_lines_with_their_cost() {
    let mut app = app_at(Granularity::Line);
    select(&mut app, "main.sortAll");
    app.update(Action::Source);
    let pane = app.source.as_deref().expect("the pane");
    assert_eq!(pane.function, "main.sortAll");
    // The cursor starts on the hottest line: 210, the SliceStable call (150 ms).
    assert_eq!(pane.line(), Some(210));
    for (w, h) in [(80, 24), (200, 50)] {
        insta::assert_snapshot!(format!("source_{w}x{h}"), common::screen_of(&mut app, w, h));
    }
    let screen = common::screen_of(&mut app, 200, 50);
    assert!(
        screen.contains("main.sortAll in /work/main/samples/src/go-workload/main.go"),
        "{screen}"
    );
    // The hottest line gets the full bar, 40 of 150 ms a third of one.
    assert!(
        screen.contains("150 ms    210 █     sort.SliceStable(aggs"),
        "{screen}"
    );
    assert!(
        screen.contains(" 40 ms    200 ▍     sort.Slice(cp"),
        "{screen}"
    );
    // w steps to the next hot line (wrapping), W back; j moves a line.
    app.update(Action::Widest);
    assert_eq!(app.source.as_deref().unwrap().line(), Some(200));
    app.update(Action::WidestPrev);
    assert_eq!(app.source.as_deref().unwrap().line(), Some(210));
    app.update(Action::MoveDown);
    assert_eq!(app.source.as_deref().unwrap().line(), Some(211));
    // Keys of the view wait while the pane is open; Esc closes it.
    app.update(Action::ToggleView);
    assert_eq!(app.view, ember::ui::app::View::Flame);
    app.update(Action::Unzoom);
    assert!(app.source.is_none());
}

#[test]
fn at_function_granularity_the_lines_are_read_again_and_enter_goes_to_the_function() {
    let mut app = app_at(Granularity::Function);
    select(&mut app, "main.sortAll");
    app.update(Action::Source);
    let pane = app
        .source
        .as_deref()
        .expect("the pane, built by the inline job");
    assert_eq!(pane.line(), Some(210));
    let cum: i64 = pane.rows.iter().filter(|r| !r.header).map(|r| r.cum).sum();
    assert_eq!(
        cum, 190_000_000,
        "40 ms + 150 ms, as go tool pprof -list says"
    );
    // Enter: back to the flame view on the function.
    app.update(Action::Source);
    app.update(Action::Source);
    app.update(Action::Zoom);
    assert!(app.source.is_none());
    let l = app.loaded().unwrap();
    let f = l.tree.frame(&l.profile, l.flame.selected).unwrap();
    assert_eq!(l.profile.frames.name(f), "main.sortAll");
    // A stream cannot be read again: said, no pane.
    app.reread = None;
    app.update(Action::Source);
    assert!(app.source.is_none());
    let screen = common::screen_of(&mut app, 120, 24);
    assert!(screen.contains("--granularity line"), "{screen}");
}

/// In a comparison read at line granularity the pane gives each line before
/// -> after under the header's normalisation, the change and its mark
/// (▲ grew beyond noise), at 80x24 and 200x50; at function granularity it
/// says how to get lines.
#[test]
fn in_a_comparison_the_pane_gives_each_lines_change() {
    let fx = common::repo().join("tests/fixtures");
    let load = |granularity| {
        ember::formats::load_diff(
            [
                &Source::Path(fx.join("go-diff-before.pb.gz")),
                &Source::Path(fx.join("go-diff-after.pb.gz")),
            ],
            &LoadOptions {
                granularity,
                ..LoadOptions::default()
            },
            false,
            &ember::sources::input::Progress::several(),
        )
        .unwrap()
    };
    let app_of = |granularity| {
        let p = load(granularity);
        let tree = common::default_tree(&p);
        let loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
        let mut app = App::new(
            "go-diff".into(),
            Keymap::default_map(),
            Theme::new(ColorDepth::Mono),
            Phase::Ready(Box::new(loaded)),
            Orientation::Icicle,
        );
        app.granularity = granularity;
        app.source_options = SourceOptions {
            source_paths: vec![fx.join("src")],
            trim_paths: vec!["/work/main/tests/fixtures/src".into()],
        };
        app
    };
    let mut app = app_of(Granularity::Line);
    select(&mut app, "main.encode");
    app.update(Action::Source);
    let pane = app.source.as_deref().expect("the pane");
    let row = pane.rows.iter().find(|r| r.line == Some(68)).unwrap();
    let c = row.change.expect("a change on line 68");
    assert_eq!(c.verdict, ember::model::diff::Verdict::Significant);
    assert!(c.value[1] > c.value[0]);
    for (w, h) in [(80, 24), (200, 50)] {
        insta::assert_snapshot!(
            format!("source_diff_{w}x{h}"),
            common::screen_of(&mut app, w, h)
        );
    }
    let screen = common::screen_of(&mut app, 200, 50);
    assert!(screen.contains("▲     68"), "{screen}");
    let mut app = app_of(Granularity::Function);
    select(&mut app, "main.encode");
    app.update(Action::Source);
    assert!(app.source.is_none());
    let screen = common::screen_of(&mut app, 120, 24);
    assert!(screen.contains("ember diff --granularity line"), "{screen}");
}
