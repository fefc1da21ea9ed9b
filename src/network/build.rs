//! Building a network: the state layout, the moving boundaries, and the buffers of the
//! right-hand side sized once.

use std::cell::RefCell;

use super::{
    Boundary, BreakpointCache, DualScratch, Extras, Layout, Network, OrificeLinks, ValveLinks,
};
use crate::components::{Chamber, Orifice, Piston, Reservoir, Valve, Wall, chamber, piston};
use crate::gas::IdealGas;

/// Names of the per-link output (`<name>.mdot`) in order: orifices, then valves.
impl Network {
    pub fn new(
        gas: IdealGas,
        chambers: Vec<Chamber>,
        reservoirs: Vec<Reservoir>,
        orifices: Vec<Orifice>,
        valves: Vec<Valve>,
        pistons: Vec<Piston>,
        walls: Vec<Wall>,
    ) -> Self {
        Self::with_extras(
            gas,
            chambers,
            reservoirs,
            orifices,
            valves,
            pistons,
            walls,
            Extras::default(),
        )
    }

    /// A network with every component kind.
    #[allow(clippy::too_many_arguments)]
    pub fn with_extras(
        gas: IdealGas,
        chambers: Vec<Chamber>,
        reservoirs: Vec<Reservoir>,
        orifices: Vec<Orifice>,
        valves: Vec<Valve>,
        pistons: Vec<Piston>,
        walls: Vec<Wall>,
        extras: Extras,
    ) -> Self {
        let nc = chambers.len();
        let piston_offset = nc * chamber::STATES;
        let wall_offset = piston_offset + pistons.len() * piston::STATES;
        let inertance_offset = wall_offset + walls.len();
        let accumulator_offset = inertance_offset + extras.inertance_valves.len();
        let layout = Layout {
            n_states: accumulator_offset + 2,
            piston_offset,
            wall_offset,
            inertance_offset,
            accumulator_offset,
        };
        let mut boundaries = Vec::new();
        for (j, p) in pistons.iter().enumerate() {
            let xs = piston_offset + j * piston::STATES + piston::POSITION;
            if p.behind < nc {
                boundaries.push(Boundary {
                    chamber: p.behind,
                    state: xs,
                    factor: p.area.value,
                    area_m2: p.area.value,
                });
            }
            if p.ahead < nc {
                boundaries.push(Boundary {
                    chamber: p.ahead,
                    state: xs,
                    factor: -p.area.value,
                    area_m2: p.area.value,
                });
            }
        }
        for (k, w) in walls.iter().enumerate() {
            let s = wall_offset + k;
            if w.left < nc {
                boundaries.push(Boundary {
                    chamber: w.left,
                    state: s,
                    factor: 1.0,
                    area_m2: wall_area_scale(w),
                });
            }
            if w.right < nc {
                boundaries.push(Boundary {
                    chamber: w.right,
                    state: s,
                    factor: -1.0,
                    area_m2: wall_area_scale(w),
                });
            }
        }
        // Sorted by chamber (stable: file order within a chamber) for O(1) lookup per chamber.
        boundaries.sort_by_key(|b| b.chamber);
        let mut boundary_start = vec![0; nc + 1];
        for b in &boundaries {
            boundary_start[b.chamber + 1] += 1;
        }
        for i in 0..nc {
            boundary_start[i + 1] += boundary_start[i];
        }
        let exited = vec![false; pistons.len()];
        let mut net = Network {
            gas,
            chambers,
            reservoirs,
            orifices,
            valves,
            pistons,
            walls,
            mass_flows: extras.mass_flows,
            restrictors: extras.restrictors,
            tubes: extras.tubes,
            inertance_valves: extras.inertance_valves,
            isothermal: extras.isothermal,
            exited,
            boundaries,
            boundary_start,
            layout,
            segment_start_s: 0.0,
            rhs_evaluations: 0,
            extra_terms: Vec::new(),
            scratch: RefCell::default(),
            dual: DualScratch::default(),
            breakpoints: BreakpointCache::default(),
            orifice_links: OrificeLinks::default(),
            valve_links: ValveLinks::default(),
            mass_moves_scratch: RefCell::default(),
        };
        net.ensure_scratch();
        net.refresh_orifice_links();
        net.refresh_valve_links();
        net
    }

    pub(super) fn ensure_scratch(&mut self) {
        let nn = self.chambers.len() + self.reservoirs.len();
        let nl = self.n_links();
        let more = self.has_more_kinds();
        let no_orifices = self.orifices.is_empty();
        self.scratch.get_mut().ensure(nn, nl, more, no_orifices);
        let nc = self.chambers.len();
        let moves = self.mass_moves_scratch.get_mut();
        if cfg!(debug_assertions) && moves.len() != nc {
            *moves = vec![false; nc];
        }
    }
}

/// The area a wall's desync threshold is scaled by: its largest area, m².
fn wall_area_scale(w: &Wall) -> f64 {
    w.area_m2
        .all_values()
        .iter()
        .fold(0.0_f64, |a, &b| a.max(b.abs()))
}
