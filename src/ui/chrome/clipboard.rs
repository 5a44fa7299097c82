//! Copying to the user's clipboard over SSH: OSC 52, the terminal's own
//! clipboard sequence (xterm, kitty, iTerm2, WezTerm, Windows Terminal, tmux
//! with `set-clipboard on`). GNU screen gets it wrapped in its DCS passthrough,
//! in chunks screen accepts.

/// Terminals cap the sequence: xterm and hterm near 100,000 bytes of base64,
/// which this many bytes of text become.
pub const MAX_BYTES: usize = 74_994;

/// The bytes that put `text` on the clipboard, or why not (too big).
/// `screen`: inside GNU screen ($STY set).
pub fn osc52(text: &str, screen: bool) -> Result<Vec<u8>, String> {
    if text.len() > MAX_BYTES {
        return Err(format!(
            "{} KiB is more than a terminal's clipboard sequence takes ({} KiB)",
            text.len().div_ceil(1024),
            MAX_BYTES / 1024
        ));
    }
    let b64 = base64(text.as_bytes());
    let mut out = Vec::with_capacity(b64.len() + 32);
    if screen {
        // screen passes a DCS through, up to 768 bytes each: split the payload.
        out.extend_from_slice(b"\x1bP\x1b]52;c;");
        for (i, chunk) in b64.as_bytes().chunks(76).enumerate() {
            if i > 0 {
                out.extend_from_slice(b"\x1b\\\x1bP");
            }
            out.extend_from_slice(chunk);
        }
        out.extend_from_slice(b"\x07\x1b\\");
    } else {
        out.extend_from_slice(b"\x1b]52;c;");
        out.extend_from_slice(b64.as_bytes());
        out.push(0x07);
    }
    Ok(out)
}

/// Standard base64 with padding (RFC 4648), what OSC 52 carries.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= n {
                out.push(char::from(ABC[(v >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain:?}");
        }
    }

    #[test]
    fn the_sequence_carries_the_text_and_nothing_raw() {
        let seq = osc52("main;\x1b[2Jevil", false).unwrap_or_default();
        assert!(seq.starts_with(b"\x1b]52;c;"));
        assert!(seq.ends_with(b"\x07"));
        // Only the frame and the terminator: the ESC in the name is encoded.
        assert_eq!(seq.iter().filter(|&&b| b == 0x1b).count(), 1);
    }

    #[test]
    fn screen_gets_chunks_it_passes_through() {
        let text = "x".repeat(300);
        let seq = osc52(&text, true).unwrap_or_default();
        let s = String::from_utf8_lossy(&seq);
        assert!(s.starts_with("\x1bP\x1b]52;c;"));
        assert!(s.ends_with("\x07\x1b\\"));
        // 400 base64 characters in chunks of 76: six pieces, five joins.
        assert_eq!(s.matches("\x1b\\\x1bP").count(), 5);
    }

    #[test]
    fn too_much_is_refused_with_the_sizes() {
        let err = osc52(&"x".repeat(MAX_BYTES + 1), false)
            .err()
            .unwrap_or_default();
        assert!(err.contains("73 KiB"), "{err}");
    }
}
