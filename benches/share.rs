//! Hand-off figures (issue 12). Not a timed test: it prints medians for
//! BENCHMARKS.md.
//!
//!   cargo bench --bench share -- FILE...     (env EMBER_BENCH_RUNS, default 5)
//!
//! Per FILE: the lint from a built tree (`ember lint`, `ember info`) and
//! from the samples (`lint_view`, what the viewer's job thread works out
//! once per view after the first frame), the report, and each export written to memory (folded, SVG,
//! speedscope, pprof) with the bytes it makes; a zoomed SVG export too.

mod common;

use std::time::{Duration, Instant};

use common::{files, median, ms, runs};
use ember::formats::{self, LoadOptions};
use ember::model::lint::{lint, lint_view};
use ember::model::{CallTree, NodeId, TreeOptions};
use ember::output::export::{self, ExportFormat, Scope};
use ember::output::report::{Report, ReportInput, Style};
use ember::sources::input::{Progress, Source};

fn time<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs() {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed());
    }
    (median(times), last.unwrap_or_else(&mut f))
}

fn main() {
    for file in files() {
        let source = Source::Path(file.clone().into());
        let Ok(p) = formats::load(&source, &LoadOptions::default(), &Progress::new()) else {
            eprintln!("{file}: cannot load");
            continue;
        };
        let tree = CallTree::build(
            &p,
            TreeOptions {
                value: p.default_value,
                ..TreeOptions::default()
            },
        );
        println!(
            "{file}: {} stacks, {} samples",
            p.stacks.len(),
            p.samples.len()
        );
        let (d, findings) = time(|| lint(&p, &tree));
        println!(
            "  lint                 {:>10}  ({} findings)",
            ms(d),
            findings.len()
        );
        let options = TreeOptions {
            value: p.default_value,
            ..TreeOptions::default()
        };
        let (d, viewed) = time(|| lint_view(&p, &options));
        println!(
            "  lint of the samples  {:>10}  ({} findings)",
            ms(d),
            viewed.len()
        );
        let (d, bytes) = time(|| {
            let input = ReportInput {
                source: file.clone(),
                view: Vec::new(),
                selected: tree.child_ids(NodeId::ROOT).next(),
                limit: 10,
                lint: &findings,
            };
            let mut out = Vec::new();
            let _ = Report::build(&p, &tree, &input).write(&mut out, Style::Markdown);
            out.len()
        });
        println!("  report (markdown)    {:>10}  {bytes} bytes", ms(d));
        // The heaviest child of the root: what a zoom usually lands on.
        let zoom = tree
            .child_ids(NodeId::ROOT)
            .max_by_key(|&n| tree.total(n))
            .unwrap_or(NodeId::ROOT);
        for (label, format, root) in [
            ("export folded", ExportFormat::Folded, NodeId::ROOT),
            ("export svg", ExportFormat::Svg, NodeId::ROOT),
            ("export svg, zoomed", ExportFormat::Svg, zoom),
            ("export speedscope", ExportFormat::Speedscope, NodeId::ROOT),
            ("export pprof", ExportFormat::Pprof, NodeId::ROOT),
        ] {
            let scope = Scope {
                profile: &p,
                tree: &tree,
                root,
                title: file.clone(),
                notes: Vec::new(),
                icicle: false,
            };
            let (d, bytes) = time(|| {
                let mut out = Vec::new();
                let _ = export::write(&mut out, format, &scope);
                out.len()
            });
            println!(
                "  {label:<20} {:>10}  {:.1} MiB",
                ms(d),
                bytes as f64 / 1048576.0
            );
        }
    }
}
