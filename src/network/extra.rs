//! Terms a test adds to a network's right-hand side after every component's (a deliberately
//! non-conserving sink for the tests of checks 4 to 7 lives under `tests/`). No model file
//! creates one and the shipped code holds none: a network without any pays one test per
//! evaluation off the lean path, none on it (a network with one leaves the lean path).

use std::sync::Arc;

use super::Network;
use crate::ad::{Dual64, Scalar};

/// A term added to dy/dt, in f64 and in dual numbers (the Jacobian-vector product and the
/// sensitivities differentiate through it). Its Jacobian entries must be diagonal or lie among
/// the network's own (its pattern does not know the term).
pub trait ExtraTerm: std::fmt::Debug + Send + Sync {
    /// The chambers whose mass the term may change (their masses are then not constant states).
    fn chambers(&self) -> &[usize];
    /// Add the term at state `y` to `dy`.
    fn add(&self, y: &[f64], dy: &mut [f64]);
    /// [`Self::add`] over dual numbers.
    fn add_dual(&self, y: &[Dual64], dy: &mut [Dual64]);
}

/// The scalar types the right-hand side is evaluated in, each with its [`ExtraTerm`] method.
pub(super) trait NetScalar: Scalar {
    fn add_extra(term: &dyn ExtraTerm, y: &[Self], dy: &mut [Self]);
}

impl NetScalar for f64 {
    #[inline]
    fn add_extra(term: &dyn ExtraTerm, y: &[f64], dy: &mut [f64]) {
        term.add(y, dy);
    }
}

impl NetScalar for Dual64 {
    #[inline]
    fn add_extra(term: &dyn ExtraTerm, y: &[Dual64], dy: &mut [Dual64]) {
        term.add_dual(y, dy);
    }
}

impl Network {
    /// Add `term` to the right-hand side (after every component's terms, before the isothermal
    /// correction). Not serialized: a restored network has none.
    pub fn add_extra_term(&mut self, term: Arc<dyn ExtraTerm>) {
        self.extra_terms.push(term);
        // Resets the flag that lets the right-hand side take its lean path.
        self.ensure_scratch();
    }

    /// The terms added by [`Self::add_extra_term`].
    pub fn extra_terms(&self) -> &[Arc<dyn ExtraTerm>] {
        &self.extra_terms
    }
}
