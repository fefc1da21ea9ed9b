//! Model-file errors: positions and messages from the parser and the validation, and their
//! wording as `plenum check` prints them (insta snapshots in `snapshots/`); the key table's
//! rules for every value, whenever it is set (`key_rules`).

#[path = "../common/mod.rs"]
mod common;

mod cushion;
mod error_wording;
mod errors;
mod key_rules;
mod message_classes;
mod pneumatics;
mod units;
