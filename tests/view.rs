//! The flame view's state without a terminal: zoom, history, navigation, rebuilds,
//! orientation; and drawing through ratatui's `TestBackend` where navigation needs
//! a layout, or where the drawing itself is under test (sizes, hostile names).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ember::model::NodeId;
use ember::sources::input::Progress;
use ember::ui::app::{App, Loaded, Phase};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::{FlameState, Orientation};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use unicode_width::UnicodeWidthStr;

use common::{default_tree, load_bytes, node, stack_text};

/// main(18) -> idle(1), parse(5) -> {ast 2, lex 3}, run(12) -> {exec(10) -> {cpu 6, io 4}, gc 2}
const PROFILE: &[u8] = b"main;parse;lex 3
main;parse;ast 2
main;run;exec;io 4
main;run;exec;cpu 6
main;run;gc 2
main;idle 1
";

/// The same profile, lines in another order, so every stack gets another id.
const SHUFFLED: &[u8] = b"main;run;gc 2
main;run;exec;cpu 6
main;idle 1
main;parse;ast 2
main;run;exec;io 4
main;parse;lex 3
";

fn loaded_from(text: &[u8], orientation: Orientation) -> Loaded {
    let p = load_bytes(text);
    let tree = default_tree(&p);
    Loaded::new(p, tree, orientation, Duration::ZERO)
}

fn app_from(text: &[u8], orientation: Orientation) -> App {
    App::new(
        "view.folded".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded_from(text, orientation))),
        orientation,
    )
}

fn app() -> App {
    app_from(PROFILE, Orientation::Icicle)
}

fn loaded(app: &mut App) -> &mut Loaded {
    match &mut app.phase {
        Phase::Ready(l) => l,
        Phase::Loading { .. } => panic!("the app is still loading"),
    }
}

fn select(app: &mut App, path: &[&str]) {
    let l = loaded(app);
    let n = node(&l.profile, &l.tree, path);
    l.flame.select(&l.tree, &l.profile, n);
}

fn path_of(app: &mut App, n: NodeId) -> String {
    let l = loaded(app);
    stack_text(&l.profile, &l.tree, n)
}

fn selected(app: &mut App) -> String {
    let n = loaded(app).flame.selected;
    path_of(app, n)
}

fn zoom(app: &mut App) -> String {
    let n = loaded(app).flame.zoom;
    path_of(app, n)
}

fn history(app: &mut App) -> Vec<String> {
    let h = loaded(app).flame.history.clone();
    h.into_iter().map(|n| path_of(app, n)).collect()
}

/// Draws the whole screen at `w`x`h` and returns its rows as text.
fn render(app: &mut App, w: u16, h: u16) -> Vec<String> {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    ember::ui::draw_frame(&mut term, app).expect("draw");
    let buf = term.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            // A wide character fills two cells; the second one is not text.
            let mut row = String::new();
            let mut x = 0;
            while x < buf.area.width {
                let sym = buf[(x, y)].symbol();
                row.push_str(sym);
                x += u16::try_from(sym.width().max(1)).unwrap_or(1);
            }
            row
        })
        .collect()
}

fn key(code: KeyCode) -> Event {
    Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

#[test]
fn zoom_then_unzoom_returns_to_the_previous_zoom() {
    let mut app = app();
    select(&mut app, &["main", "run"]);
    app.update(Action::Zoom);
    assert_eq!(zoom(&mut app), "main;run");
    select(&mut app, &["main", "run", "exec"]);
    app.update(Action::Zoom);
    assert_eq!(zoom(&mut app), "main;run;exec");
    app.update(Action::Unzoom);
    assert_eq!(zoom(&mut app), "main;run");
    // The selection is kept, and it is inside the zoomed subtree.
    assert_eq!(selected(&mut app), "main;run;exec");
}

#[test]
fn zoom_history_of_several_steps_unwinds_in_order() {
    let mut app = app();
    let steps: [&[&str]; 4] = [
        &["main"],
        &["main", "run"],
        &["main", "run", "exec"],
        &["main", "run", "exec", "cpu"],
    ];
    for s in steps {
        select(&mut app, s);
        app.update(Action::Zoom);
    }
    assert_eq!(zoom(&mut app), "main;run;exec;cpu");
    assert_eq!(history(&mut app), ["", "main", "main;run", "main;run;exec"]);
    for expected in ["main;run;exec", "main;run", "main", ""] {
        app.update(Action::Unzoom);
        assert_eq!(zoom(&mut app), expected);
    }
    assert!(history(&mut app).is_empty());
    app.update(Action::Unzoom);
    assert_eq!(zoom(&mut app), "");
}

#[test]
fn zooming_on_the_zoom_root_adds_no_history() {
    let mut app = app();
    select(&mut app, &["main", "run"]);
    app.update(Action::Zoom);
    app.update(Action::Zoom);
    assert_eq!(history(&mut app), [""]);
}

#[test]
fn reset_clears_the_history() {
    let mut app = app();
    select(&mut app, &["main", "run"]);
    app.update(Action::Zoom);
    select(&mut app, &["main", "run", "exec"]);
    app.update(Action::Zoom);
    app.update(Action::Reset);
    assert_eq!(zoom(&mut app), "");
    assert!(history(&mut app).is_empty());
    assert_eq!(selected(&mut app), "main;run;exec");
    app.update(Action::Unzoom);
    assert_eq!(zoom(&mut app), "");
}

#[test]
fn moving_down_then_up_returns_to_the_same_node() {
    let mut app = app();
    select(&mut app, &["main", "parse"]);
    app.update(Action::MoveDown);
    // The heaviest child first.
    assert_eq!(selected(&mut app), "main;parse;lex");
    app.update(Action::MoveUp);
    assert_eq!(selected(&mut app), "main;parse");
}

#[test]
fn moving_up_then_down_returns_to_the_child_it_came_from() {
    let mut app = app();
    // io is the lighter child of exec; down must come back to it, not to cpu.
    select(&mut app, &["main", "run", "exec", "io"]);
    app.update(Action::MoveUp);
    assert_eq!(selected(&mut app), "main;run;exec");
    app.update(Action::MoveDown);
    assert_eq!(selected(&mut app), "main;run;exec;io");
}

#[test]
fn moving_up_stops_at_the_zoom_root() {
    let mut app = app();
    select(&mut app, &["main", "run"]);
    app.update(Action::Zoom);
    select(&mut app, &["main", "run", "exec", "cpu"]);
    for _ in 0..5 {
        app.update(Action::MoveUp);
    }
    assert_eq!(selected(&mut app), "main;run");
}

#[test]
fn right_and_left_move_between_frames_on_the_same_row() {
    let mut app = app();
    select(&mut app, &["main", "parse"]);
    render(&mut app, 80, 24);
    app.update(Action::MoveRight);
    assert_eq!(selected(&mut app), "main;run");
    app.update(Action::MoveRight);
    assert_eq!(selected(&mut app), "main;run", "run is the last on its row");
    app.update(Action::MoveLeft);
    assert_eq!(selected(&mut app), "main;parse");
    app.update(Action::MoveLeft);
    assert_eq!(selected(&mut app), "main;idle");
    // Across parents: lex (under parse) and exec (under run) are neighbours.
    select(&mut app, &["main", "parse", "lex"]);
    render(&mut app, 80, 24);
    app.update(Action::MoveRight);
    assert_eq!(selected(&mut app), "main;run;exec");
    app.update(Action::MoveLeft);
    assert_eq!(selected(&mut app), "main;parse;lex");
}

#[test]
fn right_and_left_use_sibling_order_before_the_first_draw() {
    let mut app = app();
    select(&mut app, &["main", "parse"]);
    app.update(Action::MoveRight);
    assert_eq!(selected(&mut app), "main;run");
    app.update(Action::MoveLeft);
    app.update(Action::MoveLeft);
    assert_eq!(selected(&mut app), "main;idle");
}

#[test]
fn widest_cycles_through_plateaus_by_self_weight() {
    let mut app = app();
    app.update(Action::Widest);
    assert_eq!(selected(&mut app), "main;run;exec;cpu");
    app.update(Action::Widest);
    assert_eq!(selected(&mut app), "main;run;exec;io");
    app.update(Action::Widest);
    assert_eq!(selected(&mut app), "main;parse;lex");
    app.update(Action::WidestPrev);
    assert_eq!(selected(&mut app), "main;run;exec;io");
    // Within a zoom, only its subtree counts.
    select(&mut app, &["main", "parse"]);
    app.update(Action::Zoom);
    app.update(Action::Widest);
    assert_eq!(selected(&mut app), "main;parse;lex");
    app.update(Action::Widest);
    assert_eq!(selected(&mut app), "main;parse;ast");
    app.update(Action::Widest);
    assert_eq!(selected(&mut app), "main;parse;lex");
}

fn zoomed_and_selected(text: &[u8]) -> App {
    let mut app = app_from(text, Orientation::Icicle);
    select(&mut app, &["main", "run"]);
    app.update(Action::Zoom);
    select(&mut app, &["main", "run", "exec"]);
    app.update(Action::Zoom);
    select(&mut app, &["main", "run", "exec", "io"]);
    app
}

/// Saves `app`'s place and restores it into a fresh state over `text`.
fn rebuilt(app: &mut App, text: &[u8]) -> App {
    let place = {
        let l = loaded(app);
        l.flame.save(&l.tree, &l.profile)
    };
    let mut fresh = app_from(text, Orientation::Icicle);
    {
        let l = loaded(&mut fresh);
        let mut state = FlameState::new(Orientation::Icicle);
        state.restore(&l.tree, &l.profile, &place);
        l.flame = state;
    }
    fresh
}

#[test]
fn keeps_selection_and_zoom_when_the_same_profile_is_reloaded() {
    let mut app = zoomed_and_selected(PROFILE);
    let mut fresh = rebuilt(&mut app, PROFILE);
    assert_eq!(zoom(&mut fresh), "main;run;exec");
    assert_eq!(selected(&mut fresh), "main;run;exec;io");
    assert_eq!(history(&mut fresh), ["", "main;run"]);
}

#[test]

fn keeps_selection_and_zoom_when_the_tree_is_rebuilt_with_other_ids() {
    let mut app = zoomed_and_selected(PROFILE);
    let mut fresh = rebuilt(&mut app, SHUFFLED);
    // Node ids differ between the two loads, so only the paths can match.
    let old = (loaded(&mut app).flame.selected, loaded(&mut app).flame.zoom);
    let new = (
        loaded(&mut fresh).flame.selected,
        loaded(&mut fresh).flame.zoom,
    );
    assert_ne!(old.0, new.0);
    assert_ne!(old.1, new.1);
    assert_eq!(zoom(&mut fresh), "main;run;exec");
    assert_eq!(selected(&mut fresh), "main;run;exec;io");
    assert_eq!(history(&mut fresh), ["", "main;run"]);
    fresh.update(Action::Unzoom);
    assert_eq!(zoom(&mut fresh), "main;run");
}

/// PROFILE with the exec lines last, so dropping them leaves every other frame
/// and stack with the id it had (restore() matches frames by id: see above).
const RELOAD_BASE: &[u8] = b"main;parse;lex 3
main;parse;ast 2
main;run;gc 2
main;idle 1
main;run;exec;cpu 6
main;run;exec;io 4
";

#[test]
fn falls_back_to_the_deepest_existing_ancestor_when_the_selection_vanished() {
    let mut app = zoomed_and_selected(RELOAD_BASE);
    let without_io =
        b"main;parse;lex 3\nmain;parse;ast 2\nmain;run;gc 2\nmain;idle 1\nmain;run;exec;cpu 6\n";
    let mut fresh = rebuilt(&mut app, without_io);
    assert_eq!(zoom(&mut fresh), "main;run;exec");
    assert_eq!(selected(&mut fresh), "main;run;exec");
    assert_eq!(history(&mut fresh), ["", "main;run"]);
}

#[test]
fn falls_back_when_the_selected_frame_is_left_without_weight() {
    // The frame still exists (same ids everywhere) but its stack has no weight,
    // so it is not in the tree.
    let mut app = zoomed_and_selected(RELOAD_BASE);
    let io_zero = b"main;parse;lex 3\nmain;parse;ast 2\nmain;run;gc 2\nmain;idle 1\nmain;run;exec;cpu 6\nmain;run;exec;io 0\n";
    let mut fresh = rebuilt(&mut app, io_zero);
    assert_eq!(selected(&mut fresh), "main;run;exec");
}

#[test]
fn falls_back_to_the_deepest_existing_ancestor_when_the_zoom_vanished() {
    let mut app = zoomed_and_selected(RELOAD_BASE);
    let without_exec = b"main;parse;lex 3\nmain;parse;ast 2\nmain;run;gc 2\nmain;idle 1\n";
    let mut fresh = rebuilt(&mut app, without_exec);
    assert_eq!(zoom(&mut fresh), "main;run");
    assert_eq!(selected(&mut fresh), "main;run");
    assert_eq!(history(&mut fresh), ["", "main;run"]);
}

#[test]
fn orientation_toggle_flips_which_key_goes_to_the_parent() {
    let mut app = app();
    select(&mut app, &["main", "run", "exec"]);
    // Icicle: the root is on top, so up goes to the parent.
    app.handle_event(&key(KeyCode::Up));
    assert_eq!(selected(&mut app), "main;run");
    app.handle_event(&key(KeyCode::Down));
    assert_eq!(selected(&mut app), "main;run;exec");
    app.handle_event(&key(KeyCode::Char('f')));
    assert_eq!(app.orientation, Orientation::Flame);
    assert_eq!(loaded(&mut app).flame.orientation, Orientation::Flame);
    // Flame: the root is at the bottom, so down goes to the parent.
    app.handle_event(&key(KeyCode::Down));
    assert_eq!(selected(&mut app), "main;run");
    app.handle_event(&key(KeyCode::Up));
    assert_eq!(selected(&mut app), "main;run;exec");
    app.handle_event(&key(KeyCode::Char('k')));
    assert_eq!(selected(&mut app), "main;run;exec;cpu");
}

#[test]
fn flame_orientation_draws_the_root_at_the_bottom() {
    let mut flame = app_from(PROFILE, Orientation::Flame);
    let rows = render(&mut flame, 80, 24);
    let row_of = |label: &str| rows.iter().position(|r| r.contains(label));
    let (all, main, exec) = (row_of("all"), row_of("main"), row_of("exec"));
    assert!(all > main && main > exec, "{rows:#?}");
    let mut icicle = app();
    let rows = render(&mut icicle, 80, 24);
    let row_of = |label: &str| rows.iter().position(|r| r.contains(label));
    let (all, main, exec) = (row_of("all"), row_of("main"), row_of("exec"));
    assert!(all < main && main < exec, "{rows:#?}");
}

fn click(app: &mut App, column: u16, row: u16) {
    app.handle_event(&Event::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }));
}

#[test]
fn clicking_a_frame_selects_it_in_both_orientations() {
    for orientation in [Orientation::Icicle, Orientation::Flame] {
        let mut app = app_from(PROFILE, orientation);
        let rows = render(&mut app, 80, 24);
        let (y, x) = rows
            .iter()
            .enumerate()
            .find_map(|(y, r)| r.find("cpu").map(|x| (y, r[..x].chars().count())))
            .expect("cpu is drawn");
        click(&mut app, x as u16 + 1, y as u16);
        assert_eq!(selected(&mut app), "main;run;exec;cpu", "{orientation:?}");
    }
}

#[test]
fn keeps_the_selection_on_screen_when_moving_below_it() {
    // A 40-deep chain, drawn 12 rows high: the graph has fewer rows than frames.
    let names: Vec<String> = (0..40).map(|i| format!("f{i:02}")).collect();
    let text = format!("{} 1\n", names.join(";"));
    for orientation in [Orientation::Icicle, Orientation::Flame] {
        let mut app = app_from(text.as_bytes(), orientation);
        let toward_leaf = match orientation {
            Orientation::Icicle => Action::MoveDown,
            Orientation::Flame => Action::MoveUp,
        };
        render(&mut app, 60, 12);
        assert!(loaded(&mut app).flame.more_below);
        for i in 0..30 {
            app.update(toward_leaf);
            let rows = render(&mut app, 60, 12);
            let l = loaded(&mut app);
            let sel = l.flame.selected;
            assert!(
                l.flame.layout.iter().any(|h| h.node == sel),
                "{orientation:?} step {i}: selection not drawn\n{}",
                rows.join("\n")
            );
        }
        assert_eq!(selected(&mut app), names[..30].join(";"), "{orientation:?}");
    }
}

#[test]
fn shows_the_whole_of_a_long_name_over_two_status_rows() {
    // 30 wide characters = 60 columns, on a 40-column screen of 24 rows.
    let name: String = "関数名前空間".repeat(5);
    let text = format!("main;{name} 1\nmain;other 1\n");
    let mut app = app_from(text.as_bytes(), Orientation::Icicle);
    select(&mut app, &["main", name.as_str()]);
    let rows = render(&mut app, 40, 24);
    let trimmed: Vec<&str> = rows.iter().map(|r| r.trim_end()).collect();
    let shown = trimmed
        .windows(2)
        .any(|w| format!("{}{}", w[0], w[1]) == name);
    assert!(
        shown,
        "the full name is not on two rows:\n{}",
        rows.join("\n")
    );
}

#[test]
fn a_key_while_help_is_shown_only_closes_the_help() {
    let mut app = app();
    select(&mut app, &["main", "run"]);
    app.update(Action::Help);
    assert!(app.show_help);
    // Up and down scroll a long help instead of closing it.
    app.update(Action::MoveDown);
    assert!(app.show_help);
    assert_eq!(app.help_scroll, 1);
    app.update(Action::MoveRight);
    assert!(!app.show_help);
    assert_eq!(selected(&mut app), "main;run");
    app.update(Action::MoveDown);
    assert_eq!(selected(&mut app), "main;run;exec");
}

/// At 80x24 every key's help is there in full, wrapped at words under its
/// column (scrolling through the overlay), never cut with an ellipsis.
#[test]
fn the_help_overlay_wraps_its_lines_at_80_columns() {
    let mut app = app();
    app.update(Action::Help);
    // Scroll a row at a time: each screen's first row is the next row, and
    // the last screen gives the rest.
    let mut rows: Vec<String> = Vec::new();
    let mut last = None;
    for _ in 0..200 {
        let screen = common::screen_of(&mut app, 80, 24);
        let visible: Vec<String> = screen
            .lines()
            .filter(|l| l.starts_with('│'))
            .map(|l| l.trim_start_matches('│').trim_end_matches('│').to_string())
            .collect();
        // The draw clamps the scroll: the same offset twice is the end.
        if last == Some(app.help_scroll) {
            rows.extend(visible.into_iter().skip(1));
            break;
        }
        last = Some(app.help_scroll);
        rows.push(visible[0].clone());
        app.update(Action::MoveDown);
    }
    assert!(rows.iter().all(|r| !r.contains('…')), "{}", rows.join("\n"));
    let text = rows.iter().map(|r| r.trim()).collect::<Vec<_>>().join(" ");
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = words(&text);
    for e in app.keymap.entries() {
        assert!(
            text.contains(&words(&e.help)),
            "missing: {}\n{text}",
            e.help
        );
    }
    // Wide, nothing needs wrapping or cutting either.
    app.help_scroll = 0;
    let wide = common::screen_of(&mut app, 250, 60);
    assert!(!wide.contains('…'), "{wide}");
}

const SIZES: [(u16, u16); 10] = [
    (1, 1),
    (2, 2),
    (10, 3),
    (80, 24),
    (0, 0),
    (1, 30),
    (200, 1),
    (4, 8),
    (12, 12),
    (7, 5),
];

#[test]
fn renders_at_tiny_and_normal_sizes_without_panicking() {
    // A long name (two status rows when wide enough), wide characters and depth.
    let mut text = String::from_utf8(PROFILE.to_vec()).expect("utf8");
    let long = "very_long_function_name_".repeat(8);
    text.push_str(&format!("main;{long} 2\n"));
    text.push_str("main;日本語の関数;関数 3\n");
    for orientation in [Orientation::Icicle, Orientation::Flame] {
        for help in [false, true] {
            for state in 0..3 {
                let mut app = app_from(text.as_bytes(), orientation);
                match state {
                    0 => {}
                    1 => select(&mut app, &["main", long.as_str()]),
                    _ => {
                        select(&mut app, &["main", "run", "exec"]);
                        app.update(Action::Zoom);
                        select(&mut app, &["main", "run", "exec", "io"]);
                    }
                }
                app.show_help = help;
                for (w, h) in SIZES {
                    let rows = render(&mut app, w, h);
                    assert_eq!(rows.len(), usize::from(h));
                    // Navigation after a tiny draw must not panic either.
                    for a in [
                        Action::MoveLeft,
                        Action::MoveRight,
                        Action::PageDown,
                        Action::PageUp,
                    ] {
                        app.update(a);
                    }
                }
            }
        }
    }
}

#[test]
fn renders_the_loading_screen_at_any_size() {
    for (w, h) in SIZES {
        let mut app = App::new(
            "big\x1b[31m.folded".into(),
            Keymap::default_map(),
            Theme::new(ColorDepth::Mono),
            Phase::Loading {
                progress: Progress::new(),
                started: Instant::now(),
            },
            Orientation::Icicle,
        );
        let rows = render(&mut app, w, h);
        assert!(rows.iter().all(|r| !r.chars().any(char::is_control)));
        app.update(Action::MoveDown);
        app.update(Action::Help);
        render(&mut app, w, h);
    }
}

#[test]
fn control_characters_in_frame_names_never_reach_the_buffer() {
    let text =
        b"main;evil\x1b[2Jname 5\nmain;bell\x07ring 3\nmain;c1\xc2\x9b31m 2\nmain;tab\there 1\n";
    let mut app = app_from(text, Orientation::Icicle);
    app.source_name = "source\x1b]0;title\x07.folded".into();
    for path in [
        &["main", "evil\x1b[2Jname"][..],
        &["main", "bell\x07ring"],
        &["main", "c1\u{9b}31m"],
    ] {
        select(&mut app, path);
        for (w, h) in [(80, 24), (30, 12), (200, 6)] {
            let rows = render(&mut app, w, h);
            for r in &rows {
                assert!(
                    !r.chars().any(char::is_control),
                    "raw control character drawn: {r:?}"
                );
            }
            if (w, h) == (80, 24) {
                let screen = rows.join("\n");
                // The names are shown, escaped, not silently dropped.
                assert!(screen.contains(r"evil\x1b[2Jname"), "{screen}");
                assert!(
                    screen.contains(r"source\x1b]0;title\x07.folded"),
                    "{screen}"
                );
            }
        }
    }
}

/// Frames resting on fewer than 50 samples are drawn dim; heavier ones are not.
#[test]
fn noise_level_frames_are_dimmed() {
    let mut text = String::from("main;hot 60\n");
    text.push_str("main;rare 30\n");
    let mut app = app_from(text.as_bytes(), Orientation::Icicle);
    let mut term = Terminal::new(TestBackend::new(80, 24)).unwrap();
    ember::ui::draw_frame(&mut term, &mut app).unwrap();
    let buf = term.backend().buffer();
    let find = |name: &str| {
        (0..buf.area.height)
            .find_map(|y| {
                let row: String = (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect();
                row.find(name).map(|x| (x as u16, y))
            })
            .unwrap_or_else(|| panic!("{name} not drawn"))
    };
    let dim = |(x, y): (u16, u16)| buf[(x, y)].modifier.contains(ratatui::style::Modifier::DIM);
    assert!(!dim(find("hot")));
    assert!(dim(find("rare")));
}

/// A flame key while the function table is on screen does nothing behind it:
/// `w` (widest plateau) and `f` (orientation) in the table leave the flame
/// view as it was when Tab brings it back.
#[test]
fn flame_keys_do_not_act_behind_the_table() {
    let mut app = app();
    select(&mut app, &["main", "run"]);
    let orientation = app.loaded().unwrap().flame.orientation;
    app.update(Action::ToggleView);
    assert_eq!(app.view, ember::ui::app::View::Table);
    app.update(Action::Widest);
    app.update(Action::ToggleOrientation);
    for _ in 0..2 {
        app.update(Action::ToggleView);
    }
    assert_eq!(app.view, ember::ui::app::View::Flame);
    assert_eq!(selected(&mut app), "main;run");
    assert_eq!(app.loaded().unwrap().flame.orientation, orientation);
}
