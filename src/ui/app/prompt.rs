//! The App's side of [`crate::ui::chrome::prompt`]: the export key's file name, the
//! yes/no before overwriting, and the word on what was written.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Effect, Phase, View};
use crate::model::NodeId;
use crate::model::lint::lint;
use crate::output::export::ExportFormat;
use crate::output::report::{Report, ReportInput, Style};
use crate::ui::chrome::clipboard;
use crate::ui::chrome::keymap::Action;
use crate::ui::chrome::prompt::{Ask, Prompt};
use crate::ui::runtime::jobs::{Exported, Job};
use crate::ui::views::flame_state::Orientation;

/// The endings Tab cycles through in the export prompt.
const EXPORT_ENDINGS: [&str; 4] = ["svg", "folded", "speedscope.json", "pb.gz"];

impl App {
    /// The export, report and copy keys; false for the rest.
    pub(super) fn prompt_action(&mut self, action: Action) -> bool {
        match action {
            Action::Export => self.start_export(),
            Action::Report => self.start_report(),
            Action::CopyName => self.copy_frame(false),
            Action::CopyPath => self.copy_frame(true),
            Action::CopyReport => {
                if let Some(t) = self.report_text(Style::Markdown) {
                    self.copy(&t, "the report");
                }
            }
            _ => return false,
        }
        true
    }

    /// The report key: asks for a file name, offering `<profile>-report.md`.
    fn start_report(&mut self) {
        if !matches!(self.phase, Phase::Ready(_)) {
            return;
        }
        let text = free_name(&format!("{}-report", stem(&self.source_name)), "md");
        self.prompt.message = None;
        self.prompt.prompt = Some(Prompt {
            ask: Ask::ReportPath,
            text,
        });
    }

    /// The report of the view and its selected frame, as `style`.
    fn report_text(&self, style: Style) -> Option<String> {
        let Phase::Ready(l) = &self.phase else {
            return None;
        };
        let selected = match self.view {
            View::Flame | View::Inverted => Some(l.flame.selected),
            View::Table | View::Sandwich => None,
        };
        let findings = lint(&l.profile, &l.tree);
        let input = ReportInput {
            source: self.source_name.clone(),
            view: self.view_notes(),
            selected,
            limit: 10,
            lint: &findings,
        };
        let report = Report::build(&l.profile, &l.tree, &input);
        let mut out = Vec::new();
        report.write(&mut out, style).ok()?;
        Some(String::from_utf8_lossy(&out).into_owned())
    }

    fn report_to(&mut self, path: PathBuf) {
        let Some(text) = self.report_text(Style::from_path(&path)) else {
            return;
        };
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".ember-{}.tmp", std::process::id()));
        let tmp = path.with_file_name(name);
        let written = std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, &path));
        self.prompt.message = Some(match written {
            Ok(()) => (
                format!(
                    "wrote the report to {} ({})",
                    path.display(),
                    size_text(text.len() as u64)
                ),
                false,
            ),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                (
                    format!("{}: cannot write the report: {e}", path.display()),
                    true,
                )
            }
        });
    }

    /// The selected frame's name, or its path from the root (`;`-joined).
    fn copy_frame(&mut self, path: bool) {
        let view = self.view;
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        let text = match view {
            View::Table => l
                .table
                .selected()
                .map(|f| l.profile.frames.name(f).into_owned()),
            View::Flame | View::Inverted | View::Sandwich => {
                let v = l.shown();
                let n = v.flame.selected;
                if n == NodeId::ROOT {
                    None
                } else if path {
                    let names: Vec<String> = v
                        .tree
                        .frame_path(v.profile, n)
                        .iter()
                        .map(|&f| v.profile.frames.name(f).into_owned())
                        .collect();
                    Some(names.join(";"))
                } else {
                    v.tree
                        .frame(v.profile, n)
                        .map(|f| v.profile.frames.name(f).into_owned())
                }
            }
        };
        match text {
            Some(t) if path && view == View::Table => {
                self.copy(&t, "the function's name (a table row has no single path)")
            }
            Some(t) => self.copy(
                &t,
                if path {
                    "the frame's path"
                } else {
                    "the frame's name"
                },
            ),
            None => self.prompt.message = Some(("nothing selected to copy".into(), true)),
        }
    }

    /// Hands `text` to the event loop as an OSC 52 sequence, and says so.
    fn copy(&mut self, text: &str, what: &str) {
        let screen = std::env::var_os("STY").is_some();
        match clipboard::osc52(text, screen) {
            Ok(seq) => {
                self.clipboard = Some(seq);
                let hint = if std::env::var_os("TMUX").is_some() {
                    "in tmux it needs set-clipboard on"
                } else {
                    "a terminal without OSC 52 drops it: then use E to write a file"
                };
                self.prompt.message = Some((
                    format!(
                        "copied {what} ({}) to the clipboard by OSC 52 · {hint}",
                        size_text(text.len() as u64)
                    ),
                    false,
                ));
            }
            Err(e) => {
                self.prompt.message =
                    Some((format!("not copied: {e}; write it to a file with E"), true));
            }
        }
    }

    /// What the view does to the file: inversion, transforms and range, zoom,
    /// the value shown (said in exports and reports).
    fn view_notes(&self) -> Vec<String> {
        let Phase::Ready(l) = &self.phase else {
            return Vec::new();
        };
        let root = match self.view {
            View::Flame | View::Inverted => l.flame.zoom,
            View::Table | View::Sandwich => NodeId::ROOT,
        };
        let mut notes = Vec::new();
        if l.inverted {
            notes.push("inverted (callers above their callees)".to_string());
        }
        if !l.transforms.is_empty() {
            notes.push(l.transform_breadcrumb());
        }
        if root != NodeId::ROOT {
            let path: Vec<String> = l
                .tree
                .frame_path(&l.profile, root)
                .iter()
                .map(|&f| l.profile.frames.name(f).into_owned())
                .collect();
            notes.push(format!("zoomed to {}", path.join(";")));
        }
        let vt = &l.profile.value_types[l.tree.options.value];
        if l.profile.value_types.len() > 1 {
            notes.push(format!("{} [{}]", vt.kind, vt.unit.name()));
        }
        notes
    }

    /// The export key: asks for a file name, offering `<profile>.svg` in the
    /// current directory (one that does not exist yet).
    pub(super) fn start_export(&mut self) {
        if !matches!(self.phase, Phase::Ready(_)) {
            return;
        }
        let text = free_name(&stem(&self.source_name), "svg");
        self.prompt.message = None;
        self.prompt.prompt = Some(Prompt {
            ask: Ask::ExportPath,
            text,
        });
    }

    /// Keys while the prompt has the keyboard.
    pub(super) fn prompt_key(&mut self, k: &KeyEvent) -> Effect {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        self.dirty = true;
        self.prompt.message = None;
        let Some(p) = self.prompt.prompt.as_mut() else {
            return Effect::None;
        };
        if let Ask::Overwrite { path, then, format } = &p.ask {
            let (path, then, format) = (path.clone(), (**then).clone(), *format);
            match k.code {
                KeyCode::Char('c') if ctrl => return Effect::Quit,
                KeyCode::Char('y' | 'Y') => {
                    self.prompt.prompt = None;
                    self.write_to(path, then, format);
                }
                _ => {
                    p.ask = then;
                    p.text = path.display().to_string();
                }
            }
            return Effect::None;
        }
        match k.code {
            KeyCode::Char('c') if ctrl => return Effect::Quit,
            KeyCode::Char('u') if ctrl => p.text.clear(),
            KeyCode::Char('w') if ctrl => {
                let keep = p.text.trim_end_matches('/').rfind('/').map_or(0, |i| i + 1);
                p.text.truncate(keep);
            }
            KeyCode::Char(c) if !ctrl => p.text.push(c),
            KeyCode::Backspace => {
                p.text.pop();
            }
            KeyCode::Tab if p.ask == Ask::ExportPath => p.text = next_ending(&p.text),
            KeyCode::Esc => self.prompt.prompt = None,
            KeyCode::Enter => {
                let (ask, text) = (p.ask.clone(), p.text.trim().to_string());
                self.submit(ask, text);
            }
            _ => {}
        }
        Effect::None
    }

    /// Enter in the prompt: checks the name, then writes or asks first.
    fn submit(&mut self, ask: Ask, text: String) {
        if text.is_empty() {
            self.prompt.prompt = None;
            return;
        }
        let path = expand_home(&text);
        let format = match ask {
            Ask::ExportPath => match ExportFormat::from_path(&path) {
                Some(f) => Some(f),
                None => {
                    self.fail(format!(
                        "{}: say the format by the name's ending: .svg, .folded, .json (speedscope), .pb.gz (pprof)",
                        path.display()
                    ));
                    return;
                }
            },
            _ => None,
        };
        if let Some(input) = self.inputs.iter().find(|i| same_file(i, &path)) {
            self.fail(format!(
                "{}: that is an input ({}); ember never writes over what it reads",
                path.display(),
                input.display()
            ));
            return;
        }
        if path.is_dir() {
            self.fail(format!("{}: is a directory", path.display()));
            return;
        }
        if path.exists() {
            self.prompt.prompt = Some(Prompt {
                ask: Ask::Overwrite {
                    path,
                    then: Box::new(ask),
                    format,
                },
                text: String::new(),
            });
            return;
        }
        self.prompt.prompt = None;
        self.write_to(path, ask, format);
    }

    /// A failure said in the prompt row; the prompt stays for another try.
    fn fail(&mut self, message: String) {
        self.prompt.message = Some((message, true));
    }

    fn write_to(&mut self, path: PathBuf, ask: Ask, format: Option<ExportFormat>) {
        match (ask, format) {
            (Ask::ExportPath, Some(format)) => self.export_to(path, format),
            (Ask::ReportPath, _) => self.report_to(path),
            _ => {}
        }
    }

    /// Sends the export of what is on screen to the job thread.
    fn export_to(&mut self, path: PathBuf, format: ExportFormat) {
        let view = self.view;
        let title = self.source_name.clone();
        let notes = self.view_notes();
        let Phase::Ready(l) = &self.phase else {
            return;
        };
        // The table and the callers/callees view export the tree under them.
        let root = match view {
            View::Flame | View::Inverted => l.flame.zoom,
            View::Table | View::Sandwich => NodeId::ROOT,
        };
        let job = Job::Export {
            profile: l.profile.clone(),
            options: l.tree.options.clone(),
            root,
            path,
            format,
            title,
            notes,
            icicle: l.flame.orientation == Orientation::Icicle,
        };
        self.prompt.message = Some((format!("writing {}…", format.name()), false));
        self.request(job);
    }

    /// An export finished: the prompt row says where it went, or why not.
    pub(super) fn exported(&mut self, result: Result<Exported, String>) {
        self.prompt.message = Some(match result {
            Ok(e) => {
                let mut text = format!(
                    "wrote {} ({}, {})",
                    e.path.display(),
                    e.format.name(),
                    size_text(e.bytes)
                );
                for c in &e.caveats {
                    text.push_str(&format!(" · {c}"));
                }
                (text, false)
            }
            Err(e) => (format!("export failed: {e} (the view is unchanged)"), true),
        });
        self.dirty = true;
    }
}

/// The profile's name without its directory and format endings, fit for a file
/// name: `cpu.pb.gz` -> `cpu`, `<stdin>` -> `ember-view`.
pub(super) fn stem(source: &str) -> String {
    let base = Path::new(source)
        .file_name()
        .map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned());
    let mut name = base.as_str();
    while let Some((head, ext)) = name.rsplit_once('.') {
        let known = [
            "gz",
            "folded",
            "collapsed",
            "txt",
            "json",
            "pb",
            "pprof",
            "prof",
            "cpuprofile",
            "perf",
            "speedscope",
            "data",
            "stacks",
            "out",
            "svg",
            "trace",
            "heapprofile",
        ];
        if !known.contains(&ext.to_ascii_lowercase().as_str()) {
            break;
        }
        name = head;
    }
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let clean = clean.trim_matches('-');
    if clean.is_empty() || clean == "stdin" {
        "ember-view".to_string()
    } else {
        clean.to_string()
    }
}

/// `stem.ext`, or `stem-2.ext`, `stem-3.ext`... the first that does not exist.
pub(super) fn free_name(stem: &str, ext: &str) -> String {
    (1..1000)
        .map(|i| {
            if i == 1 {
                format!("{stem}.{ext}")
            } else {
                format!("{stem}-{i}.{ext}")
            }
        })
        .find(|n| !Path::new(n).exists())
        .unwrap_or_else(|| format!("{stem}.{ext}"))
}

/// The name with its ending replaced by the next export format's.
fn next_ending(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let (at, next) = EXPORT_ENDINGS
        .iter()
        .enumerate()
        .find(|(_, e)| lower.ends_with(&format!(".{e}")))
        .map_or((text.len(), EXPORT_ENDINGS[0]), |(i, e)| {
            (
                text.len() - e.len() - 1,
                EXPORT_ENDINGS[(i + 1) % EXPORT_ENDINGS.len()],
            )
        });
    format!("{}.{next}", &text[..at])
}

fn expand_home(text: &str) -> PathBuf {
    match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(text),
    }
}

/// Whether writing `target` would touch `input`: the same file, or a file in
/// the watched directory `input`.
pub(crate) fn same_file(input: &Path, target: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let Some(input) = canon(input) else {
        return false;
    };
    if canon(target).is_some_and(|t| t == input) {
        return true;
    }
    let parent = match target.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return false,
    };
    input.is_dir() && canon(parent).is_some_and(|p| p == input)
}

fn size_text(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_drop_the_directory_and_format_endings() {
        assert_eq!(stem("/var/tmp/cpu.pb.gz"), "cpu");
        assert_eq!(stem("perf.folded"), "perf");
        assert_eq!(stem("app.v2.cpuprofile"), "app.v2");
        assert_eq!(stem("<stdin>"), "ember-view");
        assert_eq!(stem("a.folded vs b.folded"), "a.folded-vs-b");
        assert_eq!(stem(".gz"), "ember-view");
    }

    #[test]
    fn tab_cycles_the_endings() {
        assert_eq!(next_ending("x.svg"), "x.folded");
        assert_eq!(next_ending("x.folded"), "x.speedscope.json");
        assert_eq!(next_ending("x.speedscope.json"), "x.pb.gz");
        assert_eq!(next_ending("x.pb.gz"), "x.svg");
        assert_eq!(next_ending("x"), "x.svg");
    }

    #[test]
    fn a_file_in_a_watched_directory_is_an_input() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let f = dir.path().join("p.folded");
        std::fs::write(&f, "a 1\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(same_file(&f, &f));
        assert!(same_file(dir.path(), &dir.path().join("new.svg")));
        assert!(!same_file(&f, &dir.path().join("new.svg")));
    }
}
