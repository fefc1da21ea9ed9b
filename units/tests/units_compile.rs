//! Units in the type: a length divided by a time assigned to a length does not compile (the
//! expected compiler error, naming uom's types, is `tests/ui/*_fail.stderr`); the twin that
//! assigns it to a velocity compiles and runs.

#[test]
fn units_are_checked_at_compile_time() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/units_length_from_velocity_fail.rs");
    t.pass("tests/ui/units_velocity_pass.rs");
}
