//! Every view of the viewer, snapshotted at 80x24 and at 200x50 (monochrome,
//! through ratatui's `TestBackend`): the icicle and flame graphs, the
//! function table, the inverted tree, callers/callees, the timeline's strips
//! and its heat map, and a comparison as one differential view, as two linked
//! panes and as the delta table. Regenerate with `INSTA_UPDATE=always cargo
//! test --test snapshots_views` and read the diff.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use ember::formats::{self, LoadOptions};
use ember::sources::input::{Progress, Source};
use ember::ui::app::{App, Loaded, Phase, View};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;

const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

fn app_of(p: ember::model::Profile, title: &str, orientation: Orientation) -> App {
    let tree = common::default_tree(&p);
    let loaded = Loaded::new(p, tree, orientation, Duration::ZERO);
    App::new(
        title.into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        orientation,
    )
}

fn single(orientation: Orientation) -> App {
    let p =
        common::load_path(&common::repo().join("tests/fixtures/shared-callees.folded")).unwrap();
    let mut app = app_of(p, "shared-callees.folded", orientation);
    app.ensure_lint();
    app
}

fn snap(app: &mut App, view: &str) {
    for (w, h) in SIZES {
        insta::assert_snapshot!(format!("{view}_{w}x{h}"), common::screen_of(app, w, h));
    }
}

#[test]
fn graphs_table_inverted_and_callers_callees() {
    snap(&mut single(Orientation::Icicle), "icicle");
    snap(&mut single(Orientation::Flame), "flame");
    let mut app = single(Orientation::Icicle);
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Table);
    snap(&mut app, "table");
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Inverted);
    snap(&mut app, "inverted");
    app.update(Action::ToggleView);
    app.update(Action::Widest);
    app.update(Action::Sandwich);
    assert_eq!(app.view, View::Sandwich);
    snap(&mut app, "sandwich");
}

#[test]
fn the_timeline_strips_and_its_heat_map() {
    let p = common::load_path(&common::repo().join("samples/perf-python-wordindex-small.perf.gz"))
        .unwrap();
    let mut app = app_of(
        p,
        "perf-python-wordindex-small.perf.gz",
        Orientation::Icicle,
    );
    let wa: Vec<f32> = (0..12)
        .map(|i| if i % 4 < 2 { 5.0 } else { 45.0 })
        .collect();
    app.contexts_read(vec![Ok(common::log("vmstat.log", 0, &wa))]);
    assert!(app.timeline.shown);
    snap(&mut app, "timeline");
    app.update(Action::ToggleHeatMap);
    snap(&mut app, "heatmap");
}

#[test]
fn a_comparison_differential_linked_and_as_a_table() {
    let fx = |n: &str| Source::Path(common::repo().join("tests/fixtures").join(n));
    let p = formats::load_diff(
        [&fx("diff-before.folded"), &fx("diff-after.folded")],
        &LoadOptions::default(),
        false,
        &Progress::several(),
    )
    .unwrap();
    let mut app = app_of(
        p,
        "diff-before.folded → diff-after.folded",
        Orientation::Icicle,
    );
    snap(&mut app, "diff");
    app.update(Action::SplitPanes);
    snap(&mut app, "diff_linked");
    app.update(Action::SplitPanes);
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Table);
    snap(&mut app, "delta_table");
}
