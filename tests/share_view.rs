//! The viewer's hand-off keys: `e` exports what is on screen to a file it
//! names, `E` writes the report, `y`/`Y`/ctrl-y copy by OSC 52. Driven through
//! the App as the event loop drives it (jobs run inline without a job thread).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ember::ui::app::{App, Loaded, Phase};
use ember::ui::chrome::keymap::Keymap;
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use common::{default_tree, load_bytes};

const PROFILE: &[u8] = b"main;parse;lex 30\nmain;parse 10\nmain;render;paint 50\nother;x 7\n";

fn app(input: &Path) -> App {
    let p = load_bytes(PROFILE);
    let tree = default_tree(&p);
    let loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
    let mut app = App::new(
        "share.folded".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    );
    app.inputs = vec![input.to_path_buf()];
    app
}

fn screen(app: &mut App) -> String {
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

fn key(app: &mut App, code: KeyCode, mods: KeyModifiers) {
    app.handle_event(&Event::Key(KeyEvent::new(code, mods)));
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

/// `e`, the name cleared and `path` typed, Enter.
fn export(app: &mut App, path: &Path) {
    typed(app, "e");
    key(app, KeyCode::Char('u'), KeyModifiers::CONTROL);
    typed(app, path.to_str().unwrap());
    key(app, KeyCode::Enter, KeyModifiers::NONE);
}

fn input_file(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("share.folded");
    std::fs::write(&p, PROFILE).unwrap();
    p
}

#[test]
fn the_export_key_offers_a_name_and_says_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(&input_file(dir.path()));
    typed(&mut app, "e");
    assert!(
        screen(&mut app).contains("export view to: share"),
        "the offered name"
    );
    key(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    assert!(!screen(&mut app).contains("export view to"), "Esc cancels");
    let out = dir.path().join("view.svg");
    export(&mut app, &out);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("render (50 samples"));
    let s = screen(&mut app);
    assert!(s.contains("wrote ") && s.contains("view.svg (svg,"), "{s}");
    // The message goes at the next key.
    typed(&mut app, "j");
    assert!(!screen(&mut app).contains("wrote "));
}

#[test]
fn an_export_holds_the_zoom() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(&input_file(dir.path()));
    screen(&mut app);
    typed(&mut app, "j"); // main
    typed(&mut app, "j"); // render, the heaviest child
    key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    let out = dir.path().join("zoom.folded");
    export(&mut app, &out);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "main;render;paint 50\n"
    );
}

#[test]
fn an_existing_file_is_written_only_after_a_yes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(&input_file(dir.path()));
    let out = dir.path().join("old.folded");
    std::fs::write(&out, "keep me\n").unwrap();
    export(&mut app, &out);
    assert!(screen(&mut app).contains("exists: overwrite it? y/n"));
    typed(&mut app, "n");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
    assert!(
        screen(&mut app).contains("export view to:"),
        "back to the name"
    );
    key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    typed(&mut app, "y");
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("main;parse;lex 30")
    );
}

#[test]
fn the_input_and_unwritable_places_are_refused_and_the_view_stays() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_file(dir.path());
    let mut app = app(&input);
    // The input, under another spelling of its path.
    let other = dir.path().join(".").join("share.folded");
    let renamed = other.with_extension("svg");
    std::fs::rename(&input, &renamed).unwrap();
    app.inputs = vec![renamed.clone()];
    export(&mut app, &renamed);
    let s = screen(&mut app);
    assert!(s.contains("that is an input"), "{s}");
    assert!(
        std::fs::read_to_string(&renamed)
            .unwrap()
            .starts_with("main;")
    );
    key(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    // No such directory: the job's failure is said, nothing is left behind.
    let bad = dir.path().join("missing/out.svg");
    export(&mut app, &bad);
    let s = screen(&mut app);
    assert!(
        s.contains("export failed") && s.contains("missing/out.svg"),
        "{s}"
    );
    assert!(app.loaded().is_some(), "the view stays");
    // An ending ember cannot write.
    export(&mut app, &dir.path().join("x.png"));
    assert!(screen(&mut app).contains("say the format"));
}

#[test]
fn the_report_key_writes_markdown_with_the_selected_frame() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(&input_file(dir.path()));
    screen(&mut app);
    typed(&mut app, "jj"); // main;render
    typed(&mut app, "E");
    assert!(screen(&mut app).contains("write report to: share-report"));
    key(&mut app, KeyCode::Char('u'), KeyModifiers::CONTROL);
    let out = dir.path().join("r.md");
    typed(&mut app, out.to_str().unwrap());
    key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    let md = std::fs::read_to_string(&out).unwrap();
    assert!(md.contains("#### Top functions by self"), "{md}");
    assert!(
        md.contains("| 1 | 50 samples | 51.55% | 50 samples | 51.55% | `paint` |"),
        "{md}"
    );
    assert!(
        md.contains("| 2 | 30 samples ⚠ | 30.93% |"),
        "under 50 samples: {md}"
    );
    let by_self = md.split("#### Top functions by total").next().unwrap();
    assert!(
        !by_self.contains("| 0 samples"),
        "no rows without self: {md}"
    );
    assert!(md.contains("main\n  render\n"), "the selected path: {md}");
    assert!(
        md.contains("at most 2.06x faster"),
        "Amdahl for 50 of 97: {md}"
    );
    assert!(
        !md.contains("Warnings about"),
        "97 samples earn no lint: {md}"
    );
}

#[test]
fn copy_keys_hand_osc_52_to_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(&input_file(dir.path()));
    screen(&mut app);
    typed(&mut app, "jj");
    typed(&mut app, "y");
    // "render" in base64.
    assert_eq!(app.clipboard.take().unwrap(), b"\x1b]52;c;cmVuZGVy\x07");
    assert!(screen(&mut app).contains("copied the frame's name"));
    typed(&mut app, "Y");
    // "main;render"
    assert_eq!(
        app.clipboard.take().unwrap(),
        b"\x1b]52;c;bWFpbjtyZW5kZXI=\x07"
    );
    key(&mut app, KeyCode::Char('y'), KeyModifiers::CONTROL);
    let seq = app.clipboard.take().unwrap();
    assert!(seq.len() > 200, "the report");
}

/// The lint a loader or job thread worked out with the tree is what the
/// header shows: the draw thread does not work it out again.
#[test]
fn the_header_shows_the_lint_worked_out_with_the_tree() {
    use ember::model::lint::{Finding, LintKind};
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(&input_file(dir.path()));
    assert!(
        !screen(&mut app).contains("⚠"),
        "97 samples: nothing to say"
    );
    // A view whose loader left findings: those are shown (a real lint of
    // these 97 samples finds nothing).
    let mut app2 = {
        let p = load_bytes(PROFILE);
        let tree = default_tree(&p);
        let mut loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
        loaded.lint = Some((
            loaded.id,
            vec![Finding {
                kind: LintKind::DebugBuild,
                saw: "seen by the loader".into(),
                advice: "rebuild".into(),
            }],
        ));
        App::new(
            "share.folded".into(),
            Keymap::default_map(),
            Theme::new(ColorDepth::Mono),
            Phase::Ready(Box::new(loaded)),
            Orientation::Icicle,
        )
    };
    let s = screen(&mut app2);
    assert!(s.contains("⚠ debug-build"), "{s}");
    typed(&mut app2, "i");
    assert!(screen(&mut app2).contains("seen by the loader"));
}
