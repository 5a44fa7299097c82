//! Styles by role, loaded from `assets/theme.toml`, degraded to the terminal's
//! colour depth: truecolor -> 256 -> 16 -> none (NO_COLOR keeps only modifiers).

use std::collections::HashMap;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The colour depth asked for; `Auto` detects it from the environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Truecolor,
    C256,
    C16,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorDepth {
    TrueColor,
    C256,
    C16,
    Mono,
}

impl ColorDepth {
    /// The depth for `choice`, reading NO_COLOR, COLORTERM and TERM for `Auto`.
    pub fn detect(choice: ColorChoice) -> ColorDepth {
        let var = |k: &str| std::env::var(k).unwrap_or_default();
        match choice {
            ColorChoice::Truecolor => ColorDepth::TrueColor,
            ColorChoice::C256 => ColorDepth::C256,
            ColorChoice::C16 => ColorDepth::C16,
            ColorChoice::Never => ColorDepth::Mono,
            ColorChoice::Auto => {
                let (colorterm, term) = (var("COLORTERM"), var("TERM"));
                if !var("NO_COLOR").is_empty() || term == "dumb" {
                    ColorDepth::Mono
                } else if colorterm.contains("truecolor") || colorterm.contains("24bit") {
                    ColorDepth::TrueColor
                } else if term.contains("256") {
                    ColorDepth::C256
                } else {
                    ColorDepth::C16
                }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
struct ThemeFile {
    frames: FramesFile,
    styles: HashMap<String, StyleFile>,
}

#[derive(Debug, Deserialize)]
struct FramesFile {
    red: [u8; 2],
    green: [u8; 2],
    blue: [u8; 2],
    basic: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct StyleFile {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    reversed: bool,
    #[serde(default)]
    underlined: bool,
}

/// Every style the UI uses, by role.
#[derive(Clone, Debug)]
pub struct Theme {
    pub depth: ColorDepth,
    ranges: [[u8; 2]; 3],
    basic: Vec<Color>,
    pub frame_text: Style,
    pub root: Style,
    pub selected: Style,
    pub matched: Style,
    pub search: Style,
    pub ancestor: Style,
    pub header: Style,
    pub header_accent: Style,
    pub status_name: Style,
    pub status_label: Style,
    pub breadcrumb: Style,
    pub warning: Style,
    pub progress: Style,
    pub help_key: Style,
    pub help_border: Style,
}

const DEFAULT: &str = include_str!("../../../assets/theme.toml");

fn parse_color(s: &str) -> Option<Color> {
    if let Some(hex) = s.strip_prefix('#') {
        let v = u32::from_str_radix(hex, 16).ok()?;
        return (hex.len() == 6).then_some(Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
    }
    Some(match s {
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" => Color::Gray,
        "darkgray" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return None,
    })
}

/// The xterm-256 index nearest to an RGB colour (6x6x6 cube or grey ramp).
pub fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let near = |v: u8| {
        (0..6)
            .min_by_key(|&i| (i32::from(LEVELS[i]) - i32::from(v)).abs())
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (near(r), near(g), near(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let dist = |a: (u8, u8, u8)| {
        let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
        d(a.0, r) + d(a.1, g) + d(a.2, b)
    };
    let avg = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let gi_ = ((avg.saturating_sub(8)) / 10).min(23) as u8;
    let grey = 8 + 10 * gi_;
    if dist((grey, grey, grey)) < dist(cube) {
        232 + gi_
    } else {
        16 + 36 * ri as u8 + 6 * gi as u8 + bi as u8
    }
}

/// The nearest of the 16 basic colours to an RGB colour.
fn rgb_to_16(r: u8, g: u8, b: u8) -> Color {
    const BASIC: [(Color, (u8, u8, u8)); 16] = [
        (Color::Black, (0, 0, 0)),
        (Color::Red, (205, 0, 0)),
        (Color::Green, (0, 205, 0)),
        (Color::Yellow, (205, 205, 0)),
        (Color::Blue, (0, 0, 238)),
        (Color::Magenta, (205, 0, 205)),
        (Color::Cyan, (0, 205, 205)),
        (Color::Gray, (229, 229, 229)),
        (Color::DarkGray, (127, 127, 127)),
        (Color::LightRed, (255, 0, 0)),
        (Color::LightGreen, (0, 255, 0)),
        (Color::LightYellow, (255, 255, 0)),
        (Color::LightBlue, (92, 92, 255)),
        (Color::LightMagenta, (255, 0, 255)),
        (Color::LightCyan, (0, 255, 255)),
        (Color::White, (255, 255, 255)),
    ];
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
    BASIC
        .iter()
        .min_by_key(|(_, c)| d(c.0, r) + d(c.1, g) + d(c.2, b))
        .map_or(Color::Reset, |(c, _)| *c)
}

impl Theme {
    pub fn new(depth: ColorDepth) -> Theme {
        // The embedded theme is checked by a unit test.
        Self::parse(DEFAULT, depth).unwrap_or_else(|_| Self::fallback(depth))
    }

    fn fallback(depth: ColorDepth) -> Theme {
        let s = Style::default();
        Theme {
            depth,
            ranges: [[205, 255], [40, 220], [0, 60]],
            basic: vec![Color::Red, Color::Yellow],
            frame_text: s.fg(Color::Black),
            root: s,
            selected: s.add_modifier(Modifier::REVERSED | Modifier::BOLD),
            matched: s.add_modifier(Modifier::BOLD),
            search: s.add_modifier(Modifier::BOLD),
            ancestor: s.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            header: s.add_modifier(Modifier::REVERSED),
            header_accent: s.add_modifier(Modifier::REVERSED | Modifier::BOLD),
            status_name: s.add_modifier(Modifier::BOLD),
            status_label: s,
            breadcrumb: s,
            warning: s.add_modifier(Modifier::BOLD),
            progress: s,
            help_key: s.add_modifier(Modifier::BOLD),
            help_border: s,
        }
    }

    pub fn parse(text: &str, depth: ColorDepth) -> Result<Theme, String> {
        let file: ThemeFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut t = Self::fallback(depth);
        t.ranges = [file.frames.red, file.frames.green, file.frames.blue];
        t.basic = file
            .frames
            .basic
            .iter()
            .map(|c| parse_color(c).ok_or_else(|| format!("unknown colour {c:?}")))
            .collect::<Result<_, _>>()?;
        if t.basic.is_empty() {
            return Err("frames.basic needs at least one colour".into());
        }
        for (role, sf) in &file.styles {
            let style = t.style_of(sf)?;
            let slot = match role.as_str() {
                "frame_text" => &mut t.frame_text,
                "root" => &mut t.root,
                "selected" => &mut t.selected,
                "matched" => &mut t.matched,
                "search" => &mut t.search,
                "ancestor" => &mut t.ancestor,
                "header" => &mut t.header,
                "header_accent" => &mut t.header_accent,
                "status_name" => &mut t.status_name,
                "status_label" => &mut t.status_label,
                "breadcrumb" => &mut t.breadcrumb,
                "warning" => &mut t.warning,
                "progress" => &mut t.progress,
                "help_key" => &mut t.help_key,
                "help_border" => &mut t.help_border,
                other => return Err(format!("unknown style role {other:?}")),
            };
            *slot = style;
        }
        if depth == ColorDepth::Mono {
            // Without colour, the header and the root still need to stand out.
            t.header = t.header.add_modifier(Modifier::REVERSED);
            t.header_accent = t.header_accent.add_modifier(Modifier::REVERSED);
        }
        Ok(t)
    }

    fn style_of(&self, sf: &StyleFile) -> Result<Style, String> {
        let mut s = Style::default();
        let color = |c: &Option<String>| -> Result<Option<Color>, String> {
            c.as_deref()
                .map(|c| parse_color(c).ok_or_else(|| format!("unknown colour {c:?}")))
                .transpose()
        };
        if let Some(fg) = color(&sf.fg)?.and_then(|c| self.degrade(c)) {
            s = s.fg(fg);
        }
        if let Some(bg) = color(&sf.bg)?.and_then(|c| self.degrade(c)) {
            s = s.bg(bg);
        }
        let mut m = Modifier::empty();
        if sf.bold {
            m |= Modifier::BOLD;
        }
        if sf.reversed {
            m |= Modifier::REVERSED;
        }
        if sf.underlined {
            m |= Modifier::UNDERLINED;
        }
        Ok(s.add_modifier(m))
    }

    /// `c` as this terminal can show it; `None` without colour.
    pub fn degrade(&self, c: Color) -> Option<Color> {
        match (self.depth, c) {
            (ColorDepth::Mono, _) => None,
            (ColorDepth::TrueColor, c) => Some(c),
            (ColorDepth::C256, Color::Rgb(r, g, b)) => Some(Color::Indexed(rgb_to_256(r, g, b))),
            (ColorDepth::C16, Color::Rgb(r, g, b)) => Some(rgb_to_16(r, g, b)),
            (_, c) => Some(c),
        }
    }

    /// A source line's tint by its share of the hottest line's weight (0..1):
    /// darker to brighter red where colours reach, none without colour (the
    /// pane's bar glyphs say it then).
    pub fn hot_line(&self, share: f64) -> Style {
        let share = share.clamp(0.0, 1.0);
        if self.depth == ColorDepth::C16 {
            return if share >= 0.5 {
                Style::default().bg(Color::Red).fg(Color::White)
            } else {
                Style::default()
            };
        }
        let r = 60 + (share * 160.0) as u8;
        let c = Color::Rgb(r, 30, 30);
        match self.degrade(c) {
            Some(bg) => Style::default().bg(bg).fg(Color::White),
            None => Style::default(),
        }
    }

    /// A frame's style: a colour picked by a stable hash of its name.
    pub fn frame(&self, name: &[u8]) -> Style {
        let h = fnv1a(name);
        let bg = match self.depth {
            ColorDepth::Mono => return self.frame_text,
            ColorDepth::C16 => self.basic[(h % self.basic.len() as u64) as usize],
            _ => {
                let pick = |range: [u8; 2], bits: u64| {
                    let span = u64::from(range[1].saturating_sub(range[0])) + 1;
                    range[0] + (bits % span) as u8
                };
                let c = Color::Rgb(
                    pick(self.ranges[0], h),
                    pick(self.ranges[1], h >> 16),
                    pick(self.ranges[2], h >> 32),
                );
                self.degrade(c).unwrap_or(Color::Reset)
            }
        };
        self.frame_text.bg(bg)
    }
}

/// FNV-1a: a small, fixed hash, so a name keeps its colour across runs and hosts.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_theme_parses_at_every_depth() {
        for depth in [
            ColorDepth::TrueColor,
            ColorDepth::C256,
            ColorDepth::C16,
            ColorDepth::Mono,
        ] {
            assert!(Theme::parse(DEFAULT, depth).is_ok(), "{depth:?}");
        }
    }

    #[test]
    fn frame_colours_are_stable_and_degrade() {
        let t = Theme::new(ColorDepth::TrueColor);
        assert_eq!(t.frame(b"main"), t.frame(b"main"));
        assert!(matches!(t.frame(b"main").bg, Some(Color::Rgb(..))));
        assert!(matches!(
            Theme::new(ColorDepth::C256).frame(b"main").bg,
            Some(Color::Indexed(_))
        ));
        let c16 = Theme::new(ColorDepth::C16).frame(b"main").bg;
        assert!(matches!(
            c16,
            Some(Color::Red | Color::Yellow | Color::LightRed | Color::LightYellow)
        ));
        assert_eq!(Theme::new(ColorDepth::Mono).frame(b"main").bg, None);
    }

    #[test]
    fn maps_rgb_to_the_nearest_palette_entry() {
        assert_eq!(rgb_to_256(255, 0, 0), 196);
        assert_eq!(rgb_to_256(0, 0, 0), 16);
        assert_eq!(rgb_to_256(128, 128, 128), 244);
        assert_eq!(rgb_to_16(250, 10, 10), Color::LightRed);
    }
}
