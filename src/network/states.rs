//! The state vector seen from outside, for Model Exchange: the scale of each state (nominal
//! values for the master's error weights), the exact directional derivative of the right-hand
//! side in states and run-time parameters together (one dual-number evaluation), and which
//! states each link's flow reads (the structure behind the outputs' dependencies).

use num_dual::Dual64;

use super::kinds::{Registered, each_kind};
use super::{DualScratch, Network};
use crate::components::chamber;
use crate::components::element::Element;
use crate::components::keys::Component;
use crate::param::ParamValue;

impl Network {
    /// The scale of every state at the initial state `y0` (positive, finite), for a master's
    /// error weights (FMI's nominal values): a chamber's initial mass, energy and volume; every
    /// other kind's as it says (`Element::nominals`: a piston's largest coordinate, else its
    /// chambers' longest initial gas column, and 1 m/s, a wall's swept volume the larger
    /// initial volume of its chambers, an inertance valve's flow its start value or its open
    /// area times 1 m/s); the accumulators the initial totals of mass and energy. A scale that
    /// comes out 0 (or not finite) is 1.
    pub fn state_nominals(&self, y0: &[f64]) -> Vec<f64> {
        let l = &self.layout;
        let mut nominal = vec![1.0; l.n_states];
        let nc = self.chambers().len();
        nominal[..nc * chamber::STATES].copy_from_slice(&y0[..nc * chamber::STATES]);
        let volume0 =
            |node: usize| (node < nc).then(|| y0[node * chamber::STATES + chamber::VOLUME].abs());
        each_kind!(K => {
            let first = l.first::<K>();
            for (i, x) in K::list(&self.kinds).iter().enumerate() {
                let o = first + i * K::STATES;
                x.nominals(&mut nominal[o..o + K::STATES], &volume0);
            }
        });
        let acc = l.accumulator_offset;
        nominal[acc] = self.mass_total_kg(y0);
        nominal[acc + 1] = self.energy_total_j(y0);
        for x in &mut nominal {
            *x = x.abs();
            if !(x.is_finite() && *x > 0.0) {
                *x = 1.0;
            }
        }
        nominal
    }

    /// Why a dual seed on the run-time parameter `<component>.<key>` would not reach the
    /// right-hand side (`None`: it does): its kind's `Element::SEED_REFUSAL` (an inertance
    /// valve's geometry, which its rate reads as plain numbers).
    pub fn parameter_seed_refusal(&self, component: &str, key: &str) -> Option<&'static str> {
        if self.param_ref(component, key).is_none() {
            return Some("it is not a run-time parameter");
        }
        each_kind!(K => {
            if let Some(why) = K::SEED_REFUSAL
                && K::list(&self.kinds).iter().any(|x| x.name() == component)
            {
                return Some(why);
            }
        });
        None
    }

    /// f(t, y) into `dydt` and its exact directional derivative J·v + Σ_k ∂f/∂p_k·dp_k into
    /// `df`, in one dual-number evaluation (each state y_i + v_i·ε, each seeded run-time
    /// parameter p_k + dp_k·ε; `seeds` = [(component, key, dp_k)], repeats add). The flows'
    /// tangents are left for [`Self::last_dual_link_flow_derivatives`]. The f64 scratch is left
    /// alone. Errors name a parameter that is not a run-time parameter.
    pub fn tangent(
        &mut self,
        t: f64,
        y: &[f64],
        v: &[f64],
        seeds: &[(&str, &str, f64)],
        dydt: &mut [f64],
        df: &mut [f64],
    ) -> Result<(), String> {
        self.refresh_stale_links();
        let mut d = std::mem::take(&mut self.dual);
        let result = self.tangent_in(&mut d, t, y, v, seeds, dydt, df);
        self.dual = d;
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn tangent_in(
        &self,
        d: &mut DualScratch,
        t: f64,
        y: &[f64],
        v: &[f64],
        seeds: &[(&str, &str, f64)],
        dydt: &mut [f64],
        df: &mut [f64],
    ) -> Result<(), String> {
        let n = self.layout.n_states;
        debug_assert!(y.len() == n && v.len() == n && dydt.len() == n && df.len() == n);
        let dual_seeds: Vec<(&ParamValue, Dual64)> = self.dual_seeds(t, seeds)?;
        self.size_dual(d);
        for i in 0..n {
            d.y[i] = Dual64::new(y[i], v[i]);
        }
        self.eval(t, &d.y, &mut d.dy, &mut d.sc, &dual_seeds);
        for i in 0..n {
            dydt[i] = d.dy[i].re;
            df[i] = d.dy[i].eps;
        }
        Ok(())
    }

    /// d(mass_total) and d(energy_total) in the direction `v` of the states at `y` (the
    /// totals of [`Self::mass_total_kg`] and [`Self::energy_total_j`] on y + ε·v).
    pub fn totals_tangent(&self, y: &[f64], v: &[f64]) -> (f64, f64) {
        let state = |i: usize| Dual64::new(y[i], v[i]);
        (
            self.mass_total(state).eps,
            self.energy_total(state, |_, _| None).eps,
        )
    }
}
