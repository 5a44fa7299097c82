//! Recipes: a list of transforms, a search and a description, kept in a TOML file so
//! a view can be rebuilt on another profile.
//!
//! ```toml
//! description = "hide the Go runtime noise"
//! search = "handler"
//!
//! [[transforms]]
//! kind = "drop"                 # or "ignore"
//! pattern = "^runtime\\.gc"
//!
//! [[transforms]]
//! kind = "merge"
//! pattern = "^runtime\\.(mcall|systemstack)$"
//!
//! [[transforms]]
//! kind = "focus"
//! pattern = "^main\\.handle"
//!
//! [[transforms]]
//! kind = "hide"
//! path = ["main", "run", "malloc"]
//!
//! [[transforms]]
//! kind = "collapse_recursion"
//! indirect = true               # optional, false by default
//!
//! [[transforms]]
//! kind = "min_width"
//! percent = 0.5
//! ```
//!
//! A recipe can also hold the budgets `ember check` gates on:
//!
//! ```toml
//! [[budgets]]
//! function = "^serde_json::"    # a regex; every function when left out
//! max_increase = "5%"           # or "1pp": percentage points of the total
//! metric = "total"              # or "self" (the default)
//! ```
//!
//! Every key is optional; unknown keys are errors, so a typo does not silently
//! drop a step. Transforms apply in file order. Patterns are checked when the
//! recipe is read, so a bad regex is reported with the file, before any profile.

use std::fs;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::profile::Profile;
use super::transform::{self, Transform, TransformError};

/// A saved view: transforms applied in order, then an optional search.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    // Plain keys first: TOML writes them before the `[[transforms]]` tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transforms: Vec<Transform>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<Budget>,
}

/// How much the functions matching `function` may grow (`ember check`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    pub max_increase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

impl Budget {
    /// The budget as a gate; an error names what is wrong with it.
    pub fn gate(&self) -> Result<super::diff::Gate, String> {
        let pattern = match &self.function {
            Some(p) => Some(regex::Regex::new(p).map_err(|e| format!("function {p:?}: {e}"))?),
            None => None,
        };
        Ok(super::diff::Gate {
            pattern,
            threshold: self.max_increase.parse()?,
            metric: match &self.metric {
                Some(m) => m.parse()?,
                None => super::diff::Metric::default(),
            },
        })
    }
}

/// Why a recipe could not be read or written. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    /// Bad TOML, or TOML that is not a recipe. `line` and `column` are 1-based, 0
    /// when the TOML reader gave no position.
    #[error("{path}{}: {message}", at(*line, *column))]
    Toml {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A transform that cannot work (bad regex, empty path, bad percentage);
    /// `index` counts transforms from 1, as they appear in the file.
    #[error("{path}: transform {index} ({kind}): {source}")]
    Transform {
        path: String,
        index: usize,
        kind: String,
        #[source]
        source: TransformError,
    },
    /// A budget that cannot work (bad regex, threshold or metric).
    #[error("{path}: budget {index}: {message}")]
    Budget {
        path: String,
        index: usize,
        message: String,
    },
    #[error("cannot write the recipe as TOML: {0}")]
    Serialize(#[from] toml::ser::Error),
}

fn at(line: usize, column: usize) -> String {
    match (line, column) {
        (0, _) => String::new(),
        (l, 0) => format!(":{l}"),
        (l, c) => format!(":{l}:{c}"),
    }
}

impl Recipe {
    /// Reads and checks the recipe in `path`.
    pub fn load(path: &Path) -> Result<Recipe, RecipeError> {
        let text = fs::read_to_string(path).map_err(|source| RecipeError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Recipe::parse(&text, &path.display().to_string())
    }

    /// Parses and checks recipe text; `origin` names it in errors (a file name).
    pub fn parse(text: &str, origin: &str) -> Result<Recipe, RecipeError> {
        let recipe: Recipe = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map_or((0, 0), |span| line_column(text, span.start));
            RecipeError::Toml {
                path: origin.to_string(),
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        recipe.check(origin)?;
        Ok(recipe)
    }

    /// Checks every transform (patterns compile, paths are not empty, percentages
    /// are percentages).
    pub fn check(&self, origin: &str) -> Result<(), RecipeError> {
        for (i, t) in self.transforms.iter().enumerate() {
            t.check().map_err(|source| RecipeError::Transform {
                path: origin.to_string(),
                index: i + 1,
                kind: kind_name(t).to_string(),
                source,
            })?;
        }
        for (i, b) in self.budgets.iter().enumerate() {
            b.gate().map_err(|message| RecipeError::Budget {
                path: origin.to_string(),
                index: i + 1,
                message,
            })?;
        }
        Ok(())
    }

    /// The recipe as TOML text, in the format [`Recipe::parse`] reads.
    pub fn to_toml(&self) -> Result<String, RecipeError> {
        Ok(toml::to_string(self)?)
    }

    /// Writes the recipe to `path` (creating or replacing that file).
    pub fn save(&self, path: &Path) -> Result<(), RecipeError> {
        let text = self.to_toml()?;
        fs::write(path, text).map_err(|source| RecipeError::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Applies the transforms in order (the search is left to the view).
    pub fn apply(&self, profile: &Profile) -> Result<Profile, TransformError> {
        transform::apply_all(profile, &self.transforms)
    }
}

/// The `kind` a transform has in a recipe file.
fn kind_name(t: &Transform) -> &'static str {
    match t {
        Transform::Focus { .. } => "focus",
        Transform::Drop { .. } => "drop",
        Transform::Merge { .. } => "merge",
        Transform::Hide { .. } => "hide",
        Transform::CollapseRecursion { .. } => "collapse_recursion",
        Transform::MinWidth { .. } => "min_width",
        Transform::TimeRange { .. } => "time_range",
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
description = "hide the Go runtime noise"
search = "handler"

[[transforms]]
kind = "drop"
pattern = "^runtime\\.gc"

[[transforms]]
kind = "merge"
pattern = "^runtime\\.(mcall|systemstack)$"

[[transforms]]
kind = "focus"
pattern = "^main\\.handle"

[[transforms]]
kind = "hide"
path = ["main", "run", "malloc"]

[[transforms]]
kind = "collapse_recursion"
indirect = true

[[transforms]]
kind = "min_width"
percent = 0.5
"#;

    fn parse(text: &str) -> Result<Recipe, RecipeError> {
        Recipe::parse(text, "my.toml")
    }

    #[test]
    fn reads_the_documented_example() {
        let r = match parse(EXAMPLE) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(r.description.as_deref(), Some("hide the Go runtime noise"));
        assert_eq!(r.search.as_deref(), Some("handler"));
        assert_eq!(
            r.transforms,
            vec![
                Transform::Drop {
                    pattern: "^runtime\\.gc".into()
                },
                Transform::Merge {
                    pattern: "^runtime\\.(mcall|systemstack)$".into()
                },
                Transform::Focus {
                    pattern: "^main\\.handle".into()
                },
                Transform::Hide {
                    path: vec!["main".into(), "run".into(), "malloc".into()]
                },
                Transform::CollapseRecursion { indirect: true },
                Transform::MinWidth { percent: 0.5 },
            ]
        );
    }

    #[test]
    fn round_trips_through_toml() {
        let r = match parse(EXAMPLE) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        };
        let text = match r.to_toml() {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        assert!(text.contains("kind = \"collapse_recursion\""), "{text}");
        assert_eq!(parse(&text).ok(), Some(r));
        // Defaults: an empty file, and direct recursion written without `indirect`.
        assert_eq!(parse("").ok(), Some(Recipe::default()));
        let direct = Recipe {
            transforms: vec![Transform::CollapseRecursion { indirect: false }],
            ..Recipe::default()
        };
        let text = direct.to_toml().unwrap_or_default();
        assert_eq!(text.trim(), "[[transforms]]\nkind = \"collapse_recursion\"");
        assert_eq!(parse(&text).ok(), Some(direct));
    }

    #[test]
    fn ignore_is_another_name_for_drop() {
        let r = parse("[[transforms]]\nkind = \"ignore\"\npattern = \"x\"\n");
        assert_eq!(
            r.ok().map(|r| r.transforms),
            Some(vec![Transform::Drop {
                pattern: "x".into()
            }])
        );
    }

    #[test]
    fn bad_toml_names_the_file_line_and_column() {
        let err = parse("description = \"x\"\nsearch = \n").err();
        let Some(RecipeError::Toml { path, line, .. }) = &err else {
            panic!("{err:?}");
        };
        assert_eq!((path.as_str(), *line), ("my.toml", 2));
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.starts_with("my.toml:2:"), "{msg}");
    }

    #[test]
    fn toml_that_is_not_a_recipe_is_an_error() {
        for (text, line) in [
            ("[[transforms]]\nkind = \"explode\"\n", 2),
            ("[[transforms]]\nkind = \"focus\"\n", 1),
            ("[[transforms]]\nkind = \"focus\"\npatern = \"x\"\n", 0),
            ("transform = []\n", 1),
            ("[[transforms]]\nkind = \"min_width\"\npercent = \"5\"\n", 0),
        ] {
            let err = parse(text).err();
            let Some(RecipeError::Toml {
                path,
                line: l,
                message,
                ..
            }) = &err
            else {
                panic!("{text}: {err:?}");
            };
            assert_eq!(path, "my.toml");
            assert!(!message.is_empty());
            if line > 0 {
                assert_eq!(*l, line, "{text}: {message}");
            }
        }
    }

    #[test]
    fn a_bad_pattern_names_the_file_and_the_transform() {
        let text = "[[transforms]]\nkind = \"drop\"\npattern = \"a\"\n\
                    [[transforms]]\nkind = \"focus\"\npattern = \"(main\"\n";
        let err = parse(text).err();
        assert!(
            matches!(
                &err,
                Some(RecipeError::Transform {
                    index: 2,
                    source: TransformError::BadPattern { .. },
                    ..
                })
            ),
            "{err:?}"
        );
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            msg,
            "my.toml: transform 2 (focus): bad pattern \"(main\": unclosed group"
        );
    }

    #[test]
    fn line_columns_count_characters() {
        let text = "ab\ncdé\nf";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 3), (2, 1));
        assert_eq!(line_column(text, 7), (2, 4));
        assert_eq!(line_column(text, 6), (2, 3)); // inside é
        assert_eq!(line_column(text, 99), (3, 2));
    }
}
