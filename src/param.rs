//! Scalar parameters that are either constant or a table over time.
//!
//! A step table holds each value from its time on; a linear table interpolates between its
//! points and holds the end values outside them. Every table time is a breakpoint: the
//! simulation stops there and restarts its integrator, and the right-hand side of one segment
//! evaluates the table *as it is on that segment* (see [`ParamValue::value`]), so the value at a
//! step instant itself never enters the solution.
//!
//! [`Param<Q>`] is a component's parameter with its quantity `Q` (a `uom` type, e.g.
//! [`crate::units::Area`]) in the type; its values are SI numbers in an untyped [`ParamValue`].
//! The typed accessor [`Param::quantity`] is for callers; the generic right-hand side reads the
//! raw SI number (`value`, through `Deref`) because `Dual64` cannot be a uom storage type
//! (`crate::units`); the FMU inputs and `--set` reach the untyped [`ParamValue`] (`Deref`/
//! `DerefMut`), where one code path serves every quantity. The marker is zero-sized and
//! `#[serde(transparent)]`: serialized bytes are those of the `ParamValue`.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Serialize};

use crate::units::uom::si::Dimension;
use crate::units::{Si, from_si};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interpolation {
    Step,
    Linear,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub times_s: Vec<f64>,
    pub values: Vec<f64>,
    pub interpolation: Interpolation,
}

/// BlasterSim's cubic opening curve: 0 before `t_open_s`, 3s² − 2s³ with
/// s = (t − t_open)/duration during the opening, 1 after (a C¹ smoothstep).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cubic {
    pub t_open_s: f64,
    pub duration_s: f64,
}

impl Cubic {
    #[inline]
    pub fn value(&self, t: f64) -> f64 {
        let s = ((t - self.t_open_s) / self.duration_s).clamp(0.0, 1.0);
        s * s * (3.0 - 2.0 * s)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// A parameter's values as SI numbers, untyped (see [`Param`] for the typed wrapper).
pub enum ParamValue {
    Const(f64),
    /// Boxed: most parameters are constants, and the right-hand side streams every
    /// component's parameters, so the enum stays 24 bytes instead of a table's 56.
    Table(Box<Table>),
    /// A 0 → 1 cubic ramp (valve openings); breakpoints at both of its ends.
    Cubic(Cubic),
}

impl From<f64> for ParamValue {
    fn from(v: f64) -> Self {
        ParamValue::Const(v)
    }
}

/// A parameter whose values are quantities `Q` (`Q = Si<D>`, a uom quantity), stored as SI
/// numbers. Reads as its [`ParamValue`] through `Deref`.
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
pub struct Param<Q> {
    raw: ParamValue,
    // `fn() -> Q`: the marker owns no `Q`, so `Param<Q>` is Send/Sync/Clone whatever `Q` is.
    #[serde(skip)]
    quantity: PhantomData<fn() -> Q>,
}

impl<Q> Param<Q> {
    /// The untyped values, for the type-erased paths (FMU inputs, `--set`, sensitivity seeds).
    pub fn raw(&self) -> &ParamValue {
        &self.raw
    }
}

impl<D: Dimension + ?Sized> Param<Si<D>> {
    /// A constant parameter.
    pub fn constant(q: Si<D>) -> Self {
        ParamValue::Const(q.value).into()
    }

    /// The quantity at time `t` on the segment that began at `segment_start_s`
    /// (see [`ParamValue::value`]).
    #[inline]
    pub fn quantity(&self, t: f64, segment_start_s: f64) -> Si<D> {
        from_si(self.raw.value(t, segment_start_s))
    }

    /// The quantity at an instant as a user reads the table (right-continuous at steps).
    pub fn quantity_at(&self, t: f64) -> Si<D> {
        from_si(self.raw.value_at(t))
    }
}

impl<Q> From<ParamValue> for Param<Q> {
    fn from(raw: ParamValue) -> Self {
        Param {
            raw,
            quantity: PhantomData,
        }
    }
}

/// A constant, in SI units of `Q`.
impl<Q> From<f64> for Param<Q> {
    fn from(v: f64) -> Self {
        ParamValue::Const(v).into()
    }
}

impl<Q> Deref for Param<Q> {
    type Target = ParamValue;
    #[inline]
    fn deref(&self) -> &ParamValue {
        &self.raw
    }
}

impl<Q> DerefMut for Param<Q> {
    #[inline]
    fn deref_mut(&mut self) -> &mut ParamValue {
        &mut self.raw
    }
}

// By hand: derives would ask `Q: Clone + Debug + PartialEq` for a marker that holds no `Q`.
impl<Q> Clone for Param<Q> {
    fn clone(&self) -> Self {
        self.raw.clone().into()
    }
}

impl<Q> PartialEq for Param<Q> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<Q> std::fmt::Debug for Param<Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.raw.fmt(f)
    }
}

impl Table {
    /// Index of the segment that starts at or before `t`: the largest i with times[i] ≤ t, or
    /// `None` before the first time.
    fn segment(&self, t: f64) -> Option<usize> {
        // Tables are short; a partition point is branch-light and allocation-free.
        let n = self.times_s.partition_point(|&ti| ti <= t);
        n.checked_sub(1)
    }
}

impl ParamValue {
    /// The value at time `t` on the integration segment that began at `segment_start_s`.
    ///
    /// For step tables the value is the one in force at the segment start, so an RK stage that
    /// lands exactly on the next step time still sees the old value. Linear tables interpolate
    /// on the piece that contains the segment start (breakpoints at every knot keep `t` inside it).
    #[inline(always)]
    pub fn value(&self, t: f64, segment_start_s: f64) -> f64 {
        // The constant, inlined into every right-hand side; tables and ramps out of line (the
        // right-hand side reads several parameters per link, most of them constants).
        match self {
            ParamValue::Const(v) => *v,
            _ => self.varying_value(t, segment_start_s),
        }
    }

    /// [`Self::value`] of a table or a ramp.
    #[inline(never)]
    fn varying_value(&self, t: f64, segment_start_s: f64) -> f64 {
        match self {
            ParamValue::Const(v) => *v,
            ParamValue::Table(tab) => {
                let seg = tab.segment(segment_start_s);
                match tab.interpolation {
                    Interpolation::Step => match seg {
                        Some(i) => tab.values[i],
                        None => tab.values[0],
                    },
                    Interpolation::Linear => match seg {
                        None => tab.values[0],
                        Some(i) if i + 1 >= tab.times_s.len() => tab.values[i],
                        Some(i) => {
                            let (t0, t1) = (tab.times_s[i], tab.times_s[i + 1]);
                            let (v0, v1) = (tab.values[i], tab.values[i + 1]);
                            v0 + (v1 - v0) * (t - t0) / (t1 - t0)
                        }
                    },
                }
            }
            // Breakpoints at both ends keep a segment on one piece: the segment start decides
            // which one, so a stage landing on an end still uses the piece it started on.
            ParamValue::Cubic(c) => {
                if segment_start_s < c.t_open_s {
                    0.0
                } else if segment_start_s >= c.t_open_s + c.duration_s {
                    1.0
                } else {
                    c.value(t)
                }
            }
        }
    }

    /// The value at an instant as a user reads the table (right-continuous at steps).
    pub fn value_at(&self, t: f64) -> f64 {
        self.value(t, t)
    }

    /// The first table time strictly after `t`, if any: the next integration breakpoint.
    pub fn next_breakpoint_after(&self, t: f64) -> Option<f64> {
        match self {
            ParamValue::Const(_) => None,
            ParamValue::Table(tab) => {
                let i = tab.times_s.partition_point(|&ti| ti <= t);
                tab.times_s.get(i).copied()
            }
            ParamValue::Cubic(c) => {
                let end = c.t_open_s + c.duration_s;
                if t < c.t_open_s {
                    Some(c.t_open_s)
                } else if t < end {
                    Some(end)
                } else {
                    None
                }
            }
        }
    }

    pub fn is_constant(&self) -> bool {
        matches!(self, ParamValue::Const(_))
    }

    /// The constant value, or the first table value.
    pub fn initial(&self) -> f64 {
        match self {
            ParamValue::Const(v) => *v,
            ParamValue::Table(t) => t.values[0],
            ParamValue::Cubic(_) => 0.0,
        }
    }

    /// Every value the parameter can take (for validation).
    pub fn all_values(&self) -> &[f64] {
        match self {
            ParamValue::Const(v) => std::slice::from_ref(v),
            ParamValue::Table(t) => &t.values,
            ParamValue::Cubic(_) => &[0.0, 1.0],
        }
    }
}

/// A scalar that may be a constant or a time table:
/// `pressure = 2e5` or `pressure = { table = [[0.0, 0.0], [0.1, 2000.0]], interpolation = "step" }`,
/// or, for a valve's `opening` only, BlasterSim's cubic opening curve
/// `opening = { cubic = { t_open = 0.01, duration = 0.005 } }`.
///
/// This is the model file's form of a [`Param`] (`ParamSpec::to_param`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamSpec {
    Const(f64),
    Table(TableSpec),
    Cubic(CubicSpec),
}

/// `{ cubic = { t_open = 0.01, duration = 0.005 } }`: 0 before `t_open` (s), 3s² − 2s³ with
/// s = (t − t_open)/duration during the opening, 1 after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubicSpec {
    pub cubic: CubicTimes,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubicTimes {
    /// Time the opening starts, s.
    pub t_open: f64,
    /// Opening time, s.
    pub duration: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Rows of `[time_s, value]`.
    pub table: Vec<[f64; 2]>,
    #[serde(default = "default_interpolation")]
    pub interpolation: Interpolation,
}

fn default_interpolation() -> Interpolation {
    Interpolation::Linear
}

impl ParamSpec {
    pub fn to_param<Q>(&self) -> Param<Q> {
        let raw = match self {
            ParamSpec::Const(v) => ParamValue::Const(*v),
            ParamSpec::Table(t) => ParamValue::Table(Box::new(Table {
                times_s: t.table.iter().map(|r| r[0]).collect(),
                values: t.table.iter().map(|r| r[1]).collect(),
                interpolation: t.interpolation,
            })),
            ParamSpec::Cubic(c) => ParamValue::Cubic(Cubic {
                t_open_s: c.cubic.t_open,
                duration_s: c.cubic.duration,
            }),
        };
        raw.into()
    }

    pub fn as_const(&self) -> Option<f64> {
        match self {
            ParamSpec::Const(v) => Some(*v),
            ParamSpec::Table(_) | ParamSpec::Cubic(_) => None,
        }
    }

    pub fn values(&self) -> Vec<f64> {
        match self {
            ParamSpec::Const(v) => vec![*v],
            ParamSpec::Table(t) => t.table.iter().map(|r| r[1]).collect(),
            ParamSpec::Cubic(_) => vec![0.0, 1.0],
        }
    }
}

impl From<f64> for ParamSpec {
    fn from(v: f64) -> Self {
        ParamSpec::Const(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(interp: Interpolation) -> ParamValue {
        ParamValue::Table(Box::new(Table {
            times_s: vec![0.1, 0.4],
            values: vec![2000.0, 0.0],
            interpolation: interp,
        }))
    }

    /// The right-hand side streams every component's parameters: a constant must not carry
    /// a table's size.
    #[test]
    fn a_parameter_is_small() {
        let n = std::mem::size_of::<ParamValue>();
        println!("size_of::<ParamValue>() = {n} bytes");
        assert!(n <= 24, "{n}");
    }

    #[test]
    fn step_table_holds_segment_value_up_to_the_step_instant() {
        let p = table(Interpolation::Step);
        assert_eq!(p.value_at(0.0), 2000.0); // before the first time: first value
        assert_eq!(p.value_at(0.1), 2000.0);
        assert_eq!(p.value_at(0.4), 0.0); // right-continuous
        // On the segment [0.1, 0.4] the instant 0.4 still sees the old value.
        assert_eq!(p.value(0.4, 0.1), 2000.0);
        assert_eq!(p.next_breakpoint_after(0.0), Some(0.1));
        assert_eq!(p.next_breakpoint_after(0.1), Some(0.4));
        assert_eq!(p.next_breakpoint_after(0.4), None);
    }

    #[test]
    fn linear_table_interpolates_and_holds_ends() {
        let p = table(Interpolation::Linear);
        assert_eq!(p.value_at(0.0), 2000.0);
        assert!((p.value_at(0.25) - 1000.0).abs() < 1e-9);
        assert_eq!(p.value_at(1.0), 0.0);
    }

    #[test]
    fn typed_param_reads_as_its_quantity() {
        use crate::units::uom::si::pressure::kilopascal;
        use crate::units::{Pressure, si::pascal};
        let p: Param<Pressure> = table(Interpolation::Linear).into();
        let q = p.quantity_at(0.25);
        println!(
            "p(0.25 s) = {} kPa (raw {} Pa)",
            q.get::<kilopascal>(),
            p.value_at(0.25)
        );
        assert!((q.get::<kilopascal>() - 1.0).abs() < 1e-12);
        assert_eq!(q.value, p.value_at(0.25));
        // A step table's segment value, as `value` gives the right-hand side.
        let s: Param<Pressure> = table(Interpolation::Step).into();
        assert_eq!(s.quantity(0.4, 0.1), Pressure::new::<pascal>(2000.0));
        let c = Param::constant(Pressure::new::<kilopascal>(2.0));
        assert_eq!(*c.raw(), ParamValue::Const(2000.0));
    }

    #[test]
    fn typed_param_serializes_as_the_untyped_value() {
        use crate::components::Reservoir;
        let cfg = bincode::config::standard(); // as the FMU state (cosim/mod.rs)
        let (pv, tv) = (table(Interpolation::Step), ParamValue::Const(300.0));
        let typed = Reservoir {
            name: "supply".into(),
            pressure_pa: pv.clone().into(),
            temperature_k: tv.clone().into(),
        };
        let raw = ("supply".to_string(), pv, tv);
        let a = bincode::serde::encode_to_vec(&typed, cfg).unwrap();
        let b = bincode::serde::encode_to_vec(&raw, cfg).unwrap();
        println!(
            "typed reservoir {} bytes, untyped {} bytes",
            a.len(),
            b.len()
        );
        assert_eq!(a, b);
        let (back, _): (Reservoir, usize) = bincode::serde::decode_from_slice(&b, cfg).unwrap();
        assert_eq!(back, typed);
    }
}
