//! The timeline pane: its keys cut every view to a time range and back, the
//! cursor reads the context strips, and a log that does not overlap the
//! profile is refused with both spans while the profile still opens.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use ember::context::Clock;
use ember::model::{Profile, Transform};
use ember::ui::app::{App, Loaded, Phase, View};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;

use common::{default_tree, log, screen_of};

const NS: u64 = 1_000_000_000;

fn sample() -> Profile {
    common::load_path(&common::repo().join("samples/perf-python-wordindex-small.perf.gz"))
        .expect("the perf sample")
}

fn app_of(p: Profile) -> App {
    let tree = default_tree(&p);
    let loaded = Loaded::new(p, tree, Orientation::Icicle, Duration::ZERO);
    App::new(
        "timeline.perf".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::Mono),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    )
}

fn loaded(app: &App) -> &Loaded {
    app.loaded().expect("loaded")
}

fn samples_in(p: &Profile, lo: u64, hi: u64) -> usize {
    let times = p.samples.time.as_ref().expect("times");
    times.iter().filter(|&&t| lo <= t && t < hi).count()
}

#[test]
fn marking_a_range_cuts_every_view_and_zero_brings_the_whole_back() {
    let full = sample();
    let total = full.samples.len();
    let mut app = app_of(full.clone());
    app.update(Action::ToggleTimeline);
    let text = screen_of(&mut app, 80, 24);
    assert!(text.contains("timeline 4.5 s"), "{text}");
    // Ten columns on, mark; twenty more, end the range.
    app.update(Action::TimeRightFast);
    app.update(Action::RangeStart);
    app.update(Action::TimeRightFast);
    app.update(Action::TimeRightFast);
    app.update(Action::RangeEnd);
    let l = loaded(&app);
    let Some(Transform::TimeRange {
        keep: Some(w),
        exclude,
    }) = l.transforms.first()
    else {
        panic!("no time range: {:?}", l.transforms);
    };
    assert!(exclude.is_empty());
    let want = samples_in(&full, w.start, w.end);
    assert!(want > 0 && want < total, "{want} of {total}");
    assert_eq!(l.profile.samples.len(), want);
    let text = screen_of(&mut app, 80, 24);
    assert!(text.contains("range +"), "{text}");
    let said = format!("({want} samples, ");
    let wide = screen_of(&mut app, 160, 24);
    assert!(
        wide.contains(&said),
        "the title counts the range's samples: {wide}"
    );
    // The table and the inverted view are built from the cut profile too.
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Table);
    app.update(Action::ToggleView);
    assert_eq!(app.view, View::Inverted);
    let inv = loaded(&app);
    assert!(inv.inverted);
    assert_eq!(inv.tree.total(ember::model::NodeId::ROOT), want as i64);
    // Cutting again from the inverted view works on the top-down profile.
    app.update(Action::RangeClear);
    let l = loaded(&app);
    assert!(l.transforms.is_empty(), "{:?}", l.transforms);
    assert!(l.inverted, "the inverted view is rebuilt after");
    assert_eq!(l.tree.total(ember::model::NodeId::ROOT), total as i64);
}

#[test]
fn the_keys_say_why_when_they_cannot_act() {
    let mut app = app_of(sample());
    app.update(Action::RangeStart);
    assert_eq!(
        loaded(&app).transform_error.as_deref(),
        Some("the timeline is hidden: T shows it")
    );
    let mut untimed = app_of(common::load_bytes(b"a;b 3\na;c 1\n"));
    untimed.update(Action::ToggleTimeline);
    let text = screen_of(&mut untimed, 80, 24);
    assert!(text.contains("records no sample times"), "{text}");
    untimed.update(Action::RangeEnd);
    assert_eq!(
        loaded(&untimed).transform_error.as_deref(),
        Some("this profile records no sample times")
    );
    assert!(loaded(&untimed).transforms.is_empty());
}

#[test]
fn the_cursor_reads_the_strips_and_a_log_from_another_time_is_refused() {
    let mut app = app_of(sample());
    // A relative log lines up with the first sample: 10% iowait in its first
    // second, 60% after. `--align` shifted nothing here.
    app.contexts_read(vec![
        Ok(log("vmstat.log", 0, &[10.0, 60.0, 60.0, 60.0, 60.0])),
        Err("iostat.log: not a host-context log ember reads (empty)".into()),
    ]);
    assert!(app.timeline.shown, "a context log shows the timeline");
    let text = screen_of(&mut app, 80, 24);
    let wa = text
        .lines()
        .find(|l| l.starts_with("wa"))
        .unwrap_or_else(|| panic!("no wa strip:\n{text}"));
    assert!(wa.ends_with("10%"), "{wa}");
    assert!(text.contains("vmstat.log: no common clock"), "{text}");
    assert!(
        app.timeline.notes[0].contains("aligned by start time (--align to shift it)"),
        "{:?}",
        app.timeline.notes
    );
    for _ in 0..3 {
        app.update(Action::TimeRightFast);
    }
    let text = screen_of(&mut app, 80, 24);
    let wa = text
        .lines()
        .find(|l| l.starts_with("wa"))
        .unwrap_or_default();
    assert!(wa.ends_with("60%"), "{wa}");
    assert!(
        app.timeline
            .notes
            .iter()
            .any(|n| n.starts_with("iostat.log")),
        "{:?}",
        app.timeline.notes
    );
}

#[test]
fn a_wall_clock_log_outside_the_profile_is_refused_naming_both_spans() {
    let mut p = common::load_bytes(b"a;b 1\na;c 1\n");
    let t0 = 1_796_212_575 * NS;
    p.samples.time = Some(vec![t0, t0 + NS]);
    let mut app = app_of(p);
    let mut late = log("late.log", (t0 + 7200 * NS) as i64, &[1.0, 2.0]);
    late.clock = Clock::Wall { utc_offset_s: None };
    app.contexts_read(vec![Ok(late)]);
    assert!(app.timeline.logs.is_empty());
    let note = app.timeline.notes.first().cloned().unwrap_or_default();
    assert!(note.contains("late.log"), "{note}");
    assert!(note.contains("13:56:15 to 2026-12-02 13:56:17"), "{note}");
    assert!(note.contains("11:56:15"), "{note}");
    assert!(note.contains("the profile opens without it"), "{note}");
    // Said on the first frame, above the graph, with the timeline hidden.
    assert!(!app.timeline.shown);
    for (w, h) in [(80, 24), (200, 50)] {
        let text = screen_of(&mut app, w, h);
        let top = text.lines().take(4).collect::<Vec<_>>().join(" ");
        assert!(top.contains("late.log"), "{w}x{h}:\n{text}");
        assert!(
            text.lines().next().unwrap_or_default().contains('?'),
            "{text}"
        );
    }
}

#[test]
fn the_heat_map_steps_by_cells_and_seconds_and_cuts_a_range_of_cells() {
    let full = sample();
    let mut app = app_of(full.clone());
    app.update(Action::ToggleHeatMap);
    assert!(app.timeline.shown && app.timeline.show_heat);
    // 80x40: the pane has room for ten rows a second (100 ms each).
    let text = screen_of(&mut app, 80, 40);
    assert!(
        text.contains("heat map · 1 col = 1 s · 1 row = 100 ms"),
        "{text}"
    );
    let lo = app.timeline.window.expect("a window").0;
    app.update(Action::TimeRight);
    assert_eq!(app.timeline.cursor, Some(lo + NS / 10));
    app.update(Action::TimeRightFast);
    assert_eq!(app.timeline.cursor, Some(lo + NS + NS / 10));
    app.update(Action::RangeStart);
    app.update(Action::TimeRight);
    app.update(Action::TimeRight);
    app.update(Action::RangeEnd);
    // From the marked cell's start to the end of the cursor's cell: 300 ms.
    let l = loaded(&app);
    let Some(Transform::TimeRange { keep: Some(w), .. }) = l.transforms.first() else {
        panic!("no time range: {:?}", l.transforms);
    };
    assert_eq!((w.start, w.end), (lo + NS + NS / 10, lo + NS + 4 * NS / 10));
    assert_eq!(l.profile.samples.len(), samples_in(&full, w.start, w.end));
    // v again: back to the strips.
    app.update(Action::ToggleHeatMap);
    assert!(app.timeline.shown && !app.timeline.show_heat);
    let text = screen_of(&mut app, 80, 40);
    assert!(text.contains("timeline 4.5 s"), "{text}");
}

#[test]
fn marks_are_drawn_named_at_the_cursor_and_can_be_excluded() {
    let dir = tempfile::tempdir().unwrap();
    let marks = dir.path().join("marks.txt");
    std::fs::write(&marks, "# what happened\n0.2 deploy v2\n1-2 gc storm\n").unwrap();
    let full = sample();
    let mut app = app_of(full.clone());
    let parsed = ember::model::timerange::parse_marks(
        &std::fs::read_to_string(&marks).unwrap(),
        "marks.txt",
    )
    .unwrap();
    app.timeline.pending_marks = parsed;
    app.contexts_read(vec![]);
    assert_eq!(app.timeline.marks.len(), 2);
    assert!(app.timeline.shown, "marks show the timeline");
    let text = screen_of(&mut app, 80, 24);
    let row = text
        .lines()
        .find(|l| l.starts_with("marks"))
        .unwrap_or_default();
    assert!(row.contains('|') && row.contains('━'), "{text}");
    // 1.2 s in: inside the gc storm; the title names it.
    for _ in 0..2 {
        app.update(Action::TimeRightFast);
    }
    let text = screen_of(&mut app, 80, 24);
    assert!(text.contains("mark: gc storm"), "{text}");
    // --exclude-marks drops the samples of the range marks, as a batch command.
    let sample_path = common::repo().join("samples/perf-python-wordindex-small.perf.gz");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(["top", "--format", "json", "--exclude-marks", "--marks"])
        .arg(&marks)
        .arg(&sample_path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let lo = *full.samples.time.as_ref().unwrap().iter().min().unwrap();
    let outside = full
        .samples
        .time
        .as_ref()
        .unwrap()
        .iter()
        .filter(|&&t| !(lo + NS <= t && t < lo + 2 * NS))
        .count();
    assert_eq!(got["total"].as_u64(), Some(outside as u64));
    // A bad line is one error naming the file and the line.
    std::fs::write(&marks, "0.2 ok\nsoon deploy\n").unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(["top", "--exclude-marks", "--marks"])
        .arg(&marks)
        .arg(&sample_path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("marks.txt: line 2"), "{err}");
}

#[test]
fn two_ranges_compare_as_a_diff_and_c_goes_back() {
    let full = sample();
    let mut app = app_of(full.clone());
    app.update(Action::ToggleTimeline);
    screen_of(&mut app, 80, 24);
    app.update(Action::CompareRanges);
    assert!(
        loaded(&app)
            .transform_error
            .as_deref()
            .is_some_and(|e| e.contains("C compares")),
        "asks for two ranges first"
    );
    // First range: columns 0-9; second: 10-29.
    app.update(Action::RangeStart);
    for _ in 0..9 {
        app.update(Action::TimeRight);
    }
    app.update(Action::RangeEnd);
    let first = loaded(&app).time_window().expect("a range");
    app.update(Action::TimeRight);
    app.update(Action::RangeStart);
    app.update(Action::TimeRightFast);
    app.update(Action::TimeRightFast);
    app.update(Action::RangeEnd);
    let second = loaded(&app).time_window().expect("a range");
    assert_ne!(first, second);
    app.update(Action::CompareRanges);
    let diff = loaded(&app);
    let meta = diff.profile.meta.diff.as_deref().expect("a comparison");
    let before = samples_in(&full, first.start, first.end) as i64;
    let after = samples_in(&full, second.start, second.end) as i64;
    assert_eq!(diff.profile.total(meta.sides[0].value), before);
    assert_eq!(diff.profile.total(meta.sides[1].value), after);
    let text = screen_of(&mut app, 100, 24);
    assert!(
        text.contains("0.000-"),
        "the sides are named by their ranges: {text}"
    );
    app.update(Action::CompareRanges);
    let back = loaded(&app);
    assert!(back.profile.meta.diff.is_none());
    assert_eq!(back.time_window(), Some(second));
}

#[test]
fn a_drag_on_the_timeline_cuts_to_the_range_it_covers() {
    use crossterm::event::{Event, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let full = sample();
    let mut app = app_of(full.clone());
    app.update(Action::ToggleTimeline);
    let text = screen_of(&mut app, 80, 24);
    let y = text
        .lines()
        .position(|l| l.starts_with("samples"))
        .expect("the samples row") as u16;
    let mouse = |kind, column| {
        Event::Mouse(MouseEvent {
            kind,
            column,
            row: y,
            modifiers: KeyModifiers::NONE,
        })
    };
    app.handle_event(&mouse(MouseEventKind::Down(MouseButton::Left), 20));
    app.handle_event(&mouse(MouseEventKind::Drag(MouseButton::Left), 30));
    app.handle_event(&mouse(MouseEventKind::Up(MouseButton::Left), 40));
    let l = loaded(&app);
    let w = l.time_window().expect("a range from the drag");
    let (lo, hi) = app.timeline.window.expect("a window");
    // Columns 20..40 of the 61-column axis (from x = 10): a third of the span.
    let share = (w.end - w.start) as f64 / (hi - lo) as f64;
    assert!((0.3..0.37).contains(&share), "{share}");
    assert_eq!(l.profile.samples.len(), samples_in(&full, w.start, w.end));
    // A click without a drag only moves the cursor.
    app.handle_event(&mouse(MouseEventKind::Down(MouseButton::Left), 50));
    app.handle_event(&mouse(MouseEventKind::Up(MouseButton::Left), 50));
    assert_eq!(loaded(&app).time_window(), Some(w));
    assert!(app.timeline.mark.is_none());
}

#[test]
fn thread_rows_name_the_busiest_threads() {
    // Two comms in one perf script: each gets a row, the busier first.
    let mut text = String::new();
    for i in 0..30 {
        let comm = if i % 3 == 0 { "writer" } else { "reader" };
        text.push_str(&format!(
            "{comm} {} [000] {}.{:03}000: 1 cpu-clock:\n\tffff main (/bin/x)\n\n",
            100 + u32::from(i % 3 == 0),
            10 + i / 10,
            (i % 10) * 100
        ));
    }
    let mut app = app_of(common::load_bytes(text.as_bytes()));
    app.update(Action::ThreadRows);
    let screen = screen_of(&mut app, 80, 30);
    let rows: Vec<&str> = screen
        .lines()
        .filter(|l| (l.starts_with("reader") || l.starts_with("writer")) && l.contains('█'))
        .collect();
    assert_eq!(rows.len(), 2, "{screen}");
    // The busier first; the cursor (at the first sample, the writer's) reads each row.
    assert!(
        rows[0].starts_with("reader") && rows[0].ends_with(" 0"),
        "{screen}"
    );
    assert!(
        rows[1].starts_with("writer") && rows[1].ends_with(" 1"),
        "{screen}"
    );
    app.update(Action::ThreadRows);
    let screen = screen_of(&mut app, 80, 30);
    assert!(
        !screen
            .lines()
            .any(|l| l.starts_with("writer") && l.contains('█')),
        "{screen}"
    );
}

/// The detail panel's rows between its borders, joined by spaces.
fn panel_text(screen: &str) -> String {
    let rows: Vec<String> = screen
        .lines()
        .filter_map(|l| {
            let start = l.find('│')?;
            let rest = &l[start + '│'.len_utf8()..];
            let end = rest.rfind('│')?;
            Some(rest[..end].trim().to_string())
        })
        .collect();
    rows.join(" ")
}

/// A host flag in the detail panel is whole and wrapped at words, at 80x24
/// (the panel at the bottom) and 250x60 (beside the graph, as wide as its
/// lines need, not the fixed 44 columns it was).
#[test]
fn the_detail_panel_wraps_host_flags_at_words_and_sizes_to_its_content() {
    let mut app = app_of(sample());
    app.contexts_read(vec![Ok(log("vmstat.log", 0, &[60.0; 40]))]);
    app.update(Action::ToggleDetail);
    let wide = screen_of(&mut app, 250, 60);
    let flag = "host: the host was waiting on I/O (iowait up to 60%) but this profile only \
                sees time on the CPU: it cannot show the wait. Take a wall-clock or off-CPU \
                profile:";
    assert!(panel_text(&wide).contains(flag), "{wide}");
    let top = wide
        .lines()
        .find(|l| l.contains("┌ detail"))
        .expect("the panel's top border");
    let width = top.chars().skip_while(|&c| c != '┌').count();
    assert!(width > 44 && width <= 250 * 45 / 100, "{width}: {wide}");
    let small = screen_of(&mut app, 80, 24);
    assert!(
        panel_text(&small).contains("host: the host was waiting on I/O"),
        "{small}"
    );
}
