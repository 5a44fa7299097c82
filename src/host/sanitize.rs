//! Frame names come from untrusted files: nothing in them may steer the terminal.

use std::borrow::Cow;

/// `s` with control characters (C0, DEL, C1) replaced by visible escapes,
/// e.g. ESC becomes `\x1b`. Borrowed when nothing needed replacing.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            match c {
                '\t' => out.push(' '),
                c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
                c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_control_sequences() {
        assert_eq!(sanitize("plain::name"), "plain::name");
        assert!(matches!(sanitize("plain"), Cow::Borrowed(_)));
        assert_eq!(sanitize("a\x1b[31mb"), "a\\x1b[31mb");
        assert_eq!(sanitize("bell\x07\u{9b}x"), "bell\\x07\\x9bx");
        assert_eq!(sanitize("tab\there"), "tab here");
        assert!(!sanitize("x\x1b\r\n\u{85}").chars().any(char::is_control));
    }
}
