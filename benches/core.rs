//! Load and redraw figures for the core (issue 2). Not a timed test: it prints
//! medians for BENCHMARKS.md.
//!
//!   cargo bench --bench core -- FILE [FILE ...]     (env EMBER_BENCH_RUNS, default 5)
//!
//! For each file: load (parse into samples), tree build, top table, and the median
//! redraw time of each key at 200x50 on a TestBackend.

mod common;

use std::time::{Duration, Instant};

use common::{median, ms, vm_hwm_kib};
use ember::formats::{self, LoadOptions};
use ember::model::{CallTree, TopTable, Transform, TreeOptions};
use ember::sources::input::{Progress, Source};
use ember::ui::app::{App, Loaded, Phase};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn main() -> anyhow::Result<()> {
    ember::host::alloc::from_env();
    let files = common::files();
    let runs = common::runs();
    if files.is_empty() {
        eprintln!("usage: cargo bench --bench core -- FILE [FILE ...]");
        return Ok(());
    }
    for file in files {
        let source = Source::from_arg(std::path::Path::new(&file));
        let (mut load, mut build, mut top) = (Vec::new(), Vec::new(), Vec::new());
        let mut last = None;
        for _ in 0..runs {
            let t = Instant::now();
            let profile = formats::load(&source, &LoadOptions::default(), &Progress::new())?;
            load.push(t.elapsed());
            let t = Instant::now();
            let tree = CallTree::build(&profile, TreeOptions::default());
            build.push(t.elapsed());
            let t = Instant::now();
            let table = TopTable::build(&profile, &tree);
            top.push(t.elapsed());
            std::hint::black_box(&table);
            last = Some((profile, tree));
        }
        let Some((profile, tree)) = last else {
            continue;
        };
        println!(
            "{file}: {} samples, {} stacks, {} frames; model ~{} MiB; VmHWM {} MiB",
            profile.samples.len(),
            profile.stacks.len(),
            profile.frames.len(),
            profile.heap_bytes() >> 20,
            vm_hwm_kib() >> 10
        );
        println!(
            "  load (parse)     median {}  over {runs} runs",
            ms(median(load))
        );
        println!("  tree build       median {}", ms(median(build)));
        println!("  top table        median {}", ms(median(top)));
        redraw(profile, tree)?;
    }
    Ok(())
}

/// Median redraw time per key at 200x50: the update plus a full draw.
fn redraw(profile: ember::model::Profile, tree: CallTree) -> anyhow::Result<()> {
    let loaded = Loaded::new(profile, tree, Orientation::Icicle, Duration::ZERO);
    let mut app = App::new(
        "bench".into(),
        Keymap::default_map(),
        Theme::new(ColorDepth::TrueColor),
        Phase::Ready(Box::new(loaded)),
        Orientation::Icicle,
    );
    let mut term = Terminal::new(TestBackend::new(200, 50))?;
    ember::ui::draw_frame(&mut term, &mut app)?;
    let keys = [
        ("move down", Action::MoveDown),
        ("move right", Action::MoveRight),
        ("move left", Action::MoveLeft),
        ("move up", Action::MoveUp),
        ("zoom", Action::Zoom),
        ("unzoom", Action::Unzoom),
        ("orientation", Action::ToggleOrientation),
        ("page down", Action::PageDown),
        ("widest", Action::Widest),
    ];
    for (name, action) in keys {
        let mut times = Vec::new();
        for i in 0..21 {
            // Zoom/unzoom alternate so each sample does real work.
            let a = match (action, i % 2) {
                (Action::Zoom, 1) => Action::Unzoom,
                (Action::Unzoom, 0) => Action::Zoom,
                (Action::MoveDown, 1) => Action::MoveUp,
                (Action::MoveUp, 0) => Action::MoveDown,
                (Action::MoveRight, 1) => Action::MoveLeft,
                (Action::MoveLeft, 0) => Action::MoveRight,
                (Action::PageDown, 1) => Action::PageUp,
                (a, _) => a,
            };
            let t = Instant::now();
            app.update(a);
            ember::ui::draw_frame(&mut term, &mut app)?;
            times.push(t.elapsed());
        }
        println!("  key {name:<12} median {}", ms(median(times)));
    }
    // Callers / callees of the widest plateau (most self time): opened with `c`,
    // closed with Esc, so each run builds both panes afresh.
    app.update(Action::Reset);
    app.update(Action::Widest);
    let mut times = Vec::new();
    for _ in 0..11 {
        let t = Instant::now();
        app.update(Action::Sandwich);
        ember::ui::draw_frame(&mut term, &mut app)?;
        times.push(t.elapsed());
        app.update(Action::Unzoom);
    }
    println!("  sandwich (c, job) median {}", ms(median(times)));
    transforms(&app)
}

/// What a transform key or Tab to the inverted view costs: the profile
/// transform plus the tree build, on the frame under the widest plateau.
fn transforms(app: &App) -> anyhow::Result<()> {
    let Some(l) = app.loaded() else {
        return Ok(());
    };
    let (p, tree) = (&l.profile, &l.tree);
    let Some(f) = tree.frame(p, l.flame.selected) else {
        return Ok(());
    };
    let exact = format!("^{}$", regex::escape(&p.frames.name(f)));
    let cases = [
        (
            "focus",
            Transform::Focus {
                pattern: exact.clone(),
            },
        ),
        (
            "drop",
            Transform::Drop {
                pattern: exact.clone(),
            },
        ),
        ("merge", Transform::Merge { pattern: exact }),
        (
            "collapse rec.",
            Transform::CollapseRecursion { indirect: false },
        ),
    ];
    for (name, t) in cases {
        let (mut times, mut steps) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let start = Instant::now();
            let shown = ember::model::apply(p, &t)?;
            steps.push(start.elapsed());
            let tree = CallTree::build(&shown, tree.options.clone());
            std::hint::black_box(&tree);
            times.push(start.elapsed());
        }
        println!(
            "  transform {name:<14} median {} (transform alone {})",
            ms(median(times)),
            ms(median(steps))
        );
    }
    let (mut times, mut steps, mut size) = (Vec::new(), Vec::new(), 0);
    for _ in 0..3 {
        let start = Instant::now();
        let inv = ember::model::invert::invert(p);
        steps.push(start.elapsed());
        size = inv.stacks.len();
        let tree = CallTree::build(&inv, tree.options.clone());
        std::hint::black_box(&tree);
        times.push(start.elapsed());
    }
    // The first is what a user waits for: later ones reuse memory the
    // earlier ones freed (on a VM whose balloon reports free pages, the
    // first touch of fresh memory is the host's page fault too).
    let first = times.first().copied().unwrap_or_default();
    println!(
        "  inverted view    median {} (first {}, inversion alone {}; {size} stacks)",
        ms(median(times)),
        ms(first),
        ms(median(steps))
    );
    Ok(())
}
