//! Numbers and names as messages write them: short whatever the magnitude, and visible whatever
//! the characters.
//!
//! Rust's `Display` of an `f64` never uses an exponent, so that 1e-300 is written with 300
//! digits and 5e-324 with 324; [`number`] and [`approx`] bound the digits. A name from a model
//! file may hold characters that print as nothing (U+0085, a zero-width space, a
//! right-to-left override): [`escaped`] writes them as `\u{85}`, so that a message shows what
//! the file holds.

use std::borrow::Cow;

/// A value as a message echoes it: the shortest text that reads back to the same `f64` (every
/// digit the user wrote, at most 17 significant ones), plain from 1e-4 to below 1e15, else with
/// an exponent (`5e-324`, `1.5e300`).
pub fn number(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-4..1e15).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A value a message derives (a conversion, a suggestion, an estimate), to six significant
/// digits: plain from 1e-3 to below 1e4, else with an exponent (`0.372222`, `273.522`, `6e5`,
/// `1.01325e6`).
pub fn approx(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return number(v);
    }
    let rounded: f64 = format!("{v:.5e}").parse().unwrap_or(v);
    if (1e-3..1e4).contains(&rounded.abs()) {
        format!("{rounded}")
    } else {
        format!("{rounded:e}")
    }
}

/// Whether a character prints as nothing or moves the text: a control character (C0, DEL, C1
/// such as U+0085), a format character (zero-width spaces and joiners, bidirectional marks
/// and overrides, the soft hyphen, the byte-order mark, invisible operators, tags), a line or
/// paragraph separator, any white space but the plain space, variation selectors, and the
/// Hangul fillers (letters that show nothing).
pub fn is_invisible(c: char) -> bool {
    if c == ' ' {
        return false;
    }
    c.is_control()
        || c.is_whitespace()
        || matches!(
            c,
            '\u{AD}'
                | '\u{34F}'
                | '\u{61C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFFB}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// `text` with every [`is_invisible`] character written as `\u{…}` (its code point in hex),
/// and every backslash doubled when anything was escaped, so that the escape is unambiguous.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_invisible) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_invisible(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text reads back to its value, and none is longer than 24 characters.
    #[test]
    fn numbers_are_short_and_exact() {
        for v in [
            0.0,
            -0.0,
            5e-324,
            -1e-300,
            1e-300,
            2.2250738585072014e-308,
            1e-4,
            9.99e-5,
            0.1 + 0.2,
            1.0,
            101_325.0,
            6e5,
            999_999_999_999_999.9,
            1e15,
            1.7976931348623157e308,
            -1.7976931348623157e308,
        ] {
            let text = number(v);
            println!("{v:?} -> {text}");
            assert!(text.len() <= 24, "{text}");
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                v.to_bits(),
                "{text}"
            );
        }
        assert_eq!(number(5e-324), "5e-324");
        assert_eq!(number(1e-300), "1e-300");
        assert_eq!(number(600_000.0), "600000");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "inf");
    }

    /// Six significant digits, within half a unit of the sixth.
    #[test]
    fn derived_numbers_have_six_significant_digits() {
        for (v, want) in [
            (0.372_222_222_222_231_06, "0.372222"),
            (273.522_222_222_222_2, "273.522"),
            (6e7, "6e7"),
            (1_013_250.0, "1.01325e6"),
            (999_999.0, "9.99999e5"),
            (1013.25, "1013.25"),
            (5e-319, "5e-319"),
            (1.234_567_89e-300, "1.23457e-300"),
            (-459.67, "-459.67"),
        ] {
            let text = approx(v);
            println!("{v:?} -> {text}");
            assert_eq!(text, want);
            let back: f64 = text.parse().unwrap();
            assert!(((back - v) / v).abs() <= 5e-6, "{text}");
        }
    }

    #[test]
    fn invisible_characters_are_escaped() {
        for (text, want) in [
            ("tank", "tank"),
            ("ta\u{85}nk", "ta\\u{85}nk"),
            ("v\u{200B}", "v\\u{200b}"),
            ("a\u{202E}b", "a\\u{202e}b"),
            ("a\tb\nc", "a\\u{9}b\\u{a}c"),
            ("c:\\x\u{7F}", "c:\\\\x\\u{7f}"),
            ("µbar °C", "µbar °C"),
            ("a\u{A0}b", "a\\u{a0}b"),
        ] {
            let got = escaped(text);
            println!("{text:?} -> {got}");
            assert_eq!(got, want);
            assert!(!got.chars().any(is_invisible));
        }
    }
}
