//! Model-file errors: positions and messages from the parser and the validation, and their
//! wording as `plenum check` prints them (insta snapshots in `snapshots/`).

mod error_wording;
mod errors;
