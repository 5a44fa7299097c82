//! Comparison figures (issue 9). Not a timed test: it prints medians for
//! BENCHMARKS.md.
//!
//!   cargo bench --bench diff -- BEFORE AFTER      (env EMBER_BENCH_RUNS, default 5)
//!
//! One side loaded alone, both loaded in parallel and merged (what `ember diff`
//! does before its first frame), the merge alone, the tree build, a side switch
//! (`t`), the delta table (Tab), and the redraw of each key in the differential
//! and the linked view at 200x50 on a TestBackend.

mod common;

use std::time::{Duration, Instant};

use common::{median, ms, vm_hwm_kib};
use ember::formats::{self, LoadOptions};
use ember::model::diff::{self, DeltaTable, MergeOptions};
use ember::model::{CallTree, TreeOptions};
use ember::sources::input::{Progress, Source};
use ember::ui::app::{App, Loaded, Phase};
use ember::ui::chrome::keymap::{Action, Keymap};
use ember::ui::chrome::theme::{ColorDepth, Theme};
use ember::ui::views::flame_state::Orientation;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn main() -> anyhow::Result<()> {
    let files = common::files();
    let runs = common::runs();
    let [before, after] = files.as_slice() else {
        eprintln!("usage: cargo bench --bench diff -- BEFORE AFTER");
        return Ok(());
    };
    let sources = [
        Source::from_arg(std::path::Path::new(before)),
        Source::from_arg(std::path::Path::new(after)),
    ];
    let opts = LoadOptions::default();
    let (mut one, mut both, mut merge) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        let p = formats::load(&sources[0], &opts, &Progress::new())?;
        one.push(t.elapsed());
        drop(p);
        let t = Instant::now();
        let p = formats::load_diff(
            [&sources[0], &sources[1]],
            &opts,
            false,
            &Progress::several(),
        )?;
        both.push(t.elapsed());
        drop(p);
        let b = formats::load(&sources[0], &opts, &Progress::new())?;
        let a = formats::load(&sources[1], &opts, &Progress::new())?;
        let t = Instant::now();
        let m = diff::merge(b, a, &MergeOptions::default())?;
        merge.push(t.elapsed());
        drop(m);
    }
    println!(
        "  load one side    median {}  over {runs} runs",
        ms(median(one))
    );
    println!("  load both+merge  median {}", ms(median(both)));
    println!("  merge alone      median {}", ms(median(merge)));
    let profile = formats::load_diff(
        [&sources[0], &sources[1]],
        &opts,
        false,
        &Progress::several(),
    )?;
    println!(
        "  diff profile: {} rows, {} stacks, {} frames; model ~{} MiB; VmHWM {} MiB",
        profile.samples.len(),
        profile.stacks.len(),
        profile.frames.len(),
        profile.heap_bytes() >> 20,
        vm_hwm_kib() >> 10
    );
    let options = TreeOptions {
        value: profile.default_value,
        ..TreeOptions::default()
    };
    let (mut build, mut swap, mut delta, mut sampled) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        let mut tree = CallTree::build(&profile, options.clone());
        build.push(t.elapsed());
        let t = Instant::now();
        tree.swap_sides(&profile);
        swap.push(t.elapsed());
        let t = Instant::now();
        let table = DeltaTable::from_tree(&profile, &tree);
        delta.push(t.elapsed());
        let t = Instant::now();
        let from_samples = DeltaTable::from_samples(&profile, None);
        sampled.push(t.elapsed());
        std::hint::black_box((&tree, &table, &from_samples));
    }
    println!("  tree build       median {}", ms(median(build)));
    println!("  side switch (t)  median {}", ms(median(swap)));
    println!("  delta table (Tab) median {}", ms(median(delta)));
    println!(
        "  delta table from the samples (the viewer's job) median {}",
        ms(median(sampled))
    );
    let tree = CallTree::build(&profile, options);
    redraw(profile, tree)
}

/// Median redraw time per key at 200x50: the update plus a full draw, in the
/// differential view and then in the linked panes.
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
    for view in ["differential", "linked"] {
        if view == "linked" {
            app.update(Action::SplitPanes);
            ember::ui::draw_frame(&mut term, &mut app)?;
        }
        let keys = [
            ("move down", Action::MoveDown),
            ("move right", Action::MoveRight),
            ("zoom", Action::Zoom),
            ("widest", Action::Widest),
            ("norm (=)", Action::DiffNorm),
            ("sides (t)", Action::NextValue),
        ];
        for (name, action) in keys {
            let mut times = Vec::new();
            for i in 0..21 {
                let a = match (action, i % 2) {
                    (Action::Zoom, 1) => Action::Unzoom,
                    (Action::MoveDown, 1) => Action::MoveUp,
                    (Action::MoveRight, 1) => Action::MoveLeft,
                    (a, _) => a,
                };
                let t = Instant::now();
                app.update(a);
                ember::ui::draw_frame(&mut term, &mut app)?;
                times.push(t.elapsed());
            }
            println!("  {view} key {name:<11} median {}", ms(median(times)));
        }
    }
    println!("  VmHWM after the keys {} MiB", vm_hwm_kib() >> 10);
    Ok(())
}
