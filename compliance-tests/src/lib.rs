//! FMU compliance harness (see README.md).
