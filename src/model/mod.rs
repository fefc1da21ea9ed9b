//! Model files: TOML parsed with serde, validated before anything runs, with errors that name
//! the file, line, column and key.

pub mod build;
pub mod spec;

pub use build::{build_network, build_simulation};
pub use spec::ModelFile;

/// One problem found in a model file.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelError {
    /// File label as the user gave it (a path, `resources/model.toml`, `<string>`).
    pub file: String,
    /// 1-based line and column of the offending key (0 when there is no position, e.g. a
    /// `--set` of a key that does not exist).
    pub line: usize,
    pub column: usize,
    /// Dotted key path, e.g. `chamber[1].volume` or `chamber.barrel.volume`.
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: `{}`: {}",
            self.file, self.line, self.column, self.key, self.message
        )
    }
}

/// A parsed and validated model with the text it came from (after any overrides).
#[derive(Clone, Debug)]
pub struct LoadedModel {
    pub spec: ModelFile,
    pub source: String,
    pub file: String,
}

/// Parse and validate a model from TOML text. `overrides` are `name=value` strings as given to
/// `--set` (`<component>.<key>=<toml value>`, or `solver.<key>=...`).
pub fn parse_str(
    src: &str,
    file_label: &str,
    overrides: &[String],
) -> Result<LoadedModel, Vec<ModelError>> {
    // Placeholder until validation lands: parse only.
    let _ = overrides;
    match toml::from_str::<ModelFile>(src) {
        Ok(spec) => Ok(LoadedModel {
            spec,
            source: src.to_string(),
            file: file_label.to_string(),
        }),
        Err(e) => Err(vec![ModelError {
            file: file_label.to_string(),
            line: 0,
            column: 0,
            key: String::new(),
            message: e.message().to_string(),
        }]),
    }
}

/// Read a file (bytes, so non-UTF-8 gets a clear error) and parse it.
pub fn load_path(
    path: &std::path::Path,
    overrides: &[String],
) -> Result<LoadedModel, Vec<ModelError>> {
    let label = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        vec![ModelError {
            file: label.clone(),
            line: 0,
            column: 0,
            key: String::new(),
            message: format!("cannot read: {e}"),
        }]
    })?;
    let src = String::from_utf8(bytes).map_err(|e| {
        vec![ModelError {
            file: label.clone(),
            line: 0,
            column: 0,
            key: String::new(),
            message: format!(
                "not valid UTF-8 (first bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        }]
    })?;
    parse_str(&src, &label, overrides)
}
