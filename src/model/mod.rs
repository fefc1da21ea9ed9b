//! Model files: TOML parsed with serde, validated before anything runs, with errors that name
//! the file, line, column and key.

pub mod build;
pub mod spec;

pub use build::{build_network, build_simulation};
pub use spec::ModelFile;

/// Parse a model from TOML text without validation (temporary; see `validate`).
pub fn parse_unvalidated(src: &str) -> Result<ModelFile, String> {
    toml::from_str(src).map_err(|e| e.to_string())
}
