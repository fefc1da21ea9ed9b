//! Physical quantities with their units in the type (the `uom` crate, SI, `f64` storage), and
//! the FMI unit of every variable derived from those types.
//!
//! # Where the boundary is
//!
//! The right-hand side is generic over its scalar `S: Scalar` (`f64` or `num_dual::Dual64`,
//! [`crate::ad`]) so that Jacobians and sensitivities are exact. `uom` quantities need a storage
//! type that implements uom's own numeric traits, which `Dual64` does not, so quantities cannot
//! flow through the generic arithmetic. The split is therefore:
//!
//! - **Typed** (`uom`, f64): what a caller sees and what is built once — the ideal gas's
//!   constructor and state queries ([`crate::gas::IdealGas::new`], `mass`, `internal_energy`,
//!   `pressure`, `temperature`); the constant parameters of chambers (dead volume, initial
//!   pressure and temperature), pistons (area, mass, x0, v0, x_exit, spring, end stops) and
//!   inertance valves (density, q0), set from the model file in `crate::model::build`; the
//!   typed queries of [`crate::simulation::Simulation`] (`chamber`, `piston`, `mass_total`,
//!   `energy_total`); and the unit of every FMU/CLI variable ([`Unit`], built from the quantity
//!   type: the XML's `UnitDefinitions` cannot disagree with it).
//! - **Typed parameters, raw values**: [`crate::param::Param<Q>`] (time tables, settable from
//!   the FMU, seedable as dual numbers for sensitivities: orifice areas, valve coefficients,
//!   friction, wall and tube parameters...) carries its quantity `Q` in the type (a zero-sized
//!   marker; `quantity(t, seg) -> Q` for callers) but stores an untyped
//!   [`crate::param::ParamValue`] of SI numbers, which the right-hand side evaluates as `S` at
//!   each call and the FMU inputs / `--set` / sensitivity seeds reach through `Deref`. Field
//!   names keep their unit suffix (`area_m2`). The state vector and the `[f64; 5]` of
//!   `Simulation::chamber_state` (the output table's no-allocation path) stay raw.
//! - **Raw** `S`: inside the right-hand side. A typed parameter is read there as `.value`, its
//!   SI base-unit value: a field access, zero cost (measured: docs/performance.md, "Units").
//! - **Raw f64 at the file boundary**: the model file's serde structs keep their SI-suffixed
//!   keys (`pressure` Pa, `volume` m³, ...); `crate::model::build` wraps them into quantities.
//!
//! Serialized state (FMU state blobs, the fuzz corpus) is unchanged: uom serializes a quantity as
//! its bare value.
//!
//! The types and the unit table live in the `plenum-units` crate (`units/`), re-exported here, so
//! that its compile-fail test (`units/tests/units_compile.rs`: `let l: Length = length / time;`
//! does not compile, `let v: Velocity = length / time;` does) builds uom alone.

pub use plenum_units::*;
