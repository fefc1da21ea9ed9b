//! Piston: a rigid body of mass m sliding in a bore of area A between a node `behind` (whose
//! volume grows by A·x) and a node `ahead` (whose volume shrinks by A·x). BlasterSim's
//! projectile/plunger equation of motion (BlasterSim verification §3.1.4, eq. 3.3, extended):
//!   m·dv/dt = A·(p_behind − p_ahead) − k·(x − x_spring) − c·v + F_friction,   dx/dt = v
//! Friction is given as pressures on the area (BlasterSim's convention): while moving,
//! F_friction = −sign(v)·A·p_f,dynamic; at rest the piston stays put unless the driving force
//! exceeds A·p_f,static, and then breaks free against the static value.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Piston {
    pub name: String,
    pub behind: usize,
    pub ahead: usize,
    pub area_m2: f64,
    pub mass_kg: f64,
    pub x0_m: f64,
    pub v0_m_per_s: f64,
    pub x_exit_m: Option<f64>,
    pub friction_static_pa: f64,
    pub friction_dynamic_pa: f64,
    pub spring_stiffness_n_per_m: f64,
    pub spring_x0_m: f64,
    pub damping_n_s_per_m: f64,
}

pub const POSITION: usize = 0;
pub const VELOCITY: usize = 1;
pub const STATES: usize = 2;

/// The forces on a piston at one instant, N.
#[derive(Clone, Copy, Debug)]
pub struct Forces {
    pub acceleration_m_per_s2: f64,
    /// Friction force (opposes motion); its power −F·v is dissipated.
    pub friction_n: f64,
}

impl Piston {
    #[inline]
    pub fn spring_force_n(&self, x_m: f64) -> f64 {
        -self.spring_stiffness_n_per_m * (x_m - self.spring_x0_m)
    }

    #[inline]
    pub fn spring_energy_j(&self, x_m: f64) -> f64 {
        let d = x_m - self.spring_x0_m;
        0.5 * self.spring_stiffness_n_per_m * d * d
    }

    #[inline]
    pub fn forces(&self, x_m: f64, v_m_per_s: f64, p_behind_pa: f64, p_ahead_pa: f64) -> Forces {
        let drive = self.area_m2 * (p_behind_pa - p_ahead_pa) + self.spring_force_n(x_m)
            - self.damping_n_s_per_m * v_m_per_s;
        let friction = if v_m_per_s > 0.0 {
            -self.area_m2 * self.friction_dynamic_pa
        } else if v_m_per_s < 0.0 {
            self.area_m2 * self.friction_dynamic_pa
        } else {
            let stat = self.area_m2 * self.friction_static_pa;
            if drive.abs() <= stat {
                -drive // stuck: static friction balances the drive exactly
            } else {
                -drive.signum() * stat
            }
        };
        Forces {
            acceleration_m_per_s2: (drive + friction) / self.mass_kg,
            friction_n: friction,
        }
    }
}
