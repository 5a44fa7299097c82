//! The viewer on a comparison: the differential flame view, the delta table, the
//! detail panel and the keys that switch widths, normalisation and noise; screen
//! snapshots (insta) at 80x24 and 40x12, and the colours per terminal depth.
//!
//! The fixtures `diff-before.folded` / `diff-after.folded` (1,000 samples each):
//! `lex` grows 20% -> 30% (significant), `gc` shrinks 25% -> 13% (significant),
//! `eval` 40% -> 39% (noise), `old_cache` is gone, `new_alloc` new.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use ember::formats::{self, LoadOptions};
use ember::model::NodeId;
use ember::sources::input::{Progress, Source};
use ember::ui::app::{App, Loaded, Phase, View};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use unicode_width::UnicodeWidthStr;

fn diff_app(depth: ColorDepth) -> App {
    let fx = |n: &str| Source::Path(common::repo().join("tests/fixtures").join(n));
    app_of_diff(
        [&fx("diff-before.folded"), &fx("diff-after.folded")],
        &["main", "parse", "lex"],
        depth,
    )
}

/// The viewer on the comparison of two files, `select` (a path) selected.
fn app_of_diff(sides: [&Source; 2], select: &[&str], depth: ColorDepth) -> App {
    let p = formats::load_diff(sides, &LoadOptions::default(), false, &Progress::several())
        .unwrap_or_else(|e| panic!("{e}"));
    let tree = common::default_tree(&p);
    let mut loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
    let n = common::node(&loaded.profile, &loaded.tree, select);
    loaded.flame.select(&loaded.tree, &loaded.profile, n);
    App::new(
        "diff-before.folded → diff-after.folded".into(),
        Keymap::default_map(),
        Theme::new(depth),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    )
}

/// The screen as text and the terminal buffer.
fn draw(app: &mut App, w: u16, h: u16) -> (String, ratatui::buffer::Buffer) {
    let text = common::screen_of(app, w, h);
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    ember::ui::draw_frame(&mut term, app).expect("draw");
    (text, term.backend().buffer().clone())
}

fn screen(app: &mut App, w: u16, h: u16) -> String {
    draw(app, w, h).0
}

/// The background of the first cell of `word` on screen.
fn bg_of(text: &str, buf: &ratatui::buffer::Buffer, word: &str) -> Color {
    for (y, line) in text.lines().enumerate() {
        if let Some(byte) = line.find(word) {
            let x = line[..byte].width() as u16;
            return buf[(x, y as u16)].bg;
        }
    }
    panic!("{word} not on screen:\n{text}");
}

fn reddish(c: Color) -> bool {
    match c {
        Color::Rgb(r, g, b) => r > 200 && g < 200 && b < 200,
        Color::Red | Color::LightRed => true,
        // The 6x6x6 cube: red high, green and blue lower.
        Color::Indexed(i) if (16..232).contains(&i) => {
            let i = i - 16;
            let (r, g, b) = (i / 36, (i / 6) % 6, i % 6);
            r >= 4 && g < r && b < r
        }
        _ => false,
    }
}

fn bluish(c: Color) -> bool {
    match c {
        Color::Rgb(r, g, b) => b > 200 && r < 200 && g < 220,
        Color::Blue | Color::LightBlue => true,
        Color::Indexed(i) if (16..232).contains(&i) => {
            let i = i - 16;
            let (r, g, b) = (i / 36, (i / 6) % 6, i % 6);
            b >= 4 && r < b && g <= b
        }
        _ => false,
    }
}

#[test]
fn differential_view_80x24_and_40x12() {
    let mut app = diff_app(ColorDepth::Mono);
    let text = screen(&mut app, 160, 24);
    // Without colour, marks say what changed: lex grew, gc shrank, new_alloc is new.
    assert!(text.contains("▲lex"), "{text}");
    assert!(text.contains("▼gc"), "{text}");
    assert!(text.contains("+new_alloc"), "{text}");
    assert!(
        !text.contains("old_cache"),
        "gone frames are not drawn at after's widths"
    );
    insta::assert_snapshot!("diff_flame_80x24", screen(&mut app, 80, 24));
    insta::assert_snapshot!("diff_flame_40x12", screen(&mut app, 40, 12));
}

#[test]
fn the_status_line_says_both_values_the_change_and_the_verdict() {
    let mut app = diff_app(ColorDepth::Mono);
    let text = screen(&mut app, 200, 24);
    assert!(
        text.contains(
            "total 200 -> 300 samples (share +50.0%, 20.0% -> 30.0% of all, significant)"
        ),
        "{text}"
    );
    assert!(
        text.contains("· widths: after · share of total ·"),
        "{text}"
    );
}

#[test]
fn widths_switch_to_before_and_show_gone_frames() {
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::NextValue);
    let text = screen(&mut app, 160, 24);
    assert!(text.contains("widths: before"), "{text}");
    assert!(text.contains("×old_c"), "{text}");
    assert!(!text.contains("new_alloc"), "{text}");
    // The selection survived the switch: lex is on both sides.
    let l = app.loaded().unwrap();
    let lex = common::node(&l.profile, &l.tree, &["main", "parse", "lex"]);
    assert_eq!(l.flame.selected, lex);
    // Then the larger of the two: frames of both sides.
    app.update(Action::NextValue);
    let text = screen(&mut app, 200, 24);
    assert!(text.contains("widths: larger of the two"), "{text}");
    assert!(
        text.contains("×old_c") && text.contains("+new_alloc"),
        "{text}"
    );
    assert!(
        text.contains(
            "total 200 -> 300 samples (share +50.0%, 20.0% -> 30.0% of all, significant)"
        ),
        "the numbers stay the sides' own:\n{text}"
    );
    app.update(Action::NextValue);
    assert!(screen(&mut app, 80, 24).contains("widths: after"));
}

#[test]
fn normalisation_and_noise_keys_change_what_is_said() {
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::DiffNorm);
    let text = screen(&mut app, 200, 24);
    assert!(text.contains("· raw ·"), "{text}");
    app.update(Action::DiffNorm);
    let text = screen(&mut app, 200, 24);
    // Folded inputs have no duration: per second falls back to shares and says why.
    assert!(text.contains("share of total (per second needs"), "{text}");
    app.update(Action::DiffNorm);
    assert!(screen(&mut app, 200, 24).contains("before scaled"));
    app.update(Action::DiffNorm);
    assert!(screen(&mut app, 200, 24).contains("share of total"));

    // Noise hidden: eval (40% -> 39%) loses its colour and its row.
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Table);
    let table = screen(&mut app, 100, 24);
    assert!(table.contains("  eval"), "{table}");
    insta::assert_snapshot!("diff_table_80x24", screen(&mut app, 80, 24));
    app.update(Action::HideNoise);
    let table = screen(&mut app, 100, 24);
    assert!(!table.contains("  eval"), "{table}");
    assert!(table.contains("  lex") && table.contains("  gc"), "{table}");
    // The header says what `x` does where the user is: the table hides noise
    // rows, the graph only greys them.
    let wide = screen(&mut app, 250, 24);
    assert!(wide.contains("noise rows hidden"), "{wide}");
    app.update(Action::ToggleView);
    let graph = screen(&mut app, 250, 24);
    assert!(graph.contains("noise greyed"), "{graph}");
    assert!(!graph.contains("hidden"), "{graph}");
}

#[test]
fn the_delta_table_sorts_and_enter_shows_the_function() {
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::ToggleView);
    let text = screen(&mut app, 100, 24);
    let rows: Vec<&str> = text.lines().skip(2).collect();
    // By the absolute change of self share: gc -12pp first, then lex +10pp.
    assert!(rows[0].ends_with("  gc"), "{text}");
    assert!(rows[1].ends_with("  lex"), "{text}");
    app.update(Action::SortName); // in a diff: relative change
    let text = screen(&mut app, 100, 24);
    let first: Vec<&str> = text.lines().skip(2).take(2).collect();
    assert!(
        first.iter().any(|r| r.ends_with("new_alloc"))
            && first.iter().any(|r| r.ends_with("old_cache")),
        "{text}"
    );
    app.update(Action::SortSelf);
    app.update(Action::MoveDown);
    app.update(Action::Zoom);
    assert_eq!(app.view, View::Flame);
    let l = app.loaded().unwrap();
    let lex = common::node(&l.profile, &l.tree, &["main", "parse", "lex"]);
    assert_eq!(l.flame.selected, lex);
}

#[test]
fn the_detail_panel_gives_both_sides_and_the_test() {
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::ToggleDetail);
    let text = screen(&mut app, 120, 30);
    assert!(
        text.contains("total 20.00% -> 30.00% (+10.00pp, +50.0%)"),
        "{text}"
    );
    assert!(text.contains("samples 200 -> 300 · z +5.2"), "{text}");
    assert!(
        text.contains("significant: beyond sampling noise"),
        "{text}"
    );
    insta::assert_snapshot!("diff_detail_80x24", screen(&mut app, 80, 24));
}

#[test]
fn colours_say_more_and_less_in_256_and_16_colours_and_never_without() {
    for depth in [ColorDepth::C256, ColorDepth::C16, ColorDepth::TrueColor] {
        let mut app = diff_app(depth);
        let (text, buf) = draw(&mut app, 80, 24);
        assert!(reddish(bg_of(&text, &buf, "lex")), "{depth:?}: lex grew");
        assert!(bluish(bg_of(&text, &buf, "gc")), "{depth:?}: gc shrank");
        let eval = bg_of(&text, &buf, "eval");
        assert!(
            !reddish(eval) || depth != ColorDepth::C16,
            "{depth:?}: eval is noise"
        );
        if depth == ColorDepth::C16 {
            assert_eq!(eval, Color::Gray, "noise is grey in 16 colours");
        }
    }
    let mut app = diff_app(ColorDepth::Mono);
    let (_, buf) = draw(&mut app, 80, 24);
    for cell in buf.content() {
        assert!(
            matches!(cell.bg, Color::Reset) && matches!(cell.fg, Color::Reset),
            "NO_COLOR: no colours at all"
        );
    }
    // Noise hidden: eval turns neutral.
    let mut app = diff_app(ColorDepth::C256);
    app.update(Action::HideNoise);
    let (text, buf) = draw(&mut app, 80, 24);
    let eval = bg_of(&text, &buf, "eval");
    assert!(!reddish(eval) && !bluish(eval), "{eval:?}");
}

#[test]
fn transforms_and_search_work_on_the_comparison() {
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::Focus); // focus on lex
    let l = app.loaded().unwrap();
    let root = l.tree.pair(NodeId::ROOT).unwrap();
    assert_eq!(root.total, [200, 300]);
    let text = screen(&mut app, 250, 24);
    assert!(text.contains("focus: ^lex$"), "{text}");
}

#[test]
fn linked_panes_follow_the_selection_and_mark_what_is_missing() {
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::SplitPanes);
    let text = screen(&mut app, 120, 24);
    assert!(text.contains(" before · diff-before.folded "), "{text}");
    assert!(
        text.contains(" after · diff-after.folded · keys move this side"),
        "{text}"
    );
    assert_eq!(
        text.matches("▲lex").count(),
        2,
        "lex on both sides:\n{text}"
    );
    insta::assert_snapshot!("diff_split_120x24", text);
    // Select new_alloc, which before does not have: a placeholder there.
    {
        let Phase::Ready(l) = &mut app.phase else {
            panic!("loaded")
        };
        let n = common::node(&l.profile, &l.tree, &["main", "new_alloc"]);
        l.flame.select(&l.tree, &l.profile, n);
    }
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("new_alloc is not here (∅)"), "{text}");
    // The mark sits on the seam after gc, where new_alloc sorts by name.
    assert!(text.contains("|▼gc                ∅×o"), "{text}");
    insta::assert_snapshot!("diff_split_80x24", text);
    // Zoom on one side is the zoom on the other, found by path.
    {
        let Phase::Ready(l) = &mut app.phase else {
            panic!("loaded")
        };
        let n = common::node(&l.profile, &l.tree, &["main", "parse"]);
        l.flame.select(&l.tree, &l.profile, n);
    }
    app.update(Action::Zoom);
    let text = screen(&mut app, 120, 24);
    let rows: Vec<&str> = text.lines().collect();
    assert!(
        rows[2].starts_with("▲parse") && rows[2].matches("▲parse").count() == 2,
        "{text}"
    );
    // Switching the active side keeps the place.
    app.update(Action::NextValue);
    let text = screen(&mut app, 120, 24);
    assert!(
        text.contains(" before · diff-before.folded · keys move this side"),
        "{text}"
    );
    assert!(text.lines().nth(2).unwrap().starts_with("▲parse"), "{text}");
}

/// The next view the live worker sends (problems are skipped, failures fail).
fn next_view(
    rx: &std::sync::mpsc::Receiver<ember::ui::Msg>,
) -> Box<ember::ui::runtime::live::Reload> {
    use ember::ui::Msg;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(Msg::Reloaded(r)) => return r,
            Ok(Msg::LoadFailed(e)) => panic!("load failed: {e}"),
            Ok(_) => {}
            Err(e) => panic!("no view from the worker: {e}"),
        }
    }
}

#[test]
fn a_followed_after_file_is_compared_with_the_baseline_as_it_grows() {
    use ember::ui::runtime::live::{self, Baseline, Settings};
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("after.folded");
    let before =
        common::load_path(&common::repo().join("tests/fixtures/diff-before.folded")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let _live = live::spawn_file(
        ember::ui::live_report(tx),
        file.clone(),
        LoadOptions::default(),
        Progress::new(),
        Orientation::Icicle,
        Settings {
            baseline: Some(std::sync::Arc::new(Baseline {
                profile: before,
                live_side: 1,
                merge: ember::model::diff::MergeOptions {
                    names: ["before.folded".into(), "after.folded".into()],
                    strip_hex: false,
                },
            })),
            ..Settings::default()
        },
    )
    .expect("worker starts");
    std::fs::write(&file, b"main;parse;lex 300\nmain;eval 390\n").expect("write");
    let first = next_view(&rx);
    let meta = first
        .loaded
        .profile
        .meta
        .diff
        .as_deref()
        .expect("a comparison");
    assert_eq!(meta.sides[0].name, "before.folded");
    assert_eq!(
        first.loaded.tree.pair(NodeId::ROOT).unwrap().total,
        [1000, 690]
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("open");
    f.write_all(b"main;new_alloc 80\n").expect("append");
    drop(f);
    let grown = next_view(&rx);
    assert_eq!(grown.added, 80, "only the followed side's samples count");
    let l = &grown.loaded;
    assert_eq!(l.tree.pair(NodeId::ROOT).unwrap().total, [1000, 770]);
    let n = common::node(&l.profile, &l.tree, &["main", "new_alloc"]);
    assert_eq!(l.tree.pair(n).unwrap().total, [0, 80]);
}

#[test]
fn callers_and_callees_of_a_function_show_its_change_per_caller() {
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::Sandwich); // on lex
    assert_eq!(app.view, View::Sandwich);
    let text = screen(&mut app, 160, 30);
    assert!(text.contains("▲lex"), "{text}");
    // Shares are of the whole profile, not of the pane.
    assert!(
        text.contains(
            "total 200 -> 300 samples (share +50.0%, 20.0% -> 30.0% of all, significant)"
        ),
        "{text}"
    );
    // One step up in the callers pane: parse, lex's only caller.
    app.update(Action::MoveUp);
    let text = screen(&mut app, 160, 30);
    assert!(text.contains("▲parse"), "{text}");
}

/// Each cell's background as a letter: R red-ish, B blue-ish, g grey, . none,
/// o other; the text row below it.
fn colour_map(app: &mut App, w: u16, h: u16) -> String {
    let (text, buf) = draw(app, w, h);
    let mut out = String::new();
    for (y, line) in text.lines().enumerate() {
        let mut map = String::new();
        for x in 0..w {
            let bg = buf[(x, y as u16)].bg;
            map.push(match bg {
                Color::Reset => '.',
                c if reddish(c) => 'R',
                c if bluish(c) => 'B',
                Color::Gray | Color::Rgb(215, 215, 215) | Color::Indexed(188) => 'g',
                _ => 'o',
            });
        }
        out.push_str(map.trim_end_matches('.'));
        out.push('\n');
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn colour_snapshots_in_256_and_16_colours() {
    for (depth, name) in [(ColorDepth::C256, "256"), (ColorDepth::C16, "16")] {
        let mut app = diff_app(depth);
        insta::assert_snapshot!(
            format!("diff_colours_{name}_80x24"),
            colour_map(&mut app, 80, 24)
        );
        insta::assert_snapshot!(
            format!("diff_colours_{name}_40x12"),
            colour_map(&mut app, 40, 12)
        );
        app.update(Action::SplitPanes);
        insta::assert_snapshot!(
            format!("diff_split_colours_{name}_80x24"),
            colour_map(&mut app, 80, 24)
        );
    }
    // NO_COLOR: the split view in text only (the marks carry the change).
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::SplitPanes);
    insta::assert_snapshot!("diff_split_mono_40x12", screen(&mut app, 40, 12));
}

#[test]
fn the_linked_pane_follows_the_sibling_order() {
    let mut app = diff_app(ColorDepth::Mono);
    app.update(Action::SplitPanes);
    app.update(Action::ToggleOrder); // heaviest first
    let text = screen(&mut app, 120, 24);
    // eval is the heaviest child of main on both sides: first in both panes.
    let row = text.lines().nth(4).unwrap();
    assert!(
        row.starts_with("eval") && row.matches("eval").count() == 2,
        "{text}"
    );
    assert!(
        row.find("▼gc").unwrap() > row.find("▲parse").unwrap(),
        "{text}"
    );
}

#[test]
fn a_baseline_compares_on_the_side_it_is_given() {
    use ember::ui::runtime::live::Baseline;
    let fixed = common::load_bytes(b"main;a 10\n");
    let live = common::load_bytes(b"main;a 30\nmain;b 5\n");
    let merge = ember::model::diff::MergeOptions {
        names: ["before".into(), "after".into()],
        strip_hex: false,
    };
    for (live_side, expected) in [(1, [10, 35]), (0, [35, 10])] {
        let b = Baseline {
            profile: fixed.clone(),
            live_side,
            merge: merge.clone(),
        };
        let p = b.compare(live.clone()).unwrap();
        let t = common::default_tree(&p);
        assert_eq!(
            t.pair(NodeId::ROOT).unwrap().total,
            expected,
            "live side {live_side}"
        );
    }
    // A stream with no samples yet is a problem to show, not a panic.
    let b = Baseline {
        profile: fixed,
        live_side: 1,
        merge,
    };
    let empty = ember::model::Profile::new("folded", vec![ember::model::ValueType::samples()]);
    assert!(b.compare(empty).unwrap_err().contains("no samples"));
}

/// Sides of different sizes (1,000 and 2,167 samples), so raw counts and
/// shares tell different changes: `a` grows 62 -> 167 samples (+169.4%) but
/// 6.2% -> 7.7% of its side (+24.3%). The status line, the detail panel and the
/// delta table give the same relative change, the one the header names, and
/// follow `n` to raw together. At 80x24 and 250x60.
#[test]
fn every_relative_change_follows_the_normalisation_on_screen() {
    let before = common::write_input("b.folded", b"main;a 62\nmain;b 938\n");
    let after = common::write_input("a.folded", b"main;a 167\nmain;b 2000\n");
    let mut app = app_of_diff(
        [
            &Source::Path(before.path.clone()),
            &Source::Path(after.path.clone()),
        ],
        &["main", "a"],
        ColorDepth::Mono,
    );
    app.update(Action::ToggleDetail);
    let text = screen(&mut app, 250, 60);
    assert!(
        text.contains("total 62 -> 167 samples (share +24.3%, 6.2% -> 7.7% of all"),
        "{text}"
    );
    assert!(text.contains("(+1.51pp, +24.3%)"), "{text}");
    assert!(!text.contains("169.4"), "{text}");
    app.update(Action::DiffNorm);
    let text = screen(&mut app, 250, 60);
    assert!(text.contains("· raw ·"), "{text}");
    assert!(
        text.contains("total 62 -> 167 samples (raw +169.4%"),
        "{text}"
    );
    assert!(text.contains("+169.4%)"), "{text}");
    assert!(!text.contains("24.3"), "{text}");
    app.update(Action::ToggleView);
    let table = screen(&mut app, 250, 60);
    let row = table.lines().find(|l| l.ends_with("  a")).expect("a's row");
    assert!(row.contains("+169.4%"), "{table}");
    let small = screen(&mut app, 80, 24);
    assert!(
        small
            .lines()
            .any(|l| l.ends_with("  a") && l.contains("+169.4%")),
        "{small}"
    );
}
