//! Which context format a file is, from its first lines (§8.1 of the format
//! notes): JSON by its keys, CSV by its preamble, text by the banner and the
//! first header, vmstat by its group line or its rows of 17/18 integers.

use super::ContextKind;

/// What the head of a file says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sniff {
    Kind(ContextKind),
    /// A context tool's output in a mode ember does not read, and why.
    Refused(&'static str, &'static str),
    Unknown,
}

/// How many bytes of the head are looked at.
const HEAD: usize = 8192;

/// The context format of a file from its head (gzip allowed), or `None` when it
/// is not one (a profile, say).
pub fn detect(head: &[u8]) -> Option<ContextKind> {
    match sniff_any(head) {
        Sniff::Kind(k) => Some(k),
        Sniff::Refused(kind, _) => Some(match kind {
            "iostat" => ContextKind::IostatText,
            "sar" => ContextKind::Sar,
            "dool/dstat CSV" => ContextKind::Dool,
            _ => ContextKind::Vmstat,
        }),
        Sniff::Unknown => None,
    }
}

/// True when `head` is a host-context log rather than a profile (including
/// the context modes ember refuses, so that they are not read as profiles).
pub fn is_context(head: &[u8]) -> bool {
    detect(head).is_some()
}

fn sniff_any(head: &[u8]) -> Sniff {
    if head.starts_with(&[0x1f, 0x8b]) {
        use std::io::Read;
        let mut out = Vec::new();
        // a head is a cut-off stream: keep what decompressed
        let _ = flate2::read::MultiGzDecoder::new(head)
            .take(HEAD as u64)
            .read_to_end(&mut out);
        return sniff(&out);
    }
    sniff(head)
}

pub(crate) fn sniff(head: &[u8]) -> Sniff {
    let head = &head[..head.len().min(HEAD)];
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('{') {
        if !t.contains("\"sysstat\"") {
            return Sniff::Unknown;
        }
        return Sniff::Kind(if t.contains("\"file-date\"") {
            ContextKind::SadfJson
        } else if t.contains("\"cpu-load\"") {
            ContextKind::MpstatJson
        } else {
            ContextKind::IostatJson
        });
    }
    if t.starts_with("# hostname;interval;timestamp;") {
        return Sniff::Kind(ContextKind::SadfCsv);
    }
    let first = t.lines().next().unwrap_or("");
    if first.starts_with("\"Dstat ") || first.starts_with("\"dool ") {
        return Sniff::Kind(ContextKind::Dool);
    }
    let lines: Vec<&str> = t.lines().take(20).map(str::trim_end).collect();
    if first.starts_with("Linux ") && first.contains('\t') {
        return sysstat_text(&lines);
    }
    vmstat(&lines)
}

fn sysstat_text(lines: &[&str]) -> Sniff {
    for l in lines.iter().skip(1) {
        let tokens: Vec<&str> = l.split_ascii_whitespace().collect();
        let Some(&first) = tokens.first() else {
            continue;
        };
        if first == "avg-cpu:" || first.starts_with("Device") || tokens.last() == Some(&"Device") {
            return Sniff::Kind(ContextKind::IostatText);
        }
        if super::time::parse_clock(first).is_some() {
            let k = if matches!(tokens.get(1), Some(&("AM" | "PM"))) {
                2
            } else {
                1
            };
            let names = &tokens[k.min(tokens.len())..];
            if names
                .first()
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
            {
                continue; // an iostat -t line, or a row
            }
            // mpstat: `CPU %usr %nice %sys %iowait %irq`; sar -u ALL has %steal there
            let mp = names.len() > 5 && names[1] == "%usr" && names[5] == "%irq";
            return Sniff::Kind(if mp {
                ContextKind::MpstatText
            } else {
                ContextKind::Sar
            });
        }
    }
    // a banner and timestamps but no table yet (iostat -t, cut short)
    Sniff::Kind(ContextKind::IostatText)
}

fn vmstat(lines: &[&str]) -> Sniff {
    let Some(first) = lines.iter().find(|l| !l.trim().is_empty()) else {
        return Sniff::Unknown;
    };
    let first = first.trim_start();
    if first.starts_with("disk- ") && first.contains("reads") {
        return Sniff::Refused(
            "vmstat",
            "vmstat -d prints cumulative per-disk counters, not rates; \
             record iostat -x -t instead",
        );
    }
    let word = first.split_ascii_whitespace().next().unwrap_or("");
    let group =
        (word == "procs" || word == "--procs--" || word == "proc.") && first.contains("---");
    if group {
        return Sniff::Kind(ContextKind::Vmstat);
    }
    let rows = lines
        .iter()
        .filter(|l| {
            let tokens: Vec<&str> = l.split_ascii_whitespace().collect();
            let nums = tokens
                .iter()
                .take_while(|t| t.bytes().all(|c| c.is_ascii_digit()))
                .count();
            (nums == 17 || nums == 18) && (tokens.len() == nums || tokens.len() == nums + 2)
        })
        .count();
    if rows > 0 && rows * 2 >= lines.iter().filter(|l| !l.trim().is_empty()).count() {
        return Sniff::Kind(ContextKind::Vmstat);
    }
    let summary = !lines.is_empty()
        && lines.iter().filter(|l| !l.trim().is_empty()).all(|l| {
            let mut w = l.split_ascii_whitespace();
            w.next()
                .is_some_and(|n| n.bytes().all(|c| c.is_ascii_digit()))
                && w.next()
                    .is_some_and(|x| x.starts_with(|c: char| c.is_ascii_alphabetic()))
        });
    if summary {
        return Sniff::Refused(
            "vmstat",
            "a one-shot vmstat summary (-s, -D or -f), not a time series",
        );
    }
    Sniff::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_the_formats_apart() {
        let cases: [(&str, Option<ContextKind>); 9] = [
            ("procs -----memory---\n r b\n", Some(ContextKind::Vmstat)),
            (
                "Linux 6.1 (vm) \t12/02/26 \t_x86_64_\t(2 CPU)\n\navg-cpu:  %user\n",
                Some(ContextKind::IostatText),
            ),
            (
                "Linux 6.1 (vm) \t12/02/26 \t_x86_64_\t(2 CPU)\n\n11:56:15  CPU %user %nice\n",
                Some(ContextKind::Sar),
            ),
            (
                "Linux 6.1 (vm) \t12/02/26 \t_x86_64_\t(2 CPU)\n\n11:53:54 CPU %usr %nice %sys %iowait %irq %soft\n",
                Some(ContextKind::MpstatText),
            ),
            (
                "{\"sysstat\": {\"hosts\": [{\"statistics\": [{\"avg-cpu\"",
                Some(ContextKind::IostatJson),
            ),
            (
                "# hostname;interval;timestamp;CPU;%user\n",
                Some(ContextKind::SadfCsv),
            ),
            ("\"dool 1.3.8 CSV output\"\n", Some(ContextKind::Dool)),
            ("main;foo;bar 12\nmain;foo 3\n", None),
            ("perf 123 [000] 1.000: 1 cycles:\n\tffff foo\n", None),
        ];
        for (text, want) in cases {
            assert_eq!(detect(text.as_bytes()), want, "{text}");
        }
    }

    #[test]
    fn refuses_vmstat_disk_mode_but_claims_it() {
        let d = "disk- ------------reads------------ ----writes---\n";
        assert!(matches!(sniff(d.as_bytes()), Sniff::Refused(..)));
        assert!(is_context(d.as_bytes()));
    }
}
