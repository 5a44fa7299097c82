//! Triage views through the App, without a terminal except ratatui's TestBackend:
//! the function table, focusing a function from it, and search.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ember::model::{NodeId, SortKey};
use ember::ui::app::{App, Loaded, Phase, View};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use common::{default_tree, load_bytes};

/// alloc is called from two places (parse 5, render 3); render has self 2.
const PROFILE: &[u8] = b"main;parse_json;alloc 5
main;render;alloc 3
main;render 2
main;hash_insert 4
";

fn app() -> App {
    let p = load_bytes(PROFILE);
    let tree = default_tree(&p);
    let loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
    App::new(
        "triage.folded".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    )
}

fn draw(app: &mut App) -> String {
    let mut term = Terminal::new(TestBackend::new(100, 20)).unwrap();
    ember::ui::draw_frame(&mut term, app).unwrap();
    let buf = term.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn loaded(app: &App) -> &Loaded {
    app.loaded().expect("loaded")
}

fn selected_name(app: &App) -> String {
    let l = loaded(app);
    l.tree
        .frame(&l.profile, l.flame.selected)
        .map_or("all".into(), |f| l.profile.frames.name(f).into_owned())
}

/// Selects `name` on the row under main, moving right at most a few times.
fn select_child_of_main(app: &mut App, name: &str) {
    draw(app);
    app.update(Action::MoveDown); // main
    app.update(Action::MoveDown); // its heaviest child
    for _ in 0..5 {
        if selected_name(app) == name {
            return;
        }
        draw(app);
        app.update(Action::MoveRight);
    }
    panic!("{name} not reached; at {}", selected_name(app));
}

fn type_keys(app: &mut App, text: &str) {
    for c in text.chars() {
        app.handle_event(&Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
    }
}

#[test]
fn table_lists_functions_with_call_sites_and_sorts_both_ways() {
    let mut app = app();
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Table);
    let screen = draw(&mut app);
    // alloc: self 8 of 14, two distinct callers; sorted by self, largest first.
    let first_row = screen.lines().nth(2).unwrap();
    assert!(
        first_row.contains("alloc") && first_row.contains("57.14%"),
        "{first_row}"
    );
    assert!(
        first_row.trim_end().ends_with("2  alloc"),
        "sites column: {first_row}"
    );
    app.update(Action::SortSelf); // same key: ascending now
    assert!(!loaded(&app).table.descending);
    app.update(Action::SortName);
    assert_eq!(loaded(&app).table.sort, SortKey::Name);
    let screen = draw(&mut app);
    let names: Vec<&str> = screen
        .lines()
        .skip(2)
        .take(5)
        .map(|l| l.split_whitespace().last().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        ["alloc", "hash_insert", "main", "parse_json", "render"]
    );
}

#[test]
fn enter_on_a_table_row_shows_every_occurrence_in_the_flame_view() {
    let mut app = app();
    app.update(Action::ToggleView);
    draw(&mut app);
    app.update(Action::Zoom); // cursor on alloc (largest self)
    assert_eq!(app.view, View::Flame);
    assert_eq!(selected_name(&app), "alloc");
    // The heaviest occurrence: under parse_json (5), not render (3).
    let l = loaded(&app);
    let parent = l.tree.parent(&l.profile, l.flame.selected).unwrap();
    assert_eq!(
        l.profile
            .frames
            .name(l.tree.frame(&l.profile, parent).unwrap()),
        "parse_json"
    );
    let m = app.search.matches.as_ref().expect("search set");
    assert_eq!(m.count, 1);
    // Both occurrences are reachable with n.
    app.update(Action::NextMatch);
    let l = loaded(&app);
    let parent = l.tree.parent(&l.profile, l.flame.selected).unwrap();
    assert_eq!(
        l.profile
            .frames
            .name(l.tree.frame(&l.profile, parent).unwrap()),
        "render"
    );
}

#[test]
fn search_reports_coverage_of_all_and_of_the_zoom() {
    let mut app = app();
    app.update(Action::Search);
    assert!(app.search.editing);
    type_keys(&mut app, "alloc");
    let screen = draw(&mut app);
    // alloc covers 8 of 14 samples.
    assert!(screen.contains("1 frames · 57.14% of samples"), "{screen}");
    app.handle_event(&Event::Key(KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::NONE,
    )));
    assert!(!app.search.editing);
    // Zoom into render (5 samples, 3 of them in alloc).
    select_child_of_main(&mut app, "render");
    app.update(Action::Zoom);
    let screen = draw(&mut app);
    assert!(
        screen.contains("57.14% of samples · 60.00% of zoom"),
        "{screen}"
    );
    // Esc clears the search before it would unzoom.
    app.update(Action::Unzoom);
    assert!(!app.search.active());
    assert_ne!(loaded(&app).flame.zoom, NodeId::ROOT);
}

/// In callers/callees the search line says what its share is of: the
/// samples through the function (all 8 of them pass through alloc), then the
/// whole profile (8 of 14), not a bare "100.00% of samples".
#[test]
fn search_in_callers_and_callees_names_what_its_share_is_of() {
    let mut app = app();
    app.update(Action::Search);
    type_keys(&mut app, "alloc");
    app.handle_event(&Event::Key(KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::NONE,
    )));
    app.update(Action::NextMatch);
    assert_eq!(selected_name(&app), "alloc");
    app.update(Action::Sandwich);
    assert_eq!(app.view, View::Sandwich);
    let wide = common::screen_of(&mut app, 250, 60);
    assert!(
        wide.contains("100.00% of the samples through alloc · 57.14% of all"),
        "{wide}"
    );
    assert!(!wide.contains("100.00% of samples"), "{wide}");
    // At 80 columns the basis is said before the row runs out.
    let small = common::screen_of(&mut app, 80, 24);
    assert!(
        small.contains("100.00% of the samples through alloc"),
        "{small}"
    );
}

#[test]
fn a_bad_regex_is_reported_not_fatal() {
    let mut app = app();
    app.update(Action::Search);
    app.handle_event(&Event::Key(KeyEvent::new(
        KeyCode::Char('r'),
        KeyModifiers::CONTROL,
    )));
    type_keys(&mut app, "(alloc");
    assert!(app.search.error.is_some());
    assert!(app.search.matches.is_none());
    type_keys(&mut app, ")");
    assert!(app.search.error.is_none());
    assert_eq!(app.search.matches.as_ref().map(|m| m.count), Some(1));
}

#[test]
fn transform_keys_stack_show_in_the_header_and_undo_in_order() {
    let mut app = app();
    draw(&mut app);
    select_child_of_main(&mut app, "render");
    app.update(Action::Focus);
    let l = loaded(&app);
    assert_eq!(l.tree.total(NodeId::ROOT), 5, "only stacks through render");
    assert_eq!(l.transforms.len(), 1);
    assert_eq!(
        selected_name(&app),
        "render",
        "the place is re-found after the rebuild"
    );
    let screen = draw(&mut app);
    assert!(screen.contains("focus: ^render$"), "{screen}");
    // Merge alloc into its callers: render keeps all 5, now as self time.
    app.update(Action::MoveDown);
    assert_eq!(selected_name(&app), "alloc");
    app.update(Action::MergeFunction);
    let l = loaded(&app);
    assert_eq!(l.tree.total(NodeId::ROOT), 5);
    assert_eq!(l.transforms.len(), 2);
    app.update(Action::Undo);
    assert_eq!(loaded(&app).transforms.len(), 1);
    app.update(Action::Undo);
    let l = loaded(&app);
    assert!(l.transforms.is_empty() && l.base.is_none());
    assert_eq!(l.tree.total(NodeId::ROOT), 14);
}

#[test]
fn tab_cycles_to_an_inverted_tree_and_back_keeping_the_place() {
    let mut app = app();
    select_child_of_main(&mut app, "render");
    app.update(Action::ToggleView); // table
    app.update(Action::ToggleView); // inverted
    assert_eq!(app.view, View::Inverted);
    let l = loaded(&app);
    assert!(l.inverted);
    // Leaves are roots: alloc gathers its 8 samples from both callers.
    let roots: Vec<(String, i64)> = l
        .tree
        .child_ids(NodeId::ROOT)
        .map(|c| {
            (
                l.profile
                    .frames
                    .name(l.tree.frame(&l.profile, c).unwrap())
                    .into_owned(),
                l.tree.total(c),
            )
        })
        .collect();
    assert_eq!(
        roots,
        [
            ("alloc".into(), 8),
            ("hash_insert".into(), 4),
            ("render".into(), 2)
        ]
    );
    // Transforms are refused here rather than applied to the inverted profile.
    app.update(Action::Focus);
    assert!(loaded(&app).transforms.is_empty());
    app.update(Action::ToggleView); // back to the flame view
    let l = loaded(&app);
    assert!(!l.inverted);
    assert_eq!(l.tree.total(NodeId::ROOT), 14);
    assert_eq!(selected_name(&app), "render");
}

/// The name and total of the active sandwich pane's selection.
fn pane_selection(app: &App) -> (String, i64) {
    let sw = loaded(app).sandwich.as_deref().expect("sandwich open");
    let p = sw.pane();
    let name = p
        .tree
        .frame(&p.profile, p.flame.selected)
        .map_or("all".into(), |f| p.profile.frames.name(f).into_owned());
    (name, p.tree.total(p.flame.selected))
}

#[test]
fn sandwich_shows_callers_above_and_callees_below_merged_across_sites() {
    let mut app = app();
    select_child_of_main(&mut app, "render");
    app.update(Action::Sandwich);
    assert_eq!(app.view, View::Sandwich);
    let sw = loaded(&app).sandwich.as_deref().expect("open");
    // render: 5 samples, called from main; calls alloc (3).
    assert_eq!(sw.through, 5);
    assert_eq!(sw.all, 14);
    assert_eq!(pane_selection(&app), ("render".into(), 5));
    // Down from the function goes into its callees...
    app.update(Action::MoveDown);
    assert_eq!(pane_selection(&app), ("alloc".into(), 3));
    // ... and back up past the function crosses into the callers.
    app.update(Action::MoveUp);
    app.update(Action::MoveUp);
    assert_eq!(pane_selection(&app), ("render".into(), 5));
    app.update(Action::MoveUp);
    assert_eq!(pane_selection(&app), ("main".into(), 5));
    let screen = draw(&mut app);
    assert!(screen.contains("▲ callers"), "{screen}");
    assert!(screen.contains("render · 35.7% of all"), "{screen}");

    // Re-centred on alloc (from its callees pane): two call sites merged.
    app.update(Action::MoveDown); // back to render in the callers pane
    app.update(Action::MoveDown); // render in the callees pane
    app.update(Action::MoveDown); // alloc
    app.update(Action::Sandwich);
    let sw = loaded(&app).sandwich.as_deref().expect("open");
    assert_eq!(sw.through, 8);
    let callers: Vec<(String, i64)> = sw
        .callers
        .tree
        .child_ids(sw.callers.home)
        .map(|n| {
            let f = sw.callers.tree.frame(&sw.callers.profile, n).unwrap();
            let name = sw.callers.profile.frames.name(f).into_owned();
            (name, sw.callers.tree.total(n))
        })
        .collect();
    assert_eq!(
        callers,
        [("parse_json".into(), 5), ("render".into(), 3)],
        "callers of alloc"
    );
    // Esc at the function's own zoom goes back where the sandwich was opened.
    app.update(Action::Unzoom);
    assert_eq!(app.view, View::Flame);
    assert!(loaded(&app).sandwich.is_none());
}

#[test]
fn sandwich_opens_from_the_table_and_refuses_transforms() {
    let mut app = app();
    app.update(Action::ToggleView);
    draw(&mut app);
    app.update(Action::Sandwich); // cursor on alloc
    assert_eq!(app.view, View::Sandwich);
    assert_eq!(pane_selection(&app), ("alloc".into(), 8));
    app.update(Action::Focus);
    assert!(loaded(&app).transforms.is_empty());
    assert!(loaded(&app).transform_error.is_some());
    // Zooming inside a pane and back out stays in the sandwich.
    app.update(Action::MoveUp); // into the callers pane
    app.update(Action::MoveUp); // parse_json (heaviest caller)
    assert_eq!(pane_selection(&app), ("parse_json".into(), 5));
    app.update(Action::Zoom);
    app.update(Action::Unzoom);
    assert_eq!(app.view, View::Sandwich);
    app.update(Action::Unzoom);
    assert_eq!(app.view, View::Table);
}

#[test]
fn the_sandwich_draws_at_any_size_without_panicking() {
    let mut app = app();
    select_child_of_main(&mut app, "render");
    app.update(Action::Sandwich);
    app.update(Action::ToggleDetail);
    for (w, h) in [
        (1, 1),
        (2, 2),
        (10, 3),
        (20, 4),
        (30, 6),
        (80, 24),
        (200, 8),
    ] {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        ember::ui::draw_frame(&mut term, &mut app).unwrap();
        app.update(Action::MoveUp);
    }
    // Still in the sandwich, on a real frame of one of its panes.
    assert_eq!(app.view, View::Sandwich);
    assert_ne!(pane_selection(&app).0, "all");
}
