//! Quantities written with units in model files and `--set`: `"6 bar"`, `"20 degC"`,
//! `"10 mm^2"`, `"2 L"`, `"0.5 dm^3/(s*bar)"`, converted to the SI value of the key's quantity.
//!
//! uom parses a value with one unit abbreviation of a known quantity type (`"6 bar"` as a
//! `Pressure`), but neither compound units (`dm^3/(s*bar)`) nor a quantity whose type is only
//! known at run time (a model file's key), and it converts by multiplying coefficients, so that
//! `"10 mm^2"` would not be the number a user writes as `10e-6`. Hence this small parser:
//! products (`*`, `·`, `.` or a space), quotients (`/`, binding the next factor only) and
//! integer powers (`^2`, `^-1`, `2`, `²`, `⁻¹`) of the symbols of [`SYMBOLS`] with SI prefixes
//! ([`PREFIXES`]), parentheses for grouping.
//!
//! Exactness: a unit's factor is kept as a power of ten times a remainder (1 for every decimal
//! unit). The power of ten is added to the number's own exponent *in its text*, so that
//! `"6 bar"` is the f64 nearest to 6e5 and `"10 mm^2"` the one nearest to 10e-6, exactly as if
//! the user had written those SI numbers; a non-decimal remainder (`min`, `h`, `psi`, `in`,
//! `degF`) then multiplies once. An absolute temperature in degC is `value + 273.15`, in degF
//! `(value + 459.67)·5/9`; inside a compound unit or for a temperature difference they are
//! intervals (factor 1 and 5/9).

use crate::SiExponents;
use crate::text::{escaped, number};

/// A unit symbol: its dimension, its factor to SI as `remainder·10^exp10`, whether SI prefixes
/// apply, and the offset of an absolute temperature scale (K = factor·value + offset).
#[derive(Clone, Copy, Debug)]
pub struct Symbol {
    pub symbol: &'static str,
    pub si: SiExponents,
    pub remainder: f64,
    pub exp10: i32,
    pub prefixable: bool,
    pub offset_k: Option<f64>,
}

const fn dim(kg: i32, m: i32, s: i32, k: i32) -> SiExponents {
    SiExponents {
        kg,
        m,
        s,
        a: 0,
        k,
        mol: 0,
        cd: 0,
    }
}

const fn sym(symbol: &'static str, si: SiExponents, remainder: f64, exp10: i32) -> Symbol {
    Symbol {
        symbol,
        si,
        remainder,
        exp10,
        prefixable: true,
        offset_k: None,
    }
}

const fn plain(symbol: &'static str, si: SiExponents, remainder: f64, exp10: i32) -> Symbol {
    Symbol {
        prefixable: false,
        ..sym(symbol, si, remainder, exp10)
    }
}

const fn scale(symbol: &'static str, remainder: f64, offset_k: f64) -> Symbol {
    Symbol {
        offset_k: Some(offset_k),
        ..plain(symbol, dim(0, 0, 0, 1), remainder, 0)
    }
}

/// The accepted unit symbols (docs/model-file.md lists them).
pub const SYMBOLS: &[Symbol] = &[
    sym("m", dim(0, 1, 0, 0), 1.0, 0),
    sym("g", dim(1, 0, 0, 0), 1.0, -3),
    sym("s", dim(0, 0, 1, 0), 1.0, 0),
    plain("min", dim(0, 0, 1, 0), 60.0, 0),
    plain("h", dim(0, 0, 1, 0), 3600.0, 0),
    sym("K", dim(0, 0, 0, 1), 1.0, 0),
    scale("degC", 1.0, 273.15),
    scale("°C", 1.0, 273.15),
    scale("degF", 5.0 / 9.0, 459.67),
    scale("°F", 5.0 / 9.0, 459.67),
    sym("Pa", dim(1, -1, -2, 0), 1.0, 0),
    sym("bar", dim(1, -1, -2, 0), 1.0, 5),
    plain("atm", dim(1, -1, -2, 0), 101_325.0, 0),
    // 1 psi = 0.45359237 kg · 9.80665 m/s² / (0.0254 m)² (NIST SP 811, B.8).
    plain("psi", dim(1, -1, -2, 0), 6_894.757_293_168_361, 0),
    sym("N", dim(1, 1, -2, 0), 1.0, 0),
    sym("J", dim(1, 2, -2, 0), 1.0, 0),
    sym("W", dim(1, 2, -3, 0), 1.0, 0),
    sym("L", dim(0, 3, 0, 0), 1.0, -3),
    sym("l", dim(0, 3, 0, 0), 1.0, -3),
    plain("in", dim(0, 1, 0, 0), 0.0254, 0),
    plain("%", dim(0, 0, 0, 0), 1.0, -2),
];

/// SI prefixes accepted before a prefixable symbol (`u` for micro as well as `µ`).
pub const PREFIXES: &[(&str, i32)] = &[
    ("G", 9),
    ("M", 6),
    ("k", 3),
    ("h", 2),
    ("da", 1),
    ("d", -1),
    ("c", -2),
    ("m", -3),
    ("u", -6),
    ("µ", -6),
    ("μ", -6),
    ("n", -9),
    ("p", -12),
];

/// A parsed unit: dimension, factor `remainder·10^exp10`, and the offset of a lone absolute
/// temperature scale (degC, degF).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParsedUnit {
    pub si: SiExponents,
    pub remainder: f64,
    pub exp10: i32,
    pub offset_k: Option<f64>,
}

impl ParsedUnit {
    const ONE: ParsedUnit = ParsedUnit {
        si: dim(0, 0, 0, 0),
        remainder: 1.0,
        exp10: 0,
        offset_k: None,
    };

    fn times(self, other: ParsedUnit, power: i32) -> ParsedUnit {
        ParsedUnit {
            si: self.si.add_scaled(other.si, power),
            remainder: self.remainder * other.remainder.powi(power),
            exp10: self.exp10.saturating_add(other.exp10.saturating_mul(power)),
            offset_k: None,
        }
    }
}

/// Why a quantity's text was not understood, in words for a message.
#[derive(Clone, Debug, PartialEq)]
pub enum QuantityError {
    /// Not `<number> <unit>`.
    Syntax(String),
    /// A symbol that is not a unit (with the closest known symbol, if any).
    UnknownSymbol { symbol: String, known: String },
    /// A unit of another dimension than the key's.
    Dimension { found: SiExponents },
    /// A number that overflows once converted.
    NotFinite,
    /// A number that is not 0 but comes out 0 once converted (`1e-400 Pa`): below the smallest
    /// `f64`.
    Underflow,
}

impl std::fmt::Display for QuantityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QuantityError::Syntax(s) => f.write_str(s),
            QuantityError::UnknownSymbol { symbol, known } => write!(
                f,
                "unknown unit `{}` (units: {known}, with SI prefixes G M k h da d c m u n p \
                 on the metric ones)",
                escaped(symbol)
            ),
            QuantityError::Dimension { found } => {
                write!(f, "a unit of dimension {}", dimension_text(found))
            }
            QuantityError::NotFinite => f.write_str("the value is not finite once converted"),
            QuantityError::Underflow => write!(
                f,
                "the value underflows: in SI units it is below the smallest number a double \
                 holds ({}), so it would be 0",
                number(f64::from_bits(1))
            ),
        }
    }
}

/// A dimension in base units for messages: `kg·m⁻¹·s⁻²` as `kg m^-1 s^-2`, `1` if none.
pub fn dimension_text(si: &SiExponents) -> String {
    let parts: Vec<String> = si
        .attributes()
        .into_iter()
        .map(|(u, e)| {
            if e == 1 {
                u.to_string()
            } else {
                format!("{u}^{e}")
            }
        })
        .collect();
    if parts.is_empty() {
        "1 (dimensionless)".to_string()
    } else {
        parts.join(" ")
    }
}

/// The symbols as docs and messages list them.
pub fn symbol_list() -> String {
    SYMBOLS
        .iter()
        .map(|s| s.symbol)
        .collect::<Vec<_>>()
        .join(" ")
}

struct Parser<'t> {
    chars: Vec<char>,
    pos: usize,
    text: &'t str,
}

fn superscript_digit(c: char) -> Option<u32> {
    "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().position(|d| d == c).map(|p| p as u32)
}

fn is_symbol_char(c: char) -> bool {
    c.is_alphabetic() || c == '°' || c == '%'
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn syntax(&self, what: &str) -> QuantityError {
        QuantityError::Syntax(format!(
            "cannot read the unit `{}`: {what}",
            escaped(self.text.trim())
        ))
    }

    /// product := factor (('*' | '·' | '.' | ' ') factor | '/' factor)*
    fn product(&mut self, depth: usize) -> Result<ParsedUnit, QuantityError> {
        if depth > 8 {
            return Err(self.syntax("parentheses nest too deep"));
        }
        let mut acc = self.factor(depth)?;
        let mut lone = true;
        loop {
            let before = self.pos;
            self.skip_spaces();
            let spaced = self.pos > before;
            let sign = match self.peek() {
                Some('*' | '·' | '.' | '⋅') => {
                    self.pos += 1;
                    1
                }
                Some('/') => {
                    self.pos += 1;
                    -1
                }
                Some(c) if spaced && (is_symbol_char(c) || c == '(') => 1,
                _ => break,
            };
            self.skip_spaces();
            let f = self.factor(depth)?;
            acc = acc.times(f, sign);
            lone = false;
        }
        if !lone {
            acc.offset_k = None;
        }
        Ok(acc)
    }

    /// factor := ('(' product ')' | symbol | '1') power?
    fn factor(&mut self, depth: usize) -> Result<ParsedUnit, QuantityError> {
        let base = match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.skip_spaces();
                let inner = self.product(depth + 1)?;
                self.skip_spaces();
                if self.peek() != Some(')') {
                    return Err(self.syntax("a `(` is not closed"));
                }
                self.pos += 1;
                ParsedUnit {
                    offset_k: None,
                    ..inner
                }
            }
            Some('1') => {
                self.pos += 1;
                ParsedUnit::ONE
            }
            Some(c) if is_symbol_char(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_symbol_char) {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().collect();
                lookup(&word)?
            }
            Some(c) => {
                return Err(self.syntax(&format!("unexpected `{}`", escaped(&c.to_string()))));
            }
            None => return Err(self.syntax("a unit is missing")),
        };
        let power = self.power()?;
        if power == 1 {
            return Ok(base);
        }
        Ok(ParsedUnit::ONE.times(base, power))
    }

    /// power := '^' '-'? digits | digits | superscripts; 1 when absent.
    fn power(&mut self) -> Result<i32, QuantityError> {
        let mut negative = false;
        let mut digits = String::new();
        match self.peek() {
            Some('^') => {
                self.pos += 1;
                if matches!(self.peek(), Some('-' | '−')) {
                    negative = true;
                    self.pos += 1;
                }
                while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                    digits.push(c);
                    self.pos += 1;
                }
                if digits.is_empty() {
                    return Err(self.syntax("`^` needs a whole number after it"));
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                    digits.push(c);
                    self.pos += 1;
                }
            }
            Some('⁻') => {
                negative = true;
                self.pos += 1;
                while let Some(d) = self.peek().and_then(superscript_digit) {
                    digits.push(char::from_digit(d, 10).unwrap_or('0'));
                    self.pos += 1;
                }
                if digits.is_empty() {
                    return Err(self.syntax("`⁻` needs a superscript digit after it"));
                }
            }
            Some(c) if superscript_digit(c).is_some() => {
                while let Some(d) = self.peek().and_then(superscript_digit) {
                    digits.push(char::from_digit(d, 10).unwrap_or('0'));
                    self.pos += 1;
                }
            }
            _ => return Ok(1),
        }
        let p: i32 = digits
            .parse()
            .ok()
            .filter(|p: &i32| *p <= 12)
            .ok_or_else(|| self.syntax("a power above 12"))?;
        Ok(if negative { -p } else { p })
    }
}

/// A symbol, whole or as an SI prefix and a prefixable symbol.
fn lookup(word: &str) -> Result<ParsedUnit, QuantityError> {
    let of = |s: &Symbol, exp10: i32| ParsedUnit {
        si: s.si,
        remainder: s.remainder,
        exp10: s.exp10 + exp10,
        offset_k: s.offset_k,
    };
    if let Some(s) = SYMBOLS.iter().find(|s| s.symbol == word) {
        return Ok(of(s, 0));
    }
    for (prefix, e) in PREFIXES {
        if let Some(rest) = word.strip_prefix(prefix)
            && let Some(s) = SYMBOLS.iter().find(|s| s.prefixable && s.symbol == rest)
        {
            return Ok(of(s, *e));
        }
    }
    Err(QuantityError::UnknownSymbol {
        symbol: word.to_string(),
        known: symbol_list(),
    })
}

/// Parse a unit alone (`"dm^3/(s*bar)"`).
pub fn parse_unit(text: &str) -> Result<ParsedUnit, QuantityError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        text,
    };
    p.skip_spaces();
    let u = p.product(0)?;
    p.skip_spaces();
    if let Some(c) = p.peek() {
        return Err(p.syntax(&format!("unexpected `{}`", escaped(&c.to_string()))));
    }
    Ok(u)
}

/// The number at the start of `text`: (mantissa text, decimal exponent, rest).
fn split_number(text: &str) -> Option<(&str, i64, &str)> {
    let b = text.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut n_digits = i - digits_start;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let f = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        n_digits += i - f;
    }
    if n_digits == 0 {
        return None;
    }
    let mantissa_end = i;
    let mut exp = 0i64;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let neg = match b.get(j) {
            Some(b'-') => {
                j += 1;
                true
            }
            Some(b'+') => {
                j += 1;
                false
            }
            _ => false,
        };
        let s = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > s {
            // Digits beyond i64 make an overflow, reported as not finite below.
            let e: i64 = text[s..j].parse().unwrap_or(i64::MAX / 4);
            exp = if neg { -e } else { e };
            i = j;
        }
    }
    Some((&text[..mantissa_end], exp, &text[i..]))
}

/// Density of air in ISO 8778's standard reference atmosphere (ANR: 20 °C, 100 kPa, 65 %
/// relative humidity), kg/m³: the density ISO 6358-1 converts a standard volume flow with.
pub const ANR_DENSITY_KG_PER_M3: f64 = 1.185;
/// ISO 8778's reference temperature, K, and pressure, Pa.
pub const ANR_TEMPERATURE_K: f64 = 293.15;
pub const ANR_PRESSURE_PA: f64 = 100_000.0;
/// One cubic foot, m³ (0.3048 m)³ (NIST SP 811, B.8).
const CUBIC_FOOT_M3: f64 = 0.028_316_846_592;

/// The standard (ANR) volume-flow units as docs and messages list them.
pub const STANDARD_FLOW_UNITS: &str =
    "`Nl/min`, `NL/min`, `Nm3/h`, `l/min ANR`, `m3/h ANR`, `scfm`";

/// The factor to m³/s (as `remainder·10^exp10`, see [`ParsedUnit`]) of the volume flow a
/// standard volume-flow unit stands for, or None if `unit` is not one. A standard volume flow
/// is a volume flow rate at ISO 8778's reference atmosphere (ANR): `<volume flow> ANR`
/// (`l/min ANR`, `m3/h ANR`), `N` before a volume symbol (`Nl/min`, `NL/min`, `Nm3/h`: the
/// litre and cubic metre *normal* at ANR, not DIN 1343's 0 °C, 101.325 kPa), or `scfm`
/// (standard cubic feet per minute, at ANR, as CAGI's 68 °F, 14.5 psia rounds to it).
fn standard_flow(unit: &str) -> Option<ParsedUnit> {
    let unit = unit.trim();
    let volume_rate = SiExponents {
        m: 3,
        s: -1,
        ..SiExponents::default()
    };
    if unit == "scfm" || unit == "SCFM" {
        return Some(ParsedUnit {
            si: volume_rate,
            remainder: CUBIC_FOOT_M3 / 60.0,
            exp10: 0,
            offset_k: None,
        });
    }
    let inner = if let Some(rest) = unit.strip_suffix("ANR") {
        rest.trim_end()
    } else if let Some(rest) = unit.strip_prefix('N')
        && rest.starts_with(['l', 'L', 'm'])
    {
        rest
    } else {
        return None;
    };
    parse_unit(inner).ok().filter(|u| u.si == volume_rate)
}

/// The dimension of a mass flow rate, kg/s.
fn mass_rate() -> SiExponents {
    SiExponents {
        kg: 1,
        s: -1,
        ..SiExponents::default()
    }
}

/// The unit of a quantity's text as the user wrote it (`"6 mbar"`: `mbar`), or None for a bare
/// number (which is in SI units) or a text that does not start with a number.
pub fn written_unit(text: &str) -> Option<&str> {
    let (_, _, rest) = split_number(text.trim())?;
    let rest = rest.trim();
    (!rest.is_empty()).then_some(rest)
}

/// The value in `unit` (a unit's text, `"mbar"`, `"degF"`) of the SI value `si`: the inverse of
/// [`quantity_si`] (`absolute_temperature` as there), for messages that answer in the user's
/// unit. `Err` when the unit does not parse; its dimension is not checked.
pub fn from_si(si: f64, unit: &str, absolute_temperature: bool) -> Result<f64, QuantityError> {
    if let Some(u) = standard_flow(unit) {
        return Ok(si / ANR_DENSITY_KG_PER_M3 / (u.remainder * 10f64.powi(u.exp10)));
    }
    let u = parse_unit(unit)?;
    let factor = u.remainder * 10f64.powi(u.exp10);
    Ok(match u.offset_k.filter(|_| absolute_temperature) {
        Some(off) => si / u.remainder - off,
        None => si / factor,
    })
}

/// The SI value of `text` (`"<number> <unit>"`, or a bare number: SI) for a key of dimension
/// `expected`. `absolute_temperature`: the key is a thermodynamic temperature, so that a lone
/// degC or degF is a scale with an offset (else an interval).
pub fn quantity_si(
    text: &str,
    expected: &SiExponents,
    absolute_temperature: bool,
) -> Result<f64, QuantityError> {
    let t = text.trim();
    let Some((mantissa, exp, rest)) = split_number(t) else {
        return Err(QuantityError::Syntax(format!(
            "`{}` does not start with a number (write a number, then a unit)",
            escaped(t)
        )));
    };
    if let Some(volume) = standard_flow(rest) {
        // A standard volume flow is a mass flow: ṁ = ρ_ANR·Q (ISO 6358-1, ISO 8778).
        if *expected != mass_rate() {
            return Err(QuantityError::Dimension { found: mass_rate() });
        }
        let q = quantity_si(&format!("{mantissa}e{exp}"), &volume.si, false)?;
        let v = q * volume.remainder * 10f64.powi(volume.exp10) * ANR_DENSITY_KG_PER_M3;
        return if v == 0.0 && q != 0.0 {
            Err(QuantityError::Underflow)
        } else if v.is_finite() {
            Ok(v)
        } else {
            Err(QuantityError::NotFinite)
        };
    }
    let unit = if rest.trim().is_empty() {
        ParsedUnit::ONE
    } else {
        parse_unit(rest)?
    };
    let dimensionless = SiExponents::default();
    // A bare number is in SI units of the key.
    let si = if rest.trim().is_empty() {
        *expected
    } else {
        unit.si
    };
    if si != *expected && !(rest.trim() == "%" && *expected == dimensionless) {
        return Err(QuantityError::Dimension { found: unit.si });
    }
    let total = exp.saturating_add(i64::from(unit.exp10));
    let scaled: f64 = format!("{mantissa}e{total}")
        .parse()
        .map_err(|_| QuantityError::Syntax(format!("`{}` is not a number", escaped(t))))?;
    // A mantissa with a digit other than 0 that comes out 0: too small for an f64.
    if scaled == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return Err(QuantityError::Underflow);
    }
    let mut v = scaled;
    let offset = unit.offset_k.filter(|_| absolute_temperature);
    if let Some(off) = offset {
        if unit.remainder == 1.0 {
            v += off;
        } else {
            v = (v + off) * unit.remainder;
        }
    } else if unit.remainder != 1.0 {
        v *= unit.remainder;
    }
    if v.is_finite() {
        Ok(v)
    } else {
        Err(QuantityError::NotFinite)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Unit;

    fn si(text: &str, unit: Unit) -> f64 {
        let abs = unit == Unit::temperature();
        quantity_si(text, &unit.si, abs).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    /// Each conversion against the SI number written by hand: bit-identical.
    #[test]
    fn conversions_are_the_si_numbers_a_user_writes() {
        let cases: &[(&str, Unit, f64)] = &[
            ("6 bar", Unit::pressure(), 6e5),
            ("6bar", Unit::pressure(), 6e5),
            ("1.013 bar", Unit::pressure(), 1.013e5),
            ("600 kPa", Unit::pressure(), 600e3),
            ("250 mbar", Unit::pressure(), 25e3),
            ("1 atm", Unit::pressure(), 101_325.0),
            ("20 degC", Unit::temperature(), 20.0 + 273.15),
            ("20 °C", Unit::temperature(), 20.0 + 273.15),
            (
                "-40 degF",
                Unit::temperature(),
                (-40.0 + 459.67) * (5.0 / 9.0),
            ),
            ("300 K", Unit::temperature(), 300.0),
            ("10 mm^2", Unit::area(), 10e-6),
            ("10 mm2", Unit::area(), 10e-6),
            ("10 mm²", Unit::area(), 10e-6),
            ("2 L", Unit::volume(), 2e-3),
            ("2.5 cm^3", Unit::volume(), 2.5e-6),
            ("600 mm", Unit::length(), 600e-3),
            ("2 in", Unit::length(), 2.0 * 0.0254),
            ("5 ms", Unit::time(), 5e-3),
            ("2 min", Unit::time(), 120.0),
            ("0.5 dm^3/(s*bar)", Unit::sonic_conductance(), 0.5e-8),
            ("0.5 dm3/(s.bar)", Unit::sonic_conductance(), 0.5e-8),
            ("0.5 L/(s bar)", Unit::sonic_conductance(), 0.5e-8),
            ("1e-8 kg/(s*Pa)", Unit::flow_coefficient(), 1e-8),
            ("3 g/s", Unit::mass_rate(), 3e-3),
            ("10 W/(m^2*K)", Unit::heat_transfer_coefficient(), 10.0),
            ("10 W/(m^2*degC)", Unit::heat_transfer_coefficient(), 10.0),
            ("1.2 kg/m^3", Unit::density(), 1.2),
            ("1.8e-5 Pa*s", Unit::viscosity(), 1.8e-5),
            ("5 N/mm", Unit::stiffness(), 5e3),
            ("20 N*s/m", Unit::damping(), 20.0),
            ("2 m*s^-1", Unit::velocity(), 2.0),
            ("2 m s⁻¹", Unit::velocity(), 2.0),
            ("50 %", Unit::dimensionless(), 0.5),
            ("0.25", Unit::dimensionless(), 0.25),
            ("7e5", Unit::pressure(), 7e5),
        ];
        for (text, unit, want) in cases {
            let got = si(text, unit.clone());
            println!("{text:>20} -> {got:e} {} (want {want:e})", unit.symbol);
            assert_eq!(got.to_bits(), want.to_bits(), "{text}");
        }
    }

    #[test]
    fn wrong_dimension_and_bad_text_are_errors() {
        let p = Unit::pressure().si;
        let e = quantity_si("6 m", &p, false).unwrap_err();
        println!("6 m as a pressure: {e}");
        assert_eq!(
            e,
            QuantityError::Dimension {
                found: Unit::length().si
            }
        );
        for bad in [
            "bar",
            "6 barr",
            "6 bar/",
            "6 (bar",
            "6 bar^",
            "6 m^99",
            "6 bar)",
            "",
            "6 bar bar x",
            "1e400 bar",
            "6 Mmin",
            "6 kdegC",
            "1e-400 Pa",
            "1e-330 bar",
        ] {
            let e = quantity_si(bad, &p, false);
            println!("{bad:>12}: {e:?}");
            assert!(e.is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod more_tests {
    use super::*;
    use crate::Unit;

    /// A number that comes out 0 in SI units is an underflow, not a 0; true zeros are zeros.
    #[test]
    fn underflow_is_told_apart_from_zero() {
        let p = Unit::pressure().si;
        for text in ["1e-400 Pa", "1e-330 mbar", "0.00001e-330 bar"] {
            let e = quantity_si(text, &p, false).unwrap_err();
            println!("{text}: {e}");
            assert_eq!(e, QuantityError::Underflow);
            assert!(e.to_string().contains("underflows"), "{e}");
        }
        for text in ["0 Pa", "0.0 bar", "-0e-400 Pa", "0e5 mbar"] {
            assert_eq!(quantity_si(text, &p, false), Ok(0.0), "{text}");
        }
        // A subnormal is a number.
        assert_eq!(quantity_si("1e-320 Pa", &p, false), Ok(1e-320));
    }

    /// `from_si` inverts `quantity_si`: the value it gives, written with its unit, reads back
    /// to the SI value (within rounding).
    #[test]
    fn from_si_inverts_the_conversion() {
        let cases: &[(&str, Unit, f64)] = &[
            ("mbar", Unit::pressure(), 1e3),
            ("ubar", Unit::pressure(), 1e3),
            ("µbar", Unit::pressure(), 101_325.0),
            ("psi", Unit::pressure(), 6e5),
            ("degF", Unit::temperature(), 100.0),
            ("degC", Unit::temperature(), 293.15),
            ("mK", Unit::temperature(), 100.0),
            ("mm^2", Unit::area(), 1.0),
            ("L", Unit::volume(), 1.0),
            ("dm^3/(s*bar)", Unit::sonic_conductance(), 1e-5),
        ];
        for (unit, q, si) in cases {
            let absolute = *q == Unit::temperature();
            let x = from_si(*si, unit, absolute).unwrap();
            let back = quantity_si(&format!("{x:?} {unit}"), &q.si, absolute).unwrap();
            println!("{si} SI = {x} {unit} -> {back}");
            assert!(((back - si) / si).abs() < 1e-12, "{unit}");
        }
        assert_eq!(written_unit(" 6 mbar "), Some("mbar"));
        assert_eq!(written_unit("6e5"), None);
        assert_eq!(written_unit("-459 degF"), Some("degF"));
    }

    /// Standard volume flows are mass flows at ISO 8778's reference density (1.185 kg/m³):
    /// each against the product written by hand; a standard flow for another quantity and a
    /// bare volume flow for a mass flow are dimension errors; `from_si` inverts them.
    #[test]
    fn standard_volume_flows_are_mass_flows_at_anr() {
        let rho = 1.185;
        let cases: &[(&str, f64)] = &[
            ("100 Nl/min", 100e-3 / 60.0 * rho),
            ("100 NL/min", 100e-3 / 60.0 * rho),
            ("100 l/min ANR", 100e-3 / 60.0 * rho),
            ("100 L/min ANR", 100e-3 / 60.0 * rho),
            ("6 m3/h ANR", 6.0 / 3600.0 * rho),
            ("6 Nm3/h", 6.0 / 3600.0 * rho),
            ("6 Nm^3/h", 6.0 / 3600.0 * rho),
            ("10 scfm", 10.0 * 0.3048 * 0.3048 * 0.3048 / 60.0 * rho),
        ];
        let mass_rate = Unit::mass_rate().si;
        for (text, want) in cases {
            let got = quantity_si(text, &mass_rate, false).unwrap();
            println!("{text:>14} -> {got:e} kg/s (want {want:e})");
            assert!(((got - want) / want).abs() < 4.0 * f64::EPSILON, "{text}");
            let unit = written_unit(text).unwrap();
            let back = from_si(got, unit, false).unwrap();
            let number: f64 = text.split(' ').next().unwrap().parse().unwrap();
            assert!(((back - number) / number).abs() < 1e-14, "{text}: {back}");
        }
        // A bare volume flow is not a mass flow; a standard flow is not a pressure.
        let e = quantity_si("100 l/min", &mass_rate, false).unwrap_err();
        assert_eq!(
            e,
            QuantityError::Dimension {
                found: Unit::volume_rate().si
            }
        );
        let e = quantity_si("100 Nl/min", &Unit::pressure().si, false).unwrap_err();
        assert_eq!(e, QuantityError::Dimension { found: mass_rate });
        // The newton is still the newton: `N*m/s` is a power, and `Nm/s` no flow.
        assert_eq!(quantity_si("2 N*m/s", &Unit::power().si, false), Ok(2.0));
        assert!(matches!(
            quantity_si("2 Nm/s", &mass_rate, false),
            Err(QuantityError::UnknownSymbol { .. })
        ));
        assert_eq!(
            quantity_si("1e-320 Nl/min", &mass_rate, false),
            Err(QuantityError::Underflow)
        );
    }
}
