//! The inverted view's two steps apart (issue 11): the inversion (reversal of
//! every sampled stack) and the tree over it, per run. Not a timed test: it
//! prints figures for BENCHMARKS.md.
//!
//!   cargo bench --bench invert -- FILE [FILE ...]     (env EMBER_BENCH_RUNS, default 5)
//!
//! The first run is printed apart: it is the one a user waits for (fresh
//! memory), later ones reuse what earlier ones freed.

mod common;

use std::time::Instant;

use common::{median, ms};
use ember::formats::{self, LoadOptions};
use ember::model::{CallTree, TreeOptions};
use ember::sources::input::{Progress, Source};

fn main() -> anyhow::Result<()> {
    ember::host::alloc::from_env();
    let files = common::files();
    if files.is_empty() {
        eprintln!("usage: cargo bench --bench invert -- FILE [FILE ...]");
        return Ok(());
    }
    for file in files {
        let source = Source::from_arg(std::path::Path::new(&file));
        let t = Instant::now();
        let p = formats::load(&source, &LoadOptions::default(), &Progress::new())?;
        println!("{file}: load {}", ms(t.elapsed()));
        let (mut inverts, mut trees, mut totals) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..common::runs() {
            let t = Instant::now();
            let inv = ember::model::invert::invert(&p);
            let a = t.elapsed();
            let tree = CallTree::build(&inv, TreeOptions::default());
            std::hint::black_box(&tree);
            inverts.push(a);
            trees.push(t.elapsed() - a);
            totals.push(t.elapsed());
        }
        let first = |v: &[std::time::Duration]| ms(v.first().copied().unwrap_or_default());
        println!(
            "  inversion median {} (first {}), tree median {} (first {}), both {} (first {})",
            ms(median(inverts.clone())),
            first(&inverts),
            ms(median(trees.clone())),
            first(&trees),
            ms(median(totals.clone())),
            first(&totals),
        );
    }
    Ok(())
}
