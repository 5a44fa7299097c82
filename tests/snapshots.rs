//! Screen snapshots (insta) of the whole UI on a small fixture, drawn through
//! ratatui's `TestBackend` with the monochrome theme so they do not depend on the
//! terminal. Review changes with `cargo insta review`, or regenerate with
//! `INSTA_UPDATE=always cargo test --test snapshots` and read the diff.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use ember::ui::app::{App, Loaded, Phase};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;

const FIXTURE: &str = "shared-callees.folded";

/// The fixture loaded, with `app;handle_request;parse_json` selected.
fn app(orientation: Orientation) -> App {
    let p = common::load_path(&common::repo().join("tests/fixtures").join(FIXTURE))
        .unwrap_or_else(|e| panic!("{e}"));
    let tree = common::default_tree(&p);
    let mut loaded = Loaded::new(p, tree, orientation, Duration::ZERO);
    let n = common::node(
        &loaded.profile,
        &loaded.tree,
        &["app", "handle_request", "parse_json"],
    );
    loaded.flame.select(&loaded.tree, &loaded.profile, n);
    let mut app = App::new(
        FIXTURE.into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        orientation,
    );
    // What the event loop does after the first message: the lint, inline here.
    app.ensure_lint();
    app
}

/// The screen as text, one line per row, trailing blanks trimmed.
fn screen(app: &mut App, w: u16, h: u16) -> String {
    common::screen_of(app, w, h)
}

#[test]
fn icicle_80x24() {
    insta::assert_snapshot!(screen(&mut app(Orientation::Icicle), 80, 24));
}

#[test]
fn flame_80x24() {
    insta::assert_snapshot!(screen(&mut app(Orientation::Flame), 80, 24));
}

#[test]
fn icicle_40x12() {
    insta::assert_snapshot!(screen(&mut app(Orientation::Icicle), 40, 12));
}

#[test]
fn flame_40x12() {
    insta::assert_snapshot!(screen(&mut app(Orientation::Flame), 40, 12));
}

#[test]
fn help_overlay_80x24() {
    let mut app = app(Orientation::Icicle);
    app.update(Action::Help);
    assert!(app.show_help);
    insta::assert_snapshot!(screen(&mut app, 80, 24));
}

/// The function table, the inverted tree and the detail panel at 80x24.
#[test]
fn triage_views_80x24() {
    use ember::ui::chrome::keymap::Action;
    let mut app = app(Orientation::Icicle);
    app.update(Action::ToggleView);
    insta::assert_snapshot!("table_80x24", screen(&mut app, 80, 24));
    app.update(Action::ToggleView);
    insta::assert_snapshot!("inverted_80x24", screen(&mut app, 80, 24));
    app.update(Action::ToggleView);
    app.update(Action::ToggleDetail);
    app.update(Action::Widest);
    insta::assert_snapshot!("detail_80x24", screen(&mut app, 80, 24));
    app.update(Action::Sandwich);
    insta::assert_snapshot!("sandwich_80x24", screen(&mut app, 80, 24));
}

/// `--from` past the end: the refusal on the first frame, on a row of its own
/// when it does not fit beside the rest, with `? help` still on the first row.
#[test]
fn a_refused_range_on_the_first_frame_80x24_and_250x60() {
    use ember::ui::runtime::live::{self, Settings};
    let p = common::load_path(&common::repo().join("samples/perf-python-wordindex-small.perf.gz"))
        .unwrap_or_else(|e| panic!("{e}"));
    let settings = Settings {
        time: ember::model::timerange::TimeSelection {
            from: Some("99999".into()),
            ..Default::default()
        },
        ..Settings::default()
    };
    let (loaded, _) = live::build(p, &settings, Orientation::Icicle, std::time::Instant::now());
    let mut app = App::new(
        "perf-python-wordindex-small.perf.gz".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(loaded),
        Orientation::Icicle,
    );
    for (w, h) in [(80, 24), (250, 60)] {
        let s = screen(&mut app, w, h);
        let first = s.lines().next().unwrap_or_default();
        assert!(
            first.ends_with("· ? help") || first.ends_with("· ?"),
            "{w}x{h}: {first}"
        );
        let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains(
                "holds no samples (the profile spans 0-4.466 s); showing the whole profile"
            ),
            "{w}x{h}:\n{s}"
        );
        insta::assert_snapshot!(format!("refused_range_{w}x{h}"), s);
    }
}
