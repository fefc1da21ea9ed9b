//! The orifice's key checks (`[[orifice]]`'s `check`): one form of the three, the poppet's
//! and the curve's keys consistent (`crate::components::orifice` has the laws).

use crate::components::keys::Problem;
use crate::components::orifice::OrificeSpec;
use crate::components::poppet_table;
use crate::components::rating::{RatingKeys, curve_problems};

/// An orifice has one of three forms: `area` (and `discharge_coefficient`), ISO 6358's
/// `sonic_conductance` and `critical_pressure_ratio`, or a `flow_table`.
pub(super) fn orifice_problems(x: &OrificeSpec) -> Vec<Problem> {
    let problem = |key, message: &str| Problem {
        key,
        message: message.to_string(),
    };
    // The curve keys' own problems (`rating::curve_problems`, the valves' too): a rated inlet
    // state without a curve first, a curve's after the poppet's.
    let curve = curve_problems(
        "orifice",
        &RatingKeys {
            flow_table: x.flow_table.as_deref(),
            flow_table_inlet_pressure: x.flow_table_inlet_pressure,
            flow_table_inlet_temperature: x.flow_table_inlet_temperature,
            ..RatingKeys::default()
        },
    );
    let (mut out, curve) = if x.flow_table.is_none() {
        (curve, Vec::new())
    } else {
        (Vec::new(), curve)
    };
    match (x.cracking_pressure, x.full_flow_pressure) {
        (Some(crack), Some(full)) if full <= crack => out.push(problem(
            Some("full_flow_pressure"),
            &format!(
                "`full_flow_pressure` ({full} Pa) must be above `cracking_pressure` ({crack} Pa)"
            ),
        )),
        (Some(_), None) => out.push(problem(
            None,
            "a check or relief valve (with `cracking_pressure`) needs `full_flow_pressure` too",
        )),
        (None, Some(_)) => out.push(problem(
            None,
            "a check or relief valve (with `full_flow_pressure`) needs `cracking_pressure` too",
        )),
        _ => {}
    }
    if let Some(rows) = &x.poppet_table {
        poppet_table_problems(x, rows, &mut out);
    }
    if x.flow_table.is_some() {
        out.extend(curve);
        flow_table_problems(x, &mut out);
        return out;
    }
    if x.nominal_flow.is_some() {
        if x.sonic_conductance.is_some() {
            out.push(problem(
                Some("nominal_flow"),
                "give either `sonic_conductance` (C) or `nominal_flow` (Q_N), not both",
            ));
        }
        if x.area.is_some() {
            out.push(problem(
                Some("nominal_flow"),
                "`nominal_flow` rates the ISO 6358 form; the isentropic form is given by `area`: \
                 give one of them",
            ));
            return out;
        }
        match &x.critical_pressure_ratio {
            None => out.push(problem(
                None,
                "an ISO 6358 orifice (with `nominal_flow`) needs `critical_pressure_ratio` too",
            )),
            Some(b) if b.as_const().is_none() => out.push(problem(
                Some("critical_pressure_ratio"),
                "with `nominal_flow`, `critical_pressure_ratio` must be a number: C is \
                 converted from Q_N at that b once (give `sonic_conductance` to vary b)",
            )),
            Some(_) => {}
        }
        if x.discharge_coefficient.is_some() {
            out.push(problem(
                Some("discharge_coefficient"),
                "`discharge_coefficient` belongs to the `area` form; the ISO 6358 form \
                 (`nominal_flow`) has none",
            ));
        }
        return out;
    }
    match (&x.area, &x.sonic_conductance) {
        (Some(_), None) => {
            if x.critical_pressure_ratio.is_some() {
                out.push(problem(
                    Some("critical_pressure_ratio"),
                    "`critical_pressure_ratio` belongs to the ISO 6358 form, which is given by \
                     `sonic_conductance` instead of `area`",
                ));
            }
        }
        (None, Some(_)) => {
            if x.critical_pressure_ratio.is_none() {
                out.push(problem(
                    None,
                    "an ISO 6358 orifice (with `sonic_conductance`) needs \
                     `critical_pressure_ratio` too",
                ));
            }
            if x.discharge_coefficient.is_some() {
                out.push(problem(
                    Some("discharge_coefficient"),
                    "`discharge_coefficient` belongs to the `area` form; the ISO 6358 form \
                     (`sonic_conductance`) has none",
                ));
            }
        }
        (Some(_), Some(_)) => out.push(problem(
            Some("sonic_conductance"),
            "give either `area` (isentropic orifice) or `sonic_conductance` (ISO 6358), not both",
        )),
        (None, None) => out.push(problem(
            None,
            "missing required key `area` in orifice (or, for the ISO 6358 form, \
             `sonic_conductance` and `critical_pressure_ratio`)",
        )),
    }
    out
}

/// An orifice given by its catalogue curve: none of the other forms' keys.
fn flow_table_problems(x: &OrificeSpec, out: &mut Vec<Problem>) {
    for (given, key) in [
        (x.area.is_some(), "area"),
        (x.discharge_coefficient.is_some(), "discharge_coefficient"),
        (x.sonic_conductance.is_some(), "sonic_conductance"),
        (x.nominal_flow.is_some(), "nominal_flow"),
        (
            x.critical_pressure_ratio.is_some(),
            "critical_pressure_ratio",
        ),
    ] {
        if given {
            out.push(Problem {
                key: Some(key),
                message: format!(
                    "give either `flow_table` (a catalogue curve) or `{key}` (the isentropic or \
                     ISO 6358 form), not both"
                ),
            });
        }
    }
}

/// A poppet given by its curve: the curve's own shape, and not the linear poppet's keys too.
fn poppet_table_problems(x: &OrificeSpec, rows: &[[f64; 2]], out: &mut Vec<Problem>) {
    // Cells that break the key's rule (Δp not finite, an opening outside 0..1) are reported
    // at the cell by validation; the curve's shape is judged on valid cells only.
    let cells_ok = rows
        .iter()
        .all(|[p, o]| p.is_finite() && (0.0..=1.0).contains(o));
    if let Some(message) = poppet_table::table_problem(rows).filter(|_| cells_ok) {
        out.push(Problem {
            key: Some("poppet_table"),
            message,
        });
    }
    for (given, key) in [
        (x.cracking_pressure.is_some(), "cracking_pressure"),
        (x.full_flow_pressure.is_some(), "full_flow_pressure"),
    ] {
        if given {
            out.push(Problem {
                key: Some(key),
                message: format!(
                    "give either `poppet_table` (the opening as a curve) or `{key}` (the \
                     linear opening), not both"
                ),
            });
        }
    }
}
