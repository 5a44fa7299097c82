//! `ember info`, `ember convert` and `ember top`: a profile read, summed and
//! written out, without the viewer.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use super::*;

/// Whether `ember top` with these switches may sum a folded file while
/// reading it: nothing asks for the loaded profile (no transform, time range,
/// sample type or thread option).
pub(super) fn top_streams(input: &InputArgs) -> bool {
    input.transforms().is_ok_and(|(t, _)| t.is_empty())
        && input.time.is_unset()
        && input.load_options().keeps_profile()
}

/// `ember top`'s table summed while reading ([`top_streams`]): memory is then
/// the frame names, not the stacks.
fn top_streamed(path: &std::path::Path, input: &InputArgs) -> Result<Option<(Profile, TopTable)>> {
    if !top_streams(input) {
        return Ok(None);
    }
    let source = Source::from_arg(path);
    match formats::top_streamed(&source, &input.load_options(), &Progress::new()) {
        None => Ok(None),
        Some(result) => {
            let (profile, table) = result?;
            report_warnings(&profile, &source, input.verbose);
            Ok(Some((profile, table)))
        }
    }
}

pub(super) fn run_info(args: &InfoArgs) -> Result<ExitCode> {
    let (source, profile, tree) = load_for_batch(&args.profile, &args.input)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let logs: Vec<_> = args
        .input
        .time
        .context
        .iter()
        .map(|p| context_for_batch(p))
        .collect();
    let nudge = args.input.time.align_ns()?;
    let samples = tree
        .samples(model::NodeId::ROOT)
        .map_or(profile.samples.len(), |s| s as usize);
    let written = output::info(&mut out, &profile, &tree, &source.display())
        .and_then(|()| {
            let anchor = args.input.time.anchor_ns;
            output::context_info(&mut out, &profile, samples, logs, nudge, anchor)
        })
        .and_then(|()| {
            // What loading this profile took, against what the host allows:
            // the figure to judge a bigger one by.
            let limits = crate::host::limits::Limits::read();
            let estimate = crate::host::budget::estimate(&args.profile, &args.input.load_options())
                .map(|e| {
                    format!(
                        "estimated {} for the load, ",
                        crate::host::limits::mib(e.need)
                    )
                })
                .unwrap_or_default();
            match crate::host::limits::peak_rss() {
                Some(peak) => writeln!(
                    out,
                    "memory:        {} at peak to load ({estimate}{})",
                    crate::host::limits::mib(peak),
                    limits.describe()
                ),
                None => writeln!(out, "memory:        {estimate}{}", limits.describe()),
            }
        })
        .and_then(|()| lint::info_lines(&mut out, &profile, &tree))
        .and_then(|()| out.flush());
    finish_output(written)
}

pub(super) fn run_convert(args: &ConvertArgs) -> Result<ExitCode> {
    use output::export::{self, ExportFormat};
    let format = match (args.to, &args.output) {
        (Some(to), _) => to.export(),
        (None, Some(out)) => ExportFormat::from_path(out).unwrap_or(ExportFormat::Folded),
        (None, None) => ExportFormat::Folded,
    };
    if let Some(out) = &args.output {
        refuse_input(out, &args.profile)?;
    }
    if args.output.is_none() && format.is_binary() && io::stdout().is_terminal() {
        anyhow::bail!(
            "--to {}: binary output is not written to a terminal; give -o FILE or redirect stdout",
            format.name()
        );
    }
    let (source, profile, tree) = load_for_batch(&args.profile, &args.input)?;
    let (transforms, _) = args.input.transforms()?;
    let notes = transforms.iter().map(|t| t.describe()).collect();
    let scope = export::Scope {
        profile: &profile,
        tree: &tree,
        root: model::NodeId::ROOT,
        title: source.display(),
        notes,
        icicle: false,
    };
    let caveats = match &args.output {
        Some(path) => export::write_file(path, format, &scope)?.1,
        None => {
            let stdout = io::stdout();
            let mut out = io::BufWriter::new(stdout.lock());
            match export::write(&mut out, format, &scope) {
                Ok(c) => c,
                Err(e) if is_broken_pipe(&e) => return Ok(ExitCode::SUCCESS),
                Err(e) => return Err(e),
            }
        }
    };
    for c in caveats {
        eprintln!("ember: {c}");
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn run_top(args: &TopArgs) -> Result<ExitCode> {
    let (profile, mut table, value) = match top_streamed(&args.profile, &args.input)? {
        Some((profile, table)) => (profile, table, 0),
        None => {
            let (_, profile, tree) = load_for_batch(&args.profile, &args.input)?;
            let table = TopTable::build(&profile, &tree);
            let value = tree.options.value;
            (profile, table, value)
        }
    };
    let key = match args.sort {
        TopSort::SelfWeight => SortKey::SelfWeight,
        TopSort::Total => SortKey::Total,
    };
    table.sort(&profile, key, true);
    let vt = &profile.value_types[value];
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let written = match args.format {
        TopFormat::Text => output::top_text(&mut out, &profile, &table, vt, args.limit),
        TopFormat::Json => output::top_json(&mut out, &profile, &table, vt, args.limit),
    }
    .and_then(|()| out.flush());
    finish_output(written)
}
