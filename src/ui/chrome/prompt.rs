//! The one-line prompt under the view (a file name to export to, a yes/no
//! before overwriting) and the message that says what a command did. The keys
//! it takes are the App's, in `app/prompt.rs`.

use std::path::PathBuf;

use crate::output::export::ExportFormat;

/// What the prompt asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ask {
    /// A file to write the view to (the format from its name).
    ExportPath,
    /// A file to write the report to (markdown, or text/json by its name).
    ReportPath,
    /// Whether to write over a file that exists; back to the name on "no".
    Overwrite {
        path: PathBuf,
        then: Box<Ask>,
        format: Option<ExportFormat>,
    },
}

/// The prompt while it has the keyboard.
#[derive(Clone, Debug)]
pub struct Prompt {
    pub ask: Ask,
    pub text: String,
}

/// The prompt row: a question being answered, or the answer to the last
/// command (until the next key).
#[derive(Clone, Debug, Default)]
pub struct PromptState {
    pub prompt: Option<Prompt>,
    /// The last command's word, and whether it is a failure.
    pub message: Option<(String, bool)>,
}

impl PromptState {
    /// Whether the row is showing.
    pub fn shown(&self) -> bool {
        self.prompt.is_some() || self.message.is_some()
    }

    /// The row's text: the question and what was typed, with a cursor.
    pub fn text(&self) -> Option<(String, bool)> {
        if let Some(p) = &self.prompt {
            // A refused answer is said first, the question stays for another try.
            if let Some((m, true)) = &self.message {
                return Some((
                    format!(
                        "{} — {}▏",
                        crate::host::sanitize::sanitize(m),
                        crate::host::sanitize::sanitize(&p.text)
                    ),
                    true,
                ));
            }
            let text = crate::host::sanitize::sanitize(&p.text);
            return Some(match &p.ask {
                Ask::ExportPath => (
                    format!(
                        "export view to: {text}▏  (.svg .folded .json .pb.gz · Tab cycles · Esc cancels)"
                    ),
                    false,
                ),
                Ask::ReportPath => (
                    format!("write report to: {text}▏  (.md .txt .json · Esc cancels)"),
                    false,
                ),
                Ask::Overwrite { path, .. } => (
                    format!(
                        "{} exists: overwrite it? y/n",
                        crate::host::sanitize::sanitize(&path.display().to_string())
                    ),
                    true,
                ),
            });
        }
        self.message
            .as_ref()
            .map(|(m, bad)| (crate::host::sanitize::sanitize(m).into_owned(), *bad))
    }
}
