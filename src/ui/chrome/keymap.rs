//! Keys to actions, from a table that is data (`assets/keymap.toml`), so the help
//! screen and the README key table come from the same place as the bindings.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

/// Everything a key can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    MoveUp,
    MoveDown,
    MoveLeft,
    MoveRight,
    Zoom,
    Unzoom,
    Reset,
    Widest,
    WidestPrev,
    PageUp,
    PageDown,
    ToggleOrientation,
    ToggleOrder,
    NextValue,
    Focus,
    DropFunction,
    HideFrame,
    MergeFunction,
    CollapseRecursion,
    MinWidth,
    Undo,
    Granularity,
    ToggleView,
    Sandwich,
    Source,
    Freeze,
    LiveMode,
    OlderProfile,
    NewerProfile,
    ToggleDetail,
    SortSelf,
    SortTotal,
    SortName,
    Search,
    NextMatch,
    PrevMatch,
    DiffNorm,
    HideNoise,
    SplitPanes,
    ToggleTimeline,
    ToggleHeatMap,
    ThreadRows,
    TimeLeft,
    TimeRight,
    TimeLeftFast,
    TimeRightFast,
    RangeStart,
    RangeEnd,
    RangeClear,
    CompareRanges,
    Export,
    Report,
    CopyName,
    CopyPath,
    CopyReport,
    Help,
    Quit,
}

impl Action {
    /// Keys that change the profile on screen (a transform, undo, another
    /// value type): they act on the top-down profile, one at a time.
    pub fn changes_profile(self) -> bool {
        matches!(
            self,
            Action::Focus
                | Action::DropFunction
                | Action::MergeFunction
                | Action::HideFrame
                | Action::CollapseRecursion
                | Action::MinWidth
                | Action::Undo
                | Action::NextValue
                | Action::RangeEnd
                | Action::RangeClear
        )
    }
}

/// A key as the keymap names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

impl Key {
    pub fn parse(s: &str) -> Option<Key> {
        let (ctrl, name) = match s.strip_prefix("ctrl-") {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (false, s),
        };
        let code = match name {
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "enter" => KeyCode::Enter,
            "esc" => KeyCode::Esc,
            "backspace" => KeyCode::Backspace,
            "tab" => KeyCode::Tab,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "space" => KeyCode::Char(' '),
            _ => {
                let mut chars = name.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return None,
                }
            }
        };
        Some(Key { code, ctrl })
    }

    pub fn from_event(ev: &KeyEvent) -> Key {
        Key {
            code: ev.code,
            ctrl: ev.modifiers.contains(KeyModifiers::CONTROL),
        }
    }

    /// The key as the help screen shows it.
    pub fn label(&self) -> String {
        let name = match self.code {
            KeyCode::Up => "↑".to_string(),
            KeyCode::Down => "↓".to_string(),
            KeyCode::Left => "←".to_string(),
            KeyCode::Right => "→".to_string(),
            KeyCode::Enter => "Enter".to_string(),
            KeyCode::Esc => "Esc".to_string(),
            KeyCode::Backspace => "Backspace".to_string(),
            KeyCode::Tab => "Tab".to_string(),
            KeyCode::PageUp => "PgUp".to_string(),
            KeyCode::PageDown => "PgDn".to_string(),
            KeyCode::Home => "Home".to_string(),
            KeyCode::End => "End".to_string(),
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            _ => "?".to_string(),
        };
        if self.ctrl {
            format!("Ctrl-{name}")
        } else {
            name
        }
    }
}

#[derive(Debug, Deserialize)]
struct File {
    #[serde(default)]
    bind: Vec<Bind>,
}

#[derive(Debug, Deserialize)]
struct Bind {
    action: Action,
    keys: Vec<String>,
    #[serde(default)]
    help: String,
}

/// One help-screen row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelpEntry {
    pub keys: Vec<Key>,
    pub action: Action,
    pub help: String,
}

#[derive(Clone, Debug)]
pub struct Keymap {
    map: HashMap<Key, Action>,
    entries: Vec<HelpEntry>,
}

const DEFAULT: &str = include_str!("../../../assets/keymap.toml");

impl Keymap {
    /// The built-in bindings.
    pub fn default_map() -> Keymap {
        // The embedded table is checked by a unit test, so this cannot fail.
        Self::parse(DEFAULT).unwrap_or_else(|_| Keymap {
            map: HashMap::new(),
            entries: Vec::new(),
        })
    }

    pub fn parse(text: &str) -> Result<Keymap, String> {
        let mut km = Keymap {
            map: HashMap::new(),
            entries: Vec::new(),
        };
        km.merge(text)?;
        Ok(km)
    }

    /// Adds the bindings in `text`; a key bound there replaces its old binding.
    pub fn merge(&mut self, text: &str) -> Result<(), String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        for bind in file.bind {
            let mut keys = Vec::new();
            for k in &bind.keys {
                keys.push(Key::parse(k).ok_or_else(|| format!("unknown key name {k:?}"))?);
            }
            for k in &keys {
                for e in &mut self.entries {
                    e.keys.retain(|x| x != k);
                }
                self.map.insert(*k, bind.action);
            }
            match self.entries.iter_mut().find(|e| e.action == bind.action) {
                Some(e) => {
                    e.keys.extend(keys);
                    if !bind.help.is_empty() {
                        e.help = bind.help;
                    }
                }
                None => self.entries.push(HelpEntry {
                    keys,
                    action: bind.action,
                    help: bind.help,
                }),
            }
        }
        Ok(())
    }

    /// The defaults plus the user's file, if there is one.
    pub fn load_user() -> Result<Keymap, String> {
        let mut km = Self::default_map();
        if let Some(path) = user_keymap_path().filter(|p| p.exists()) {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            km.merge(&text)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(km)
    }

    pub fn action(&self, ev: &KeyEvent) -> Option<Action> {
        let key = Key::from_event(ev);
        self.map.get(&key).copied().or_else(|| {
            // Terminals differ on whether Shift comes with an upper-case letter.
            let KeyCode::Char(c) = key.code else {
                return None;
            };
            (!key.ctrl && ev.modifiers.contains(KeyModifiers::SHIFT))
                .then(|| {
                    self.map.get(&Key {
                        code: KeyCode::Char(c),
                        ctrl: false,
                    })
                })
                .flatten()
                .copied()
        })
    }

    pub fn entries(&self) -> &[HelpEntry] {
        &self.entries
    }

    /// The first key bound to `action`, for hints ("? help").
    pub fn key_for(&self, action: Action) -> Option<String> {
        self.entries
            .iter()
            .find(|e| e.action == action)
            .and_then(|e| e.keys.first())
            .map(Key::label)
    }
}

/// The key table for the README, generated from the bindings.
pub fn markdown_table(km: &Keymap) -> String {
    let mut out = String::from("| keys | action |\n|---|---|\n");
    for e in km.entries() {
        let keys: Vec<String> = e.keys.iter().map(|k| format!("`{}`", k.label())).collect();
        out.push_str(&format!("| {} | {} |\n", keys.join(" "), e.help));
    }
    out
}

fn user_keymap_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("ember").join("keymap.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn default_keymap_parses_and_binds_every_action() {
        let km = Keymap::parse(DEFAULT).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            km.action(&press(KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action(&press(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action(&press(KeyCode::Enter, KeyModifiers::NONE)),
            Some(Action::Zoom)
        );
        assert_eq!(
            km.action(&press(KeyCode::Char('W'), KeyModifiers::SHIFT)),
            Some(Action::WidestPrev)
        );
        assert_eq!(
            km.action(&press(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Action::Help)
        );
        assert_eq!(
            km.action(&press(KeyCode::Char('c'), KeyModifiers::NONE)),
            Some(Action::Sandwich)
        );
        assert_eq!(
            km.action(&press(KeyCode::Char('x'), KeyModifiers::NONE)),
            Some(Action::HideNoise)
        );
        assert_eq!(
            km.action(&press(KeyCode::Char('Z'), KeyModifiers::SHIFT)),
            None
        );
        assert!(
            km.entries()
                .iter()
                .all(|e| !e.help.is_empty() && !e.keys.is_empty())
        );
    }

    #[test]
    fn user_binding_replaces_the_default_for_that_key() {
        let mut km = Keymap::default_map();
        km.merge("[[bind]]\naction = \"quit\"\nkeys = [\"x\"]\n[[bind]]\naction = \"help\"\nkeys = [\"q\"]\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            km.action(&press(KeyCode::Char('x'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            km.action(&press(KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(Action::Help)
        );
        let quit = km.entries().iter().find(|e| e.action == Action::Quit);
        assert!(quit.is_some_and(|e| !e.keys.iter().any(|k| k.code == KeyCode::Char('q'))));
    }

    /// The README's key table is generated from the keymap; `BLESS=1` rewrites it.
    #[test]
    fn readme_key_table_matches_the_keymap() {
        let table = markdown_table(&Keymap::default_map());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        let readme = std::fs::read_to_string(path).unwrap_or_default();
        let (start, end) = ("<!-- keys:start -->\n", "<!-- keys:end -->");
        let (Some(a), Some(b)) = (readme.find(start), readme.find(end)) else {
            panic!("README.md lacks the {start:?} .. {end:?} markers");
        };
        let current = &readme[a + start.len()..b];
        if std::env::var_os("BLESS").is_some() {
            let new = format!("{}{table}{}", &readme[..a + start.len()], &readme[b..]);
            std::fs::write(path, new).unwrap_or_else(|e| panic!("{e}"));
        } else {
            assert_eq!(
                current, table,
                "run BLESS=1 cargo test readme_key_table to refresh README.md"
            );
        }
    }

    #[test]
    fn rejects_unknown_key_names() {
        assert!(Keymap::parse("[[bind]]\naction = \"quit\"\nkeys = [\"hyper-q\"]\n").is_err());
        assert!(Keymap::parse("[[bind]]\naction = \"fly\"\nkeys = [\"q\"]\n").is_err());
    }
}
