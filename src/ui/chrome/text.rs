//! Fitting untrusted text into cells.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

use crate::host::sanitize::sanitize;

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

/// `s`, sanitised, in rows of at most `width` columns broken at spaces; a
/// word longer than a row is cut into row-long pieces.
pub fn wrap_words(s: &str, width: usize) -> Vec<String> {
    let s = sanitize(s);
    let width = width.max(1);
    let cols = |t: &str| t.chars().map(|c| c.width().unwrap_or(0)).sum::<usize>();
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for word in s.split(' ').filter(|w| !w.is_empty()) {
        let need = if row.is_empty() {
            cols(word)
        } else {
            cols(&row) + 1 + cols(word)
        };
        if need <= width {
            if !row.is_empty() {
                row.push(' ');
            }
            row.push_str(word);
            continue;
        }
        if !row.is_empty() {
            rows.push(std::mem::take(&mut row));
        }
        // A word wider than the row: cut it.
        let mut used = 0;
        for c in word.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width && !row.is_empty() {
                rows.push(std::mem::take(&mut row));
                used = 0;
            }
            row.push(c);
            used += w;
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_words_breaks_at_spaces_and_cuts_long_words() {
        assert_eq!(wrap_words("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap_words("abcdefgh ij", 3), ["abc", "def", "gh", "ij"]);
        assert_eq!(wrap_words("", 5), [""]);
        assert_eq!(wrap_words("a\x1bb", 10), ["a\\x1bb"]);
    }

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
