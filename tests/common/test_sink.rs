//! A test-only component for the tests of checks 4 to 7: it removes a fraction of a chamber's
//! mass and energy per second without counting it as having left (not in the accumulators), so
//! the totals are not conserved. Added to a built network through `Network::add_extra_term`.

use plenum::ad::{Dual64, Scalar};
use plenum::components::chamber;
use plenum::network::ExtraTerm;

#[derive(Clone, Debug, PartialEq)]
pub struct TestSink {
    pub chamber: usize,
    pub mass_rate_per_s: f64,
    pub energy_rate_per_s: f64,
}

impl TestSink {
    fn apply<T: Scalar>(&self, y: &[T], dy: &mut [T]) {
        let o = self.chamber * chamber::STATES;
        dy[o + chamber::MASS] -= y[o + chamber::MASS] * self.mass_rate_per_s;
        dy[o + chamber::ENERGY] -= y[o + chamber::ENERGY] * self.energy_rate_per_s;
    }
}

impl ExtraTerm for TestSink {
    fn chambers(&self) -> &[usize] {
        std::slice::from_ref(&self.chamber)
    }
    fn add(&self, y: &[f64], dy: &mut [f64]) {
        self.apply(y, dy);
    }
    fn add_dual(&self, y: &[Dual64], dy: &mut [Dual64]) {
        self.apply(y, dy);
    }
}
