//! Model files: TOML parsed with serde, validated before anything runs, with errors that name
//! the file, line, column and key.

pub mod build;
mod decode;
mod locate;
mod overrides;
pub mod parts;
mod plausible;
mod quantities;
pub mod spec;
mod syntax;
mod validate;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::units::text::escaped;

pub use build::{build_network, build_simulation};
pub use overrides::SECTIONS;
pub use spec::ModelFile;

/// One problem found in a model file.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelError {
    /// File label as the user gave it (a path, `resources/model.toml`, `<string>`).
    pub file: String,
    /// 1-based line and column (in characters) of the offending key, or of the `[header]` of
    /// the table that lacks a required key; 1:1 for a missing section. 0 when there is no
    /// position: a `--set` problem, an empty or unreadable file.
    pub line: usize,
    pub column: usize,
    /// Dotted key path: `<kind>.<component name>.<key>` (`chamber.barrel.volume`), or
    /// `<kind>[index]` for a component without a name, `<section>.<key>` (`solver.step`), with
    /// `[i]` for array elements (`reservoir.atm.pressure.table[2]`). For a `--set` problem:
    /// the override as given (`barrel.volume=-1`).
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Line 0 marks an error of the file as a whole (an empty file) or of an override: no
        // position to point at, and no key when none is involved. Every part may echo text of
        // the file or the command line: a character that prints as nothing is shown escaped.
        write!(f, "{}", escaped(&self.file))?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.key.is_empty() {
            write!(f, ": `{}`", escaped(&self.key))?;
        }
        write!(f, ": {}", escaped(&self.message))
    }
}

/// A parsed and validated model with the text it came from (after any overrides).
#[derive(Clone, Debug)]
pub struct LoadedModel {
    pub spec: ModelFile,
    pub source: String,
    pub file: String,
    /// Values that are valid but implausible (most often a unit mistake: a pressure of 6 Pa),
    /// located like errors: `plenum check` and `run` print them, an FMU logs them.
    pub warnings: Vec<ModelError>,
}

/// Parse and validate a model from TOML text. `overrides` are `name=value` strings as given to
/// `--set` (`<component>.<key>=<toml value>`, or `<section>.<key>=...` for `model`, `gas`,
/// `solver`, `checks`, `inputs`).
///
/// Every problem is reported, each with the file, line and column of the offending key (or of
/// the table that lacks a required key) and the key path in the form `chamber.barrel.volume`
/// (`<kind>.<component name>.<key>`, or `<kind>[index]` for a component without a name) or
/// `solver.step`. Problems of an overridden value are reported against the override: file
/// `--set`, the override's text as key, line and column 0. The errors come sorted: overrides
/// first, then by position.
pub fn parse_str(
    src: &str,
    file_label: &str,
    overrides: &[String],
) -> Result<LoadedModel, Vec<ModelError>> {
    if src.trim().is_empty() {
        return Err(vec![ModelError {
            file: file_label.to_string(),
            line: 0,
            column: 0,
            key: String::new(),
            message: "empty model file: a model needs at least [model] and [solver]".to_string(),
        }]);
    }

    let (table, parse_errors) = DeTable::parse_recoverable(src);
    let root = Spanned::new(table.span(), DeValue::Table(table.into_inner()));
    if !parse_errors.is_empty() {
        let loc = locate::Locator::new(file_label, src, root, Vec::new());
        return Err(sorted(syntax::syntax_errors(&loc, &parse_errors)));
    }

    let mut root = root;
    let (applied, source, errors) = overrides::apply(&mut root, src, overrides);
    quantities::with_si(root, |root, found| {
        let loc = locate::Locator::new(file_label, src, root, applied);
        check_tree(&loc, &found, source, errors, overrides)
    })
}

/// Decode and validate the tree (its values with units converted: `found`).
fn check_tree(
    loc: &locate::Locator<'_>,
    found: &[quantities::Found],
    source: String,
    mut errors: Vec<ModelError>,
    overrides: &[String],
) -> Result<LoadedModel, Vec<ModelError>> {
    let unit_errors: Vec<ModelError> = found
        .iter()
        .filter_map(|x| {
            x.result
                .as_ref()
                .err()
                .map(|m| loc.error(&x.path, m.clone()))
        })
        .collect();
    match decode::decode(loc) {
        Ok(mut spec) if unit_errors.is_empty() => {
            // Parts become components of existing kinds before the model is validated.
            let part_errors = validate::parts(&spec, loc);
            // A part left unexpanded: what names a component it would generate only follows.
            let unmade: Vec<String> = spec
                .parts()
                .iter()
                .flat_map(|(_, p)| p.generated())
                .map(|(_, name)| format!("`{name}`"))
                .collect();
            if part_errors.is_empty() {
                parts::expand(&mut spec);
            }
            let follows = |e: &ModelError| {
                !part_errors.is_empty() && unmade.iter().any(|n| e.message.contains(n.as_str()))
            };
            let model_errors: Vec<ModelError> = validate::validate(&spec, loc)
                .into_iter()
                .filter(|e| !follows(e))
                .collect();
            errors.extend(part_errors);
            errors.extend(model_errors);
            if errors.is_empty() && !overrides.is_empty() {
                // The text after overrides is what an FMU ships: it must say the same.
                let same = spec_of_text(&source).is_some_and(|s| s == spec);
                if !same {
                    errors.push(ModelError {
                        file: "--set".to_string(),
                        line: 0,
                        column: 0,
                        key: overrides.join(" "),
                        message: "internal error: the overridden text does not parse to the \
                                  overridden model"
                            .to_string(),
                    });
                }
            }
            if errors.is_empty() {
                let warnings = plausible::warnings(&spec, loc, found);
                // After everything that locates a component in the file by its list.
                file_lagged_valves(&mut spec);
                return Ok(LoadedModel {
                    spec,
                    source,
                    file: loc.file.to_string(),
                    warnings,
                });
            }
        }
        Ok(_) => {}
        // A value with a bad unit is still a string in the tree: serde's "must be a number"
        // about it (or about the key whose table holds it) would only repeat its error.
        Err(e) => errors.extend(e.into_iter().filter(|d| {
            !unit_errors
                .iter()
                .any(|u| u.file == d.file && !d.key.is_empty() && u.key.starts_with(&d.key))
        })),
    }
    errors.extend(unit_errors);
    Err(sorted(errors))
}

/// The model a text says, values with units converted (no validation, no located errors).
fn spec_of_text(text: &str) -> Option<ModelFile> {
    use serde::Deserialize;
    let table = DeTable::parse(text).ok()?;
    let root = Spanned::new(table.span(), DeValue::Table(table.into_inner()));
    quantities::with_si(root, |root, _| {
        let span = root.span();
        let DeValue::Table(t) = root.into_inner() else {
            return None;
        };
        let mut spec =
            ModelFile::deserialize(toml::de::Deserializer::from(Spanned::new(span, t))).ok()?;
        parts::expand(&mut spec);
        Some(spec)
    })
}

/// Moves each directional valve with a `response_time` to the lagged valves
/// (`crate::components::lagged_valve`), whose spool position is a state: the others keep
/// their kind, states and FMU state.
fn file_lagged_valves(spec: &mut ModelFile) {
    let (lagged, plain) = std::mem::take(&mut spec.directional_valve)
        .into_iter()
        .partition(|v| v.response_time.is_some());
    spec.directional_valve = plain;
    spec.lagged_valve.extend(
        lagged
            .into_iter()
            .map(crate::components::lagged_valve::LaggedValveSpec),
    );
}

/// Overrides first (in the order given), then by position in the file.
fn sorted(mut errors: Vec<ModelError>) -> Vec<ModelError> {
    errors.sort_by_key(|e| (e.file != "--set", e.line, e.column));
    errors.dedup();
    errors
}

/// Largest model file read, bytes: far above any model (the shipped ones are a few kB, a
/// time table of 10⁵ rows about 3 MB), so that a path to a device or a huge file
/// (`/dev/zero`) ends in an error instead of filling the memory.
pub const MAX_MODEL_FILE_BYTES: u64 = 16 << 20;

/// The bytes of a model file, at most [`MAX_MODEL_FILE_BYTES`]; `Err` says why it cannot be
/// read (an I/O problem, a path that is not a regular file: a FIFO, a device, a directory; or
/// the size limit). Every reader of model files goes through this (and so through
/// [`crate::input_file::read_bounded`]): the command line, fmu-build ([`load_path`]) and
/// fmi2Instantiate's `resources/model.toml`.
pub fn read_model_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    crate::input_file::read_bounded(path, MAX_MODEL_FILE_BYTES, "a model file")
}

/// Read a file ([`read_model_file`]: bytes, so non-UTF-8 gets a clear error) and parse it.
pub fn load_path(
    path: &std::path::Path,
    overrides: &[String],
) -> Result<LoadedModel, Vec<ModelError>> {
    let label = path.display().to_string();
    let bytes = read_model_file(path).map_err(|message| {
        vec![ModelError {
            file: label.clone(),
            line: 0,
            column: 0,
            key: String::new(),
            message,
        }]
    })?;
    load_bytes(bytes, &label, overrides)
}

/// Parse the bytes of a model file (`label` names it in messages).
pub fn load_bytes(
    bytes: Vec<u8>,
    label: &str,
    overrides: &[String],
) -> Result<LoadedModel, Vec<ModelError>> {
    let src = String::from_utf8(bytes).map_err(|e| {
        vec![ModelError {
            file: label.to_string(),
            line: 0,
            column: 0,
            key: String::new(),
            message: format!(
                "not valid UTF-8 (first bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        }]
    })?;
    parse_str(&src, label, overrides)
}
