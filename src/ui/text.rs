//! Fitting untrusted text into cells.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

use crate::sanitize::sanitize;

/// `s`, sanitised and cut to at most `width` columns, ending in `…` when cut.
pub fn fit(s: &str, width: usize) -> Cow<'_, str> {
    let s = sanitize(s);
    let mut used = 0;
    for (i, c) in s.char_indices() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            // Cut here, leaving room for the ellipsis.
            let mut keep = i;
            let mut kept_w = used;
            while kept_w + 1 > width && keep > 0 {
                let (j, pc) = s[..keep].char_indices().next_back().unwrap_or((0, ' '));
                kept_w -= pc.width().unwrap_or(0);
                keep = j;
            }
            if width == 0 {
                return Cow::Borrowed("");
            }
            return Cow::Owned(format!("{}…", &s[..keep]));
        }
        used += w;
    }
    s
}

/// `s` cut from the left to `width` columns, starting with `…` when cut.
pub fn fit_left(s: &str, width: usize) -> String {
    let total: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut used = 1;
    let mut start = s.len();
    for (i, c) in s.char_indices().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        start = i;
    }
    format!("…{}", &s[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_and_marks_cuts() {
        assert_eq!(fit("main", 10), "main");
        assert_eq!(fit("main", 4), "main");
        assert_eq!(fit("main_loop", 5), "main…");
        assert_eq!(fit("main", 1), "…");
        assert_eq!(fit("main", 0), "");
        assert_eq!(fit("日本語", 4), "日…");
        assert_eq!(fit("a\x1bb", 10), "a\\x1bb");
    }

    #[test]
    fn fits_from_the_left() {
        assert_eq!(fit_left("all › a › b", 20), "all › a › b");
        assert_eq!(fit_left("all › a › b", 5), "… › b");
        assert_eq!(fit_left("abc", 0), "");
    }
}
