//! The profile lint for the viewer: worked out once per view (a new profile,
//! a transform, a time range), shown as one header word and whole in the
//! detail panel.

use crate::model::lint::Finding;
use crate::ui::loaded::Loaded;

#[derive(Default)]
pub struct LintState {
    /// The view (`Loaded::id`) the findings are of.
    id: Option<u64>,
    pub findings: Vec<Finding>,
}

impl LintState {
    /// Takes the view's findings once they are worked out. The inverted view
    /// keeps the top-down view's findings (its roots are leaves).
    pub fn refresh(&mut self, l: &Loaded) {
        if self.id == Some(l.id) || l.inverted {
            return;
        }
        // Worked out off this thread (the job thread, after the first frame,
        // or with a transform's tree); until then the header says nothing.
        match &l.lint {
            Some((id, findings)) if *id == l.id => {
                self.id = Some(l.id);
                self.findings = findings.clone();
            }
            _ => self.findings.clear(),
        }
    }

    /// The header's word: "⚠ debug-build, few-samples".
    pub fn header(&self) -> Option<String> {
        if self.findings.is_empty() {
            return None;
        }
        let codes: Vec<&str> = self.findings.iter().map(|f| f.kind.code()).collect();
        Some(format!("⚠ {}", codes.join(", ")))
    }
}
