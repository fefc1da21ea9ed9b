//! Model-file errors: every invalid input gives an error with the file, line, column, key and a
//! message in words. Positions are computed here from the fixture text (where the offending
//! text is), never copied from the output.

use std::path::Path;

use plenum::model::{ModelError, load_path, parse_str};

/// The valid reference model: one component of every kind.
const BASE: &str = include_str!("../fixtures/models/all_kinds.toml");
const FILE: &str = "test.toml";

/// `src` with the one occurrence of `old` replaced by `new`.
fn edit(src: &str, old: &str, new: &str) -> String {
    assert_eq!(
        src.matches(old).count(),
        1,
        "`{old}` must occur exactly once in the fixture"
    );
    src.replacen(old, new, 1)
}

/// 1-based line and column (in characters) of the `n`-th (0-based) occurrence of `needle`.
fn pos_nth(src: &str, needle: &str, n: usize) -> (usize, usize) {
    let (offset, _) = src
        .match_indices(needle)
        .nth(n)
        .unwrap_or_else(|| panic!("`{needle}` occurs fewer than {} times", n + 1));
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, src[line_start..offset].chars().count() + 1)
}

/// Position of the only occurrence of `needle`.
fn pos(src: &str, needle: &str) -> (usize, usize) {
    assert_eq!(src.matches(needle).count(), 1, "`{needle}` must be unique");
    pos_nth(src, needle, 0)
}

fn errors_with(src: &str, overrides: &[&str]) -> Vec<ModelError> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match parse_str(src, FILE, &overrides) {
        Ok(_) => panic!("the model was accepted:\n{src}"),
        Err(errors) => {
            assert!(!errors.is_empty());
            for e in &errors {
                println!("{e}");
            }
            errors
        }
    }
}

fn errors(src: &str) -> Vec<ModelError> {
    errors_with(src, &[])
}

/// The error with this key; fails with the whole list if there is none.
fn with_key<'e>(errors: &'e [ModelError], key: &str) -> &'e ModelError {
    errors
        .iter()
        .find(|e| e.key == key)
        .unwrap_or_else(|| panic!("no error with key `{key}` in {errors:#?}"))
}

/// Exactly one error, at `at` (line, column), with `key` and a message containing `phrase`.
#[track_caller]
fn assert_one(errors: &[ModelError], at: (usize, usize), key: &str, phrase: &str) {
    assert_eq!(errors.len(), 1, "expected one error, got {errors:#?}");
    assert_error(&errors[0], FILE, at, key, phrase);
}

#[track_caller]
fn assert_error(e: &ModelError, file: &str, at: (usize, usize), key: &str, phrase: &str) {
    assert_eq!(e.file, file, "{e}");
    assert_eq!((e.line, e.column), at, "{e}");
    assert_eq!(e.key, key, "{e}");
    assert!(
        e.message.contains(phrase),
        "message `{}` lacks `{phrase}`",
        e.message
    );
}

/// Replace `old` by `new` in the base model; the error must be at `new` (or at `at_text`).
#[track_caller]
fn check_edit(old: &str, new: &str, at_text: &str, key: &str, phrase: &str) {
    let src = edit(BASE, old, new);
    let errs = errors(&src);
    assert_one(&errs, pos(&src, at_text), key, phrase);
}

// ---------------------------------------------------------------------------------------------
// Valid models

#[test]
fn valid_model_with_every_kind_parses() {
    let m = parse_str(BASE, FILE, &[]).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(m.spec.chamber.len(), 2);
    assert_eq!(m.spec.reservoir.len(), 2);
    assert_eq!(m.spec.orifice.len(), 1);
    assert_eq!(m.spec.valve.len(), 1);
    assert_eq!(m.spec.piston.len(), 1);
    assert_eq!(m.spec.wall.len(), 1);
    assert_eq!(m.source, BASE);
    assert_eq!(m.file, FILE);
    assert!(plenum::model::build_simulation(&m.spec, None).is_ok());
}

#[test]
fn commented_projectile_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models/projectile.toml");
    let m = load_path(&path, &[]).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(m.spec.model.name, "projectile");
    // Dead volume 0 is valid: the projectile is `behind`-adjacent to the barrel.
    assert_eq!(m.spec.chamber[0].volume, 0.0);
    assert_eq!(m.spec.piston[0].x_exit, Some(0.6));
}

#[test]
fn inline_components_and_integers_are_accepted() {
    let src = r#"
model = { name = "inline" }
gas = { R = 287, cp = 1004 }
solver = { step = 1e-3, t_end = 1 }
chamber = [{ name = "a", volume = 1, pressure = 100000, temperature = 300 }]
reservoir = [{ name = "b", pressure = 100000, temperature = 300 }]
orifice = [{ name = "o", from = "a", to = "b", area = 1e-6 }]
"#;
    let m = parse_str(src, FILE, &[]).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(m.spec.chamber[0].volume, 1.0);
}

// ---------------------------------------------------------------------------------------------
// Error classes found while reading the file

#[test]
fn syntax_error() {
    let src = edit(BASE, "volume = 1e-3", "volume = 1.0.0");
    let errs = errors(&src);
    let (line, col) = pos(&src, "volume = 1.0.0");
    // The parser stops at the second `.0`.
    assert_one(
        &errs,
        (line, col + "volume = 1.0".len()),
        "chamber.volume",
        "TOML syntax error",
    );
}

#[test]
fn syntax_error_duplicate_key() {
    let src = edit(
        BASE,
        "temperature = 300.0\n\n[[chamber]]\nname = \"barrel\"",
        "temperature = 300.0\npressure = 1e5\n\n[[chamber]]\nname = \"barrel\"",
    );
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "pressure = 1e5"),
        "chamber.pressure",
        "`pressure` is defined twice",
    );
}

#[test]
fn unknown_component_kind() {
    let src = edit(BASE, "[[wall]]", "[[chambr]]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[[chambr]]"),
        "chambr",
        "unknown component kind `chambr` (known: chamber, reservoir, orifice, valve, piston, wall, mass_flow, restrictor, tube, inertial_tube, inertance_valve, regulator, directional_valve, lagged_valve, ambient_heat, flow_control, shuttle_valve, quick_exhaust, pilot_check, hose, cylinder)",
    );
    assert!(errs[0].message.contains("did you mean `chamber`"));
}

#[test]
fn unknown_section() {
    let src = edit(BASE, "[checks]", "[chekcs]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[chekcs]"),
        "chekcs",
        "unknown section `chekcs`",
    );
    assert!(errs[0].message.contains("did you mean `checks`"));
}

#[test]
fn unknown_key_in_component() {
    check_edit(
        "volume = 1e-3",
        "voume = 1e-3",
        "voume",
        "chamber.tank.voume",
        "unknown key `voume` in chamber (known keys: name, volume, pressure, temperature); did you mean `volume`?",
    );
}

#[test]
fn unknown_key_in_section() {
    check_edit(
        "t_end = 0.01",
        "t_ned = 0.01",
        "t_ned",
        "solver.t_ned",
        "unknown key `t_ned` in [solver]",
    );
}

#[test]
fn unknown_key_in_a_table_parameter() {
    check_edit(
        "interpolation = \"step\"",
        "interp = \"step\"",
        "interp =",
        "reservoir.supply.pressure.interp",
        "unknown key `interp`",
    );
}

#[test]
fn unknown_interpolation() {
    check_edit(
        "interpolation = \"step\"",
        "interpolation = \"cubic\"",
        "interpolation = \"cubic\"",
        "reservoir.supply.pressure.interpolation",
        "unknown value `cubic` for `interpolation` (known: step, linear)",
    );
}

#[test]
fn missing_key() {
    let src = edit(
        BASE,
        "pressure = 5e5\ntemperature = 300.0\n",
        "pressure = 5e5\n",
    );
    let errs = errors(&src);
    // Located at the table that lacks it: the first [[chamber]] header.
    assert_one(
        &errs,
        pos_nth(&src, "[[chamber]]", 0),
        "chamber.tank.temperature",
        "missing required key `temperature`",
    );
}

#[test]
fn missing_section() {
    let src = edit(BASE, "[solver]\nmethod", "[nothing]\nmethod");
    let errs = errors(&src);
    // The renamed section is unknown, and [solver] is then missing.
    let e = with_key(&errs, "solver");
    assert_error(
        e,
        FILE,
        (1, 1),
        "solver",
        "missing required section [solver]",
    );
    assert_eq!(errs.len(), 2, "{errs:#?}");
}

#[test]
fn wrong_type() {
    check_edit(
        "volume = 1e-3",
        "volume = \"big\"",
        "volume = \"big\"",
        "chamber.tank.volume",
        "`volume` = \"big\": `big` does not start with a number",
    );
}

#[test]
fn wrong_type_bool() {
    check_edit(
        "one_way = true",
        "one_way = 1",
        "one_way = 1",
        "valve.feed.one_way",
        "`one_way` must be true or false, not an integer",
    );
}

#[test]
fn table_on_a_constant_key() {
    check_edit(
        "volume = 1e-3",
        "volume = { table = [[0.0, 1e-3]] }",
        "volume = {",
        "chamber.tank.volume",
        "`volume` must be a constant number",
    );
}

#[test]
fn table_row_with_three_numbers() {
    let src = edit(BASE, "[0.005, 3e5]", "[0.005, 3e5, 1.0]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[0.005, 3e5, 1.0]"),
        "reservoir.supply.pressure.table[1]",
        "a table row must be [time, value]",
    );
}

#[test]
fn single_brackets_for_a_component_kind() {
    let src = edit(BASE, "[[wall]]", "[wall]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[wall]"),
        "wall",
        "written as [[wall]] tables (double brackets)",
    );
}

#[test]
fn several_problems_are_reported_at_once() {
    let src = edit(BASE, "volume = 1e-3", "voume = 1e-3");
    let src = edit(&src, "area = 1e-5", "area = \"small\"");
    let src = edit(&src, "[[wall]]", "[[walls]]");
    let errs = errors(&src);
    assert_eq!(errs.len(), 3, "{errs:#?}");
    // Sorted by position.
    assert!(
        errs.windows(2)
            .all(|w| (w[0].line, w[0].column) < (w[1].line, w[1].column))
    );
    with_key(&errs, "chamber.tank.voume");
    with_key(&errs, "orifice.nozzle.area");
    with_key(&errs, "walls");
}

#[test]
fn wrong_type_followed_by_no_spurious_missing_key() {
    // `volume` has the wrong type: that is the error, not "missing required key `volume`".
    let src = edit(BASE, "volume = 1e-3", "volume = true");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "volume = true"),
        "chamber.tank.volume",
        "must be a number",
    );
}

// ---------------------------------------------------------------------------------------------
// Validation: names and links

#[test]
fn duplicate_name_across_kinds() {
    let src = edit(BASE, "name = \"feed\"", "name = \"tank\"");
    let errs = errors(&src);
    let first_line = pos(&src, "name = \"tank\"\nvolume").0;
    let e = with_key(&errs, "valve.tank.name");
    assert_error(
        e,
        FILE,
        pos(&src, "name = \"tank\"\nfrom"),
        "valve.tank.name",
        &format!("duplicate name `tank`: the chamber on line {first_line} already has it"),
    );
    assert_eq!(errs.len(), 1, "{errs:#?}");
}

#[test]
fn invalid_component_name() {
    check_edit(
        "name = \"membrane\"",
        "name = \"the membrane\"",
        "name = \"the membrane\"",
        "wall.the membrane.name",
        "must not contain dots, spaces",
    );
}

#[test]
fn link_to_a_missing_node() {
    check_edit(
        "to = \"barrel\"",
        "to = \"barel\"",
        "to = \"barel\"",
        "orifice.nozzle.to",
        "`to` names `barel`, but there is no chamber or reservoir of that name (nodes: atm, barrel, supply, tank); did you mean `barrel`?",
    );
}

#[test]
fn link_to_something_that_is_not_a_node() {
    check_edit(
        "right = \"atm\"",
        "right = \"slug\"",
        "right = \"slug\"",
        "wall.membrane.right",
        "`right` names the piston `slug`, which is not a node",
    );
}

#[test]
fn link_from_a_node_to_itself() {
    check_edit(
        "to = \"tank\"",
        "to = \"supply\"",
        "to = \"supply\"",
        "valve.feed.to",
        "the same node as `from`",
    );
}

#[test]
fn piston_links_to_missing_node() {
    check_edit(
        "behind = \"barrel\"",
        "behind = \"chamber\"",
        "behind = \"chamber\"",
        "piston.slug.behind",
        "no chamber or reservoir",
    );
}

// ---------------------------------------------------------------------------------------------
// Validation: values

#[test]
fn negative_volume() {
    check_edit(
        "volume = 1e-3",
        "volume = -1e-3",
        "volume = -1e-3",
        "chamber.tank.volume",
        "`volume` must be 0 m^3 or more, got -0.001",
    );
}

#[test]
fn zero_volume_without_a_piston_behind() {
    check_edit(
        "volume = 1e-3",
        "volume = 0e0",
        "volume = 0e0",
        "chamber.tank.volume",
        "must be greater than 0 m^3, got 0",
    );
}

#[test]
fn initial_volume_with_pistons_not_positive() {
    // The barrel's dead volume is 0; a piston behind it at x0 < 0 leaves it no room.
    let src = edit(BASE, "x0 = 0.1", "x0 = -0.1");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "volume = 0.0"),
        "chamber.barrel.volume",
        "the initial volume of chamber `barrel`",
    );
}

#[test]
fn zero_pressure() {
    check_edit(
        "pressure = 5e5",
        "pressure = 0.0",
        "pressure = 0.0",
        "chamber.tank.pressure",
        "`pressure` must be greater than 0 Pa (absolute), got 0",
    );
}

#[test]
fn negative_temperature() {
    let src = edit(
        BASE,
        "name = \"atm\"\npressure = 101325.0\ntemperature = 300.0",
        "name = \"atm\"\npressure = 101325.0\ntemperature = -5.0",
    );
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "temperature = -5.0"),
        "reservoir.atm.temperature",
        "greater than 0 K, got -5",
    );
}

#[test]
fn negative_area() {
    // 0 is a closed orifice; below it nothing.
    check_edit(
        "area = 1e-5",
        "area = -1e-9",
        "area = -1e-9",
        "orifice.nozzle.area",
        "`area` must be 0 m^2 or more",
    );
}

#[test]
fn zero_mass() {
    check_edit(
        "mass = 0.002",
        "mass = 0.0",
        "mass = 0.0",
        "piston.slug.mass",
        "`mass` must be greater than 0 kg",
    );
}

#[test]
fn negative_value_in_a_table() {
    let src = edit(BASE, "[0.005, 3e5]", "[0.005, -3e5]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[0.005, -3e5]"),
        "reservoir.supply.pressure.table[1]",
        "got -300000 at t = 0.005 s",
    );
}

#[test]
fn nan_value() {
    check_edit(
        "pressure = 5e5",
        "pressure = nan",
        "pressure = nan",
        "chamber.tank.pressure",
        "`pressure` is nan: every number must be finite",
    );
}

#[test]
fn infinite_value() {
    check_edit(
        "area = 1e-4",
        "area = inf",
        "area = inf",
        "piston.slug.area",
        "`area` is infinite",
    );
}

#[test]
fn number_too_large_for_f64() {
    check_edit(
        "mass = 0.002",
        "mass = 1e400",
        "mass = 1e400",
        "piston.slug.mass",
        "`mass` = 1e400 is too large: every number must be finite",
    );
}

#[test]
fn infinite_value_in_a_table() {
    let src = edit(BASE, "[0.002, 1.0]", "[0.002, -inf]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "-inf"),
        "valve.feed.opening.table[1][1]",
        "`opening` is infinite",
    );
}

#[test]
fn discharge_coefficient_above_one() {
    check_edit(
        "discharge_coefficient = 0.8",
        "discharge_coefficient = 1.2",
        "discharge_coefficient = 1.2",
        "orifice.nozzle.discharge_coefficient",
        "greater than 0 and at most 1, got 1.2",
    );
}

#[test]
fn discharge_coefficient_zero() {
    check_edit(
        "discharge_coefficient = 0.8",
        "discharge_coefficient = 0.0",
        "discharge_coefficient = 0.0",
        "orifice.nozzle.discharge_coefficient",
        "greater than 0 and at most 1, got 0",
    );
}

#[test]
fn valve_opening_outside_zero_one() {
    let src = edit(BASE, "[0.002, 1.0]", "[0.002, 1.5]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[0.002, 1.5]"),
        "valve.feed.opening.table[1]",
        "`opening` must be between 0 and 1, got 1.5",
    );
}

#[test]
fn valve_constant_opening_negative() {
    let src = edit(
        BASE,
        "opening = { table = [[0.0, 0.0], [0.002, 1.0]], interpolation = \"linear\" }",
        "opening = -0.5",
    );
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "opening = -0.5"),
        "valve.feed.opening",
        "between 0 and 1",
    );
}

#[test]
fn valve_coefficient_negative() {
    check_edit(
        "coefficient = 1e-8",
        "coefficient = -1e-8",
        "coefficient = -1e-8",
        "valve.feed.coefficient",
        "`coefficient` must be 0 kg/(s Pa) or more",
    );
}

#[test]
fn piston_x0_at_x_exit() {
    check_edit(
        "x0 = 0.1",
        "x0 = 0.5",
        "x0 = 0.5",
        "piston.slug.x0",
        "`x0` = 0.5 m is at or past `x_exit` = 0.5 m",
    );
}

#[test]
fn piston_friction_negative() {
    check_edit(
        "friction_dynamic = 2000.0",
        "friction_dynamic = -1.0",
        "friction_dynamic = -1.0",
        "piston.slug.friction_dynamic",
        "`friction_dynamic` must be 0 Pa or more",
    );
}

#[test]
fn piston_spring_negative() {
    check_edit(
        "spring_stiffness = 0.0",
        "spring_stiffness = -10.0",
        "spring_stiffness = -10.0",
        "piston.slug.spring_stiffness",
        "`spring_stiffness` must be 0 N/m or more",
    );
}

#[test]
fn piston_damping_negative() {
    check_edit(
        "damping = 0.0",
        "damping = -0.1",
        "damping = -0.1",
        "piston.slug.damping",
        "`damping` must be 0 N s/m or more",
    );
}

#[test]
fn wall_heat_transfer_negative() {
    check_edit(
        "heat_transfer_coefficient = 10.0",
        "heat_transfer_coefficient = -10.0",
        "heat_transfer_coefficient = -10.0",
        "wall.membrane.heat_transfer_coefficient",
        "must be 0 W/(m^2 K) or more",
    );
}

#[test]
fn table_not_sorted_by_time() {
    let src = edit(BASE, "[0.005, 3e5]", "[0.0, 3e5]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[0.0, 3e5]"),
        "reservoir.supply.pressure.table[1]",
        "not sorted by time: t = 0 s comes after t = 0 s",
    );
}

#[test]
fn empty_table() {
    check_edit(
        "table = [[0.0, 2e5], [0.005, 3e5]]",
        "table = []",
        "table = []",
        "reservoir.supply.pressure.table",
        "`pressure` has an empty table",
    );
}

// ---------------------------------------------------------------------------------------------
// Validation: gas

#[test]
fn unknown_gas_species() {
    check_edit(
        "species = \"air\"",
        "species = \"ait\"",
        "species = \"ait\"",
        "gas.species",
        "unknown gas species `ait` (known: air, N2, O2, Ar, He, H2, CO2); did you mean `air`?",
    );
}

#[test]
fn gas_with_neither_species_nor_r_and_cp() {
    check_edit(
        "species = \"air\"",
        "p_critical = 3.8e6",
        "[gas]",
        "gas",
        "[gas] needs `species`",
    );
}

#[test]
fn gas_with_r_but_no_cp() {
    check_edit(
        "species = \"air\"",
        "R = 287.05",
        "[gas]",
        "gas.cp",
        "`cp` is missing",
    );
}

#[test]
fn gas_with_species_and_r() {
    check_edit(
        "species = \"air\"",
        "species = \"air\"\nR = 287.05",
        "R = 287.05",
        "gas.R",
        "gives both `species` and `R`",
    );
}

#[test]
fn gas_cp_not_above_r() {
    check_edit(
        "species = \"air\"",
        "R = 287.05\ncp = 287.05",
        "cp = 287.05",
        "gas.cp",
        "must be greater than `R`",
    );
}

#[test]
fn chambers_without_gas() {
    let src = edit(BASE, "[gas]\nspecies = \"air\"\n", "");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos_nth(&src, "[[chamber]]", 0),
        "chamber.tank",
        "no [gas] section",
    );
}

// ---------------------------------------------------------------------------------------------
// Validation: solver, checks, inputs, model

#[test]
fn unknown_solver_method() {
    check_edit(
        "method = \"rk4\"",
        "method = \"rk5\"",
        "method = \"rk5\"",
        "solver.method",
        "unknown solver method `rk5` (known: euler, rk4,",
    );
}

#[test]
fn fixed_step_method_without_step() {
    let src = edit(BASE, "step = 1e-6\n", "");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[solver]"),
        "solver.step",
        "method `rk4` takes fixed steps: set `step`",
    );
}

#[test]
fn step_not_positive() {
    check_edit(
        "step = 1e-6",
        "step = 0.0",
        "step = 0.0",
        "solver.step",
        "`step` must be greater than 0 s",
    );
}

#[test]
fn t_end_not_after_t_start() {
    check_edit(
        "t_end = 0.01",
        "t_start = 0.01\nt_end = 0.01",
        "t_end = 0.01",
        "solver.t_end",
        "`t_end` = 0.01 s must be after `t_start` = 0.01 s",
    );
}

#[test]
fn output_interval_not_positive() {
    check_edit(
        "output_interval = 1e-4",
        "output_interval = -1e-4",
        "output_interval = -1e-4",
        "solver.output_interval",
        "must be greater than 0 s",
    );
}

#[test]
fn max_time_not_after_t_start() {
    check_edit(
        "max_time = 0.05",
        "max_time = 0.0",
        "max_time = 0.0",
        "solver.max_time",
        "`max_time` = 0 s must be after `t_start` = 0 s",
    );
}

#[test]
fn check_threshold_not_positive() {
    check_edit(
        "mass_drift = 1e-5",
        "mass_drift = 0.0",
        "mass_drift = 0.0",
        "checks.mass_drift",
        "`mass_drift` must be greater than 0",
    );
}

#[test]
fn input_of_an_unknown_component() {
    check_edit(
        "\"atm.pressure\"",
        "\"amt.pressure\"",
        "\"amt.pressure\"",
        "inputs.names[0]",
        "there is no component named `amt`; did you mean `atm`?",
    );
}

#[test]
fn input_of_an_unknown_key() {
    check_edit(
        "\"atm.pressure\"",
        "\"atm.presure\"",
        "\"atm.presure\"",
        "inputs.names[0]",
        "reservoir `atm` has no numeric key `presure` (numeric keys: pressure, temperature); did you mean `pressure`?",
    );
}

#[test]
fn input_of_a_key_that_is_not_a_number() {
    check_edit(
        "\"atm.pressure\"",
        "\"nozzle.from\"",
        "\"nozzle.from\"",
        "inputs.names[0]",
        "`from` of orifice `nozzle` is not a number",
    );
}

#[test]
fn input_of_a_table_parameter() {
    check_edit(
        "\"atm.pressure\"",
        "\"supply.pressure\"",
        "\"supply.pressure\"",
        "inputs.names[0]",
        "is a table over time",
    );
}

#[test]
fn input_without_a_dot() {
    let src = edit(BASE, "\"atm.pressure\"", "\"atm.pressure\", \"pressure\"");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "\"pressure\""),
        "inputs.names[1]",
        "must be `<component>.<key>`",
    );
}

#[test]
fn model_name_not_an_identifier() {
    check_edit(
        "name = \"all_kinds\"",
        "name = \"all-kinds\"",
        "name = \"all-kinds\"",
        "model.name",
        "model name `all-kinds` must be an identifier",
    );
}

#[test]
fn model_name_starting_with_a_digit() {
    check_edit(
        "name = \"all_kinds\"",
        "name = \"2kinds\"",
        "name = \"2kinds\"",
        "model.name",
        "not starting with a digit",
    );
}

// ---------------------------------------------------------------------------------------------
// --set

fn set(overrides: &[&str]) -> plenum::model::LoadedModel {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    parse_str(BASE, FILE, &overrides).unwrap_or_else(|e| panic!("{e:#?}"))
}

#[test]
fn set_changes_values() {
    let m = set(&[
        "tank.pressure=6e5",
        "solver.t_end = 0.02",
        "slug.v0=1.5",
        "supply.temperature={ table = [[0,300],[1,310]], interpolation = \"step\" }",
        "gas.species=\"N2\"",
    ]);
    assert_eq!(m.spec.chamber[0].pressure, 6e5);
    assert_eq!(m.spec.solver.t_end, 0.02);
    assert_eq!(m.spec.piston[0].v0, 1.5);
    assert_eq!(m.spec.reservoir[1].temperature.values(), vec![300.0, 310.0]);
    assert_eq!(
        m.spec.gas.as_ref().and_then(|g| g.species.as_deref()),
        Some("N2")
    );
    // The source is the text after overrides: it parses to the same model on its own.
    assert!(m.source.contains("pressure = 6e5"));
    let again = parse_str(&m.source, FILE, &[]).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(again.spec, m.spec);
}

#[test]
fn set_creates_a_missing_section() {
    let src = edit(BASE, "[checks]\nmass_drift = 1e-5\n", "");
    let overrides = vec!["checks.energy_drift=1e-3".to_string()];
    let m = parse_str(&src, FILE, &overrides).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(m.spec.checks.energy_drift, 1e-3);
}

#[test]
fn set_unknown_component() {
    let errs = errors_with(BASE, &["tnak.pressure=6e5"]);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_error(
        &errs[0],
        "--set",
        (0, 0),
        "tnak.pressure=6e5",
        "no component or section named `tnak`",
    );
    assert!(errs[0].message.contains("did you mean `tank`"));
}

#[test]
fn set_bad_value() {
    let errs = errors_with(BASE, &["model.name=gun"]);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_error(
        &errs[0],
        "--set",
        (0, 0),
        "model.name=gun",
        "`gun` is not a TOML value (strings need quotes: model.name=\"gun\")",
    );
}

#[test]
fn set_without_equals_or_dot() {
    let errs = errors_with(BASE, &["tank.pressure", "pressure=1"]);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert_error(
        &errs[0],
        "--set",
        (0, 0),
        "tank.pressure",
        "expected `name=value`",
    );
    assert_error(
        &errs[1],
        "--set",
        (0, 0),
        "pressure=1",
        "is not `<component>.<key>`",
    );
}

#[test]
fn set_value_that_fails_validation_points_at_the_override() {
    let errs = errors_with(BASE, &["tank.volume=-1"]);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_error(
        &errs[0],
        "--set",
        (0, 0),
        "tank.volume=-1",
        "must be 0 m^3 or more",
    );
}

#[test]
fn set_value_of_the_wrong_type_points_at_the_override() {
    let errs = errors_with(BASE, &["tank.volume=\"x\""]);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_error(
        &errs[0],
        "--set",
        (0, 0),
        "tank.volume=\"x\"",
        "`x` does not start with a number",
    );
}

#[test]
fn set_unknown_key_points_at_the_override() {
    let errs = errors_with(BASE, &["tank.voume=1"]);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_error(
        &errs[0],
        "--set",
        (0, 0),
        "tank.voume=1",
        "unknown key `voume` in chamber",
    );
}

#[test]
fn set_keeps_file_positions_of_other_errors() {
    // The override adds a key (a line, in the text) before the wall; the wall's error keeps
    // the line it has in the file.
    let src = edit(BASE, "area = 1e-3", "area = 0.0");
    let errs = errors_with(&src, &["slug.v0=2.0", "tank.temperature=nan"]);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert_error(
        &errs[0],
        "--set",
        (0, 0),
        "tank.temperature=nan",
        "`temperature` is nan",
    );
    assert_error(
        &errs[1],
        FILE,
        pos(&src, "area = 0.0"),
        "wall.membrane.area",
        "greater than 0",
    );
}

// ---------------------------------------------------------------------------------------------
// load_path

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/models")
        .join(name)
}

#[test]
fn load_valid_fixture() {
    let m = load_path(&fixture("all_kinds.toml"), &[]).unwrap_or_else(|e| panic!("{e:#?}"));
    assert_eq!(m.spec.model.name, "all_kinds");
    assert!(m.file.ends_with("all_kinds.toml"));
}

#[test]
fn load_empty_file() {
    let errs = load_path(&fixture("empty.toml"), &[]).expect_err("empty file accepted");
    for e in &errs {
        println!("{e}");
    }
    assert_eq!(errs.len(), 1);
    assert!(errs[0].file.ends_with("empty.toml"));
    assert!(errs[0].message.contains("empty model file"), "{}", errs[0]);
}

#[test]
fn load_not_utf8() {
    let errs = load_path(&fixture("not_utf8.toml"), &[]).expect_err("bad bytes accepted");
    for e in &errs {
        println!("{e}");
    }
    let bytes = std::fs::read(fixture("not_utf8.toml")).expect("fixture");
    let bad = bytes
        .iter()
        .position(|&b| b >= 0x80)
        .expect("a non-ASCII byte");
    assert!(errs[0].message.contains("not valid UTF-8"), "{}", errs[0]);
    assert!(
        errs[0].message.contains(&format!("offset {bad}")),
        "{}",
        errs[0]
    );
}

#[test]
fn load_missing_file() {
    let errs = load_path(&fixture("no_such_model.toml"), &[]).expect_err("missing file read");
    for e in &errs {
        println!("{e}");
    }
    assert!(errs[0].message.contains("cannot read"), "{}", errs[0]);
}

// ---------------------------------------------------------------------------------------------
// More than one problem, and positions in lines with non-ASCII text

#[test]
fn every_missing_key_and_later_errors_are_reported() {
    // [solver] lacks t_end, the tank lacks two keys, and the wall (after [solver] in the
    // alphabet serde visits keys in) has an unknown key: all four are reported.
    let src = edit(BASE, "t_end = 0.01\n", "");
    let src = edit(&src, "pressure = 5e5\ntemperature = 300.0\n", "");
    let src = edit(&src, "velocity = 0.0", "speed = 0.0");
    let errs = errors(&src);
    assert_eq!(errs.len(), 4, "{errs:#?}");
    assert_error(
        with_key(&errs, "solver.t_end"),
        FILE,
        pos(&src, "[solver]"),
        "solver.t_end",
        "missing required key `t_end` in [solver]",
    );
    for k in ["pressure", "temperature"] {
        assert_error(
            with_key(&errs, &format!("chamber.tank.{k}")),
            FILE,
            pos_nth(&src, "[[chamber]]", 0),
            &format!("chamber.tank.{k}"),
            &format!("missing required key `{k}`"),
        );
    }
    assert_error(
        with_key(&errs, "wall.membrane.speed"),
        FILE,
        pos(&src, "speed"),
        "wall.membrane.speed",
        "unknown key `speed` in wall",
    );
}

#[test]
fn missing_sections_are_all_reported() {
    let src = "# nothing but a comment and a gas\n[gas]\nspecies = \"air\"\n";
    let errs = errors(src);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert_error(
        &errs[0],
        FILE,
        (1, 1),
        "model",
        "missing required section [model]",
    );
    assert_error(
        &errs[1],
        FILE,
        (1, 1),
        "solver",
        "missing required section [solver]",
    );
}

#[test]
fn section_written_as_an_array_of_tables() {
    let src = edit(BASE, "[solver]", "[[solver]]");
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "[[solver]]"),
        "solver",
        "[solver] is a single section: write [solver], not [[solver]]",
    );
}

#[test]
fn key_below_the_wrong_header() {
    // A top-level name written after a header belongs to that header's table.
    let src = edit(
        BASE,
        "[checks]\nmass_drift = 1e-5\n",
        "[checks]\nmass_drift = 1e-5\nsolver = 3\n",
    );
    let errs = errors(&src);
    assert_one(
        &errs,
        pos(&src, "solver = 3"),
        "checks.solver",
        "`solver` is a top-level name, but keys after a [checks] header belong to it: write [solver]",
    );
}

#[test]
fn columns_count_characters() {
    let src = r#"reservoir = [{ name = "ätmosphäre", pressure = -1.0, temperature = 300.0 }]
[model]
name = "m"
[solver]
step = 1e-3
t_end = 1
"#;
    let errs = errors(src);
    let (line, col) = pos(src, "pressure = -1.0");
    // The byte offset in the line is larger: "ä" is two bytes.
    assert_ne!(src.find("pressure = -1.0").map(|b| b + 1), Some(col));
    assert_one(
        &errs,
        (line, col),
        "reservoir.ätmosphäre.pressure",
        "greater than 0 Pa",
    );
}
