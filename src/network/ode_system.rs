//! The network as an [`OdeSystem`]: its dimension, block layout, constant states, invariants,
//! the right-hand side's entry point and the Jacobian-vector product.

use num_dual::Dual64;

use super::kinds::{Registered, each_kind};
use super::{Network, pattern};
use crate::components::chamber;
use crate::components::element::Element;
use crate::ode::{BlockLayout, OdeSystem};

impl Network {
    /// Whether a moving boundary (a piston, a wall) bounds chamber `k` (and so moves its
    /// volume).
    fn volume_moves(&self, k: usize) -> bool {
        !self.chamber_boundaries(k).is_empty()
    }

    /// The quadrature states (`Element::QUADRATURES`: the walls' swept volumes): no
    /// derivative reads them.
    pub(crate) fn quadrature_states(&self) -> std::ops::Range<usize> {
        let mut range = 0..0;
        each_kind!(K => {
            if K::QUADRATURES {
                let first = self.layout.first::<K>();
                range = first..first + K::list(&self.kinds).len() * K::STATES;
            }
        });
        range
    }

    /// Per chamber (`moves`, one entry each, overwritten): whether an element can change its
    /// mass. Only `Eval::transfer` and the extra terms ([`super::ExtraTerm`]) write dm/dt;
    /// `transfer` moves mass between the nodes of the kinds that say so (`Element::MOVES_MASS`:
    /// the gas links, and a piston through its bore once it has left it). Every piston counts,
    /// with an `x_exit` or without: a restored FMU state may hold any exit flags (they are
    /// checked for their count only), and one set for a piston without an exit opens its bore
    /// all the same, after the BDF has taken the masses for constant. Walls move volume only,
    /// and an inertance valve's liquid runs between reservoirs (it writes only its own q). No
    /// run-time input sets a chamber's mass (the keys settable during a run set flows and
    /// boundary conditions only; a link whose flow an input may switch on is a link all the
    /// same, so its chambers count as moving). One pass over the components, no allocation.
    fn mark_mass_moves(&self, moves: &mut [bool]) {
        let nc = self.chambers().len();
        debug_assert_eq!(moves.len(), nc);
        moves.fill(false);
        let mut mark = |node: usize| {
            if node < nc {
                moves[node] = true;
            }
        };
        each_kind!(K => {
            if K::MOVES_MASS {
                for x in K::list(&self.kinds) {
                    x.nodes().for_each(&mut mark);
                }
            }
        });
        for term in &self.extra_terms {
            term.chambers().iter().for_each(|&k| mark(k));
        }
    }

    /// [`Self::mark_mass_moves`] into a new vector.
    pub(crate) fn mass_moves(&self) -> Vec<bool> {
        let mut moves = vec![false; self.chambers().len()];
        self.mark_mass_moves(&mut moves);
        moves
    }

    /// Test builds: the states declared constant (`constant_states`) have f_i = 0 (without
    /// allocating, as `rhs`: the masses through `mass_moves_scratch`).
    #[inline(always)]
    fn debug_check_constant_states(&self, dy: &[f64]) {
        if cfg!(debug_assertions) {
            // Moved volumes looked up only where dV/dt ≠ 0: linear in the chambers.
            for k in 0..self.chambers().len() {
                let i = k * chamber::STATES + chamber::VOLUME;
                assert!(
                    dy[i] == 0.0 || self.volume_moves(k),
                    "constant state {i} has dV/dt = {}",
                    dy[i]
                );
            }
            let mut moves = self.mass_moves_scratch.borrow_mut();
            if moves.len() == self.chambers().len() {
                self.mark_mass_moves(&mut moves);
                for (k, &m) in moves.iter().enumerate() {
                    let i = k * chamber::STATES + chamber::MASS;
                    assert!(
                        dy[i] == 0.0 || m,
                        "constant state {i} (a closed chamber's mass) has dm/dt = {}",
                        dy[i]
                    );
                }
            }
        }
    }
}

impl OdeSystem for Network {
    /// Chambers first, each as (m, U, V): a volume that no piston or wall moves and the mass of
    /// a closed chamber are constant (`constant_states`), the volume most often.
    const BLOCKS: Option<BlockLayout> = {
        assert!(chamber::VOLUME + 1 == chamber::STATES);
        Some(BlockLayout {
            size: chamber::STATES,
            live: chamber::VOLUME,
        })
    };

    fn dimension(&self) -> usize {
        self.layout.n_states
    }

    fn sparsity(&self) -> Option<crate::sparsity::Pattern> {
        Some(pattern::network_pattern(self))
    }

    /// The quadrature states (`Element::QUADRATURES`: the walls' swept volumes, for check 9
    /// only) and the two accumulators (mass and energy that left: checks 4 and 5, the
    /// `mass_total` / `energy_total` outputs): no derivative reads them. Out of BDF's error test, they are accurate to the BDF formula's truncation
    /// of integrals of controlled states. A swept volume starts at 0: with atol ≪ its scale its
    /// weight 1/(rtol·|y| + atol) set the first step (~10⁻⁷ s on `cantera_wall`, CVODES's
    /// 2.4·10⁻⁴ s) and held the next ones small (docs/performance.md, "BDF steps against
    /// CVODES"); Cantera's reactors have no such state.
    fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
        let l = &self.layout;
        [self.quadrature_states(), l.accumulator_offset..l.n_states]
    }

    /// The volumes of the chambers that no piston or wall bounds: only `Eval::boundary_work` writes
    /// dV/dt, so theirs is 0 (their rows of `network_pattern` are empty, for the same reason);
    /// and the masses of the chambers that no element can fill or empty (no flow link, no
    /// piston, whose bore opens when it leaves: [`Self::mark_mass_moves`]), whose dm/dt is 0
    /// (their rows of `network_pattern` are empty too). Increasing.
    fn constant_states(&self) -> Vec<usize> {
        let mass_moves = self.mass_moves();
        let mut states = Vec::new();
        for (k, &mass_moves) in mass_moves.iter().enumerate() {
            let o = k * chamber::STATES;
            if !mass_moves {
                states.push(o + chamber::MASS);
            }
            if !self.volume_moves(k) {
                states.push(o + chamber::VOLUME);
            }
        }
        states
    }

    /// Mass: every chamber's mass and `mass_left` (`mass_total`, check 4). Every flow leaves one
    /// node and enters another through `transfer`, so the sum of their derivatives is zero
    /// whatever the state. (Energy is not linear in the states when pistons move: their kinetic
    /// energy.)
    fn linear_invariants(&self) -> Vec<Vec<usize>> {
        let mut mass: Vec<usize> = (0..self.chambers().len())
            .map(|i| i * chamber::STATES + chamber::MASS)
            .collect();
        mass.push(self.layout.accumulator_offset);
        vec![mass]
    }

    #[inline(always)]
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        debug_assert_eq!(y.len(), self.layout.n_states);
        debug_assert_eq!(dy.len(), self.layout.n_states);
        self.rhs_evaluations += 1;
        // `&mut self`: no other borrow of the cell exists, so this cannot fail.
        let mut sc = self.scratch.borrow_mut();
        if sc.lean && !self.isothermal {
            // Chambers, reservoirs and the lean kinds (valves) alone (vents and chains of
            // one-way valves),
            // the reservoirs' nodes kept: the same arithmetic without the other kinds' code,
            // whose registers and stack cost a small network's evaluation more than its
            // physics, and with one flag for the three tests.
            self.eval_with::<f64, false>(t, y, dy, &mut sc, &[], true);
            drop(sc);
            self.debug_check_constant_states(dy);
            return;
        }
        drop(sc);
        self.rhs_general(t, y, dy);
        self.debug_check_constant_states(dy);
    }

    /// f(t, y) and J·v in one dual-number evaluation (each state y_i + v_i·ε). The f64
    /// scratch (node states, link flows of the last `rhs`) is left alone.
    fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], dydt: &mut [f64], jv: &mut [f64]) -> bool {
        let n = self.layout.n_states;
        debug_assert!(y.len() == n && v.len() == n && dydt.len() == n && jv.len() == n);
        self.refresh_stale_links();
        let mut d = std::mem::take(&mut self.dual);
        self.size_dual(&mut d);
        for i in 0..n {
            d.y[i] = Dual64::new(y[i], v[i]);
        }
        self.eval(t, &d.y, &mut d.dy, &mut d.sc, &[]);
        for i in 0..n {
            dydt[i] = d.dy[i].re;
            jv[i] = d.dy[i].eps;
        }
        self.dual = d;
        true
    }
}
