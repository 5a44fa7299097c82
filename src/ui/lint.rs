//! The profile lint for the viewer: worked out once per view (a new profile,
//! a transform, a time range), shown as one header word and whole in the
//! detail panel.

use super::loaded::Loaded;
use crate::model::lint::{Finding, LintOptions, lint};

#[derive(Default)]
pub struct LintState {
    /// The view (`Loaded::id`) the findings are of.
    id: Option<u64>,
    pub findings: Vec<Finding>,
}

impl LintState {
    /// Brings the findings up to date with the view; cheap when they are. The
    /// inverted view keeps the top-down view's findings (its roots are leaves).
    pub fn refresh(&mut self, l: &Loaded, iowait_share: Option<f64>) {
        if self.id == Some(l.id) || l.inverted {
            return;
        }
        self.id = Some(l.id);
        self.findings = lint(&l.profile, &l.tree, &LintOptions { iowait_share });
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
