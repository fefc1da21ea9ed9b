//! `fmu-build`: turns a Plenum model file into an FMI 2.0 (or, with [`FmiVersion::V3`], FMI 3.0:
//! [`fmi3`]) FMU for Co-Simulation and Model Exchange (Co-Simulation only for a model with
//! `[sensitivities]`).
//!
//! - [`model_description`] writes `modelDescription.xml` (quick-xml events, not string
//!   formatting) from `plenum::cosim::describe`: units with their SI base-unit exponents, log
//!   categories, the default experiment, every variable, and the model structure.
//! - [`write_fmu`] zips `modelDescription.xml`, one binary per platform
//!   (`binaries/linux64/<model>.so`, `binaries/win64/<model>.dll`: copies of the Plenum library,
//!   one library serves every model; [`platform`]) and `resources/model.toml` (the exact bytes
//!   the GUID is the hash of) into `<out>/<model>.fmu`.
//!
//! The generator is a library so that the freshness test of `modelDescription/*.xml` runs it
//! in-process.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use plenum::cosim::{self, Causality, Description, Structure, Variability};
use plenum::model::{LoadedModel, ModelError};
use plenum::units::{SiExponents, Unit};
use quick_xml::Writer;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, Event};

pub mod fmi3;
pub mod platform;

pub use platform::{Library, Platform};

/// `generationTool` attribute.
pub const GENERATION_TOOL: &str = concat!("Plenum fmu-build ", env!("CARGO_PKG_VERSION"));

/// Shell command that regenerates the committed descriptions (printed by the freshness test).
pub const REGENERATE_COMMAND: &str =
    "cargo run -p fmu-build -- models/*.toml --description-only -o modelDescription/";

/// Largest library `--lib` reads, bytes. The stripped libraries an FMU ships are 10–16 MiB; a
/// debug build (`target/debug/libplenum.so`, which the examples pack) about 60 MB with its
/// debug information. 256 MiB takes any of them and still bounds the memory a mistaken path
/// can take; a FIFO or a device is refused before reading (`plenum::input_file`).
pub const MAX_LIBRARY_BYTES: u64 = 256 << 20;

/// Why a build failed.
#[derive(Debug)]
pub enum Error {
    /// The model file is invalid (exit code 2).
    Model(Vec<ModelError>),
    /// Anything else: missing library, I/O, an unsupported unit (exit code 1).
    Build(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Model(errors) => {
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            Error::Build(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Error {}

fn build_err(msg: impl Into<String>) -> Error {
    Error::Build(msg.into())
}

/// Load and validate a model file, and make sure it can be packaged: its network builds and its
/// name is a valid `modelIdentifier` (a C identifier, also the `.so` and `.fmu` file name).
pub fn load(path: &Path) -> Result<LoadedModel, Error> {
    let model = plenum::model::load_path(path, &[]).map_err(Error::Model)?;
    check_packageable(&model)?;
    Ok(model)
}

/// The checks of [`load`] on an already loaded model.
pub fn check_packageable(model: &LoadedModel) -> Result<(), Error> {
    let name = &model.spec.model.name;
    if !is_c_identifier(name) {
        return Err(Error::Model(vec![ModelError {
            file: model.file.clone(),
            line: 0,
            column: 0,
            key: "model.name".into(),
            message: format!(
                "the model name {name:?} becomes the FMU's modelIdentifier and file name, so it \
                 must be a C identifier (letters, digits and '_', not starting with a digit)"
            ),
        }]));
    }
    if let Err(e) = plenum::model::build_simulation(&model.spec, None) {
        return Err(Error::Model(vec![ModelError {
            file: model.file.clone(),
            line: 0,
            column: 0,
            key: String::new(),
            message: format!("cannot build the network: {e}"),
        }]));
    }
    Ok(())
}

fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Whether every name is legal under FMI 2.0's "structured" naming convention in its simplest
/// form: dot-separated identifiers (`barrel.p`, `mass_total`), or `der(` one of them `)`.
fn all_structured(names: impl IntoIterator<Item = impl AsRef<str>>) -> bool {
    names.into_iter().all(|n| {
        let n = n.as_ref();
        let inner = n
            .strip_prefix("der(")
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or(n);
        inner.split('.').all(is_c_identifier)
    })
}

/// A real number as FMI's XML wants it (xs:double), in shortest round-trip form.
pub fn fmt_real(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x == f64::INFINITY {
        "INF".into()
    } else if x == f64::NEG_INFINITY {
        "-INF".into()
    } else {
        format!("{x:?}")
    }
}

/// Exponents of the SI base units (FMI 2.0 `BaseUnit` attributes): those of a quantity type
/// plus `rad`, which unit strings may name but the SI counts as 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaseUnit {
    pub si: SiExponents,
    pub rad: i32,
}

impl BaseUnit {
    fn add(self, o: BaseUnit, sign: i32) -> BaseUnit {
        BaseUnit {
            si: self.si.add_scaled(o.si, sign),
            rad: self.rad + sign * o.rad,
        }
    }

    fn pow(self, e: i32) -> BaseUnit {
        BaseUnit::default().add(self, e)
    }

    /// Whether these are the exponents of a quantity type (which has no `rad`: the SI counts
    /// the radian as 1).
    pub fn matches(&self, si: &SiExponents) -> bool {
        self.si == *si && self.rad == 0
    }

    /// Nonzero exponents as (attribute, value), in the schema's order (`rad` last).
    pub fn attributes(&self) -> Vec<(&'static str, i32)> {
        let mut a = self.si.attributes();
        if self.rad != 0 {
            a.push(("rad", self.rad));
        }
        a
    }
}

/// SI symbols with factor 1 that unit strings may use.
fn symbol(sym: &str) -> Option<BaseUnit> {
    let b = |si: SiExponents| BaseUnit { si, rad: 0 };
    let mks = |kg, m, s, k| {
        b(SiExponents {
            kg,
            m,
            s,
            k,
            ..SiExponents::default()
        })
    };
    Some(match sym {
        "kg" => mks(1, 0, 0, 0),
        "m" => mks(0, 1, 0, 0),
        "s" => mks(0, 0, 1, 0),
        "K" => mks(0, 0, 0, 1),
        "A" => b(SiExponents {
            a: 1,
            ..SiExponents::default()
        }),
        "mol" => b(SiExponents {
            mol: 1,
            ..SiExponents::default()
        }),
        "cd" => b(SiExponents {
            cd: 1,
            ..SiExponents::default()
        }),
        "rad" => BaseUnit {
            rad: 1,
            ..BaseUnit::default()
        },
        "N" => mks(1, 1, -2, 0),
        "Pa" => mks(1, -1, -2, 0),
        "J" => mks(1, 2, -2, 0),
        "W" => mks(1, 2, -3, 0),
        "Hz" => mks(0, 0, -1, 0),
        _ => return None,
    })
}

/// SI base-unit exponents of a unit string in Modelica/FMI notation: `1` (dimensionless),
/// products with `.`, quotients with `/`, a parenthesized denominator, integer exponents after
/// a symbol (`m3`, `s-1`): `Pa`, `kg/s`, `N.s/m`, `W/(m2.K)`, `kg/(s.Pa)`, `m/(s.Pa)`.
pub fn base_unit(unit: &str) -> Result<BaseUnit, String> {
    let bad = |why: &str| format!("unit {unit:?}: {why}");
    if unit == "1" {
        return Ok(BaseUnit::default());
    }
    let mut total = BaseUnit::default();
    let mut rest = unit;
    let mut sign = 1;
    loop {
        let (group, tail) = if let Some(r) = rest.strip_prefix('(') {
            if sign == 1 {
                return Err(bad("parentheses are only allowed after '/'"));
            }
            let close = r.find(')').ok_or_else(|| bad("unclosed '('"))?;
            (&r[..close], &r[close + 1..])
        } else {
            let end = rest.find('/').unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        };
        for factor in group.split('.') {
            let split = factor
                .find(|c: char| c == '-' || c.is_ascii_digit())
                .unwrap_or(factor.len());
            let (sym, exp) = factor.split_at(split);
            let base = if sym.is_empty() && exp == "1" {
                BaseUnit::default()
            } else {
                symbol(sym).ok_or_else(|| bad(&format!("unknown symbol {sym:?}")))?
            };
            let e: i32 = if exp.is_empty() || sym.is_empty() {
                1
            } else {
                exp.parse()
                    .map_err(|_| bad(&format!("bad exponent {exp:?}")))?
            };
            total = total.add(base.pow(e), sign);
        }
        if tail.is_empty() {
            return Ok(total);
        }
        rest = tail
            .strip_prefix('/')
            .ok_or_else(|| bad("expected '/' after ')'"))?;
        if rest.is_empty() {
            return Err(bad("nothing after '/'"));
        }
        sign = -1;
    }
}

/// Whether XML 1.0 can hold `c` at all (production 2, `Char`): not even a character reference
/// can stand for U+0000, the other C0 controls but tab, line feed and carriage return, or
/// U+FFFE and U+FFFF.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Every string written into modelDescription.xml passes here: one that XML 1.0 cannot hold
/// stops the build with the element, the attribute and the character (exit code 2: the text
/// comes from the model file).
fn check_xml_text(element: &str, attribute: &str, value: &str) -> Result<(), Error> {
    let Some((i, c)) = value.chars().enumerate().find(|(_, c)| !xml_char(*c)) else {
        return Ok(());
    };
    Err(Error::Model(vec![ModelError {
        file: String::new(),
        line: 0,
        column: 0,
        key: String::new(),
        message: format!(
            "modelDescription.xml cannot hold <{element} {attribute}={value:?}>: character {} is \
             U+{:04X}, which XML 1.0 does not allow (not even as a character reference); remove \
             it from the model file",
            i + 1,
            c as u32
        ),
    }]))
}

/// XML attribute text: quick-xml escapes `& < > ' "`; whitespace other than spaces is also
/// written as character references so a parser gives back exactly the same string.
fn escape_attr(value: &str) -> Cow<'_, [u8]> {
    if !value
        .chars()
        .any(|c| matches!(c, '&' | '<' | '>' | '"' | '\'' | '\n' | '\r' | '\t'))
    {
        return Cow::Borrowed(value.as_bytes());
    }
    let mut out = String::with_capacity(value.len() + 16);
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out.into_bytes())
}

/// An element with attributes, checked by [`check_xml_text`] and escaped by [`escape_attr`].
fn element<'a>(name: &'a str, attrs: &[(&'a str, String)]) -> Result<BytesStart<'a>, Error> {
    let mut e = BytesStart::new(name);
    for (k, v) in attrs {
        check_xml_text(name, k, v)?;
        e.push_attribute(Attribute {
            key: quick_xml::name::QName(k.as_bytes()),
            value: Cow::Owned(escape_attr(v).into_owned()),
        });
    }
    Ok(e)
}

fn causality_str(c: Causality) -> &'static str {
    match c {
        Causality::Independent => "independent",
        Causality::Parameter => "parameter",
        Causality::Input => "input",
        Causality::Output => "output",
        Causality::Local => "local",
    }
}

fn variability_str(v: Variability) -> &'static str {
    match v {
        Variability::Fixed => "fixed",
        Variability::Discrete => "discrete",
        Variability::Continuous => "continuous",
    }
}

/// The modelDescription.xml of a loaded model, with its model structure
/// ([`plenum::cosim::structure`]: each output's and each state derivative's dependencies).
pub fn model_description(model: &LoadedModel) -> Result<String, Error> {
    let d = cosim::describe(model);
    let structure = cosim::structure(model, &d).map_err(build_err)?;
    description_xml_with(&d, Some(&structure)).map_err(|e| match e {
        Error::Model(mut errors) => {
            for err in &mut errors {
                if err.file.is_empty() {
                    err.file = model.file.clone();
                }
            }
            Error::Model(errors)
        }
        e => e,
    })
}

/// The modelDescription.xml of a variable table, outputs and derivatives without dependency
/// information.
pub fn description_xml(d: &Description) -> Result<String, Error> {
    description_xml_with(d, None)
}

/// A failed write into the XML buffer.
fn xml_err(e: std::io::Error) -> Error {
    build_err(format!("writing XML: {e}"))
}

/// The modelDescription.xml of a variable table; `structure` fills the `dependencies` of
/// `ModelStructure`'s Outputs and Derivatives.
pub fn description_xml_with(
    d: &Description,
    structure: Option<&Structure>,
) -> Result<String, Error> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .map_err(xml_err)?;

    let naming = if all_structured(d.variables.iter().map(|v| &v.name)) {
        "structured"
    } else {
        "flat"
    };
    let root = element(
        "fmiModelDescription",
        &[
            ("fmiVersion", "2.0".into()),
            ("modelName", d.model_name.clone()),
            ("guid", d.guid.clone()),
            ("description", d.description.clone()),
            ("generationTool", GENERATION_TOOL.into()),
            ("variableNamingConvention", naming.into()),
            ("numberOfEventIndicators", d.event_indicators.to_string()),
        ],
    )?;
    w.write_event(Event::Start(root)).map_err(xml_err)?;

    if d.model_exchange {
        write_interface(
            &mut w,
            d,
            "ModelExchange",
            &[("completedIntegratorStepNotNeeded", false)],
        )?;
    }
    write_interface(
        &mut w,
        d,
        "CoSimulation",
        &[
            ("canHandleVariableCommunicationStepSize", true),
            ("canInterpolateInputs", false),
            ("canRunAsynchronuously", false),
        ],
    )?;

    write_units_categories_experiment(&mut w, d, &plenum::fmi2::LOG_CATEGORIES)?;

    // FMI 2.0 §2.2.7: parameters fixed + initial exact + start; inputs start (initial is not
    // allowed on inputs); outputs no start (initial defaults to calculated); the independent
    // variable has neither start nor initial.
    w.write_event(Event::Start(BytesStart::new("ModelVariables")))
        .map_err(xml_err)?;
    for v in &d.variables {
        let mut attrs = vec![
            ("name", v.name.clone()),
            ("valueReference", v.value_reference.to_string()),
        ];
        if !v.description.is_empty() {
            attrs.push(("description", v.description.clone()));
        }
        attrs.push(("causality", causality_str(v.causality).into()));
        attrs.push(("variability", variability_str(v.variability).into()));
        let start =
            match v.causality {
                Causality::Parameter => {
                    attrs.push(("initial", "exact".into()));
                    Some(v.start.ok_or_else(|| {
                        build_err(format!("parameter {} has no start value", v.name))
                    })?)
                }
                Causality::Input => Some(
                    v.start
                        .ok_or_else(|| build_err(format!("input {} has no start value", v.name)))?,
                ),
                Causality::Output | Causality::Independent | Causality::Local => None,
            };
        w.write_event(Event::Start(element("ScalarVariable", &attrs)?))
            .map_err(xml_err)?;
        let mut real = vec![("unit", v.unit.symbol.clone())];
        if let Some(du) = plenum::units::display_unit(&v.unit.symbol) {
            real.push(("displayUnit", du.name.to_string()));
        }
        if let Some(nominal) = v.nominal {
            real.push(("nominal", fmt_real(nominal)));
        }
        if let Some(s) = start {
            real.push(("start", fmt_real(s)));
        }
        if let Some(state) = v.derivative_of {
            // 1-based index of the state in ModelVariables.
            real.push(("derivative", (state + 1).to_string()));
        }
        w.write_event(Event::Empty(element("Real", &real)?))
            .map_err(xml_err)?;
        w.write_event(Event::End(BytesEnd::new("ScalarVariable")))
            .map_err(xml_err)?;
    }
    w.write_event(Event::End(BytesEnd::new("ModelVariables")))
        .map_err(xml_err)?;

    write_model_structure(&mut w, d, structure)?;

    w.write_event(Event::End(BytesEnd::new("fmiModelDescription")))
        .map_err(xml_err)?;
    let mut bytes = w.into_inner();
    bytes.push(b'\n');
    String::from_utf8(bytes).map_err(|e| build_err(format!("XML is not UTF-8: {e}")))
}

/// `<UnitDefinitions>`, `<LogCategories>` (the standard's `categories`) and
/// `<DefaultExperiment>`, the same in FMI 2.0 and 3.0.
fn write_units_categories_experiment(
    w: &mut Writer<Vec<u8>>,
    d: &Description,
    categories: &[(&str, &str)],
) -> Result<(), Error> {
    // Every unit used, sorted by name. The exponents come from the variable's quantity type
    // (`plenum::units::Unit`), not from its symbol; the symbol is parsed only as a cross-check,
    // so a symbol that disagrees with its type stops the build instead of shipping.
    let mut units: BTreeMap<&str, &Unit> = BTreeMap::new();
    for v in &d.variables {
        match units.insert(v.unit.symbol.as_str(), &v.unit) {
            Some(other) if other.si != v.unit.si => {
                return Err(build_err(format!(
                    "unit {:?} stands for two dimensions: {:?} and {:?}",
                    v.unit.symbol, other.si, v.unit.si
                )));
            }
            _ => {}
        }
    }
    w.write_event(Event::Start(BytesStart::new("UnitDefinitions")))
        .map_err(xml_err)?;
    for (symbol, unit) in &units {
        let parsed = base_unit(symbol).map_err(|e| {
            build_err(format!(
                "{e} (add it to fmu-build's unit table, fmu-build/src/lib.rs `symbol`)"
            ))
        })?;
        if !parsed.matches(&unit.si) {
            return Err(build_err(format!(
                "unit symbol {symbol:?} reads as {parsed:?}, its quantity type is {:?}",
                unit.si
            )));
        }
        w.write_event(Event::Start(element(
            "Unit",
            &[("name", symbol.to_string())],
        )?))
        .map_err(xml_err)?;
        let attrs: Vec<(&str, String)> = unit
            .si
            .attributes()
            .into_iter()
            .map(|(k, e)| (k, e.to_string()))
            .collect();
        w.write_event(Event::Empty(element("BaseUnit", &attrs)?))
            .map_err(xml_err)?;
        // FMI 2.0 §2.2.2: value_display = factor·value + offset.
        if let Some(du) = plenum::units::display_unit(symbol) {
            w.write_event(Event::Empty(element(
                "DisplayUnit",
                &[
                    ("name", du.name.to_string()),
                    ("factor", fmt_real(du.factor)),
                    ("offset", fmt_real(du.offset)),
                ],
            )?))
            .map_err(xml_err)?;
        }
        w.write_event(Event::End(BytesEnd::new("Unit")))
            .map_err(xml_err)?;
    }
    w.write_event(Event::End(BytesEnd::new("UnitDefinitions")))
        .map_err(xml_err)?;

    w.write_event(Event::Start(BytesStart::new("LogCategories")))
        .map_err(xml_err)?;
    for (name, description) in categories {
        w.write_event(Event::Empty(element(
            "Category",
            &[
                ("name", name.to_string()),
                ("description", description.to_string()),
            ],
        )?))
        .map_err(xml_err)?;
    }
    w.write_event(Event::End(BytesEnd::new("LogCategories")))
        .map_err(xml_err)?;

    w.write_event(Event::Empty(element(
        "DefaultExperiment",
        &[
            ("startTime", fmt_real(d.start_time_s)),
            ("stopTime", fmt_real(d.stop_time_s)),
            // An importer's Model Exchange integration at the model's own rtol runs clean of
            // the drift checks (docs/checks.md); Co-Simulation does not use it.
            ("tolerance", fmt_real(d.tolerance)),
            ("stepSize", fmt_real(d.step_size_s)),
        ],
    )?))
    .map_err(xml_err)?;
    Ok(())
}

/// The `<ModelExchange>` or `<CoSimulation>` element `name`: one library behind both, so the
/// capabilities they share are the same; `own` are the interface's own flags, written after
/// `needsExecutionTool` as the schema lists them. True only where the library provides the
/// capability (docs/fmu.md, "Capabilities").
fn write_interface(
    w: &mut Writer<Vec<u8>>,
    d: &Description,
    name: &str,
    own: &[(&'static str, bool)],
) -> Result<(), Error> {
    let flag = |b: bool| if b { "true" } else { "false" }.to_string();
    let shared = [
        ("canBeInstantiatedOnlyOncePerProcess", false),
        ("canNotUseMemoryManagementFunctions", false),
        ("canGetAndSetFMUstate", true),
        ("canSerializeFMUstate", true),
        ("providesDirectionalDerivative", true),
    ];
    let mut attrs = vec![
        ("modelIdentifier", d.model_name.clone()),
        ("needsExecutionTool", flag(false)),
    ];
    attrs.extend(own.iter().chain(&shared).map(|&(k, v)| (k, flag(v))));
    w.write_event(Event::Empty(element(name, &attrs)?))
        .map_err(xml_err)
}

/// `<ModelStructure>` (FMI 2.0.4 §2.2.8), every reference a 1-based index into
/// ModelVariables. Outputs: every output, with the knowns (continuous states and inputs) it
/// depends on directly (`dependenciesKind` "dependent": the partial derivative varies with the
/// state). Derivatives: every state derivative, with its row of the network's Jacobian
/// pattern and the inputs that enter it. InitialUnknowns: the outputs, the continuous states
/// that are no output and every derivative (all have initial = calculated), without a
/// dependencies attribute: at initialization they depend on the parameters too.
fn write_model_structure(
    w: &mut Writer<Vec<u8>>,
    d: &Description,
    structure: Option<&Structure>,
) -> Result<(), Error> {
    let index = |vr: u32| vr as usize + 1;
    let outputs: Vec<u32> = d
        .variables
        .iter()
        .filter(|v| v.causality == Causality::Output)
        .map(|v| v.value_reference)
        .collect();
    let mut initial: Vec<u32> = outputs.clone();
    initial.extend(
        d.variables
            .iter()
            .filter(|v| v.causality == Causality::Local)
            .map(|v| v.value_reference),
    );
    initial.sort_unstable();
    let unknown = |w: &mut Writer<Vec<u8>>, vr: u32, deps: Option<&[u32]>| {
        let mut attrs = vec![("index", index(vr).to_string())];
        if let Some(list) = deps {
            let join =
                |f: &dyn Fn(&u32) -> String| list.iter().map(f).collect::<Vec<_>>().join(" ");
            attrs.push(("dependencies", join(&|&j| index(j).to_string())));
            if !list.is_empty() {
                attrs.push(("dependenciesKind", join(&|_| "dependent".to_string())));
            }
        }
        w.write_event(Event::Empty(element("Unknown", &attrs)?))
            .map_err(xml_err)
    };
    fn deps_of(list: Option<&[(u32, Vec<u32>)]>, vr: u32) -> Option<&[u32]> {
        list.and_then(|l| l.iter().find(|(u, _)| *u == vr))
            .map(|(_, k)| k.as_slice())
    }
    w.write_event(Event::Start(BytesStart::new("ModelStructure")))
        .map_err(xml_err)?;
    if !outputs.is_empty() {
        w.write_event(Event::Start(BytesStart::new("Outputs")))
            .map_err(xml_err)?;
        for &vr in &outputs {
            unknown(w, vr, deps_of(structure.map(|s| s.outputs.as_slice()), vr))?;
        }
        w.write_event(Event::End(BytesEnd::new("Outputs")))
            .map_err(xml_err)?;
    }
    if !d.derivatives.is_empty() {
        w.write_event(Event::Start(BytesStart::new("Derivatives")))
            .map_err(xml_err)?;
        for &vr in &d.derivatives {
            unknown(
                w,
                vr,
                deps_of(structure.map(|s| s.derivatives.as_slice()), vr),
            )?;
        }
        w.write_event(Event::End(BytesEnd::new("Derivatives")))
            .map_err(xml_err)?;
    }
    if !initial.is_empty() {
        w.write_event(Event::Start(BytesStart::new("InitialUnknowns")))
            .map_err(xml_err)?;
        for &vr in &initial {
            unknown(w, vr, None)?;
        }
        w.write_event(Event::End(BytesEnd::new("InitialUnknowns")))
            .map_err(xml_err)?;
    }
    w.write_event(Event::End(BytesEnd::new("ModelStructure")))
        .map_err(xml_err)
}

/// Write `<out_dir>/<model>.fmu` carrying `libraries` (at most one per platform), each as
/// `binaries/<platform>/<model>.<extension>`. Returns the FMU's path.
pub fn write_fmu(
    model: &LoadedModel,
    libraries: &[Library],
    out_dir: &Path,
) -> Result<PathBuf, Error> {
    write_fmu_as(model, libraries, out_dir, FmiVersion::V2)
}

/// The packed FMU's `generationDateAndTime` (xs:dateTime, UTC): `SOURCE_DATE_EPOCH` when set
/// (reproducible builds: the same inputs give the same bytes), else now. The committed
/// `modelDescription/` files carry none, so that they stay reproducible too.
pub fn generation_date_and_time() -> Result<String, Error> {
    let seconds = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v.trim().parse::<u64>().map_err(|_| {
            build_err(format!(
                "SOURCE_DATE_EPOCH = {v:?}: expected whole seconds since 1970-01-01 UTC"
            ))
        })?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| build_err(format!("the system clock is before 1970: {e}")))?
            .as_secs(),
    };
    Ok(utc_date_time(seconds))
}

/// Seconds since 1970-01-01T00:00:00Z as `YYYY-MM-DDThh:mm:ssZ`; the date by Howard Hinnant's
/// `civil_from_days` (proleptic Gregorian calendar, "chrono-Compatible Low-Level Date
/// Algorithms").
pub fn utc_date_time(seconds: u64) -> String {
    let (days, rem) = (seconds / 86_400, seconds % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

/// `xml` with `generationDateAndTime` after the root element's `generationTool` attribute.
fn stamp_generation_time(xml: &str, when: &str) -> String {
    let tool = format!("generationTool=\"{GENERATION_TOOL}\"");
    xml.replacen(
        &tool,
        &format!("{tool} generationDateAndTime=\"{when}\""),
        1,
    )
}

/// The FMI version an FMU is written for (`fmu-build --fmi-version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmiVersion {
    V2,
    V3,
}

/// [`write_fmu`] for FMI `version`: FMI 3.0 has its own modelDescription.xml ([`fmi3`]) and
/// platform folders (`binaries/x86_64-linux`, `binaries/x86_64-windows`); the library is the
/// same, it exports both versions' functions.
pub fn write_fmu_as(
    model: &LoadedModel,
    libraries: &[Library],
    out_dir: &Path,
    version: FmiVersion,
) -> Result<PathBuf, Error> {
    let name = &model.spec.model.name;
    if libraries.is_empty() {
        return Err(build_err(
            "no library to pack: an FMU needs at least one platform",
        ));
    }
    for (i, a) in libraries.iter().enumerate() {
        if let Some(b) = libraries[..i].iter().find(|b| b.platform() == a.platform()) {
            return Err(build_err(format!(
                "two {} libraries: {} and {}",
                a.platform(),
                b.path.display(),
                a.path.display()
            )));
        }
    }
    let xml = match version {
        FmiVersion::V2 => model_description(model)?,
        FmiVersion::V3 => fmi3::model_description(model)?,
    };
    let xml = stamp_generation_time(&xml, &generation_date_and_time()?);
    std::fs::create_dir_all(out_dir)
        .map_err(|e| build_err(format!("cannot create {}: {e}", out_dir.display())))?;
    let path = out_dir.join(format!("{name}.fmu"));
    let io = |e: &dyn fmt::Display| build_err(format!("writing {}: {e}", path.display()));

    // Written to a temporary name and renamed, so a reader never sees a half-written FMU.
    let tmp = out_dir.join(format!(".{name}.fmu.tmp"));
    let file = std::fs::File::create(&tmp).map_err(|e| io(&e))?;
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    // Deflate's best level for what ships: the stripped libraries are most of an FMU's bytes,
    // and level 9 packs the projectile FMU with both platforms 3% smaller than the default.
    // An unstripped debug library (tens of MB, packed only by tests) keeps the faster default.
    const BEST_LEVEL_UP_TO_BYTES: usize = 16 << 20;
    let level = |bytes: &[u8]| (bytes.len() <= BEST_LEVEL_UP_TO_BYTES).then_some(9);
    let mut libraries: Vec<&Library> = libraries.iter().collect();
    libraries.sort_by_key(|l| l.platform());
    let mut entries: Vec<(String, &[u8], u32)> =
        vec![("modelDescription.xml".into(), xml.as_bytes(), 0o644)];
    for lib in libraries {
        let p = lib.platform();
        entries.push((
            format!(
                "binaries/{}/{name}.{}",
                match version {
                    FmiVersion::V2 => p.fmi2_folder(),
                    FmiVersion::V3 => p.fmi3_folder(),
                },
                p.extension()
            ),
            &lib.bytes,
            0o755,
        ));
    }
    entries.push((
        "resources/model.toml".into(),
        model.source.as_bytes(),
        0o644,
    ));
    for (entry, bytes, mode) in entries {
        let options = options.compression_level(level(bytes));
        zip.start_file(entry, options.unix_permissions(mode))
            .map_err(|e| io(&e))?;
        zip.write_all(bytes).map_err(|e| io(&e))?;
    }
    zip.finish().map_err(|e| io(&e))?;
    std::fs::rename(&tmp, &path).map_err(|e| io(&e))?;
    Ok(path)
}
