//! The chrome around the views: the panels that lay a frame out (header,
//! status, detail, split), the prompt row, the search box, the help, the
//! keymap, the theme, the clipboard, text fitting, and the lint's words.

pub mod clipboard;
pub mod keymap;
pub mod lint;
pub mod panels;
pub mod prompt;
pub mod search_box;
pub mod text;
pub mod theme;
