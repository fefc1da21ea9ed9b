//! Backward differentiation formulas of order 1–5 in Nordsieck form, as CVODE/CVODES integrate
//! Cantera's reactor networks (Byrne & Hindmarsh, ACM TOMS 1 (1975); Hindmarsh et al.,
//! "SUNDIALS", ACM TOMS 31 (2005); the CVODE user guide, "Mathematical considerations").
//!
//! The history is the Nordsieck array z_j = h^j·y^(j)(t_n)/j!, j = 0..q, of the interpolating
//! polynomial, in the fixed-leading-coefficient form: a step predicts z by the Pascal triangle,
//! then solves for the correction Δ in  Δ − γ·f(t_{n+1}, z_0 + Δ) + z_1/ℓ_1 = 0,  γ = h/ℓ_1,
//! by a modified Newton iteration with M = I − γJ, and updates z_j += ℓ_j·Δ. The ℓ_j and the
//! error constants come from the step history (τ) exactly as CVODE's `cvSetBDF`/`cvSetTqBDF`, so
//! variable steps keep the order. Everything CVODE decides is decided here by its rules and
//! constants:
//! - Newton: at most 3 iterations, convergence rate estimate with CRDOWN = 0.3, divergence when
//!   a correction grows by RDIV = 2, test ‖Δ‖·min(1, rate) ≤ 0.1/tq₂ in the weighted RMS norm
//!   with weights 1/(rtol·|y_i| + atol).
//! - Pure quadratures — the states the system names in `OdeSystem::quadratures`, on which no
//!   derivative depends (the network's mass and energy accumulators and its walls' swept
//!   volumes) — are kept out of every
//!   norm of the adaptive method with a direct linear solver (weight 0, the RMS over the other
//!   states; the Krylov path keeps them; `jacobian_radius_bound` leaves them out), as CVODES keeps quadrature
//!   variables out of its error test by default (`errconQ = SUNFALSE`, cvodes.c; CVODES guide,
//!   `CVodeSetQuadErrCon`). They never feed back, so their error cannot move the other states;
//!   an accumulator starts at 0, and with atol ≪ its scale its weight 1/(rtol·|y| + atol) was
//!   huge early in a run: it set a first step ~10⁻⁷ s and held the step small while it was
//!   small against the states it integrates (measured: `docs/performance.md`, "BDF steps
//!   against CVODES"; a wall's swept volume did the same on `cantera_wall`, same section).
//!   Their value at a step is still the BDF formula's.
//! - Constant states — those the system names in `OdeSystem::constant_states` (f_i ≡ 0: the
//!   network's fixed chamber volumes and closed chambers' masses) whose row of J's pattern is
//!   empty — stay out of the direct solve (`Peel`) and out of the predictor and corrector
//!   (`Live`) whenever the direct solve is peeled (not on the Krylov path): their corrections
//!   and higher Nordsieck columns are exactly 0, so the results are the same bits as without
//!   the declaration. On small systems where the split would not halve the LU, the small LU
//!   leaves them out through a selection (`SmallSel`; their columns drop out, x being 0: the
//!   same results to round-off), and the passes skip them where that saves operations.
//! - On small systems without that split, trailing states with an empty column (quadratures)
//!   are solved from their rows after a smaller LU of the leading ones (`Direct::tail`).
//! - Iteration matrix M = I − γJ rebuilt and factored (LU with partial pivoting: as a band
//!   matrix below `SPARSE_MIN_STATES` states and for narrow bands (chains), else `faer`'s sparse
//!   LU over the pattern of M with the column order and symbolic analysis computed once, or
//!   `faer`'s dense LU; preallocated workspaces) on the first
//!   step, every 20 steps (MSBP), when γ changed by more than 30 % (DGMAX), and after any
//!   failure; the Jacobian itself is re-evaluated on the first step, every 50 steps (MSBJ),
//!   after a Newton convergence failure with a Jacobian that was not fresh, and after a
//!   failure of the Newton iteration of any other cause; otherwise the saved J is reused with
//!   the new γ (and the correction is scaled by 2/(1 + γ/γ_M) when γ drifted).
//! - Local error test ‖Δ‖·tq₂ ≤ 1; on failure the step shrinks by 1/((6·dsm)^(1/(q+1)) + 1e-6)
//!   (at least 0.1, at most 0.2 after two failures), after three failures the order drops, at
//!   order 1 the history is reloaded; after Newton failures the step is quartered.
//! - Order and step selection after a success: the ratios η for orders q−1, q, q+1 from the
//!   error estimates (biases 6, 6, 10), the largest wins, an order change is considered only
//!   after q+1 steps at the same order, a change below 1.5× is not made, growth is at most
//!   10⁴ on the first step and 10 afterwards, and no growth right after a failure.
//!
//! Jacobian: stored as its values over the system's sparsity pattern with the diagonal added
//! (compressed sparse columns; the dense pattern when the system gives none). Exact columns
//! (`OdeSystem::jvp`) or finite differences, CVODE's increments σ_j = max(√ε·|y_j|, σ_min/w_j),
//! with the columns that the system's sparsity pattern (`OdeSystem::sparsity`, see
//! `crate::sparsity`) shows to be structurally orthogonal perturbed together (one right-hand
//! side per colour).
//!
//! Fixed-order, fixed-step variants `bdf1`..`bdf5` (for order-of-accuracy tests) take the
//! driver's step with order k throughout: no error test and no order or step selection. Their
//! start: `bdf1` starts from z = (y₀, h·f(y₀)) as CVODE does; `bdf2`..`bdf5` take k classical
//! RK4 steps (local error O(h⁵), below the O(h^k) global error of BDF-k, k ≤ 5, in any fixed
//! number) and build the Nordsieck array of the degree-k polynomial through those k + 1 points,
//! after which every step is exactly the classical BDF-k formula (on a uniform grid). Their
//! Newton iteration is converged to 1e-13 relative (up to 8 iterations) so that only the
//! truncation error of the formula is measured.
//!
//! Dense output inside the last step evaluates the Nordsieck polynomial (CVODE's `CVodeGetDky`
//! with k = 0); during an RK4 start step it recomputes a shorter RK4 step. The committed
//! history, the saved Jacobian and every counter are serde data; the LU factors are not: they
//! are recomputed from the saved J and γ when needed (same inputs, same bits), so a restored
//! integrator continues bit for bit. The working copy of a step is separate from the committed
//! history, so an attempt that the driver refuses changes nothing.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::lu::partial_pivoting::{factor as lu_factor, solve as lu_solve};
use faer::perm::PermRef;
use faer::sparse::linalg::lu::{LuSymbolicParams, NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, Mat, MatMut, Par};
use serde::{Deserialize, Serialize};

use super::krylov::{Gmres, GmresFailure, GmresLimits, Ilu0, KrylovStats};
use super::rk4::Rk4;
use super::{Integrator, JacobianSource, SolverError, StepControl, check_finite, ensure_len};
use crate::ode::OdeSystem;
use crate::sparsity::{Coloring, Pattern, bandwidths_under, newton_groups, reverse_cuthill_mckee};

use super::band::{FillMap, band_factor, band_fill_mapped, band_solve};

pub const MAX_ORDER: usize = 5;

// CVODE's constants (cvode.c).
const ETAMX1: f64 = 10000.0;
const ETAMX2: f64 = 10.0;
const ETAMX3: f64 = 10.0;
const ETAMXF: f64 = 0.2;
const ETAMIN: f64 = 0.1;
const ETACF: f64 = 0.25;
const THRESH: f64 = 1.5;
const ADDON: f64 = 1e-6;
const BIAS1: f64 = 6.0;
const BIAS2: f64 = 6.0;
const BIAS3: f64 = 10.0;
const SMALL_NST: u64 = 10;
const MXNEF: u32 = 7;
const MXNEF1: u32 = 3;
const SMALL_NEF: u32 = 2;
const MXNCF: u32 = 10;
const LONG_WAIT: usize = 10;
const CRDOWN: f64 = 0.3;
const DGMAX: f64 = 0.3;
const RDIV: f64 = 2.0;
const MSBP: u64 = 20;
const MSBJ: u64 = 50;
const MAXCOR: u32 = 3;
const NLSCOEF: f64 = 0.1;
// Fixed-order variants: the Newton iteration is converged far below the truncation error.
const FIXED_MAXCOR: u32 = 8;
const FIXED_RTOL: f64 = 1e-13;
const FIXED_ATOL: f64 = 1e-300;
/// RK4 substeps per start step of the fixed-order variants.
const START_SUBSTEPS: usize = 4;
/// Below this many states M = I − γJ is never factored sparsely (`LinearSolver::Auto`).
/// Measured (`cargo bench --bench scale -- --crossover`, bdf2 step on chains): the sparse LU is
/// already 0.86× the dense one at 10 states and 0.5× at 76. Below 10 states (the shipped
/// models: 5–8) `Auto` takes the band LU with the full band, a plain unblocked LU: on the
/// 5-state vent (callgrind) faer's dense LU cost ~1.7k instructions per solve, 36 % of the
/// BDF solve.
pub const SPARSE_MIN_STATES: usize = 10;

/// How the iteration matrix M = I − γJ is factored. Not part of the saved state: a restored
/// integrator uses `Auto`, which depends on n and the pattern only, so it continues bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolver {
    /// Band below `SPARSE_MIN_STATES` states or when the band is narrow (`BAND_MAX`) in the
    /// states' own order or (below `BAND_RCM_MAX_STATES`) in reverse Cuthill–McKee order;
    /// else Krylov from `KRYLOV_MIN_STATES` states when a direct LU would fill M
    /// (`fill_ratio` ≥ `KRYLOV_MIN_FILL`: 2-D grids); else sparse when the pattern is at most
    /// half full, else dense.
    #[default]
    Auto,
    /// Dense LU with partial pivoting (faer).
    Dense,
    /// Sparse LU (faer: COLAMD column order and symbolic analysis once per pattern, numeric
    /// refactorization with partial pivoting when J or γ changes).
    Sparse,
    /// Band LU with partial pivoting in the pattern's own order (LAPACK's `dgbtf2`/`dgbtrs`
    /// algorithm, Anderson et al., *LAPACK Users' Guide*, §5.3.2), for patterns of small
    /// bandwidth (chains).
    Banded,
    /// No factorization: restarted GMRES on M preconditioned by ILU(0) of M (see
    /// `super::krylov`), with CVODE's linear tolerance; linear cost per step on patterns whose
    /// direct LU fills superlinearly (2-D grids). Each solution is corrected onto the system's
    /// linear invariants (`OdeSystem::linear_invariants`: the network's mass), which a direct
    /// solve keeps to round-off and GMRES alone only to its tolerance.
    Krylov,
}

/// `Auto` factors M as a band matrix from `SPARSE_MIN_STATES` states on when its lower plus
/// upper bandwidth is at most this (a chain of tanks: 5 + 5). Measured on the 20-tank chain
/// (62 states; callgrind, `plenum run --repeat 20`): faer's sparse LU spends
/// ~150k instructions per factorization and ~11k per solve there, about 40 % of the whole
/// BDF solve; the band LU does a factorization in n·kl·(kl + ku) and a solve in n·(2kl + ku)
/// multiply-adds with no symbolic bookkeeping.
pub const BAND_MAX: usize = 16;

/// `Auto` takes the band LU in reverse Cuthill–McKee order only below this many states in the
/// LU (the coupled ones, see `Peel`); above it, the sparse LU. Measured on chains with pistons
/// (bdf2 step, idle machine, CPU 0, docs/performance.md "Band or sparse LU on long chains"):
/// the reordered band is 6–7 % faster at 1.5k and 15k states,
/// even at ~50k (2.28 against 2.30 ms) and 13–29 % slower at 100k–150k, where its serial
/// substitutions through memory cost more than the sparse LU's bookkeeping.
pub const BAND_RCM_MAX_STATES: usize = 50_000;

/// `Auto` takes the Krylov path from this many states when `fill_ratio` ≥ `KRYLOV_MIN_FILL`.
/// Measured on the scale bench's grids (`--emit grid SIZE`, `plenum run … --set
/// solver.t_end=0.5 --set solver.rtol=1e-6`, sparse LU against Krylov, docs/performance.md
/// "Krylov BDF on grids"): Krylov 1.4× faster at 52 states, 2.1× at 112, 2.7× at 198, 4.0× at
/// 373, 4–5× at 1k and 10k; the fixed-step bench's bdf2 step 1.2× at 112 states. Below 100
/// states the gain is small and the direct solve (exact Newton systems) is kept.
pub const KRYLOV_MIN_STATES: usize = 100;

/// Least structural fill ratio (`fill_ratio`) at which `Auto` takes the Krylov path: a chain
/// or tree (1.0) factors without fill and its band or sparse LU is faster than GMRES (1.4–1.8×
/// on chains, docs/performance.md "Krylov BDF on grids"); a 2-D grid measures 3.3 at 1k
/// states, 10.6 at 100k.
pub const KRYLOV_MIN_FILL: f64 = 2.0;

/// Most values the band or dense LU may store (2^27 f64 = 1 GiB). A band as wide as the
/// system (a chain with pistons in its own order) or a dense M on a large network would ask
/// for n·(2kl + ku + 1) or n² values — ~61 GB at 50k states — and the allocation would abort
/// the process; above this the setup fails with a message instead.
pub const MAX_FACTOR_VALUES: usize = 1 << 27;

impl LinearSolver {
    /// The `[solver] linear_solver` value that selects it.
    pub fn setting(self) -> &'static str {
        match self {
            LinearSolver::Auto => "auto",
            LinearSolver::Dense => "dense",
            LinearSolver::Sparse => "sparse",
            LinearSolver::Banded => "band",
            LinearSolver::Krylov => "krylov",
        }
    }
}

/// The error of a band or dense LU of `values` values (None: more than `usize` holds) for n
/// states, above `MAX_FACTOR_VALUES`.
fn too_large(linear: LinearSolver, band: bool, n: usize, values: Option<usize>) -> SolverError {
    SolverError::FactorTooLarge {
        linear,
        band,
        n,
        values: values.unwrap_or(usize::MAX),
    }
}

/// The message of `SolverError::FactorTooLarge`.
pub(crate) fn write_factor_too_large(
    f: &mut std::fmt::Formatter<'_>,
    linear: LinearSolver,
    band: bool,
    n: usize,
    values: usize,
) -> std::fmt::Result {
    write!(
        f,
        "linear_solver = \"{}\": the {} LU of M = I − γJ for {n} states would store ",
        linear.setting(),
        if band { "band" } else { "dense" }
    )?;
    if values == usize::MAX {
        f.write_str("more values than memory can address")?;
    } else {
        let gib = values as f64 * 8.0 / (1u64 << 30) as f64;
        write!(f, "{values} values ({gib:.1} GiB)")?;
    }
    write!(
        f,
        ", above the limit of {MAX_FACTOR_VALUES} values (1 GiB); use linear_solver = \"auto\" \
         or \"sparse\""
    )
}

/// Structural fill of a direct factorization of a pattern: the Cholesky factor of the pattern
/// of M + Mᵀ under faer's AMD ordering (symbolic only), over nnz of its upper triangle. The
/// sparse LU pivots and orders by COLAMD, so this is an estimate of its fill, independent of
/// the states' order. `None` if faer's analysis fails (out of memory). `Auto` takes the Krylov
/// path at `KRYLOV_MIN_FILL`; the scale bench (`--krylov`) and `tests/solvers/krylov_bdf.rs` print it.
pub fn fill_ratio(p: &Pattern) -> Option<f64> {
    use faer::Side;
    use faer::sparse::linalg::SupernodalThreshold;
    use faer::sparse::linalg::cholesky::{
        CholeskySymbolicParams, SymmetricOrdering, factorize_symbolic_cholesky,
    };
    let n = p.n;
    let mut entries = Vec::with_capacity(p.nonzeros() + n);
    for j in 0..n {
        entries.push((j, j));
        for &i in p.column(j) {
            entries.push((i.max(j), i.min(j)));
        }
    }
    let upper = Pattern::from_entries(n, entries);
    let a = SymbolicSparseColMatRef::new_checked(n, n, &upper.col_start, None, &upper.rows);
    let params = CholeskySymbolicParams {
        supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
        ..Default::default()
    };
    let sym = factorize_symbolic_cholesky(a, Side::Upper, SymmetricOrdering::Amd, params).ok()?;
    Some(sym.len_val() as f64 / upper.nonzeros() as f64)
}

/// Tolerances of the adaptive method (scalars, as in the model file's `[solver]`), set by
/// [`Integrator::configure`] from the driver's [`StepControl`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tolerances {
    pub rtol: f64,
    pub atol: f64,
    pub max_step: Option<f64>,
    pub initial_step: Option<f64>,
    /// Where the Newton Jacobian comes from (`[solver] jacobian`).
    #[serde(default)]
    pub jacobian: JacobianSource,
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances::from(&StepControl::default())
    }
}

impl From<&StepControl> for Tolerances {
    fn from(c: &StepControl) -> Self {
        Tolerances {
            rtol: c.rtol,
            atol: c.atol,
            max_step: c.max_step,
            initial_step: c.initial_step,
            jacobian: c.jacobian,
        }
    }
}

/// Work counters (CVODE's nst, netf, ncfn, nje, nsetups, nni, nfeDQ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub steps: u64,
    pub error_test_failures: u64,
    pub convergence_failures: u64,
    pub jacobian_evaluations: u64,
    pub jacobian_rhs_evaluations: u64,
    pub factorizations: u64,
    pub newton_iterations: u64,
    /// Steps taken at each order (index = order).
    pub steps_at_order: [u64; MAX_ORDER + 1],
}

/// Everything a step changes: the committed copy is serialized, the working copy is scratch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct History {
    started: bool,
    tn: f64,
    q: usize,
    qprime: usize,
    qwait: usize,
    h: f64,
    hprime: f64,
    hscale: f64,
    eta: f64,
    etamax: f64,
    tau: [f64; MAX_ORDER + 2],
    l: [f64; MAX_ORDER + 1],
    tq: [f64; 6],
    rl1: f64,
    gamma: f64,
    gammap: f64,
    gamrat: f64,
    crate_: f64,
    acnrm: f64,
    saved_tq5: f64,
    nst: u64,
    nstlp: u64,
    nstlj: u64,
    /// Nordsieck array: column j at `zn[j*n..(j+1)*n]`, j = 0..=MAX_ORDER (the last one also
    /// keeps Δ of the step before a possible order increase, as CVODE's zn[qmax]).
    zn: Vec<f64>,
    /// Saved Jacobian: its values over the pattern of M = I − γJ (the system's sparsity
    /// pattern with the diagonal added), compressed sparse columns; empty before the first
    /// step. `jac_count`: how many have been computed (identifies it).
    jac: Vec<f64>,
    jac_count: u64,
    /// Fixed-order start: the points so far (times and states, oldest first).
    start_t: [f64; MAX_ORDER + 1],
    start_y: Vec<f64>,
    start_len: usize,
    /// The inputs of the ℓ_j and error constants held here (`set_coefficients`).
    #[serde(skip)]
    coef_key: CoefKey,
}

/// The step (q, h) of the ℓ_j and error constants held here when they were computed on a
/// uniform history (τ_1..τ_q all equal to h; q = 0: none), and whether tq₁ and tq₃ (computed
/// only when qwait = 1) were. The same inputs give the same outputs, so on a run of equal steps
/// (about half the steps of a solve on the small networks) the computation is skipped. Not
/// serialized: a restored history recomputes on its first step (same bits). Always equal to
/// another key, so that histories compare by their data only.
#[derive(Clone, Copy, Debug, Default)]
struct CoefKey {
    q: usize,
    h: f64,
    with_tq13: bool,
}

impl PartialEq for CoefKey {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl History {
    /// `self = other` without allocating once the vectors have their sizes.
    fn assign(&mut self, o: &History) {
        self.assign_copy(o, None, true);
    }

    /// `assign` between the committed and the working copy of one run (`fixed`: the
    /// integrator's), of what such a run can have written since the last full copy (see
    /// `assign_copy`).
    #[inline(always)]
    fn assign_live(&mut self, o: &History, fixed: Option<usize>) {
        self.assign_copy(o, fixed, false);
    }

    /// `assign` (`full`), or between the committed and the working copy of one run of the fixed
    /// order k (`fixed = Some(k)`) or of the adaptive method (`None`): only what such a run can
    /// have written since the last full copy. A fixed order's Nordsieck columns
    /// k + 1..=MAX_ORDER are never written (predict, correct, rescale and the start all stop
    /// at column q = k), and the start points are never written once the start is over
    /// (start_len > k in both; a restart sets start_len to 0 first). On 10⁵ states the full
    /// copy moved 9n values twice a step for bdf2 where 3n change. The adaptive method never
    /// writes the start points (times, states, count) at all: both copies keep those of the
    /// last full copy.
    // Inlined into `commit` (itself inlined into the driver's dispatch), as `nls` into the
    // step: a call's entry and exit cost ~20 instructions a step on the small networks.
    #[inline(always)]
    fn assign_copy(&mut self, o: &History, fixed: Option<usize>, full: bool) {
        let History {
            started,
            tn,
            q,
            qprime,
            qwait,
            h,
            hprime,
            hscale,
            eta,
            etamax,
            tau,
            l,
            tq,
            rl1,
            gamma,
            gammap,
            gamrat,
            crate_,
            acnrm,
            saved_tq5,
            nst,
            nstlp,
            nstlj,
            zn,
            jac,
            jac_count,
            start_t,
            start_y,
            start_len,
            coef_key,
        } = self;
        *started = o.started;
        *tn = o.tn;
        *q = o.q;
        *qprime = o.qprime;
        *qwait = o.qwait;
        *h = o.h;
        *hprime = o.hprime;
        *hscale = o.hscale;
        *eta = o.eta;
        *etamax = o.etamax;
        *tau = o.tau;
        *l = o.l;
        *tq = o.tq;
        *rl1 = o.rl1;
        *gamma = o.gamma;
        *gammap = o.gammap;
        *gamrat = o.gamrat;
        *crate_ = o.crate_;
        *acnrm = o.acnrm;
        *saved_tq5 = o.saved_tq5;
        *nst = o.nst;
        *nstlp = o.nstlp;
        *nstlj = o.nstlj;
        match fixed {
            Some(k) if !full && zn.len() == o.zn.len() => {
                let live = (k + 1) * (o.zn.len() / (MAX_ORDER + 1));
                zn[..live].copy_from_slice(&o.zn[..live]);
            }
            None if zn.len() == o.zn.len() => zn.copy_from_slice(&o.zn),
            _ => zn.clone_from(&o.zn),
        }
        // The Jacobian is copied only when it is another one: `jac_count` names its contents
        // (every evaluation, even a failed one, takes a new number before writing a column).
        if *jac_count != o.jac_count || jac.len() != o.jac.len() {
            jac.clone_from(&o.jac);
        }
        *jac_count = o.jac_count;
        *coef_key = o.coef_key;
        if !full && fixed.is_none() {
            return;
        }
        *start_t = o.start_t;
        // bdf1 starts from its one point (`initialize`) and never writes a start point; the
        // others stop writing them once the start is over.
        let start_over = !full
            && fixed.is_some_and(|k| k == 1 || (*start_len == o.start_len && o.start_len > k));
        if !start_over || start_y.len() != o.start_y.len() {
            start_y.clone_from(&o.start_y);
        }
        *start_len = o.start_len;
    }
}

/// Scratch: vectors, the LU workspace and the column groups. Never serialized; a clone starts
/// with an empty one (sized again on its first step).
#[derive(Default)]
struct Workspace {
    n: usize,
    /// The step being attempted is an RK4 start step.
    starter: bool,
    inc: Vec<f64>,
    /// Error weights 1/(rtol·|y_i| + atol); 0 for the quadratures (`quad`).
    ewt: Vec<f64>,
    /// The system's quadratures (`OdeSystem::quadratures`: the network's accumulators)
    /// whatever the path: `jacobian_radius_bound` leaves them out.
    quad: [std::ops::Range<usize>; 2],
    /// The adaptive method keeps `quad` out of the error norms (`set_weights`).
    quad_out: bool,
    /// Per state, the bits that `set_weights` keeps of its weight: none for the quadratures
    /// when `quad_out` (weight +0), all for the others (a select without a branch, which the
    /// compiler vectorizes two states at a time).
    weight_mask: Vec<u64>,
    /// Number of the states in the norms (≥ 1, as a float): the divisor of the weighted RMS
    /// norms.
    n_err: f64,
    acor: Vec<f64>,
    y: Vec<f64>,
    ftemp: Vec<f64>,
    tempv: Vec<f64>,
    fpert: Vec<f64>,
    ypert: Vec<f64>,
    /// f(t, y) as the system's `jvp` returns it beside J·v (unused: `ftemp` has it already).
    fjvp: Vec<f64>,
    /// (Jacobian id, γ bits) of the factored M = I − γJ.
    lu_tag: Option<(u64, u64)>,
    groups: Option<(Pattern, Coloring)>,
    /// Pattern of M (the system's with the diagonal): where J's values are stored.
    m_pattern: Option<Pattern>,
    /// For each entry of the system's pattern its position in `m_pattern`.
    jpos: Vec<usize>,
    /// Direct paths: the LU of M or of its coupled block, and the states solved outside it
    /// (`Peel`; `None`: the LU is over M).
    direct: Direct,
    peel: Option<Box<Peel>>,
    /// Krylov path: ILU(0) of M (and J's pattern for M·u), GMRES and its counters.
    krylov: Option<Box<KrylovWs>>,
    /// Scratch of n for the row sums of `jacobian_radius_bound`.
    rowsum: Vec<f64>,
    /// The restored Jacobian did not fit the pattern: evaluate a new one at the next setup.
    force_jac: bool,
    /// The system's constant states that the direct solve leaves out (`Peel::constant`), and
    /// whether the committed history is to be checked against them before the next attempt (a
    /// new workspace, a restored state, a fixed-order start: `check_constant_states`).
    constant: Vec<usize>,
    check_const: bool,
    /// The states the predictor and the corrector run over when some are left out
    /// (`constant`), increasing; `None`: all n. The constant states' higher Nordsieck
    /// columns, corrections and increments stay exactly 0: skipped, the same bits.
    live: Option<Live>,
    /// The Newton iteration runs fused with `Peel` (`newton_passes::<FUSED>`): the coupled
    /// states are exactly `live`'s groups (`Peel::groups`), there are no first states, and the
    /// other live states (`Live::rest`) are `Peel`'s last states. The residual of the coupled
    /// states is then written straight into the LU's right-hand side (`Peel::b`) and the update
    /// reads their solution there: no gather and no scatter per solve.
    fused: bool,
    /// The working history equals the committed one (set by `commit`'s copy, cleared by
    /// anything that changes either alone): the next attempt need not copy it again.
    trial_synced: bool,
    rk4: Rk4,
}

/// The direct solvers' factors and scratch (see `Workspace::direct`), apart from the rest of
/// the workspace so that they are borrowed beside M's pattern and the right-hand side.
#[derive(Default)]
struct Direct {
    /// The band is in reverse Cuthill–McKee order (through `band_perm`, or `Peel::core`).
    reordered: bool,
    lu: Option<Mat<f64>>,
    rhs: Option<Mat<f64>>,
    perm: Vec<usize>,
    perm_inv: Vec<usize>,
    mem: Option<MemBuffer>,
    /// Position of each diagonal entry in `m_pattern`.
    diag: Vec<usize>,
    /// Factor M sparsely (else densely).
    sparse: bool,
    /// Sparse path: M's values, the symbolic and numeric factors, their workspace.
    m_vals: Vec<f64>,
    symbolic: Option<SymbolicLu<usize>>,
    numeric: NumericLu<usize, f64>,
    sp_mem: Option<MemBuffer>,
    /// Band path: (kl, ku) of M's pattern, the factors in LAPACK band storage (2kl + ku + 1
    /// rows per column, column-major) and the row interchanges.
    band: Option<(usize, usize)>,
    ab: Vec<f64>,
    /// Band path (not `small`): where each of J's values (over M's pattern, through `Peel::src`
    /// for the coupled block) goes in `ab`, for `band_fill_mapped`.
    fill_map: Option<FillMap>,
    ipiv: Vec<usize>,
    /// Nonzero extents of the band factors' columns (see `band_factor`).
    band_counts: Vec<usize>,
    /// Band path for n ≤ `SMALL_MAX` in the states' own order: the same LU in a fixed-size
    /// dense array (`small_factor`), column-major, with its row interchanges.
    small: bool,
    small_lu: [[f64; SMALL_MAX]; SMALL_MAX],
    small_piv: [usize; SMALL_MAX],
    /// Small path: the last `tail` states have an empty column off the diagonal (the
    /// quadratures: accumulators, swept volumes), so M is [M_CC 0; M_TC D_T]: the LU runs
    /// over the leading n − tail states and each tail state follows from its row
    /// (`small_tail`). Their rows stay in `small_lu` below the LU's (`small_lu` writes them,
    /// the elimination never reaches them), their diagonals M_qq in `tail_d`. The general
    /// `Peel` does the same through gathers and index lists, which on the wall cost more than
    /// its 9 → 6 LU saved (370.7k → 389.4k instructions a bdf solve).
    tail: usize,
    tail_d: [f64; SMALL_MAX],
    /// Small path: which LU it runs (`small_kind`): N = n − tail states in their own order, or
    /// `SMALL_SEL` + N with the constant states left out (`sel`).
    small_kind: usize,
    /// Small path without a `Peel`, when the system has constant states with an empty row
    /// (a closed chamber's mass, a fixed volume): the LU runs over the N others before the
    /// tail only, through this map (the general `Peel` costs more than it saves here).
    sel: SmallSel,
    /// Band path in a reordered numbering (`reverse_cuthill_mckee`; empty: the states' own
    /// order): the state at each band position, each state's band position, and the right-hand
    /// side gathered into that order.
    band_perm: Vec<usize>,
    band_pos: Vec<usize>,
    band_rhs: Vec<f64>,
}

struct KrylovWs {
    ilu: Ilu0,
    gmres: Gmres,
    stats: KrylovStats,
    /// The system's linear invariants (state sets whose sum it conserves) and, per set, the
    /// sum of the right-hand side being solved.
    invariants: Vec<Vec<usize>>,
    inv_b: Vec<f64>,
    /// The weights of the largest set (`correct_onto_invariants`' scratch).
    inv_w: Vec<f64>,
    /// The quadratures, out of the norms (weight 0) and so out of GMRES's weighted space: each
    /// q with its row of J as (column, position in J's values), and b_q of the solve. Their
    /// columns are empty (nothing depends on them), so M's row q gives them exactly:
    /// x_q = b_q + γ·Σ_j J_qj·x_j.
    quad_rows: Vec<(usize, Vec<(usize, usize)>)>,
    quad_b: Vec<f64>,
}

/// The direct solvers' split of M = I − γJ by its pattern (`Peel::of`): the "first" states,
/// whose row of M has no entry off the diagonal (x_i = b_i/M_ii before anything else; their
/// columns then move to the right-hand side of the others), and, of the others, the "last"
/// states, whose column has none (x_j from row j after the others). The LU runs over the
/// remaining, coupled states only. Ordered first, coupled, last, M is block lower triangular,
/// [D_F 0 0; M_CF M_CC 0; M_LF M_LC D_L] (a last state's row cannot hold another last state:
/// that one's column would not be empty), so the split is exact. On the 20-tank chain the 20
/// fixed volumes (dV/dt ≡ 0) and the 2 accumulators leave the band, 62 → 40 states, 5/5 → 3/3.
/// The system's constant states with an empty row (`OdeSystem::constant_states`: those fixed
/// volumes) are first states whose solution is their b unchanged (M_ii = 1) and always 0 (f_i
/// ≡ 0 and their Nordsieck columns stay 0, so nothing moves): they are left out altogether
/// (`constant`), which keeps the same bits and saves a division and a test each per solve.
/// Built once per pattern in `prepare`; nothing here is serialized.
#[derive(Default)]
struct Peel {
    /// The coupled states, increasing or in the band's order (`reorder`); the LU's state k is
    /// `core[k]`.
    core: Vec<usize>,
    /// M's pattern over `core`, renumbered 0..core.len(), and per entry its position in J's
    /// values (M's pattern).
    pattern: Pattern,
    src: Vec<usize>,
    /// J's values over `pattern`, gathered at each factorization; the right-hand side over
    /// `core`.
    jac: Vec<f64>,
    b: Vec<f64>,
    /// The first states, and the off-diagonal entries of their columns (rows of the others).
    first: Vec<Peeled>,
    first_col: Vec<PeeledEntry>,
    /// The last states, and the entries of their rows in coupled columns (the first columns
    /// reach them with the others').
    last: Vec<Peeled>,
    last_row: Vec<PeeledEntry>,
    /// The constant states left out (increasing).
    constant: Vec<usize>,
    /// `core` is exactly the live states of the first `groups` groups of the regular layout
    /// (`GROUP`, `LEAD`: a chain of chambers without pistons or walls, in the states' own
    /// order): the gather and scatter then move each group's LEAD values at once, without an
    /// index or a bounds check per value. 0: through `core`.
    groups: usize,
}

/// A state solved outside the LU: its index, its diagonal's position in J's values, M_ii as
/// factored, and the end of its entries in `first_col` or `last_row`.
#[derive(Clone, Copy, Default)]
struct Peeled {
    state: usize,
    pos: usize,
    d: f64,
    end: usize,
}

/// An off-diagonal entry of a peeled state's column or row: the other state, the position in
/// J's values, M's value −γ·J as factored, and the other state's position in `Peel::core`
/// when it is coupled (a last state's row entry; else `usize::MAX`), for `after_fused`.
#[derive(Clone, Copy)]
struct PeeledEntry {
    state: usize,
    pos: usize,
    m: f64,
    core: usize,
}

impl Peel {
    /// The split of M's pattern `p` (diagonal included), the last states kept in the LU unless
    /// `last`; `None` when fewer than `min_split` states (at least 1) would be split off (the
    /// LU then runs over M as before, the same bits). `constant[i]`: state i is constant (left
    /// out when its row is empty).
    fn of(p: &Pattern, last: bool, min_split: usize, constant: &[bool]) -> Option<Peel> {
        const COUPLED: usize = usize::MAX;
        const FIRST: usize = usize::MAX - 1;
        const LAST: usize = usize::MAX - 2;
        const CONSTANT: usize = usize::MAX - 3;
        let n = p.n;
        // Per state: its off-diagonal entries in its row, then its index among the coupled
        // states or its kind.
        let mut index = vec![0usize; n];
        let mut col_empty = vec![true; n];
        for (j, empty) in col_empty.iter_mut().enumerate() {
            for &i in p.column(j) {
                if i != j {
                    index[i] += 1;
                    *empty = false;
                }
            }
        }
        for (i, (k, e)) in index.iter_mut().zip(&col_empty).enumerate() {
            *k = match (*k, e) {
                (0, _) if constant.get(i) == Some(&true) => CONSTANT,
                (0, _) => FIRST,
                (_, true) if last => LAST,
                _ => COUPLED,
            };
        }
        if index.iter().filter(|&&k| k != COUPLED).count() < min_split.max(1) {
            return None;
        }
        let mut peel = Peel::default();
        for (i, k) in index.iter_mut().enumerate() {
            if *k == COUPLED {
                *k = peel.core.len();
                peel.core.push(i);
            }
        }
        let diag_pos = |j: usize| p.col_start[j] + p.column(j).partition_point(|&i| i < j);
        // The coupled block, column by column (rows stay ascending: the renumbering keeps the
        // order); the last states' row entries on the way, by column.
        let mut col_start = Vec::with_capacity(peel.core.len() + 1);
        let mut rows = Vec::new();
        let mut last_entries = Vec::new();
        col_start.push(0);
        for &j in &peel.core {
            for (k, &i) in p.column(j).iter().enumerate() {
                let pos = p.col_start[j] + k;
                // (A constant state's row is empty: it is in no column.)
                if index[i] < CONSTANT {
                    rows.push(index[i]);
                    peel.src.push(pos);
                } else if index[i] == LAST {
                    last_entries.push((i, j, pos));
                }
            }
            col_start.push(rows.len());
        }
        peel.pattern = Pattern {
            n: peel.core.len(),
            col_start,
            rows,
        };
        peel.jac = vec![0.0; peel.src.len()];
        peel.b = vec![0.0; peel.core.len()];
        peel.constant = (0..n).filter(|&j| index[j] == CONSTANT).collect();
        for j in (0..n).filter(|&j| index[j] == FIRST) {
            for (k, &i) in p.column(j).iter().enumerate() {
                if i != j {
                    let pos = p.col_start[j] + k;
                    peel.first_col.push(PeeledEntry {
                        state: i,
                        pos,
                        m: 0.0,
                        core: usize::MAX,
                    });
                }
            }
            let end = peel.first_col.len();
            peel.first.push(Peeled {
                state: j,
                pos: diag_pos(j),
                d: 0.0,
                end,
            });
        }
        // Rows: by last state (stable: by column within each).
        last_entries.sort_by_key(|e| e.0);
        let mut entries = last_entries.iter().peekable();
        for j in (0..n).filter(|&j| index[j] == LAST) {
            while let Some(&(_, c, pos)) = entries.next_if(|e| e.0 == j) {
                peel.last_row.push(PeeledEntry {
                    state: c,
                    pos,
                    m: 0.0,
                    core: usize::MAX,
                });
            }
            let end = peel.last_row.len();
            peel.last.push(Peeled {
                state: j,
                pos: diag_pos(j),
                d: 0.0,
                end,
            });
        }
        for e in &mut peel.last_row {
            if index[e.state] < CONSTANT {
                e.core = index[e.state];
            }
        }
        peel.groups = peel.core.len() / LEAD;
        if !peel
            .core
            .iter()
            .copied()
            .eq((0..peel.groups).flat_map(|k| (0..LEAD).map(move |r| GROUP * k + r)))
        {
            peel.groups = 0;
        }
        Some(peel)
    }

    /// Take the coupled states in the order `perm` (`perm[k]`: the coupled state at position
    /// k; `pos` its inverse), renumbering their pattern.
    fn reorder(&mut self, perm: &[usize], pos: &[usize]) {
        let old = std::mem::take(&mut self.pattern);
        let old_src = std::mem::take(&mut self.src);
        let mut col_start = Vec::with_capacity(perm.len() + 1);
        let mut rows = Vec::with_capacity(old.rows.len());
        col_start.push(0);
        let mut col = Vec::new();
        for &oj in perm {
            col.clear();
            let range = old.col_start[oj]..old.col_start[oj + 1];
            col.extend(
                old.rows[range.clone()]
                    .iter()
                    .map(|&i| pos[i])
                    .zip(&old_src[range]),
            );
            col.sort_unstable();
            for &(i, &src) in &col {
                rows.push(i);
                self.src.push(src);
            }
            col_start.push(rows.len());
        }
        self.core = perm.iter().map(|&k| self.core[k]).collect();
        // Another order than the states' own: the gathers go through `core` (and the fused
        // Newton iteration, which needs the groups, is not taken).
        self.groups = 0;
        for e in &mut self.last_row {
            if e.core != usize::MAX {
                e.core = pos[e.core];
            }
        }
        self.pattern = Pattern {
            n: perm.len(),
            col_start,
            rows,
        };
    }

    /// The peeled entries of M = I − γJ (`jac`: J over M's pattern) and, when `gather`, the
    /// coupled block's J gathered into `self.jac` (the band LU reads J through its `FillMap`
    /// instead). False when a peeled diagonal is zero or not finite (M singular).
    fn factor(&mut self, jac: &[f64], gamma: f64, gather: bool) -> bool {
        let mut ok = true;
        // (Plain loops, not chained iterators: 4.7k → 3.6k instructions in the vent's 16
        // factorizations.)
        for s in &mut self.first {
            // 1 + (−γ·J_ii): the LU's own sum for a diagonal entry.
            s.d = -gamma * jac[s.pos] + 1.0;
            ok &= s.d != 0.0 && s.d.is_finite();
        }
        for s in &mut self.last {
            s.d = -gamma * jac[s.pos] + 1.0;
            ok &= s.d != 0.0 && s.d.is_finite();
        }
        for e in &mut self.first_col {
            e.m = -gamma * jac[e.pos];
        }
        for e in &mut self.last_row {
            e.m = -gamma * jac[e.pos];
        }
        if gather {
            for (v, &pos) in self.jac.iter_mut().zip(&self.src) {
                *v = jac[pos];
            }
        }
        ok
    }

    /// The first states of M x = b in place, their columns onto the others' right-hand sides,
    /// then the coupled block's right-hand side gathered into `self.b`.
    #[inline]
    fn before(&mut self, b: &mut [f64]) {
        let mut start = 0;
        for s in &self.first {
            let x = b[s.state] / s.d;
            b[s.state] = x;
            // A fixed volume's correction is 0: nothing to move.
            if x != 0.0 {
                for e in &self.first_col[start..s.end] {
                    b[e.state] -= e.m * x;
                }
            }
            start = s.end;
        }
        if self.groups > 0 {
            for (c, g) in self.b.chunks_exact_mut(LEAD).zip(b.chunks_exact(GROUP)) {
                c.copy_from_slice(&g[..LEAD]);
            }
            return;
        }
        for (c, &i) in self.b.iter_mut().zip(&self.core) {
            *c = b[i];
        }
    }

    /// `after` for the fused Newton iteration (`Workspace::fused`): the coupled block's
    /// solution stays in `self.b`, and the last states' rows read it there. The same
    /// operations in the same order as `after`, so the same bits.
    #[inline]
    fn after_fused(&self, b: &mut [f64]) {
        let mut start = 0;
        for s in &self.last {
            let mut r = b[s.state];
            for e in &self.last_row[start..s.end] {
                r -= e.m * self.b[e.core];
            }
            b[s.state] = r / s.d;
            start = s.end;
        }
    }

    /// The coupled block's solution from `self.b` into b, then the last states from their rows.
    #[inline]
    fn after(&self, b: &mut [f64]) {
        if self.groups > 0 {
            for (c, g) in self.b.chunks_exact(LEAD).zip(b.chunks_exact_mut(GROUP)) {
                g[..LEAD].copy_from_slice(c);
            }
        } else {
            for (&c, &i) in self.b.iter().zip(&self.core) {
                b[i] = c;
            }
        }
        let mut start = 0;
        for s in &self.last {
            let mut r = b[s.state];
            for e in &self.last_row[start..s.end] {
                r -= e.m * b[e.state];
            }
            b[s.state] = r / s.d;
            start = s.end;
        }
    }
}

/// `ETA_SCREEN[L]` = 1.001·(2/3)^L: when x = bias·‖·‖ exceeds it, the step ratio
/// η = 1/(x^(1/L) + ADDON) is below THRESH = 1.5 by a margin of at least 1.6·10⁻⁴ relative
/// (x^(1/L) > 1.001^(1/6)·2/3), far beyond the rounding of `powf`.
const ETA_SCREEN: [f64; MAX_ORDER + 2] = {
    let mut t = [0.0; MAX_ORDER + 2];
    let mut p = 1.001;
    let mut i = 0;
    while i < t.len() {
        t[i] = p;
        p *= 2.0 / 3.0;
        i += 1;
    }
    t
};

/// The step ratio 1/(x^(1/L) + ADDON) that `prepare_next_step` compares with THRESH, or 0 when
/// it is surely below THRESH (`ETA_SCREEN`): every use there then makes the same choice
/// (η < THRESH keeps the step, and a ratio below THRESH is never the largest one taken), and
/// libm's `pow` (~140 instructions) is skipped on steps that keep their size.
#[inline]
fn eta_or_below_thresh(x: f64, big_l: usize) -> f64 {
    if x > ETA_SCREEN[big_l] {
        return 0.0;
    }
    1.0 / (x.powf(1.0 / big_l as f64) + ADDON)
}

/// Correct a Newton solution x of M x = b onto the system's linear invariants: for each set S
/// (Σ_{i∈S} f_i ≡ 0), make Σ_S x = Σ_S b (`b_sums`), the least change in the Newton test's
/// weighted norm: x_i += w_i·d/Σ_S w, w_i = 1/ewt_i² (the squared tolerance of state i), d the
/// shortfall. A direct solve does this by itself: Σ_S rows of M = I − γJ are Σ_S rows of I, so
/// Σ_S x = Σ_S b. GMRES stops at its tolerance, and its residual's share in Σ_S would stay in
/// the conserved sum (the BDF's Σ_S y_n moves by −Σ_S(b − Mx) each Newton iteration: a drift of
/// ~1e-11 relative in 200 steps of a 10k-state grid, against round-off with the sparse LU).
/// With the correction each Newton iterate keeps Σ_S G = 0 for the BDF residual G, whatever
/// the linear residual, so the sum is conserved to round-off as with a direct solve.
///
/// `w` is scratch of at least the longest set's length: each weight is computed once, in the
/// pass that sums them, and read back in the pass that corrects.
fn correct_onto_invariants(
    x: &mut [f64],
    ewt: &[f64],
    sets: &[Vec<usize>],
    b_sums: &[f64],
    w: &mut [f64],
) {
    for (set, &b) in sets.iter().zip(b_sums) {
        let w = &mut w[..set.len()];
        let (mut xs, mut ws) = (0.0, 0.0);
        for (&i, wi) in set.iter().zip(w.iter_mut()) {
            let e = ewt[i];
            *wi = if e > 0.0 { 1.0 / (e * e) } else { 0.0 };
            xs += x[i];
            ws += *wi;
        }
        if !(ws > 0.0 && ws.is_finite()) {
            continue;
        }
        let k = (b - xs) / ws;
        for (&i, &wi) in set.iter().zip(w.iter()) {
            x[i] += wi * k;
        }
    }
}

/// CVODE's `eplifac`: the linear residual of a Newton iteration is held to this fraction of the
/// Newton convergence tolerance, ‖b − Mx‖_WRMS ≤ 0.05·tq₄ (Hindmarsh et al., ACM TOMS 31 (2005),
/// §2.1; cvLsSolve).
const EPLIFAC: f64 = 0.05;
/// The Krylov tolerance is never asked below this fraction of the right-hand side's norm: the
/// fixed-order variants converge Newton to 1e-13 relative, where eplifac·tq₄ would lie under
/// the round-off of the residual itself.
const KRYLOV_MIN_REDUCTION: f64 = 1e-10;

impl Clone for Workspace {
    fn clone(&self) -> Self {
        Workspace::default()
    }
}

impl PartialEq for Workspace {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Workspace")
    }
}

impl Direct {
    /// LU with partial pivoting of M = I − γJ over the pattern `p` (J's values `jac` over it;
    /// on the band path, above `SMALL_MAX` states, J's values over M's whole pattern, which
    /// `fill_map` places): all of M, or the coupled block of `Peel`. Band (`small` below
    /// `SMALL_MAX` states), faer's sparse or dense LU, as `prepare` chose for `p`. False when
    /// M is singular.
    #[inline(always)]
    fn factor_lu(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        let n = p.n;
        if n == 0 {
            return true;
        }
        if self.small {
            let (a, piv, d, sel) = (
                &mut self.small_lu,
                &mut self.small_piv,
                &mut self.tail_d,
                &self.sel,
            );
            macro_rules! lu {
                ($($k:literal => $ks:literal),*) => {
                    match self.small_kind {
                        $($k => small_lu::<$k, false>(a, piv, d, p, jac, gamma, sel),)*
                        $($ks => small_lu::<$k, true>(a, piv, d, p, jac, gamma, sel),)*
                        k => unreachable!("small LU of kind {k} for {n} states"),
                    }
                };
            }
            return lu!(1 => 14, 2 => 15, 3 => 16, 4 => 17, 5 => 18, 6 => 19, 7 => 20, 8 => 21, 9 => 22, 10 => 23, 11 => 24, 12 => 25);
        }
        self.factor_large(p, jac, gamma)
    }

    /// `factor_lu` above `SMALL_MAX` states. Apart, so that the small path's call does not
    /// pay this one's register saves (~35 instructions per solve on the piston, `solve_large`).
    #[inline(never)]
    fn factor_large(&mut self, p: &Pattern, jac: &[f64], gamma: f64) -> bool {
        let n = p.n;
        if let Some((kl, ku)) = self.band {
            let map = self.fill_map.as_ref().expect("workspace prepared");
            band_fill_mapped(&mut self.ab, n, kl, ku, map, jac, gamma);
            return band_factor(
                &mut self.ab,
                &mut self.ipiv,
                &mut self.band_counts,
                n,
                kl,
                ku,
            );
        }
        if self.sparse {
            for (m, a) in self.m_vals.iter_mut().zip(jac) {
                *m = -gamma * a;
            }
            for &k in &self.diag {
                self.m_vals[k] += 1.0;
            }
            let sym = self.symbolic.as_ref().expect("workspace prepared");
            let a = SparseColMatRef::new(
                SymbolicSparseColMatRef::new_checked(n, n, &p.col_start, None, &p.rows),
                &self.m_vals,
            );
            let stack = MemStack::new(self.sp_mem.as_mut().expect("workspace prepared"));
            // A structurally singular M is an error; a zero pivot gives non-finite factors,
            // which the solve reports (see `solve`).
            return sym
                .factorize_numeric_lu(&mut self.numeric, a, Par::Seq, stack, Default::default())
                .is_ok();
        }
        let lu = self.lu.as_mut().expect("workspace prepared");
        // Scatter the columns (both column-major): no index checks in the n² zeroing.
        for j in 0..n {
            let col = lu.col_as_slice_mut(j);
            col.fill(0.0);
            let range = p.col_start[j]..p.col_start[j + 1];
            for (&i, a) in p.rows[range.clone()].iter().zip(&jac[range]) {
                col[i] = -gamma * a;
            }
            col[j] += 1.0;
        }
        let stack = MemStack::new(self.mem.as_mut().expect("workspace prepared"));
        lu_factor::lu_in_place(
            lu.as_mut(),
            &mut self.perm,
            &mut self.perm_inv,
            Par::Seq,
            stack,
            Default::default(),
        );
        !(0..n).any(|i| lu[(i, i)] == 0.0 || !lu[(i, i)].is_finite())
    }

    /// Solve with the factors of `factor_lu` in place (b: one value per state of its pattern).
    #[inline(always)]
    fn solve_lu(&mut self, b: &mut [f64]) {
        let n = b.len();
        if n == 0 {
            return;
        }
        if self.small {
            let (a, piv, d, sel) = (&self.small_lu, &self.small_piv, &self.tail_d, &self.sel);
            macro_rules! solve {
                ($($k:literal => $ks:literal),*) => {
                    match self.small_kind {
                        $($k => small_solve::<$k, false>(a, piv, d, b, sel),)*
                        $($ks => small_solve::<$k, true>(a, piv, d, b, sel),)*
                        k => unreachable!("small LU of kind {k} for {n} states"),
                    }
                };
            }
            solve!(1 => 14, 2 => 15, 3 => 16, 4 => 17, 5 => 18, 6 => 19, 7 => 20, 8 => 21, 9 => 22, 10 => 23, 11 => 24, 12 => 25);
            return;
        }
        self.solve_large(b);
    }

    /// `solve_lu` above `SMALL_MAX` states (see `factor_large`).
    #[inline(never)]
    fn solve_large(&mut self, b: &mut [f64]) {
        let n = b.len();
        if let Some((kl, ku)) = self.band {
            if self.band_perm.is_empty() {
                band_solve(&self.ab, &self.ipiv, &self.band_counts, n, kl, ku, b);
            } else {
                // P M Pᵀ (P x) = P b: gather b into the band order, scatter x back.
                for (r, &i) in self.band_rhs.iter_mut().zip(&self.band_perm) {
                    *r = b[i];
                }
                band_solve(
                    &self.ab,
                    &self.ipiv,
                    &self.band_counts,
                    n,
                    kl,
                    ku,
                    &mut self.band_rhs,
                );
                for (&r, &i) in self.band_rhs.iter().zip(&self.band_perm) {
                    b[i] = r;
                }
            }
            return;
        }
        if self.sparse {
            let sym = self.symbolic.as_ref().expect("workspace prepared");
            let lu = faer::sparse::linalg::lu::LuRef::new_unchecked(sym, &self.numeric);
            let stack = MemStack::new(self.sp_mem.as_mut().expect("workspace prepared"));
            let rhs = MatMut::from_column_major_slice_mut(b, n, 1);
            lu.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack);
            return;
        }
        let (lu, rhs) = (
            self.lu.as_ref().expect("workspace prepared"),
            self.rhs.as_mut().expect("workspace prepared"),
        );
        for i in 0..n {
            rhs[(i, 0)] = b[i];
        }
        let perm = PermRef::new_checked(&self.perm, &self.perm_inv, n);
        let stack = MemStack::new(self.mem.as_mut().expect("workspace prepared"));
        lu_solve::solve_in_place(
            lu.as_ref(),
            lu.as_ref(),
            perm,
            rhs.as_mut(),
            Par::Seq,
            stack,
        );
        for i in 0..n {
            b[i] = rhs[(i, 0)];
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bdf {
    /// `Some(k)`: fixed order k and the driver's step; `None`: adaptive order and step.
    fixed: Option<usize>,
    n: usize,
    pub tolerances: Tolerances,
    pub stats: Stats,
    hist: Box<History>,
    /// The working copy: after an attempt, the history at its end (kept after `commit`, so
    /// that dense output over the committed step works, also after a restore).
    trial: Box<History>,
    last: LastStep,
    /// Dense or sparse factorization (a setting of this process, not saved).
    #[serde(skip)]
    linear: LinearSolver,
    /// GMRES restart and restarts on the Krylov path (a setting of this process, not saved).
    #[serde(skip)]
    gmres_limits: GmresLimits,
    /// A restored history had a constant state's higher Nordsieck columns nonzero: every
    /// state is stepped (`check_constant_states`).
    #[serde(skip)]
    const_refused: bool,
    #[serde(skip)]
    ws: Box<Workspace>,
}

/// The last attempted step (serde data: dense output over it survives a restore).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct LastStep {
    /// Whether `trial` holds a step from (t, ·) of size h that `dense` can interpolate.
    valid: bool,
    /// Whether it was attempted and not yet committed.
    pending: bool,
    t: f64,
    h: f64,
    /// An RK4 start step (dense output recomputes a shorter RK4 step).
    starter: bool,
    /// Its increment.
    inc: Vec<f64>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum NFlag {
    FirstCall,
    PrevConvFail,
    PrevErrFail,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ConvFail {
    NoFailures,
    FailBadJ,
    FailOther,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Nls {
    Success,
    /// Recoverable: Newton diverged, the matrix was singular, or f was not finite.
    ConvFail,
    /// Newton failed with a Jacobian that was not fresh: set up again with a new one.
    TryAgain,
}

/// Lower and upper bandwidths (kl, ku) of a pattern: the largest i − j and j − i of its entries.
fn bandwidths(p: &Pattern) -> (usize, usize) {
    let (mut kl, mut ku) = (0, 0);
    for j in 0..p.n {
        for &i in &p.rows[p.col_start[j]..p.col_start[j + 1]] {
            kl = kl.max(i.saturating_sub(j));
            ku = ku.max(j.saturating_sub(i));
        }
    }
    (kl, ku)
}

/// Up to this many states the band LU (in the states' own order) runs on a fixed-size dense
/// array, monomorphized on n (`small_factor`, `small_solve`): on the 5-state vent the band
/// kernels' index arithmetic cost ~1,700 instructions per factorization and ~430 per solve,
/// a quarter of the BDF solve (callgrind).
const SMALL_MAX: usize = 12;

/// `Direct::small_kind` of an LU through `Direct::sel` (added to its N; the dispatch in
/// `factor_lu` and `solve_lu` spells the sums out).
const SMALL_SEL: usize = 13;
const _: () = assert!(SMALL_SEL == SMALL_MAX + 1);

/// The small LU over a selection of the states (`Direct::sel`): the constant states (an empty
/// row of J: f_i ≡ 0, and a correction that stays exactly 0, see `Peel`) are left out, and so
/// are their columns (their x is 0). The LU's position k holds state `state[k]` (increasing),
/// the tail the last states from `tail_start` on (as `Direct::tail`); `row[i]` is state i's
/// row of M in `small_lu` (its LU position, or N + q for the tail's q-th state).
#[derive(Clone, Copy, Debug, Default)]
struct SmallSel {
    state: [usize; SMALL_MAX],
    row: [usize; SMALL_MAX],
    tail_start: usize,
}

/// `band_factor` on the N×N matrix `a` (column-major: a[c][r]) held densely: the same pivot
/// choice (the first largest |value| in the column), the same interchanges of the trailing
/// columns only (L's multipliers stay where they were computed, as LAPACK's band storage keeps
/// them), the same multipliers and rank-1 updates, skipping u(j, c) = 0 as it does. Every
/// nonzero of the factors comes from the same operations in the same order; the band kernel
/// skips work on exact zeros outside the band or at the ends of its columns that this does
/// (x − 0·u), which can only change the sign of a zero: a signed zero in the factors or the
/// solution never reaches the Newton iterate (acor starts at +0 and +0 + (−0) = +0).
#[inline(always)]
fn small_factor<const N: usize>(
    a: &mut [[f64; SMALL_MAX]; SMALL_MAX],
    piv: &mut [usize; SMALL_MAX],
) -> bool {
    const { assert!(N <= SMALL_MAX) };
    for j in 0..N {
        let mut jp = j;
        let mut big = a[j][j].abs();
        for r in j + 1..N {
            if a[j][r].abs() > big {
                big = a[j][r].abs();
                jp = r;
            }
        }
        piv[j] = jp;
        let pivot = a[j][jp];
        if pivot == 0.0 || !pivot.is_finite() {
            return false;
        }
        if jp != j {
            for col in &mut a[j..N] {
                col.swap(j, jp);
            }
        }
        let (left, right) = a.split_at_mut(j + 1);
        let l = &mut left[j];
        let inv = 1.0 / l[j];
        // The multipliers over all N rows, 0 at rows ≤ j: the updates below run over the whole
        // column, a loop of constant length N (unrolled and vectorized; the variable-length
        // one spent most of a 5-state factorization's ~1,300 instructions in loop control).
        // Rows ≤ j get x − 0·u = x (up to the sign of a zero, harmless as above).
        let mut m = [0.0; N];
        for (v, mr) in l[j + 1..N].iter_mut().zip(&mut m[j + 1..]) {
            *v *= inv;
            *mr = *v;
        }
        for col in &mut right[..N - j - 1] {
            let u = col[j];
            if u != 0.0 {
                for (c, &mr) in col[..N].iter_mut().zip(&m) {
                    *c -= mr * u;
                }
            }
        }
    }
    true
}

/// M = I − γJ (J's values `jac` over M's pattern `p`) into the N×N array, then `small_factor`;
/// the tail's rows below it (`Direct::tail`).
/// N a constant: the zeroing of each column is a few stores, not a `memset` call (~40 % of a
/// 6-state factorization's instructions with the count a variable).
/// SEL: over the states of `sel` only (`SmallSel`), else over the first N in their own order.
#[allow(clippy::too_many_arguments)]
fn small_lu<const N: usize, const SEL: bool>(
    a: &mut [[f64; SMALL_MAX]; SMALL_MAX],
    piv: &mut [usize; SMALL_MAX],
    tail_d: &mut [f64; SMALL_MAX],
    p: &Pattern,
    jac: &[f64],
    gamma: f64,
    sel: &SmallSel,
) -> bool {
    // The tail's diagonals M_qq (`Direct::tail`; the states of `p` past N, or past the
    // selection's): each its column's only entry.
    let tail_start = if SEL { sel.tail_start } else { N };
    let mut ok = true;
    for (d, &start) in tail_d.iter_mut().zip(&p.col_start[tail_start..p.n]) {
        *d = -gamma * jac[start] + 1.0;
        ok &= *d != 0.0 && d.is_finite();
    }
    if !ok {
        return false;
    }
    for (k, col) in a.iter_mut().enumerate().take(N) {
        col[..N].fill(0.0);
        let j = if SEL { sel.state[k] } else { k };
        let range = p.col_start[j]..p.col_start[j + 1];
        for (&i, v) in p.rows[range.clone()].iter().zip(&jac[range]) {
            // (No constant state's row is in a column: their rows are empty.)
            let r = if SEL { sel.row[i] } else { i };
            col[r] = -gamma * v;
        }
        col[k] += 1.0;
    }
    small_factor::<N>(a, piv)
}

/// The tail states q ≥ N of M x = b (`tail`) from their rows, after the LU's N (`Direct::tail`):
/// x_q = (b_q − Σ_j M_qj·x_j)/M_qq, the M_qj kept in `small_lu` below the factors.
#[inline(always)]
fn small_tail<const N: usize>(
    a: &[[f64; SMALL_MAX]; SMALL_MAX],
    d: &[f64; SMALL_MAX],
    x: &[f64; N],
    tail: &mut [f64],
) {
    const { assert!(N <= SMALL_MAX) };
    for (q, (bq, &dq)) in tail.iter_mut().zip(d).enumerate() {
        let mut r = *bq;
        for (col, &xj) in a[..N].iter().zip(x.iter()) {
            r -= col[N + q] * xj;
        }
        *bq = r / dq;
    }
}

/// Solve A x = b in place with the factors of `small_factor` (`band_solve`'s order of
/// operations: interchanges and L column by column, then U by columns from the last).
/// SEL: b over all states, the LU's gathered from and scattered back to those of `sel`
/// (`SmallSel`; the constant states' b is left as it is, their x being b = 0).
fn small_solve<const N: usize, const SEL: bool>(
    a: &[[f64; SMALL_MAX]; SMALL_MAX],
    piv: &[usize; SMALL_MAX],
    d: &[f64; SMALL_MAX],
    b: &mut [f64],
    sel: &SmallSel,
) {
    const { assert!(N <= SMALL_MAX) };
    if SEL {
        let mut x = [0.0; N];
        for (x, &i) in x.iter_mut().zip(&sel.state) {
            *x = b[i];
        }
        small_lu_solve::<N>(a, piv, &mut x);
        for (&x, &i) in x.iter().zip(&sel.state) {
            b[i] = x;
        }
        let tail = &mut b[sel.tail_start..];
        if !tail.is_empty() {
            small_tail::<N>(a, d, &x, tail);
        }
        return;
    }
    let (b, tail) = b.split_at_mut(N);
    let Ok(b) = <&mut [f64; N]>::try_from(b) else {
        unreachable!()
    };
    small_lu_solve::<N>(a, piv, b);
    if !tail.is_empty() {
        small_tail::<N>(a, d, b, tail);
    }
}

/// The LU part of `small_solve`, in place.
#[inline(always)]
fn small_lu_solve<const N: usize>(
    a: &[[f64; SMALL_MAX]; SMALL_MAX],
    piv: &[usize; SMALL_MAX],
    b: &mut [f64; N],
) {
    for j in 0..N {
        let p = piv[j];
        if p != j {
            b.swap(p, j);
        }
        let bj = b[j];
        if bj != 0.0 {
            for r in j + 1..N {
                b[r] -= a[j][r] * bj;
            }
        }
    }
    for j in (0..N).rev() {
        b[j] /= a[j][j];
        let bj = b[j];
        for r in 0..j {
            b[r] -= a[j][r] * bj;
        }
    }
}

/// Elements per block of the Nordsieck sweeps (`predict_with_increment`, `complete_step`): the
/// q + 1 columns' slices of one block (≤ 6 × 4 KiB) stay in L1 while every column pass runs
/// over them, so the array is read and written once per sweep instead of once per pass. On
/// 10⁵ states the array (7 MB) does not fit L2, and the unblocked passes made the bdf2 step
/// grow faster than the states (`cargo bench --bench scale -- --interleaved`).
const NORDSIECK_BLOCK: usize = 512;

/// Nordsieck columns j − 1 (mutable) and j of `zn` (n values each), for the Pascal-triangle
/// sums of `predict` and `restore` without per-element bounds checks.
#[inline]
fn column_pair(zn: &mut [f64], n: usize, j: usize) -> (&mut [f64], &[f64]) {
    let (lo, hi) = zn.split_at_mut(j * n);
    (&mut lo[(j - 1) * n..], &hi[..n])
}

/// The states the predictor and the corrector run over when the constant ones are skipped, as
/// pairs of adjacent states (each pair's two values are one SSE2 operation, as in the passes
/// over all states, which the compiler vectorizes two states at a time: a list of single
/// states, ~2× the instructions per state, cost more than the skipped third saved on the
/// chain, whose live states are the chambers' (m, U) pairs) and the states left over.
#[derive(Clone, Debug, Default)]
struct Live {
    /// The first state of each pair (every pair's second below n).
    pairs: Vec<usize>,
    singles: Vec<usize>,
    /// The Newton iteration's passes (`newton_residual_live`, `newton_update_live`): the
    /// states 0..GROUP·groups come in groups of `GROUP` whose first `LEAD` are live and the
    /// others constant (a network's chambers without a piston or a wall: mass, energy, fixed
    /// volume), swept group by group without an index or a bounds check per state; `rest`
    /// are the live states from GROUP·groups on, increasing. groups = 0: the passes run over
    /// every state.
    groups: usize,
    rest: Vec<usize>,
}

/// The live states' regular layout (`Live::groups`, `Peel::groups`): in each group of GROUP
/// consecutive states the first LEAD are live. A network numbers each chamber's mass, energy
/// and volume together (`chamber::STATES`), and a fixed volume is constant.
const GROUP: usize = 3;
const LEAD: usize = 2;

impl Live {
    /// The runs of states not `constant`, cut into pairs and a single at an odd run's end;
    /// and the leading groups of the regular layout (`groups`), with the live states after.
    fn of(constant: &[bool]) -> Live {
        let mut live = Live::default();
        let mut i = 0;
        while i < constant.len() {
            if constant[i] {
                i += 1;
            } else if i + 1 < constant.len() && !constant[i + 1] {
                live.pairs.push(i);
                i += 2;
            } else {
                live.singles.push(i);
                i += 1;
            }
        }
        // Up to `SMALL_MAX` states the full passes (vectorized, one loop) cost less (the two
        // tanks: 294.6k → 297.7k instructions a bdf solve with the groups).
        if constant.len() > SMALL_MAX {
            live.groups = regular_groups(constant);
        }
        live.rest = (GROUP * live.groups..constant.len())
            .filter(|&i| !constant[i])
            .collect();
        live
    }
}

/// How many groups of `GROUP` states from state 0 on have their first `LEAD` states live and
/// the others constant (`constant[i]`).
fn regular_groups(constant: &[bool]) -> usize {
    constant
        .chunks_exact(GROUP)
        .take_while(|g| g.iter().enumerate().all(|(r, &c)| c == (r >= LEAD)))
        .count()
}

/// inc = Σ_{j=1..q} z_j, then CVODE's predictor (cvPredict: z_{j−1} += z_j for k = 1..=q, j = q
/// down to k) on the q + 1 columns of `zn`, block by block; over the `live` states only when
/// given (the others' z_j, j ≥ 1, and inc are 0), two states at a time (`Live`).
fn predict_blocked(zn: &mut [f64], inc: &mut [f64], n: usize, q: usize, live: Option<&Live>) {
    if let Some(live) = live {
        match q {
            1 => return predict_live::<1, 2>(zn, inc, n, live),
            2 => return predict_live::<2, 3>(zn, inc, n, live),
            3 => return predict_live::<3, 4>(zn, inc, n, live),
            4 => return predict_live::<4, 5>(zn, inc, n, live),
            5 => return predict_live::<5, 6>(zn, inc, n, live),
            _ => {}
        }
    }
    if n <= NORDSIECK_BLOCK {
        // One block: element by element with the order a constant (see `predict_small`).
        match q {
            1 => return predict_small::<1, 2>(zn, inc, n),
            2 => return predict_small::<2, 3>(zn, inc, n),
            3 => return predict_small::<3, 4>(zn, inc, n),
            4 => return predict_small::<4, 5>(zn, inc, n),
            5 => return predict_small::<5, 6>(zn, inc, n),
            _ => {}
        }
    }
    let mut lo = 0;
    while lo < n {
        let hi = (lo + NORDSIECK_BLOCK).min(n);
        let inc = &mut inc[lo..hi];
        inc.fill(0.0);
        for j in 1..=q {
            for (a, b) in inc.iter_mut().zip(&zn[j * n + lo..j * n + hi]) {
                *a += *b;
            }
        }
        for k in 1..=q {
            for j in (k..=q).rev() {
                let (prev, next) = column_pair(zn, n, j);
                for (a, b) in prev[lo..hi].iter_mut().zip(&next[lo..hi]) {
                    *a += *b;
                }
            }
        }
        lo = hi;
    }
}

/// `predict_blocked` for n ≤ one block and order Q, element by element: each element's Q + 1
/// Nordsieck values are loaded once, summed and run through the Pascal triangle in registers
/// (the same additions in the same order, so the same bits). On the small networks the
/// column passes cost about 1,000 instructions a step for 4 states, mostly the q(q + 1)/2
/// passes' own loop set-up (callgrind, cantera_vent).
fn predict_small<const Q: usize, const K: usize>(zn: &mut [f64], inc: &mut [f64], n: usize) {
    const { assert!(K == Q + 1) };
    let mut cols = columns_mut::<K>(zn, n);
    let inc = &mut inc[..n];
    // Two states at a time (one SSE2 operation per pair of values, as `predict_live`'s
    // pairs), the last one of an odd n alone.
    let mut i = 0;
    while i + 2 <= n {
        predict_two::<Q, K>(&mut cols, inc, i);
        i += 2;
    }
    if i < n {
        predict_one::<Q, K>(&mut cols, inc, i);
    }
}

/// The predictor of one state i (`predict_small`'s element): its Q + 1 Nordsieck values loaded
/// once, summed into inc[i] and run through the Pascal triangle in registers.
#[inline(always)]
fn predict_one<const Q: usize, const K: usize>(
    cols: &mut [&mut [f64]; K],
    inc: &mut [f64],
    i: usize,
) {
    let mut z = [0.0; MAX_ORDER + 1];
    for (v, col) in z.iter_mut().zip(cols.iter()) {
        *v = col[i];
    }
    let mut sum = 0.0;
    for v in &z[1..Q + 1] {
        sum += *v;
    }
    inc[i] = sum;
    // Half-open constant ranges (not `(k..=Q).rev()`), which the compiler unrolls with z in
    // registers.
    for k in 1..Q + 1 {
        for jj in 0..Q + 1 - k {
            let j = Q - jj;
            z[j - 1] += z[j];
        }
    }
    // z_Q is unchanged by the predictor.
    for (col, v) in cols.iter_mut().zip(&z).take(Q) {
        col[i] = *v;
    }
}

/// `predict_small` over the `live` states only, two at a time (`Live`): per state the same
/// operations in the same order, so the same bits.
fn predict_live<const Q: usize, const K: usize>(
    zn: &mut [f64],
    inc: &mut [f64],
    n: usize,
    live: &Live,
) {
    const { assert!(K == Q + 1) };
    let mut cols = columns_mut::<K>(zn, n);
    let inc = &mut inc[..n];
    for &p in &live.pairs {
        predict_two::<Q, K>(&mut cols, inc, p);
    }
    for &i in &live.singles {
        predict_one::<Q, K>(&mut cols, inc, i);
    }
}

/// `predict_one` for the states p and p + 1 together: per state the same operations in the
/// same order (the same bits), each pair of values one SSE2 operation.
#[inline(always)]
fn predict_two<const Q: usize, const K: usize>(
    cols: &mut [&mut [f64]; K],
    inc: &mut [f64],
    p: usize,
) {
    // Slices of exactly two: no bounds checks per value, and one SSE2 operation each.
    let mut z = [[0.0; 2]; MAX_ORDER + 1];
    for (v, col) in z.iter_mut().zip(cols.iter()) {
        *v = pair(&col[p..p + 2]);
    }
    let mut sum = [0.0; 2];
    for v in &z[1..Q + 1] {
        sum[0] += v[0];
        sum[1] += v[1];
    }
    inc[p..p + 2].copy_from_slice(&sum);
    for k in 1..Q + 1 {
        for jj in 0..Q + 1 - k {
            let j = Q - jj;
            z[j - 1][0] += z[j][0];
            z[j - 1][1] += z[j][1];
        }
    }
    for (col, v) in cols.iter_mut().zip(&z).take(Q) {
        col[p..p + 2].copy_from_slice(v);
    }
}

/// `Step::restore`'s undoing of the predictor (z_{j−1} −= z_j for k = 1..=Q, j = Q down to k)
/// for n ≤ one block, element by element and two states at a time: per element the same
/// subtractions in the same order as the column passes, so the same bits.
fn restore_small<const Q: usize, const K: usize>(zn: &mut [f64], n: usize) {
    const { assert!(K == Q + 1) };
    let mut cols = columns_mut::<K>(zn, n);
    let mut i = 0;
    while i + 2 <= n {
        let mut z = [[0.0; 2]; MAX_ORDER + 1];
        for (v, col) in z.iter_mut().zip(cols.iter()) {
            *v = pair(&col[i..i + 2]);
        }
        for k in 1..Q + 1 {
            for jj in 0..Q + 1 - k {
                let j = Q - jj;
                z[j - 1][0] -= z[j][0];
                z[j - 1][1] -= z[j][1];
            }
        }
        for (col, v) in cols.iter_mut().zip(&z).take(Q) {
            col[i..i + 2].copy_from_slice(v);
        }
        i += 2;
    }
    if i < n {
        let mut z = [0.0; MAX_ORDER + 1];
        for (v, col) in z.iter_mut().zip(cols.iter()) {
            *v = col[i];
        }
        for k in 1..Q + 1 {
            for jj in 0..Q + 1 - k {
                let j = Q - jj;
                z[j - 1] -= z[j];
            }
        }
        for (col, v) in cols.iter_mut().zip(&z).take(Q) {
            col[i] = *v;
        }
    }
}

/// Two values as an array (`Live`'s pairs; the slice has length 2).
#[inline(always)]
fn pair(v: &[f64]) -> [f64; 2] {
    [v[0], v[1]]
}

/// Dense output's increment inc = last + Σ_{j=1..Q} z_j·σ^j (`z` from column 1, σ^j formed here)
/// element by element: per element the same additions in the same order as the column passes
/// (inc = last, then += z_j·σ^j for j = 1..Q), so the same bits, in one sweep.
fn dense_sum<const Q: usize>(z: &[f64], sigma: f64, last: &[f64], inc: &mut [f64], n: usize) {
    // σ^j, each the product of the one before and σ (the order a constant: no loop).
    let mut pw = [0.0; MAX_ORDER + 1];
    let mut p = 1.0;
    for v in &mut pw[1..Q + 1] {
        p *= sigma;
        *v = p;
    }
    let mut rest = z;
    let cols: [&[f64]; Q] = std::array::from_fn(|_| {
        let (col, r) = rest.split_at(n);
        rest = r;
        col
    });
    let (inc, last) = (&mut inc[..n], &last[..n]);
    // Two states at a time (each pair of values one SSE2 operation), the last one of an odd
    // n alone.
    let mut i = 0;
    while i + 2 <= n {
        let mut acc = pair(&last[i..i + 2]);
        for (col, &p) in cols.iter().zip(&pw[1..]) {
            let z = pair(&col[i..i + 2]);
            acc[0] += z[0] * p;
            acc[1] += z[1] * p;
        }
        inc[i..i + 2].copy_from_slice(&acc);
        i += 2;
    }
    if i < n {
        let mut acc = last[i];
        for (col, &p) in cols.iter().zip(&pw[1..]) {
            acc += col[i] * p;
        }
        inc[i] = acc;
    }
}

/// The first K columns (n values each) of a Nordsieck array, as K slices: the element-wise
/// sweeps index each by i < n, without a multiplication and a bounds check per value (about
/// 60 % of `predict_small`'s and `correct_small`'s instructions with `zn[j·n + i]`).
#[inline(always)]
fn columns_mut<const K: usize>(zn: &mut [f64], n: usize) -> [&mut [f64]; K] {
    let mut rest = zn;
    std::array::from_fn(|_| {
        let (col, r) = std::mem::take(&mut rest).split_at_mut(n);
        rest = r;
        col
    })
}

/// `correct_blocked` for n ≤ one block and order Q, element by element (same operations, same
/// order, same bits).
fn correct_small<const K: usize>(
    zn: &mut [f64],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    n: usize,
) {
    let mut cols = columns_mut::<K>(zn, n);
    let (inc, acor) = (&mut inc[..n], &acor[..n]);
    // Two states at a time (`correct_live`'s pairs), the last one of an odd n alone.
    let mut i = 0;
    while i + 2 <= n {
        correct_two(&mut cols, l, acor, inc, i);
        i += 2;
    }
    if i < n {
        correct_one(&mut cols, l, acor, inc, i);
    }
}

/// The corrector of state i (`correct_small`'s element).
#[inline(always)]
fn correct_one<const K: usize>(
    cols: &mut [&mut [f64]; K],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    i: usize,
) {
    let c = acor[i];
    for (col, &lj) in cols.iter_mut().zip(l) {
        col[i] += lj * c;
    }
    inc[i] += c;
}

/// The corrector of the states p and p + 1 together: per state the same operations (the same
/// bits), each pair of values one SSE2 operation.
#[inline(always)]
fn correct_two<const K: usize>(
    cols: &mut [&mut [f64]; K],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    p: usize,
) {
    let c = pair(&acor[p..p + 2]);
    for (col, &lj) in cols.iter_mut().zip(l) {
        let z = &mut col[p..p + 2];
        z[0] += lj * c[0];
        z[1] += lj * c[1];
    }
    let v = &mut inc[p..p + 2];
    v[0] += c[0];
    v[1] += c[1];
}

/// `correct_small` over the `live` states only, two at a time (`Live`): the same bits.
fn correct_live<const K: usize>(
    zn: &mut [f64],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    n: usize,
    live: &Live,
) {
    let mut cols = columns_mut::<K>(zn, n);
    let (inc, acor) = (&mut inc[..n], &acor[..n]);
    for &p in &live.pairs {
        correct_two(&mut cols, l, acor, inc, p);
    }
    for &i in &live.singles {
        correct_one(&mut cols, l, acor, inc, i);
    }
}

/// The corrector's update of the Nordsieck array (cvCompleteStep: z_j += ℓ_j·acor for
/// j = 0..=q) and inc += acor, block by block; over the `live` states only when given (the
/// others' acor is 0), two states at a time (`Live`).
fn correct_blocked(
    zn: &mut [f64],
    l: &[f64; MAX_ORDER + 1],
    acor: &[f64],
    inc: &mut [f64],
    n: usize,
    q: usize,
    live: Option<&Live>,
) {
    if let Some(live) = live {
        match q {
            1 => return correct_live::<2>(zn, l, acor, inc, n, live),
            2 => return correct_live::<3>(zn, l, acor, inc, n, live),
            3 => return correct_live::<4>(zn, l, acor, inc, n, live),
            4 => return correct_live::<5>(zn, l, acor, inc, n, live),
            5 => return correct_live::<6>(zn, l, acor, inc, n, live),
            _ => {}
        }
    }
    if n <= NORDSIECK_BLOCK {
        match q {
            1 => return correct_small::<2>(zn, l, acor, inc, n),
            2 => return correct_small::<3>(zn, l, acor, inc, n),
            3 => return correct_small::<4>(zn, l, acor, inc, n),
            4 => return correct_small::<5>(zn, l, acor, inc, n),
            5 => return correct_small::<6>(zn, l, acor, inc, n),
            _ => {}
        }
    }
    let mut lo = 0;
    while lo < n {
        let hi = (lo + NORDSIECK_BLOCK).min(n);
        let acor = &acor[lo..hi];
        for (j, &lj) in l.iter().enumerate().take(q + 1) {
            for (a, &c) in zn[j * n + lo..j * n + hi].iter_mut().zip(acor) {
                *a += lj * c;
            }
        }
        for (a, &c) in inc[lo..hi].iter_mut().zip(acor) {
            *a += c;
        }
        lo = hi;
    }
}

/// The Newton residual's right-hand side tv = γ·f − (z_1/ℓ_1 + acor) (cvNewtonIteration), for
/// the first n states. An index loop over slices cut to n: the zip of four vectors it replaces
/// cost ~30 % more instructions on 5–9 states (a trip count from four lengths), and a
/// constant n (`small_n`) more again (callgrind, the Cantera networks).
#[inline(always)]
fn newton_residual(
    tv: &mut [f64],
    z1: &[f64],
    acor: &[f64],
    f: &[f64],
    rl1: f64,
    gamma: f64,
    n: usize,
) {
    let (tv, z1, acor, f) = (&mut tv[..n], &z1[..n], &acor[..n], &f[..n]);
    for i in 0..n {
        let t = rl1 * z1[i] + acor[i];
        tv[i] = gamma * f[i] - t;
    }
}

/// One pass of the Newton update over the first n states: the drift scaling δ *= c (when
/// `scale`), acor += δ, y = z_0 + acor; returns Σ(δ·w)², `wrms`'s sum in its order. An index
/// loop over slices cut to n, as `newton_residual`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn newton_update(
    acor: &mut [f64],
    y: &mut [f64],
    tv: &mut [f64],
    z0: &[f64],
    w: &[f64],
    scale: bool,
    c: f64,
    n: usize,
) -> f64 {
    let (acor, y, tv, z0, w) = (&mut acor[..n], &mut y[..n], &mut tv[..n], &z0[..n], &w[..n]);
    let mut sum = 0.0;
    if scale && n > NORDSIECK_BLOCK {
        // Large systems: the scaling in the same sweep (one pass less over memory).
        for i in 0..n {
            tv[i] *= c;
            let d = tv[i] * w[i];
            sum += d * d;
            acor[i] += tv[i];
            y[i] = z0[i] + acor[i];
        }
        return sum;
    }
    // Small ones: the scaling a pass of its own (vectorized), the sweep without a branch.
    if scale {
        for v in tv.iter_mut() {
            *v *= c;
        }
    }
    for i in 0..n {
        let d = tv[i] * w[i];
        sum += d * d;
        acor[i] += tv[i];
        y[i] = z0[i] + acor[i];
    }
    sum
}

/// `newton_residual` over the `live` states only (`Live::groups` and `Live::rest`; the others
/// are constant, and their tv is never read: the direct solve leaves them out, and
/// `newton_update_live` skips them). Per state the same operations, so the same bits.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn newton_residual_live(
    tv: &mut [f64],
    z1: &[f64],
    acor: &[f64],
    f: &[f64],
    rl1: f64,
    gamma: f64,
    n: usize,
    live: &Live,
) {
    let (tv, z1, acor, f) = (&mut tv[..n], &z1[..n], &acor[..n], &f[..n]);
    residual_groups::<GROUP>(tv, z1, acor, f, rl1, gamma, live.groups);
    residual_rest(tv, z1, acor, f, rl1, gamma, &live.rest);
}

/// The residual of the groups' live states (the first LEAD of each GROUP) into `dst`, S values
/// a group: S = GROUP writes them in place in tv (`newton_residual_live`), S = LEAD packs them
/// into the coupled block's right-hand side (`Peel::b`, the fused iteration).
#[inline(always)]
fn residual_groups<const S: usize>(
    dst: &mut [f64],
    z1: &[f64],
    acor: &[f64],
    f: &[f64],
    rl1: f64,
    gamma: f64,
    groups: usize,
) {
    let g = GROUP * groups;
    for (((d, z1), a), f) in dst[..S * groups]
        .chunks_exact_mut(S)
        .zip(z1[..g].chunks_exact(GROUP))
        .zip(acor[..g].chunks_exact(GROUP))
        .zip(f[..g].chunks_exact(GROUP))
    {
        for r in 0..LEAD {
            let t = rl1 * z1[r] + a[r];
            d[r] = gamma * f[r] - t;
        }
    }
}

/// The residual of the live states after the groups (`Live::rest`), in tv.
#[inline(always)]
fn residual_rest(
    tv: &mut [f64],
    z1: &[f64],
    acor: &[f64],
    f: &[f64],
    rl1: f64,
    gamma: f64,
    rest: &[usize],
) {
    for &i in rest {
        let t = rl1 * z1[i] + acor[i];
        tv[i] = gamma * f[i] - t;
    }
}

/// `newton_update` over the `live` states only, in increasing order. A skipped (constant)
/// state's δ is ±0 (f_i ≡ 0, and its z_1 and acor are +0), so the full pass adds +0 to the
/// sum and to acor and y = z_0 + acor = z_0 there (as `newton` set y first, acor = 0): the
/// same bits.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn newton_update_live(
    acor: &mut [f64],
    y: &mut [f64],
    tv: &mut [f64],
    z0: &[f64],
    w: &[f64],
    scale: bool,
    c: f64,
    n: usize,
    live: &Live,
) -> f64 {
    let (acor, y, tv, z0, w) = (&mut acor[..n], &mut y[..n], &mut tv[..n], &z0[..n], &w[..n]);
    let sum = update_groups::<GROUP>(acor, y, tv, z0, w, scale, c, live.groups);
    update_rest(acor, y, tv, z0, w, scale, c, &live.rest, sum)
}

/// The update of the groups' live states, their δ read from `d` (S values a group, as
/// `residual_groups` wrote them; scaled there): the drift scaling, the weighted sum of squares
/// (returned, from 0) and acor += δ, y = z_0 + acor.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn update_groups<const S: usize>(
    acor: &mut [f64],
    y: &mut [f64],
    d: &mut [f64],
    z0: &[f64],
    w: &[f64],
    scale: bool,
    c: f64,
    groups: usize,
) -> f64 {
    let g = GROUP * groups;
    let mut sum = 0.0;
    for ((((a, y), d), z0), w) in acor[..g]
        .chunks_exact_mut(GROUP)
        .zip(y[..g].chunks_exact_mut(GROUP))
        .zip(d[..S * groups].chunks_exact_mut(S))
        .zip(z0[..g].chunks_exact(GROUP))
        .zip(w[..g].chunks_exact(GROUP))
    {
        for r in 0..LEAD {
            if scale {
                d[r] *= c;
            }
            let e = d[r] * w[r];
            sum += e * e;
            a[r] += d[r];
            y[r] = z0[r] + a[r];
        }
    }
    sum
}

/// `update_groups` for the live states after the groups (`Live::rest`), their δ in tv, the
/// sum of squares continued from `sum`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn update_rest(
    acor: &mut [f64],
    y: &mut [f64],
    tv: &mut [f64],
    z0: &[f64],
    w: &[f64],
    scale: bool,
    c: f64,
    rest: &[usize],
    mut sum: f64,
) -> f64 {
    for &i in rest {
        if scale {
            tv[i] *= c;
        }
        let e = tv[i] * w[i];
        sum += e * e;
        acor[i] += tv[i];
        y[i] = z0[i] + acor[i];
    }
    sum
}

/// `Step::newton_passes`' variants: over every state, over the live ones (`Live::groups`), or
/// fused with the direct solve's split (`Workspace::fused`: the groups' residual and δ in
/// `Peel::b`, LEAD values a group).
const FULL: u8 = 0;
const LIVE: u8 = 1;
const FUSED: u8 = 2;

/// Whether every value is finite: Σ 0·v_i is ±0 when they all are and NaN when one is not
/// (0·∞ = NaN), two operations a value and no branch (`iter().all(is_finite)` cost ~45
/// instructions a right-hand side on 5 states, callgrind). Every term is ±0 or NaN, so the
/// order of the sum does not matter: the odd value first, then two sums over the pairs (one
/// SSE2 operation a pair, where the single sum's chain cost ~5 instructions a value).
#[inline]
fn finite_values(v: &[f64]) -> bool {
    let mut acc = [0.0f64; 2];
    let odd = v.len() % 2;
    if odd == 1 {
        acc[0] = 0.0 * v[0];
    }
    for p in v[odd..].chunks_exact(2) {
        acc[0] += 0.0 * p[0];
        acc[1] += 0.0 * p[1];
    }
    acc[0] + acc[1] == 0.0
}

/// Weighted RMS norm over `len` states (the weights of the others are 0).
#[inline]
fn wrms(v: &[f64], w: &[f64], len: f64) -> f64 {
    let s: f64 = v.iter().zip(w).map(|(a, b)| (a * b) * (a * b)).sum();
    (s / len.max(1.0)).sqrt()
}

impl Bdf {
    /// Adaptive order 1–5 and step (`bdf`).
    pub fn adaptive(n: usize) -> Self {
        Bdf::build(None, n)
    }

    /// Fixed order `k` with the driver's step (`bdf1`..`bdf5`).
    pub fn fixed(k: usize, n: usize) -> Self {
        assert!((1..=MAX_ORDER).contains(&k), "BDF order 1..5");
        Bdf::build(Some(k), n)
    }

    fn build(fixed: Option<usize>, n: usize) -> Self {
        let mut b = Bdf {
            fixed,
            n,
            tolerances: Tolerances::default(),
            stats: Stats::default(),
            hist: Box::default(),
            trial: Box::default(),
            last: LastStep::default(),
            linear: LinearSolver::Auto,
            gmres_limits: GmresLimits::default(),
            const_refused: false,
            ws: Box::default(),
        };
        b.hist.zn = vec![0.0; (MAX_ORDER + 1) * n];
        if let Some(k) = fixed {
            b.hist.start_y = vec![0.0; (k + 1) * n];
        }
        b
    }

    /// Current order (of the committed history).
    pub fn current_order(&self) -> usize {
        self.hist.q
    }

    /// Step size the next attempt will start from.
    pub fn next_step_size(&self) -> f64 {
        self.hist.hprime
    }

    /// Size of the last committed step, s.
    pub(crate) fn step_size(&self) -> f64 {
        self.hist.h
    }

    /// How many Jacobians the committed history has computed (identifies the saved one).
    pub(crate) fn jacobian_count(&self) -> u64 {
        self.hist.jac_count
    }

    /// An upper bound on the spectral radius of the saved Jacobian: the smaller of Gershgorin's
    /// row and column bounds of W·J·W⁻¹, W = diag(1/(rtol·|y_i| + atol)) (a similarity, so the
    /// eigenvalues are J's; the scaling makes the bound independent of the states' units),
    /// over the states other than the system's quadratures: their columns of J are empty, so
    /// J is block-triangular and its eigenvalues are those of the other block and zeros. (Their
    /// rows would count, weighted by 1/(rtol·|q| + atol) of accumulators that start at 0.)
    /// `None` before the first Jacobian.
    pub(crate) fn jacobian_radius_bound(&mut self) -> Option<f64> {
        let n = self.n;
        let ws = &mut *self.ws;
        let p = ws.m_pattern.as_ref()?;
        if self.hist.jac_count == 0
            || self.hist.jac.len() != p.nonzeros()
            || self.hist.zn.len() < n
            || ws.rowsum.len() != n
        {
            return None;
        }
        let (rtol, atol) = (self.tolerances.rtol, self.tolerances.atol);
        let zn = &self.hist.zn;
        if ws.weight_mask.len() != n {
            return None;
        }
        let quad = |i: usize| ws.quad.iter().any(|r| r.contains(&i));
        let w = |i: usize| 1.0 / (rtol * zn[i].abs() + atol);
        let mut col_max = 0.0f64;
        ws.rowsum.fill(0.0);
        // Column sums directly, row sums accumulated (J is stored by columns).
        for j in (0..n).filter(|&j| !quad(j)) {
            let wj = w(j);
            let range = p.col_start[j]..p.col_start[j + 1];
            let mut s = 0.0;
            for (&i, a) in p.rows[range.clone()].iter().zip(&self.hist.jac[range]) {
                if quad(i) {
                    continue;
                }
                s += a.abs() * w(i);
                ws.rowsum[i] += a.abs() / wj;
            }
            col_max = col_max.max(s / wj);
        }
        let row_max = (0..n).fold(0.0f64, |m, i| m.max(ws.rowsum[i] * w(i)));
        let r = col_max.min(row_max);
        r.is_finite().then_some(r)
    }

    /// Force the dense or the sparse factorization (`Auto` chooses by size); drops the
    /// workspace, so the next step prepares it again.
    pub fn set_linear_solver(&mut self, linear: LinearSolver) {
        self.linear = linear;
        *self.ws = Workspace::default();
    }

    /// GMRES's restart length and number of restarts on the Krylov path; drops the workspace.
    pub fn set_gmres_limits(&mut self, limits: GmresLimits) {
        self.gmres_limits = limits;
        *self.ws = Workspace::default();
    }

    /// Whether the Newton systems are solved by GMRES (after the first step or
    /// `jacobian_groups`).
    pub fn uses_krylov(&self) -> bool {
        self.ws.krylov.is_some()
    }

    /// Counters of the GMRES solves since the workspace was prepared (`None` off the Krylov
    /// path). Not saved with the state.
    pub fn krylov_stats(&self) -> Option<KrylovStats> {
        self.ws.krylov.as_ref().map(|k| k.stats)
    }

    /// Whether M is factored sparsely (after the first step or `jacobian_groups`).
    pub fn uses_sparse_lu(&self) -> bool {
        self.ws.direct.sparse
    }

    /// Whether M is factored as a band matrix (after the first step or `jacobian_groups`).
    pub fn uses_band_lu(&self) -> bool {
        self.ws.direct.band.is_some()
    }

    /// Whether the band LU factors M in reverse Cuthill–McKee order (not the states' own).
    pub fn uses_reordered_band_lu(&self) -> bool {
        self.ws.direct.band.is_some() && self.ws.direct.reordered
    }

    /// Size the workspace for `sys` (once; again after `set_linear_solver`). Fails, before
    /// allocating the factors, when the band or dense LU would store more than
    /// `MAX_FACTOR_VALUES` values; the column groups are set up even then.
    // Inlined: every attempt asks, and only the first of a solve does the work (the call
    // itself cost ~17 instructions an attempt).
    #[inline(always)]
    fn prepare<S: OdeSystem>(&mut self, sys: &S) -> Result<(), SolverError> {
        if self.ws.n == self.n && self.ws.m_pattern.is_some() {
            return Ok(());
        }
        self.prepare_workspace(sys)
    }

    /// `prepare`'s work: once per solve (and after a restore or a change of the linear solver).
    #[cold]
    #[inline(never)]
    fn prepare_workspace<S: OdeSystem>(&mut self, sys: &S) -> Result<(), SolverError> {
        let n = self.n;
        let ws = &mut self.ws;
        ws.n = n;
        for v in [
            &mut ws.inc,
            &mut ws.ewt,
            &mut ws.acor,
            &mut ws.y,
            &mut ws.ftemp,
            &mut ws.tempv,
            &mut ws.fpert,
            &mut ws.ypert,
            &mut ws.fjvp,
            &mut ws.rowsum,
        ] {
            ensure_len(v, n);
        }
        ws.lu_tag = None;
        let pattern = sys
            .sparsity()
            .filter(|p| p.n == n)
            .unwrap_or_else(|| Pattern::dense(n));
        // The system's constant states (GMRES keeps every state), taken only where J's own
        // pattern (diagonal included, before quadrature rows are dropped) has an empty row: a
        // state declared constant whose f_i depends on anything is stepped as any other.
        let mut constant = vec![false; n];
        if !self.const_refused && self.linear != LinearSolver::Krylov {
            let declared = sys.constant_states();
            if !declared.is_empty() {
                for i in declared {
                    if let Some(c) = constant.get_mut(i) {
                        *c = true;
                    }
                }
                for &i in &pattern.rows {
                    constant[i] = false;
                }
            }
        }
        // Quadrature rows (the accumulators) left out when they would multiply the groups.
        let (pattern, coloring) = newton_groups(pattern);
        let (m_pattern, jpos) = pattern.with_diagonal();
        ws.groups = Some((pattern, coloring));
        ws.jpos = jpos;
        let nnz = m_pattern.nonzeros();
        // The direct paths factor the coupled states only (`Peel`); GMRES runs over M.
        // Up to `SMALL_MAX` states (the fixed-size LU, unrolled on n) the gathers, scatters and
        // row sweeps around a smaller LU cost about as much as they save: there only the first
        // states are split off, and only when that halves the LU (callgrind, bdf solves: with
        // both kinds split off vent 272k → 279k, wall 493k → 521k, piston 596k → 625k
        // instructions; the vent's first state alone, 5 → 4, 272k → 284k; the two tanks' four
        // first states, 8 → 4, 360k → 347k). Without a split, trailing quadratures still leave
        // the LU, in place (`Direct::tail`).
        let small_system = n <= SMALL_MAX;
        let mut peel = match self.linear {
            LinearSolver::Krylov => None,
            _ if small_system => Peel::of(&m_pattern, false, n - n / 2, &constant),
            _ => Peel::of(&m_pattern, true, 1, &constant),
        };
        // The pattern, size and entries of the matrix the LU factors.
        let fp = peel.as_ref().map_or(&m_pattern, |p| &p.pattern);
        let (nf, fnnz) = (fp.n, fp.nonzeros());
        let (kl, ku) = bandwidths(fp);
        // A band in another order: a network numbers its states by component kind (every
        // chamber, then every piston), so a chain with pistons has a wide band in its own order
        // and a narrow one in reverse Cuthill–McKee order. Only for `Auto` from
        // `SPARSE_MIN_STATES` to `BAND_RCM_MAX_STATES` states (above, the sparse LU is faster)
        // when the own order's band is wide, so that every network
        // that took the band or sparse LU in its own order before and still does factors the
        // same matrix in the same order (same bits).
        ws.direct.band_perm = Vec::new();
        ws.direct.band_pos = Vec::new();
        ws.direct.band_rhs = Vec::new();
        let mut reordered = None;
        if self.linear == LinearSolver::Auto
            && (SPARSE_MIN_STATES..BAND_RCM_MAX_STATES).contains(&nf)
            && kl + ku > BAND_MAX
        {
            let perm = reverse_cuthill_mckee(fp);
            let mut pos = vec![0; nf];
            for (k, &i) in perm.iter().enumerate() {
                pos[i] = k;
            }
            let (pkl, pku) = bandwidths_under(fp, &pos);
            if pkl + pku <= BAND_MAX {
                reordered = Some((pkl, pku));
                if let Some(peel) = peel.as_mut() {
                    // The coupled states taken in the band's order: their gather is the only
                    // one (the same matrix in the same order as through `band_pos`: the
                    // same bits).
                    peel.reorder(&perm, &pos);
                } else {
                    ws.direct.band_perm = perm;
                    ws.direct.band_pos = pos;
                    ws.direct.band_rhs = vec![0.0; nf];
                }
            }
        }
        ws.direct.reordered = reordered.is_some();
        let fp = peel.as_ref().map_or(&m_pattern, |p| &p.pattern);
        ws.direct.diag = (0..nf)
            .map(|j| fp.col_start[j] + fp.column(j).partition_point(|&i| i < j))
            .collect();
        // Krylov when asked for, or for `Auto` on a pattern whose direct LU fills (2-D grids):
        // there GMRES is 2–4× faster per step than the sparse LU and grows linearly with the
        // size, where any elimination order fills superlinearly (George 1973). The band choice
        // comes first (a chain's fill ratio is 1.0 anyway).
        let krylov = match self.linear {
            LinearSolver::Krylov => true,
            LinearSolver::Auto => {
                n >= KRYLOV_MIN_STATES
                    && !(kl + ku <= BAND_MAX || reordered.is_some())
                    && fill_ratio(&m_pattern).is_some_and(|f| f >= KRYLOV_MIN_FILL)
            }
            _ => false,
        };
        // The quadratures the system names, out of the adaptive method's norms (not in the
        // fixed-order variants). The Krylov path solves them outside GMRES (`quad_rows`).
        ws.quad = sys.quadratures();
        ws.quad_out = self.fixed.is_none();
        let quad = |j: usize| ws.quad.iter().any(|r| r.contains(&j));
        ws.weight_mask.clear();
        ws.weight_mask
            .extend((0..n).map(|j| if quad(j) && ws.quad_out { 0 } else { u64::MAX }));
        let in_norms = ws.weight_mask.iter().filter(|&&m| m != 0).count();
        ws.n_err = in_norms.max(1) as f64;
        ws.direct.band = match self.linear {
            // No coupled states: no LU at all.
            _ if nf == 0 => None,
            LinearSolver::Krylov => None,
            LinearSolver::Banded => Some((kl, ku)),
            LinearSolver::Auto if nf < SPARSE_MIN_STATES || kl + ku <= BAND_MAX => Some((kl, ku)),
            LinearSolver::Auto if krylov => None,
            LinearSolver::Auto => reordered,
            _ => None,
        };
        ws.direct.ab = Vec::new();
        ws.direct.fill_map = None;
        ws.direct.ipiv = Vec::new();
        ws.direct.band_counts = Vec::new();
        ws.direct.small = false;
        ws.direct.tail = 0;
        ws.direct.small_kind = 0;
        ws.direct.sel = SmallSel::default();
        // The constant states the small LU leaves out through `Direct::sel`.
        let mut small_constant = Vec::new();
        let forced = matches!(self.linear, LinearSolver::Dense | LinearSolver::Banded);
        if let Some((bkl, bku)) = ws.direct.band {
            // Against all n states (as before the coupled ones were split off): a bound on
            // what is stored.
            let values = (2 * bkl + bku + 1).checked_mul(n);
            // Only a forced choice is refused: `Auto` takes a band only when it is narrow.
            if forced && values.is_none_or(|v| v > MAX_FACTOR_VALUES) {
                ws.direct.band = None;
                return Err(too_large(self.linear, true, n, values));
            }
            // The band's own widths (the reordered ones when reordered).
            ws.direct.small = ws.direct.band_perm.is_empty() && nf <= SMALL_MAX;
            // Without a `Peel`, the trailing states whose column holds only the diagonal
            // (below `Peel`'s halving rule on small systems; at least one state left to the LU).
            if ws.direct.small && peel.is_none() {
                let t = (0..nf).rev().take_while(|&q| fp.column(q) == [q]).count();
                ws.direct.tail = t.min(nf - 1);
                if ws.direct.tail > 0 {
                    // The tail rows' entries outside the pattern are never written: zero
                    // from here on.
                    ws.direct.small_lu = [[0.0; SMALL_MAX]; SMALL_MAX];
                }
                ws.direct.small_kind = nf - ws.direct.tail;
                // The constant states before the tail left out of the LU (`SmallSel`), when
                // any state is left to it: a closed chamber's mass and a fixed volume (the
                // wall's LU 6 → 4, the piston's 3 → 2).
                let head = nf - ws.direct.tail;
                let kept: Vec<usize> = (0..head).filter(|&i| !constant[i]).collect();
                if !kept.is_empty() && kept.len() < head {
                    let mut sel = SmallSel {
                        tail_start: head,
                        ..SmallSel::default()
                    };
                    for (k, &i) in kept.iter().enumerate() {
                        sel.state[k] = i;
                        sel.row[i] = k;
                    }
                    for (q, i) in (head..nf).enumerate() {
                        sel.row[i] = kept.len() + q;
                    }
                    ws.direct.sel = sel;
                    ws.direct.small_kind = SMALL_SEL + kept.len();
                    small_constant = (0..head).filter(|&i| constant[i]).collect();
                    ws.direct.small_lu = [[0.0; SMALL_MAX]; SMALL_MAX];
                }
            } else if ws.direct.small {
                ws.direct.small_kind = nf;
            }
            if !ws.direct.small {
                // Where each of J's values goes in the band (through `Peel::src` for the
                // coupled block): the fill is then one indexed store per entry.
                let src = peel.as_ref().map_or(&[][..], |p| &p.src[..]);
                ws.direct.fill_map = Some(FillMap::new(fp, bkl, bku, src, &ws.direct.band_pos));
                ws.direct.ab = vec![0.0; (2 * bkl + bku + 1) * nf];
                ws.direct.ipiv = vec![0; nf];
                ws.direct.band_counts = vec![0; 2 * nf];
            }
        }
        ws.direct.sparse = match self.linear {
            _ if nf == 0 => false,
            LinearSolver::Dense | LinearSolver::Banded | LinearSolver::Krylov => false,
            LinearSolver::Sparse => true,
            LinearSolver::Auto => {
                !krylov
                    && ws.direct.band.is_none()
                    && nf >= SPARSE_MIN_STATES
                    && 2 * fnnz <= nf * nf
            }
        };
        ws.direct.symbolic = None;
        ws.direct.sp_mem = None;
        ws.direct.m_vals = Vec::new();
        if ws.direct.sparse {
            // Symbolic analysis once per pattern (COLAMD column order, elimination tree).
            let a = SymbolicSparseColMatRef::new_checked(nf, nf, &fp.col_start, None, &fp.rows);
            match factorize_symbolic_lu(a, LuSymbolicParams::default()) {
                Ok(sym) => {
                    let req = sym
                        .factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default())
                        .or(sym.solve_in_place_scratch::<f64>(1, Par::Seq));
                    let mut mem = MemBuffer::new(req);
                    ws.direct.m_vals = vec![0.0; fnnz];
                    warm_sparse_lu(
                        &sym,
                        fp,
                        &mut ws.direct.numeric,
                        &mut ws.direct.m_vals,
                        &mut mem,
                    );
                    ws.direct.sp_mem = Some(mem);
                    ws.direct.symbolic = Some(sym);
                }
                // Out of memory in the analysis: the dense path (which may well fail too).
                Err(_) => ws.direct.sparse = false,
            }
        }
        ws.krylov = None;
        if krylov {
            let invariants: Vec<Vec<usize>> = sys
                .linear_invariants()
                .into_iter()
                .filter(|set| !set.is_empty() && set.iter().all(|&i| i < n))
                .collect();
            let mut quad_rows: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
            if ws.quad_out {
                quad_rows = (0..n)
                    .filter(|&q| ws.quad.iter().any(|r| r.contains(&q)))
                    .map(|q| (q, Vec::new()))
                    .collect();
                for j in 0..n {
                    let start = m_pattern.col_start[j];
                    for (k, &i) in m_pattern.column(j).iter().enumerate() {
                        if i != j
                            && let Some(row) = quad_rows.iter_mut().find(|(q, _)| *q == i)
                        {
                            row.1.push((j, start + k));
                        }
                    }
                }
            }
            ws.krylov = Some(Box::new(KrylovWs {
                ilu: Ilu0::new(&m_pattern),
                gmres: Gmres::new(n, self.gmres_limits),
                stats: KrylovStats::default(),
                inv_b: vec![0.0; invariants.len()],
                inv_w: vec![0.0; invariants.iter().map(Vec::len).max().unwrap_or(0)],
                invariants,
                quad_b: vec![0.0; quad_rows.len()],
                quad_rows,
            }));
        }
        // The dense path's n² matrix only where it is used.
        ws.direct.lu = None;
        ws.direct.rhs = None;
        ws.direct.mem = None;
        if !ws.direct.sparse && ws.direct.band.is_none() && ws.krylov.is_none() && nf > 0 {
            // Against all n states, as the band's.
            let values = n.checked_mul(n);
            // Only a forced choice is refused: `Auto` falls back to the dense LU where no
            // other fits (e.g. the dense pattern of a system with sensitivities), as before.
            if forced && values.is_none_or(|v| v > MAX_FACTOR_VALUES) {
                return Err(too_large(self.linear, false, n, values));
            }
            ws.direct.lu = Some(Mat::zeros(nf, nf));
            ws.direct.rhs = Some(Mat::zeros(nf, 1));
            ws.direct.perm = vec![0; nf];
            ws.direct.perm_inv = vec![0; nf];
            let req =
                lu_factor::lu_in_place_scratch::<usize, f64>(nf, nf, Par::Seq, Default::default())
                    .or(lu_solve::solve_in_place_scratch::<usize, f64>(
                        nf,
                        1,
                        Par::Seq,
                    ));
            ws.direct.mem = Some(MemBuffer::new(req));
        }
        ws.peel = if ws.krylov.is_some() {
            None
        } else {
            peel.map(Box::new)
        };
        ws.constant = ws
            .peel
            .as_ref()
            .map_or(small_constant, |p| p.constant.clone());
        ws.live = None;
        if !ws.constant.is_empty() {
            constant.fill(false);
            for &i in &ws.constant {
                constant[i] = true;
            }
            let live = Live::of(&constant);
            // The small LU's selection (no `Peel`): the passes over the live states only when
            // they take fewer operations (pairs and singles) than the full ones' pairs (vent
            // 5 → 2 pairs, wall 9 → 3 pairs and a single; the piston's 6 → 2 pairs and a
            // single is no fewer: callgrind, bdf solves, piston 449.2k with the live passes,
            // 445.6k without, wall 308.3k against 309.5k, vent 219.3k against 222.3k).
            let fewer = live.pairs.len() + live.singles.len() < n.div_ceil(2);
            if ws.peel.is_some() || fewer {
                ws.live = Some(live);
            }
        }
        ws.fused = match (ws.peel.as_deref(), ws.live.as_ref()) {
            (Some(peel), Some(live)) => {
                live.groups > 0
                    && peel.groups == live.groups
                    && peel.first.is_empty()
                    && live.rest.iter().eq(peel.last.iter().map(|s| &s.state))
            }
            _ => false,
        };
        ws.check_const = true;
        ws.m_pattern = Some(m_pattern);
        // J's storage follows the pattern; a restored one of another length is not this
        // system's: a new one is evaluated at the next setup (`validate_state` rejects it
        // unless it is empty, i.e. saved before the first step).
        ws.force_jac = false;
        if self.hist.jac.len() != nnz {
            ws.force_jac = self.hist.jac_count > 0;
            self.hist.jac.clear();
            self.hist.jac.resize(nnz, 0.0);
        }
        self.trial.assign(&self.hist);
        // The RK4 start steps are the fixed-order variants' (bdf2..bdf5) only.
        if self.fixed.is_some_and(|k| k > 1) {
            ws.rk4 = Rk4::new(n);
            ws.rk4.ensure(n);
        }
        Ok(())
    }

    /// `dense` without a Nordsieck step to interpolate: no last step from t (a step of its
    /// own, not kept, then its dense output), or an RK4 start step (a shorter RK4 step). Out
    /// of line: the interpolation, at nearly every output time, then saves fewer registers.
    #[cold]
    #[inline(never)]
    fn dense_other<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        if !self.last.valid || self.last.t != t {
            // Nothing to interpolate (after a restart): a step of its own, not kept.
            self.attempt_inner(sys, t, y, h)?;
            self.last.pending = false;
        }
        if self.last.starter {
            self.prepare(sys)?;
            let k1 = self.ws.rk4.k1_mut();
            sys.rhs(t, y, k1);
            check_finite(t, k1)?;
            return self.ws.rk4.step_with_k1(sys, t, y, h, inc);
        }
        // Now valid from t and not a start step: the interpolation.
        self.dense(sys, t, y, h, inc)
    }

    /// `self = o` without allocating once the histories have their sizes (fmi2SetFMUstate into
    /// a running instance of the same model). The workspace (pattern, symbolic LU, scratch) is
    /// this model's and is kept; only the factored M is dropped, since it belongs to the
    /// history it replaces (it is refactored from the restored J and γ: same bits). The linear
    /// solver choice is this process's setting: kept.
    pub(crate) fn assign(&mut self, o: &Bdf) {
        let Bdf {
            fixed,
            n,
            tolerances,
            stats,
            hist,
            trial,
            last,
            linear: _,
            gmres_limits: _,
            const_refused: _,
            ws,
        } = self;
        *fixed = o.fixed;
        *tolerances = o.tolerances.clone();
        *stats = o.stats;
        hist.assign(&o.hist);
        trial.assign(&o.trial);
        // `History::assign` skips J when the counts agree (one lineage); a restored state is
        // another lineage: copied always.
        hist.jac.clone_from(&o.hist.jac);
        trial.jac.clone_from(&o.trial.jac);
        last.valid = o.last.valid;
        last.pending = o.last.pending;
        last.t = o.last.t;
        last.h = o.last.h;
        last.starter = o.last.starter;
        last.inc.clone_from(&o.last.inc);
        ws.lu_tag = None;
        ws.force_jac = false;
        ws.trial_synced = false;
        ws.check_const = true;
        if *n != o.n {
            *n = o.n;
            **ws = Workspace::default();
        } else if let Some(nnz) = ws.m_pattern.as_ref().map(Pattern::nonzeros) {
            // A state saved before the first step has no J yet (`prepare` sizes it).
            for h in [&mut **hist, &mut **trial] {
                if h.jac.len() != nnz {
                    ws.force_jac |= h.jac_count > 0;
                    h.jac.clear();
                    h.jac.resize(nnz, 0.0);
                }
            }
        }
    }

    /// Number of values of the saved Jacobian for `sys`: the entries of the pattern of
    /// M = I − γJ (`newton_groups` of the system's pattern, with the diagonal), n² without one.
    pub fn jacobian_len<S: OdeSystem>(sys: &S) -> usize {
        let n = sys.dimension();
        match sys.sparsity().filter(|p| p.n == n) {
            Some(p) => newton_groups(p).0.with_diagonal().0.nonzeros(),
            None => n * n,
        }
    }

    /// [`fill_ratio`] of the pattern of M for `sys` (`None` without a pattern); a diagnostic.
    pub fn fill_ratio_of<S: OdeSystem>(sys: &S) -> Option<f64> {
        let n = sys.dimension();
        let p = sys.sparsity().filter(|p| p.n == n)?;
        fill_ratio(&newton_groups(p).0.with_diagonal().0)
    }

    /// The committed history's saved Jacobian (tests that corrupt a state).
    #[cfg(test)]
    pub(crate) fn saved_jacobian_mut(&mut self) -> &mut Vec<f64> {
        self.ws.trial_synced = false;
        &mut self.hist.jac
    }

    /// Lengths of the committed and the working history's saved Jacobian (0: none yet).
    pub fn saved_jacobian_lens(&self) -> [usize; 2] {
        [self.hist.jac.len(), self.trial.jac.len()]
    }

    /// Number of column groups of the finite-difference Jacobian and the number of columns.
    pub fn jacobian_groups<S: OdeSystem>(&mut self, sys: &S) -> (usize, usize) {
        // The groups are set up even when the factors' storage is refused.
        let _ = self.prepare(sys);
        let (_, c) = self.ws.groups.as_ref().unwrap();
        (c.n_colors(), self.n)
    }
}

/// Size the numeric sparse LU's storage before the step loop. faer grows the L and U vectors
/// of a factorization (`Vec::try_reserve`, never shrinking) whenever its fill, which depends on
/// the row pivots, exceeds every earlier one: the first factorizations of M = I − γJ in a run
/// would allocate, and a later one that pivots otherwise could. Factors of random values over
/// the pattern pivot away from the diagonal and fill far more than M (close to the identity for
/// the γ of a step) does; three of them leave room that the step loop has not outgrown in any
/// run measured (`tests/solvers/no_alloc.rs`). A heuristic, not a bound: the bound on the fill under
/// any pivoting (the Cholesky factor of MᵀM, George & Ng, SIAM J. Sci. Stat. Comput. 6 (1985))
/// cannot be reserved through faer's API.
fn warm_sparse_lu(
    sym: &SymbolicLu<usize>,
    p: &Pattern,
    numeric: &mut NumericLu<usize, f64>,
    vals: &mut [f64],
    mem: &mut MemBuffer,
) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..3 {
        for v in vals.iter_mut() {
            // xorshift64: values in (−1, 1), reproducible.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0;
        }
        let a = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(p.n, p.n, &p.col_start, None, &p.rows),
            &*vals,
        );
        // A singular draw only sizes less: its result is not used.
        let _ =
            sym.factorize_numeric_lu(numeric, a, Par::Seq, MemStack::new(mem), Default::default());
    }
    vals.fill(0.0);
}

/// One step's machinery over the working copy.
struct Step<'a, S: OdeSystem> {
    sys: &'a mut S,
    s: &'a mut History,
    ws: &'a mut Workspace,
    stats: &'a mut Stats,
    tol: &'a Tolerances,
    fixed: Option<usize>,
    n: usize,
}

impl<S: OdeSystem> Step<'_, S> {
    fn qmax(&self) -> usize {
        self.fixed.unwrap_or(MAX_ORDER)
    }

    // Inlined (as `complete_step` and `set_coefficients`) into the step: each call's own
    // entry and exit cost ~20 instructions a step on the small networks (callgrind).
    #[inline(always)]
    fn set_weights(&mut self) {
        let (rtol, atol) = if self.fixed.is_some() {
            (FIXED_RTOL, FIXED_ATOL.max(self.tol.atol.min(1e-14)))
        } else {
            (self.tol.rtol, self.tol.atol)
        };
        let n = self.n;
        let ws = &mut *self.ws;
        // An index loop over slices cut to n, the quadratures' weights +0 by their mask: no
        // branch, two states at a time.
        let (e, m, z) = (&mut ws.ewt[..n], &ws.weight_mask[..n], &self.s.zn[..n]);
        for i in 0..n {
            let w = 1.0 / (rtol * z[i].abs() + atol);
            e[i] = f64::from_bits(w.to_bits() & m[i]);
        }
    }

    #[inline(always)]
    fn rhs(&mut self, t: f64, which: Buf) -> bool {
        let (y, f) = match which {
            Buf::Y => (&self.ws.y[..], &mut self.ws.ftemp),
            Buf::Z0 => (&self.s.zn[..self.n], &mut self.ws.ftemp),
            Buf::Pert => (&self.ws.ypert[..], &mut self.ws.fpert),
        };
        self.sys.rhs(t, y, f);
        finite_values(f)
    }

    /// Initial step: Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.4 (order 1), in the
    /// tolerance-weighted norm; `ftemp` holds f(t, y).
    fn initial_step(&mut self, t: f64, h_cap: f64) -> Result<f64, SolverError> {
        if let Some(h0) = self.tol.initial_step {
            return Ok(h0.min(h_cap));
        }
        let n = self.n;
        // Norms that overflow (atol near 0, rates near 1e300) are formed scaled instead.
        let norm = |v: &[f64], w: &[f64], len: f64| match wrms(v, w, len) {
            r if r.is_finite() => r,
            _ => super::wrms_scaled(v, w, len),
        };
        let d0 = norm(&self.s.zn[..n], &self.ws.ewt, self.ws.n_err);
        let d1 = norm(&self.ws.ftemp, &self.ws.ewt, self.ws.n_err);
        let h0 = if d0 < 1e-5 || d1 < 1e-5 {
            1e-6
        } else {
            0.01 * d0 / d1
        }
        .min(h_cap);
        for i in 0..n {
            self.ws.ypert[i] = self.s.zn[i] + h0 * self.ws.ftemp[i];
        }
        if !self.rhs(t + h0, Buf::Pert) {
            return Ok(h0 * 1e-3);
        }
        for i in 0..n {
            self.ws.tempv[i] = (self.ws.fpert[i] - self.ws.ftemp[i]) / h0;
        }
        let d2 = norm(&self.ws.tempv, &self.ws.ewt, self.ws.n_err);
        let dm = d1.max(d2);
        let h1 = if dm <= 1e-15 {
            (h0 * 1e-3).max(1e-6)
        } else if dm.is_finite() {
            (0.01 / dm).sqrt()
        } else {
            h0 // the probe's difference overflowed: keep the first guess
        };
        let h = (100.0 * h0).min(h1).min(h_cap);
        Ok(if h > 0.0 && h.is_finite() {
            h
        } else {
            1e-6f64.min(h_cap)
        })
    }

    /// Start afresh at (t, y) with order 1: z = (y, h·f(t, y)).
    fn initialize(&mut self, t: f64, y: &[f64], h_cap: f64) -> Result<(), SolverError> {
        let n = self.n;
        let s = &mut *self.s;
        s.zn[..n].copy_from_slice(y);
        self.ws.y.copy_from_slice(y);
        self.sys.rhs(t, &self.ws.y, &mut self.ws.ftemp);
        check_finite(t, &self.ws.ftemp)?;
        self.set_weights();
        let h0 = if let Some(k) = self.fixed {
            debug_assert_eq!(k, 1);
            h_cap
        } else {
            self.initial_step(t, h_cap)?
        };
        let s = &mut *self.s;
        for i in 0..n {
            s.zn[n + i] = h0 * self.ws.ftemp[i];
        }
        s.started = true;
        s.tn = t;
        s.q = 1;
        s.qprime = 1;
        s.qwait = 2;
        s.h = h0;
        s.hprime = h0;
        s.hscale = h0;
        s.eta = 1.0;
        s.etamax = ETAMX1;
        s.tau = [0.0; MAX_ORDER + 2];
        s.saved_tq5 = 0.0;
        s.crate_ = 1.0;
        s.nst = 0;
        s.nstlp = 0;
        s.nstlj = 0;
        s.gammap = 0.0;
        s.gamrat = 1.0;
        Ok(())
    }

    fn restore(&mut self, saved_t: f64) {
        let (n, q) = (self.n, self.s.q);
        self.s.tn = saved_t;
        if n <= NORDSIECK_BLOCK {
            // Element by element, two states at a time, with the order a constant (as
            // `predict_small`): the same subtractions in the same order.
            let zn = &mut self.s.zn[..(q + 1) * n];
            match q {
                1 => return restore_small::<1, 2>(zn, n),
                2 => return restore_small::<2, 3>(zn, n),
                3 => return restore_small::<3, 4>(zn, n),
                4 => return restore_small::<4, 5>(zn, n),
                5 => return restore_small::<5, 6>(zn, n),
                _ => {}
            }
        }
        for k in 1..=q {
            for j in (k..=q).rev() {
                let (prev, next) = column_pair(&mut self.s.zn, n, j);
                for (a, b) in prev.iter_mut().zip(next) {
                    *a -= *b;
                }
            }
        }
    }

    fn rescale(&mut self) {
        let (n, q, eta) = (self.n, self.s.q, self.s.eta);
        let mut factor = eta;
        for j in 1..=q {
            for v in &mut self.s.zn[j * n..(j + 1) * n] {
                *v *= factor;
            }
            factor *= eta;
        }
        self.s.h = self.s.hscale * eta;
        self.s.hscale = self.s.h;
    }

    /// CVODE's cvSetBDF and cvSetTqBDF: ℓ_j and the error constants for the step history.
    #[inline(always)]
    fn set_coefficients(&mut self) {
        let s = &mut *self.s;
        let q = s.q;
        let h = s.h;
        let wait1 = s.qwait == 1;
        // f64 equality: a NaN never matches (computed again).
        let uniform = s.tau[1..=q].iter().all(|&t| t == h);
        let k = s.coef_key;
        if !(uniform && k.q == q && k.h == h && (k.with_tq13 || !wait1)) {
            s.coef_key = if uniform {
                CoefKey {
                    q,
                    h,
                    with_tq13: wait1,
                }
            } else {
                CoefKey::default()
            };
            self.compute_coefficients();
        }
        let s = &mut *self.s;
        if s.nst == 0 {
            s.gammap = s.gamma;
        }
        s.gamrat = if s.nst > 0 { s.gamma / s.gammap } else { 1.0 };
    }

    // Out of line: about half the steps skip it (`CoefKey`), and the step stays small.
    // Specialized on the order (a constant argument to the inlined body): its short loops over
    // ℓ unrolled, the same operations in the same order.
    #[inline(never)]
    fn compute_coefficients(&mut self) {
        match self.s.q {
            1 => self.coefficients_of_order(1),
            2 => self.coefficients_of_order(2),
            3 => self.coefficients_of_order(3),
            4 => self.coefficients_of_order(4),
            5 => self.coefficients_of_order(5),
            q => self.coefficients_of_order(q),
        }
    }

    /// `compute_coefficients` at order q (= s.q).
    #[inline(always)]
    fn coefficients_of_order(&mut self, q: usize) {
        let s = &mut *self.s;
        let h = s.h;
        s.l = [0.0; MAX_ORDER + 1];
        s.l[0] = 1.0;
        s.l[1] = 1.0;
        let mut xi_inv = 1.0;
        let mut xistar_inv = 1.0;
        let mut alpha0 = -1.0;
        let mut alpha0_hat = -1.0;
        let mut hsum = h;
        if q > 1 {
            for j in 2..q {
                hsum += s.tau[j - 1];
                xi_inv = h / hsum;
                alpha0 -= 1.0 / j as f64;
                for i in (1..=j).rev() {
                    s.l[i] += s.l[i - 1] * xi_inv;
                }
            }
            alpha0 -= 1.0 / q as f64;
            xistar_inv = -s.l[1] - alpha0;
            hsum += s.tau[q - 1];
            xi_inv = h / hsum;
            alpha0_hat = -s.l[1] - xi_inv;
            for i in (1..=q).rev() {
                s.l[i] += s.l[i - 1] * xistar_inv;
            }
        }
        let qf = q as f64;
        let a1 = 1.0 - alpha0_hat + alpha0;
        let a2 = 1.0 + qf * a1;
        s.tq[2] = (a1 / (alpha0 * a2)).abs();
        s.tq[5] = (a2 * xistar_inv / (s.l[q] * xi_inv)).abs();
        if s.qwait == 1 {
            if q > 1 {
                let c = xistar_inv / s.l[q];
                let a3 = alpha0 + 1.0 / qf;
                let a4 = alpha0_hat + xi_inv;
                let cpinv = (1.0 - a4 + a3) / a3;
                s.tq[1] = (c * cpinv).abs();
            } else {
                s.tq[1] = 1.0;
            }
            hsum += s.tau[q];
            let xi_inv = h / hsum;
            let a5 = alpha0 - 1.0 / (qf + 1.0);
            let a6 = alpha0_hat - xi_inv;
            let cppinv = (1.0 - a6 + a5) / a2;
            s.tq[3] = (cppinv / (xi_inv * (qf + 2.0) * a5)).abs();
        }
        let nlscoef = if self.fixed.is_some() { 0.01 } else { NLSCOEF };
        s.tq[4] = nlscoef / s.tq[2];
        s.rl1 = 1.0 / s.l[1];
        s.gamma = h * s.rl1;
    }

    /// CVODE's cvAdjustOrder for BDF (cvIncreaseBDF / cvDecreaseBDF), before q changes.
    fn adjust_order(&mut self, deltaq: i32) {
        let (n, q) = (self.n, self.s.q);
        if q == 2 && deltaq != 1 {
            return;
        }
        let qmax = self.qmax();
        let s = &mut *self.s;
        let mut l = [0.0; MAX_ORDER + 2];
        if deltaq == 1 {
            l[2] = 1.0;
            let mut alpha1 = 1.0;
            let mut prod = 1.0;
            let mut xiold = 1.0;
            let mut alpha0 = -1.0;
            let mut hsum = s.hscale;
            if q > 1 {
                for j in 1..q {
                    hsum += s.tau[j + 1];
                    let xi = hsum / s.hscale;
                    prod *= xi;
                    alpha0 -= 1.0 / (j + 1) as f64;
                    alpha1 += 1.0 / xi;
                    for i in (2..=j + 2).rev() {
                        l[i] = l[i] * xiold + l[i - 1];
                    }
                    xiold = xi;
                }
            }
            let a1 = (-alpha0 - alpha1) / prod;
            // zn[q+1] = A1·Δ (saved in zn[qmax]); zn[j] += ℓ_j·zn[q+1].
            let lcol = q + 1;
            for i in 0..n {
                s.zn[lcol * n + i] = a1 * s.zn[qmax * n + i];
            }
            for j in 2..=q {
                for i in 0..n {
                    s.zn[j * n + i] += l[j] * s.zn[lcol * n + i];
                }
            }
            // A negative A1 makes −0 of a constant state's 0, which the corrector skips (the full
            // one turned it into +0): +0, so that a saved state keeps its bytes.
            for &i in &self.ws.constant {
                s.zn[lcol * n + i] = 0.0;
            }
        } else {
            l[2] = 1.0;
            let mut hsum = 0.0;
            for j in 1..=q.saturating_sub(2) {
                hsum += s.tau[j];
                let xi = hsum / s.hscale;
                for i in (2..=j + 2).rev() {
                    l[i] = l[i] * xi + l[i - 1];
                }
            }
            for j in 2..q {
                for i in 0..n {
                    s.zn[j * n + i] -= l[j] * s.zn[q * n + i];
                }
            }
        }
    }

    /// f at the predicted z_0 into ws.ftemp (read in place: the Newton update writes all of
    /// ws.y before anything reads it, and the Jacobian is evaluated at z_0 too).
    #[inline(always)]
    fn nls(&mut self, nflag: NFlag) -> Nls {
        let mut convfail = if nflag == NFlag::FirstCall || nflag == NFlag::PrevErrFail {
            ConvFail::NoFailures
        } else {
            ConvFail::FailOther
        };
        let s = &*self.s;
        let mut call_setup = nflag == NFlag::PrevConvFail
            || nflag == NFlag::PrevErrFail
            || s.nst == 0
            || s.nst >= s.nstlp + MSBP
            || (s.gamrat - 1.0).abs() > DGMAX;
        loop {
            let tn = self.s.tn;
            if !self.rhs(tn, Buf::Z0) {
                return Nls::ConvFail;
            }
            let mut jcur = false;
            if call_setup {
                match self.setup(convfail) {
                    Some(j) => jcur = j,
                    None => return Nls::ConvFail,
                }
                let s = &mut *self.s;
                s.gamrat = 1.0;
                s.crate_ = 1.0;
                s.gammap = s.gamma;
                s.nstlp = s.nst;
            } else if !self.factor_current() {
                return Nls::ConvFail;
            }
            self.ws.acor.fill(0.0);
            match self.newton(jcur) {
                Nls::TryAgain => {
                    call_setup = true;
                    convfail = ConvFail::FailBadJ;
                }
                r => return r,
            }
        }
    }

    /// CVODE's dense linear solver setup: decide whether J is re-evaluated, then factor
    /// M = I − γJ. Returns whether J is fresh, or None when M is singular or f failed.
    fn setup(&mut self, convfail: ConvFail) -> Option<bool> {
        let s = &*self.s;
        let dgamma = (s.gamma / s.gammap - 1.0).abs();
        let jbad = s.nst == 0
            || self.ws.force_jac
            || s.nst > s.nstlj + MSBJ
            || (convfail == ConvFail::FailBadJ && dgamma < DGMAX)
            || convfail == ConvFail::FailOther;
        if jbad {
            if !self.jacobian() {
                return None;
            }
            self.s.nstlj = self.s.nst;
            self.ws.force_jac = false;
        }
        if !self.factor(self.s.gamma) {
            return None;
        }
        Some(jbad)
    }

    /// Newton Jacobian at (tn, z_0) (the prediction, where `nls` evaluated f) with f =
    /// ws.ftemp, column groups at once: exact (`jvp`) or forward differences.
    fn jacobian(&mut self) -> bool {
        let n = self.n;
        self.stats.jacobian_evaluations += 1;
        let tn = self.s.tn;
        let srur = f64::EPSILON.sqrt();
        let fnorm = wrms(&self.ws.ftemp, &self.ws.ewt, self.ws.n_err);
        let min_inc = if fnorm != 0.0 {
            1000.0 * self.s.h.abs() * f64::EPSILON * n as f64 * fnorm
        } else {
            1.0
        };
        // A new number before any column changes, so that a half-written J (f not finite) is
        // never taken for the one it overwrote (see `History::assign`).
        self.s.jac_count += 1;
        let (pattern, coloring) = self.ws.groups.take().expect("workspace prepared");
        let (sys, ws, stats) = (&mut *self.sys, &mut *self.ws, &mut *self.stats);
        let s = &mut *self.s;
        let (y, jac) = (&s.zn[..n], &mut s.jac);
        let mut ok = true;
        // Exact columns from the system's directional derivative, J·v with v the indicator of a
        // group of structurally orthogonal columns; finite differences once it says it has none.
        let mut exact = self.tol.jacobian == JacobianSource::Exact;
        for g in 0..coloring.n_colors() {
            if exact {
                ws.ypert.fill(0.0);
                for &j in coloring.group(g) {
                    ws.ypert[j] = 1.0;
                }
                // One jvp costs about one right-hand side: counted as one.
                stats.jacobian_rhs_evaluations += 1;
                if sys.jvp(tn, y, &ws.ypert, &mut ws.fjvp, &mut ws.fpert) {
                    if !ws.fpert.iter().all(|v| v.is_finite()) {
                        ok = false;
                        break;
                    }
                    for &j in coloring.group(g) {
                        for k in pattern.col_start[j]..pattern.col_start[j + 1] {
                            jac[ws.jpos[k]] = ws.fpert[pattern.rows[k]];
                        }
                    }
                    continue;
                }
                exact = false;
            }
            ws.ypert.copy_from_slice(y);
            for &j in coloring.group(g) {
                let w = ws.ewt[j];
                // A quadrature's weight is 0: its column is empty, any finite increment does.
                let floor = if w > 0.0 {
                    min_inc / w
                } else {
                    min_inc * (y[j].abs() + 1.0)
                };
                let inc = (srur * y[j].abs()).max(floor);
                ws.ypert[j] += inc;
            }
            stats.jacobian_rhs_evaluations += 1;
            sys.rhs(tn, &ws.ypert, &mut ws.fpert);
            if !finite_values(&ws.fpert) {
                ok = false;
                break;
            }
            for &j in coloring.group(g) {
                // The increment actually represented in floating point.
                let inc = ws.ypert[j] - y[j];
                for k in pattern.col_start[j]..pattern.col_start[j + 1] {
                    let i = pattern.rows[k];
                    jac[ws.jpos[k]] = (ws.fpert[i] - ws.ftemp[i]) / inc;
                }
            }
        }
        ws.groups = Some((pattern, coloring));
        ok
    }

    /// Factor M = I − γJ: the states split off (`Peel`) and an LU with partial pivoting of the
    /// coupled block (`Workspace::factor_lu`), or ILU(0) of M on the Krylov path. False when
    /// M is singular.
    fn factor(&mut self, gamma: f64) -> bool {
        self.stats.factorizations += 1;
        let ws = &mut *self.ws;
        let jac = &self.s.jac;
        let ok = if let Some(k) = ws.krylov.as_mut() {
            // The preconditioner: ILU(0) of M = I − γJ over M's pattern.
            k.stats.preconditioner_setups += 1;
            k.ilu.factor_shifted(jac, gamma)
        } else if let Some(peel) = ws.peel.as_mut() {
            // The band LU fills M's band from the whole J through its map (`FillMap`, which
            // holds `Peel::src`); the others factor the gathered coupled block (on the 20-tank
            // chain the gather of 232 values cost 1.2k instructions a factorization).
            if ws.direct.band.is_some() && !ws.direct.small {
                peel.factor(jac, gamma, false) && ws.direct.factor_lu(&peel.pattern, jac, gamma)
            } else {
                peel.factor(jac, gamma, true)
                    && ws.direct.factor_lu(&peel.pattern, &peel.jac, gamma)
            }
        } else {
            let p = ws.m_pattern.as_ref().expect("workspace prepared");
            ws.direct.factor_lu(p, jac, gamma)
        };
        ws.lu_tag = ok.then_some((self.s.jac_count, gamma.to_bits()));
        ok
    }

    /// Make sure the factors are those of the saved J and γ_M (after a restore or a refused
    /// attempt they may not be).
    fn factor_current(&mut self) -> bool {
        let tag = (self.s.jac_count, self.s.gammap.to_bits());
        if self.ws.lu_tag == Some(tag) {
            return true;
        }
        self.factor(self.s.gammap)
    }

    /// Solve M x = tempv in place. False when GMRES did not reach its tolerance (direct
    /// solves always return true; their failures show as non-finite values). Inlined into
    /// `newton`'s variants (apart, a call costs ~20 instructions per solve on the vent).
    #[inline(always)]
    fn solve(&mut self) -> bool {
        let n = self.n;
        if self.ws.krylov.is_some() {
            return self.solve_krylov();
        }
        let ws = &mut *self.ws;
        // Direct: the first states, the coupled block's LU, the last states (`Peel`).
        if let Some(peel) = ws.peel.as_mut() {
            peel.before(&mut ws.tempv);
            ws.direct.solve_lu(&mut peel.b);
            peel.after(&mut ws.tempv);
        } else {
            ws.direct.solve_lu(&mut ws.tempv[..n]);
        }
        true
    }

    /// `solve` on the Krylov path (GMRES): out of line, so that the direct solves inlined into
    /// the Newton iteration do not carry its registers.
    #[inline(never)]
    fn solve_krylov(&mut self) -> bool {
        let ws = &mut *self.ws;
        if let Some(k) = ws.krylov.as_mut() {
            // M·u with the current γ (CVODE's cvLsATimes), the preconditioner from γ_M.
            let s = &*self.s;
            let (gamma, jac) = (s.gamma, &s.jac);
            // The tolerance from b's weighted RMS norm (`wrms`'s sum, which GMRES's first pass
            // computes).
            let n_err = ws.n_err.max(1.0);
            let eplifac_tol = EPLIFAC * s.tq[4];
            let tol = |ss: f64| eplifac_tol.max(KRYLOV_MIN_REDUCTION * (ss / n_err).sqrt());
            let KrylovWs {
                ilu,
                gmres,
                stats,
                invariants,
                inv_b,
                inv_w,
                quad_rows,
                quad_b,
            } = &mut **k;
            for (b, set) in inv_b.iter_mut().zip(invariants.iter()) {
                *b = set.iter().map(|&i| ws.tempv[i]).sum();
            }
            for (b, (q, _)) in quad_b.iter_mut().zip(quad_rows.iter()) {
                *b = ws.tempv[*q];
            }
            let ilu = &*ilu;
            let r = gmres.solve_with(
                &mut ws.tempv,
                &ws.ewt,
                tol,
                |u, out| ilu.mul_shifted(jac, gamma, u, out),
                |u| ilu.solve(u),
            );
            stats.solves += 1;
            return match r {
                Ok(it) => {
                    // The quadratures from their rows of M (GMRES left them at 0), then the
                    // sums.
                    for (&b, (q, row)) in quad_b.iter().zip(quad_rows.iter()) {
                        let jx: f64 = row.iter().map(|&(j, pos)| jac[pos] * ws.tempv[j]).sum();
                        ws.tempv[*q] = b + gamma * jx;
                    }
                    correct_onto_invariants(&mut ws.tempv, &ws.ewt, invariants, inv_b, inv_w);
                    stats.iterations += it;
                    stats.max_iterations = stats.max_iterations.max(it);
                    true
                }
                Err(GmresFailure::NotConverged { .. } | GmresFailure::NonFinite) => {
                    stats.failures += 1;
                    false
                }
            };
        }
        unreachable!("the Krylov path without its workspace")
    }

    /// CVODE's cvNewtonIteration: its residual and update passes over the live states only
    /// when they have the regular layout (`Live::groups`), fused with the direct solve's split
    /// when that allows (`Workspace::fused`), else over every state; chosen once per call.
    fn newton(&mut self, jcur: bool) -> Nls {
        let n = self.n;
        let ws = &mut *self.ws;
        if let Some(live) = ws.live.as_ref().filter(|l| l.groups > 0) {
            // The live passes never write a constant state's y, and `nls` no longer copies z_0
            // into y (f and J read z_0 in place); a fixed-order start or a restore leaves y
            // unset there. So y = z_0 there first, as the full update leaves it: in the groups
            // their last GROUP − LEAD states, then the constant states after them.
            let (y, z0) = (&mut ws.y[..n], &self.s.zn[..n]);
            let g = GROUP * live.groups;
            for (yg, zg) in y[..g]
                .chunks_exact_mut(GROUP)
                .zip(z0[..g].chunks_exact(GROUP))
            {
                yg[LEAD..].copy_from_slice(&zg[LEAD..]);
            }
            let after = ws.constant.partition_point(|&i| i < g);
            for &i in &ws.constant[after..] {
                y[i] = z0[i];
            }
        }
        if self.ws.fused {
            self.newton_passes::<FUSED>(jcur)
        } else if self.ws.live.as_ref().is_some_and(|l| l.groups > 0) {
            self.newton_passes::<LIVE>(jcur)
        } else {
            self.newton_passes::<FULL>(jcur)
        }
    }

    /// The direct solve of the fused Newton iteration (`Workspace::fused`): the coupled block's
    /// right-hand side is already in `Peel::b` (and its solution stays there), the last states'
    /// in tempv.
    #[inline(always)]
    fn solve_fused(&mut self) {
        let ws = &mut *self.ws;
        let peel = ws.peel.as_mut().expect("fused with a split");
        ws.direct.solve_lu(&mut peel.b);
        peel.after_fused(&mut ws.tempv);
    }

    #[inline(always)]
    fn newton_passes<const MODE: u8>(&mut self, jcur: bool) -> Nls {
        let n = self.n;
        let maxcor = if self.fixed.is_some() {
            FIXED_MAXCOR
        } else {
            MAXCOR
        };
        let mut m = 0;
        let mut delp = 0.0;
        loop {
            {
                let s = &*self.s;
                let ws = &mut *self.ws;
                let (tv, z1, a, f) = (&mut ws.tempv, &s.zn[n..2 * n], &ws.acor, &ws.ftemp);
                let (rl1, gamma) = (s.rl1, s.gamma);
                match (ws.live.as_ref(), ws.peel.as_deref_mut()) {
                    (Some(live), Some(peel)) if MODE == FUSED => {
                        let (tv, z1, a, f) = (&mut tv[..n], &z1[..n], &a[..n], &f[..n]);
                        residual_groups::<LEAD>(&mut peel.b, z1, a, f, rl1, gamma, live.groups);
                        residual_rest(tv, z1, a, f, rl1, gamma, &live.rest);
                    }
                    (Some(live), _) if MODE == LIVE => {
                        newton_residual_live(tv, z1, a, f, rl1, gamma, n, live)
                    }
                    _ => newton_residual(tv, z1, a, f, rl1, gamma, n),
                }
            }
            let solved = if MODE == FUSED {
                self.solve_fused();
                true
            } else {
                self.solve()
            };
            self.stats.newton_iterations += 1;
            if !solved {
                // CVODE (cvLsSolve, cvNewtonIteration): a linear solve that missed its
                // tolerance is a recoverable Newton failure, retried with a fresh J if it was
                // not fresh.
                return if !jcur { Nls::TryAgain } else { Nls::ConvFail };
            }
            let gamrat = self.s.gamrat;
            // The direct solvers factored M with γ_M and scale for the drift; GMRES applies M
            // with the current γ itself (CVODE scales only for matrix-based solvers).
            let scale = gamrat != 1.0 && self.ws.krylov.is_none();
            let c = if scale { 2.0 / (1.0 + gamrat) } else { 1.0 };
            // One pass: the drift scaling, the weighted norm of the correction (`wrms`'s sum,
            // in its order) and the update acor += δ, y = z_0 + acor. A non-finite δ leaves
            // acor and y spoiled, which the failure's retry overwrites (`nls`).
            let del = {
                let s = &*self.s;
                let ws = &mut *self.ws;
                let (a, y, tv, z0, w) =
                    (&mut ws.acor, &mut ws.y, &mut ws.tempv, &s.zn[..n], &ws.ewt);
                let sum = match (ws.live.as_ref(), ws.peel.as_deref_mut()) {
                    (Some(live), Some(peel)) if MODE == FUSED => {
                        let (a, y, tv, w) = (&mut a[..n], &mut y[..n], &mut tv[..n], &w[..n]);
                        let groups = live.groups;
                        let sum = update_groups::<LEAD>(a, y, &mut peel.b, z0, w, scale, c, groups);
                        update_rest(a, y, tv, z0, w, scale, c, &live.rest, sum)
                    }
                    (Some(live), _) if MODE == LIVE => {
                        newton_update_live(a, y, tv, z0, w, scale, c, n, live)
                    }
                    _ => newton_update(a, y, tv, z0, w, scale, c, n),
                };
                (sum / ws.n_err.max(1.0)).sqrt()
            };
            if !del.is_finite() {
                // A zero pivot of the sparse LU (or an overflow): like a singular M.
                return Nls::ConvFail;
            }
            if m > 0 {
                self.s.crate_ = (CRDOWN * self.s.crate_).max(del / delp);
            }
            let dcon = del * self.s.crate_.min(1.0) / self.s.tq[4];
            if dcon <= 1.0 {
                self.s.acnrm = if m == 0 {
                    del
                } else {
                    wrms(&self.ws.acor, &self.ws.ewt, self.ws.n_err)
                };
                return Nls::Success;
            }
            m += 1;
            if m == maxcor || (m >= 2 && del > RDIV * delp) {
                return if !jcur { Nls::TryAgain } else { Nls::ConvFail };
            }
            delp = del;
            let tn = self.s.tn;
            if !self.rhs(tn, Buf::Y) {
                return Nls::ConvFail;
            }
        }
    }

    /// Increment of the predictor, Σ_{j=1..q} z_j (the Pascal sum of the prediction, kept apart
    /// from z_0 so that the driver's compensated sum sees the small increment exactly), then the
    /// prediction itself (`predict`), block by block (`NORDSIECK_BLOCK`): per element the same
    /// operations in the same order as the column passes, so the same bits.
    fn predict_with_increment(&mut self) {
        let (n, q) = (self.n, self.s.q);
        let ws = &mut *self.ws;
        let live = ws.live.as_ref();
        predict_blocked(&mut self.s.zn[..(q + 1) * n], &mut ws.inc, n, q, live);
    }

    #[inline(always)]
    fn complete_step(&mut self) {
        let (n, q) = (self.n, self.s.q);
        let qmax = self.qmax();
        self.stats.steps += 1;
        let s = &mut *self.s;
        s.nst += 1;
        // τ_i = τ_{i−1} for i = q down to 2: one copy of constant length per order (the loop
        // cost ~18 instructions a step).
        let t = s.tau;
        match q {
            2 => s.tau[2] = t[1],
            3 => s.tau[2..4].copy_from_slice(&t[1..3]),
            4 => s.tau[2..5].copy_from_slice(&t[1..4]),
            5 => s.tau[2..6].copy_from_slice(&t[1..5]),
            _ if q > 5 => s.tau[2..=q].copy_from_slice(&t[1..q]),
            _ => {}
        }
        if q == 1 && s.nst > 1 {
            s.tau[2] = s.tau[1];
        }
        s.tau[1] = s.h;
        let ws = &mut *self.ws;
        correct_blocked(
            &mut s.zn,
            &s.l,
            &ws.acor,
            &mut ws.inc,
            n,
            q,
            ws.live.as_ref(),
        );
        if self.fixed.is_some() {
            return;
        }
        s.qwait -= 1;
        if s.qwait == 1 && q != qmax {
            s.zn[qmax * n..(qmax + 1) * n].copy_from_slice(&self.ws.acor);
            s.saved_tq5 = s.tq[5];
        }
        self.stats.steps_at_order[q] += 1;
    }

    /// CVODE's cvPrepareNextStep with cvComputeEtaqm1/qp1, cvChooseEta and cvSetEta.
    fn prepare_next_step(&mut self, dsm: f64) {
        let n = self.n;
        let qmax = self.qmax();
        let hmax_inv = self.tol.max_step.map_or(0.0, |m| 1.0 / m);
        let s = &mut *self.s;
        let q = s.q;
        if s.etamax == 1.0 {
            s.qwait = s.qwait.max(2);
            s.qprime = q;
            s.hprime = s.h;
            s.eta = 1.0;
            return;
        }
        let etaq = eta_or_below_thresh(BIAS2 * dsm, q + 1);
        if s.qwait != 0 {
            s.eta = etaq;
            s.qprime = q;
        } else {
            s.qwait = 2;
            let mut etaqm1 = 0.0;
            if q > 1 {
                let ddn = wrms(&s.zn[q * n..(q + 1) * n], &self.ws.ewt, self.ws.n_err) * s.tq[1];
                etaqm1 = eta_or_below_thresh(BIAS1 * ddn, q);
            }
            let mut etaqp1 = 0.0;
            if q != qmax && s.saved_tq5 != 0.0 {
                let cquot = (s.tq[5] / s.saved_tq5) * (s.h / s.tau[2]).powi(q as i32 + 1);
                for i in 0..n {
                    self.ws.tempv[i] = self.ws.acor[i] - cquot * s.zn[qmax * n + i];
                }
                let dup = wrms(&self.ws.tempv, &self.ws.ewt, self.ws.n_err) * s.tq[3];
                etaqp1 = eta_or_below_thresh(BIAS3 * dup, q + 2);
            }
            let etam = etaqm1.max(etaq.max(etaqp1));
            if etam < THRESH {
                s.eta = 1.0;
                s.qprime = q;
            } else if etam == etaq {
                s.eta = etaq;
                s.qprime = q;
            } else if etam == etaqm1 {
                s.eta = etaqm1;
                s.qprime = q - 1;
            } else {
                s.eta = etaqp1;
                s.qprime = q + 1;
                s.zn[qmax * n..(qmax + 1) * n].copy_from_slice(&self.ws.acor);
            }
        }
        // cvSetEta
        if s.eta < THRESH {
            s.eta = 1.0;
            s.hprime = s.h;
        } else {
            s.eta = s.eta.min(s.etamax);
            s.eta /= (s.h.abs() * hmax_inv * s.eta).max(1.0);
            s.hprime = s.h * s.eta;
        }
    }

    /// One adaptive step from the committed state (z_0 = y at t), at most `h_cap` long.
    fn step_adaptive(&mut self, t: f64, h_cap: f64) -> Result<f64, SolverError> {
        let saved_t = t;
        {
            // Apply the order and step chosen after the last step, within the cap.
            if self.s.qprime != self.s.q {
                let dq = self.s.qprime as i32 - self.s.q as i32;
                self.adjust_order(dq);
                self.s.q = self.s.qprime;
                self.s.qwait = self.s.q + 1;
            }
            let h_next = self.s.hprime.min(h_cap);
            if h_next != self.s.hscale {
                self.s.eta = h_next / self.s.hscale;
                self.rescale();
            }
        }
        self.set_weights();
        let (mut ncf, mut nef) = (0u32, 0u32);
        let mut nflag = NFlag::FirstCall;
        let dsm;
        loop {
            self.s.tn = saved_t + self.s.h;
            self.predict_with_increment();
            self.set_coefficients();
            if self.nls(nflag) != Nls::Success {
                self.after_convergence_failure(saved_t, &mut ncf)?;
                nflag = NFlag::PrevConvFail;
                continue;
            }
            let d = self.s.acnrm * self.s.tq[2];
            if d <= 1.0 {
                dsm = d;
                break;
            }
            self.after_error_test_failure(saved_t, d, &mut nef)?;
            nflag = NFlag::PrevErrFail;
        }
        let h = self.s.h;
        self.complete_step();
        self.prepare_next_step(dsm);
        self.s.etamax = if self.s.nst <= SMALL_NST {
            ETAMX2
        } else {
            ETAMX3
        };
        Ok(h)
    }

    /// `step_adaptive` after a failed Newton iteration: the prediction undone and the step
    /// cut for the retry (CVODE's cvHandleNFlag). Out of line, as `after_error_test_failure`:
    /// rare, and the step's loop keeps fewer registers.
    #[cold]
    #[inline(never)]
    fn after_convergence_failure(
        &mut self,
        saved_t: f64,
        ncf: &mut u32,
    ) -> Result<(), SolverError> {
        self.stats.convergence_failures += 1;
        self.restore(saved_t);
        *ncf += 1;
        self.s.etamax = 1.0;
        if *ncf == MXNCF || self.s.h.abs() <= f64::EPSILON * saved_t.abs() * 4.0 {
            return Err(SolverError::NewtonFailed {
                t: saved_t,
                h: self.s.h,
            });
        }
        self.s.eta = ETACF;
        self.rescale();
        Ok(())
    }

    /// `step_adaptive` after a failed error test (error norm `d` > 1): the prediction undone,
    /// then a smaller step, a lower order, or at order 1 z_1 reloaded (CVODE's cvDoErrorTest).
    #[cold]
    #[inline(never)]
    fn after_error_test_failure(
        &mut self,
        saved_t: f64,
        d: f64,
        nef: &mut u32,
    ) -> Result<(), SolverError> {
        self.stats.error_test_failures += 1;
        self.restore(saved_t);
        *nef += 1;
        self.s.etamax = 1.0;
        if *nef == MXNEF || self.s.h.abs() <= f64::EPSILON * saved_t.abs() * 4.0 {
            return Err(SolverError::StepTooSmall {
                t: saved_t,
                h: self.s.h,
            });
        }
        if *nef <= MXNEF1 {
            let big_l = (self.s.q + 1) as f64;
            let mut eta = 1.0 / ((BIAS2 * d).powf(1.0 / big_l) + ADDON);
            eta = eta.max(ETAMIN);
            if *nef >= SMALL_NEF {
                eta = eta.min(ETAMXF);
            }
            self.s.eta = eta;
            self.rescale();
            return Ok(());
        }
        if self.s.q > 1 {
            self.s.eta = ETAMIN;
            self.adjust_order(-1);
            let big_l = self.s.q;
            self.s.q -= 1;
            self.s.qwait = big_l;
            self.rescale();
            return Ok(());
        }
        // Order 1 already: reload z_1 = h·f(t, y).
        let n = self.n;
        self.s.eta = ETAMIN;
        self.s.h *= ETAMIN;
        self.s.hscale = self.s.h;
        self.s.qwait = LONG_WAIT;
        self.ws.y.copy_from_slice(&self.s.zn[..n]);
        if !self.rhs(saved_t, Buf::Y) {
            return Err(SolverError::NonFinite { t: saved_t });
        }
        for i in 0..n {
            self.s.zn[n + i] = self.s.h * self.ws.ftemp[i];
        }
        Ok(())
    }

    /// One fixed-order step of exactly `h` (the Nordsieck array rescaled to it).
    fn step_fixed(&mut self, t: f64, h: f64) -> Result<f64, SolverError> {
        if h != self.s.hscale {
            self.s.eta = h / self.s.hscale;
            self.rescale();
        }
        self.s.h = h;
        self.set_weights();
        self.s.tn = t + h;
        self.predict_with_increment();
        self.set_coefficients();
        let mut nflag = NFlag::FirstCall;
        for _ in 0..2 {
            match self.nls(nflag) {
                Nls::Success => {
                    self.complete_step();
                    self.stats.steps_at_order[self.s.q] += 1;
                    return Ok(h);
                }
                _ => {
                    // Same step again with a fresh Jacobian and matrix.
                    self.stats.convergence_failures += 1;
                    nflag = NFlag::PrevConvFail;
                }
            }
        }
        Err(SolverError::NewtonFailed { t, h })
    }

    /// An RK4 start step of size h as `START_SUBSTEPS` RK4 steps (increment into ws.inc).
    fn start_step(&mut self, t: f64, y: &[f64], h: f64) -> Result<(), SolverError> {
        let n = self.n;
        let ws = &mut *self.ws;
        let hs = h / START_SUBSTEPS as f64;
        ws.inc.fill(0.0);
        ws.ypert.copy_from_slice(y);
        for k in 0..START_SUBSTEPS {
            let tk = t + k as f64 * hs;
            let k1 = ws.rk4.k1_mut();
            self.sys.rhs(tk, &ws.ypert, k1);
            check_finite(tk, k1)?;
            ws.rk4
                .step_with_k1(self.sys, tk, &ws.ypert, hs, &mut ws.tempv)?;
            for i in 0..n {
                ws.inc[i] += ws.tempv[i];
                ws.ypert[i] = y[i] + ws.inc[i];
            }
        }
        Ok(())
    }

    /// Nordsieck array of the degree-k polynomial through the k + 1 start points, at the last.
    fn nordsieck_from_points(&mut self) {
        let n = self.n;
        let k = self.s.start_len - 1;
        let tk = self.s.start_t[k];
        let h = tk - self.s.start_t[k - 1];
        // Vandermonde V[i][j] = σ_i^j, σ_i = (t_i − t_k)/h; z = V⁻¹·y by Gaussian elimination
        // with partial pivoting on the (k+1)×(k+1) system, once for all components.
        let m = k + 1;
        let mut a = [[0.0f64; MAX_ORDER + 1]; MAX_ORDER + 1];
        for (i, row) in a.iter_mut().enumerate().take(m) {
            let sigma = (self.s.start_t[i] - tk) / h;
            let mut p = 1.0;
            for v in row.iter_mut().take(m) {
                *v = p;
                p *= sigma;
            }
        }
        // Right-hand sides: rows of start_y, solved in place into zn columns.
        let zn = &mut self.s.zn;
        for (i, chunk) in self.s.start_y.chunks(n).enumerate().take(m) {
            zn[i * n..(i + 1) * n].copy_from_slice(chunk);
        }
        for c in 0..m {
            let p = (c..m)
                .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
                .unwrap();
            if p != c {
                a.swap(p, c);
                for i in 0..n {
                    zn.swap(p * n + i, c * n + i);
                }
            }
            for r in c + 1..m {
                let f = a[r][c] / a[c][c];
                if f == 0.0 {
                    continue;
                }
                for j in c..m {
                    a[r][j] -= f * a[c][j];
                }
                for i in 0..n {
                    zn[r * n + i] -= f * zn[c * n + i];
                }
            }
        }
        for c in (0..m).rev() {
            for j in c + 1..m {
                for i in 0..n {
                    zn[c * n + i] -= a[c][j] * zn[j * n + i];
                }
            }
            for i in 0..n {
                zn[c * n + i] /= a[c][c];
            }
        }
        let s = &mut *self.s;
        s.q = k;
        s.qprime = k;
        s.qwait = usize::MAX / 2;
        s.h = h;
        s.hprime = h;
        s.hscale = h;
        s.eta = 1.0;
        s.tau = [0.0; MAX_ORDER + 2];
        for i in 1..=k {
            s.tau[i] = s.start_t[k + 1 - i] - s.start_t[k - i];
        }
        s.tn = tk;
        s.nst = 0;
        s.nstlp = 0;
        s.nstlj = 0;
        s.crate_ = 1.0;
        // The polynomial through the start points is checked before the next attempt.
        self.ws.check_const = true;
    }
}

#[derive(Clone, Copy)]
enum Buf {
    Y,
    /// The Nordsieck array's z_0 (the prediction) as y.
    Z0,
    Pert,
}

impl Bdf {
    /// Before stepping with a new workspace, from a restored state or after a fixed-order
    /// start: the solve leaves the constant states out (their right-hand side is then their
    /// correction as is), which is exact while their higher Nordsieck columns are 0, as every
    /// step keeps them (and the start's polynomial through equal values). A committed history
    /// where they are not (restored from elsewhere) is stepped with them in the solve from then
    /// on, as without the declaration: false, and the workspace is dropped (`prepare` builds it
    /// again).
    #[cold]
    fn check_constant_states(&mut self) -> bool {
        let n = self.n;
        self.ws.check_const = false;
        let zn = &self.hist.zn;
        let ok = zn.len() == (MAX_ORDER + 1) * n
            && self
                .ws
                .constant
                .iter()
                .all(|&i| (1..=MAX_ORDER).all(|j| zn[j * n + i] == 0.0));
        if !ok {
            self.const_refused = true;
            *self.ws = Workspace::default();
            return false;
        }
        // The predictor no longer writes their increments; the last step's is not read once an
        // attempt starts (and becomes the next one's scratch).
        for &i in &self.ws.constant {
            self.ws.inc[i] = 0.0;
            if let Some(v) = self.last.inc.get_mut(i) {
                *v = 0.0;
            }
        }
        // Their zeros as +0 in both copies (the start's Vandermonde solve leaves −0, which the
        // full corrector turned into +0 on the next step): a saved state keeps its bytes.
        for h in [&mut *self.hist, &mut *self.trial] {
            if h.zn.len() == (MAX_ORDER + 1) * n {
                for &i in &self.ws.constant {
                    for j in 1..=MAX_ORDER {
                        h.zn[j * n + i] = 0.0;
                    }
                }
            }
        }
        true
    }

    fn stepper<'a, S: OdeSystem>(&'a mut self, sys: &'a mut S) -> Step<'a, S> {
        Step {
            sys,
            s: &mut self.trial,
            ws: &mut self.ws,
            stats: &mut self.stats,
            tol: &self.tolerances,
            fixed: self.fixed,
            n: self.n,
        }
    }

    fn attempt_inner<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h_max: f64,
    ) -> Result<f64, SolverError> {
        self.prepare(sys)?;
        let n = self.n;
        self.last.valid = false;
        self.last.pending = false;
        if self.ws.check_const && !self.check_constant_states() {
            self.prepare(sys)?;
        }
        if !self.ws.trial_synced {
            self.trial.assign_live(&self.hist, self.fixed);
        }
        self.ws.trial_synced = false;
        let fixed = self.fixed;
        let h_cap = match self.tolerances.max_step {
            Some(m) if fixed.is_none() => h_max.min(m),
            _ => h_max,
        };
        let mut st = self.stepper(sys);
        let fresh = !st.s.started || st.s.tn != t;
        let h = match fixed {
            None => {
                if fresh {
                    st.initialize(t, y, h_cap)?;
                } else {
                    st.s.zn[..n].copy_from_slice(y);
                }
                st.ws.starter = false;
                st.step_adaptive(t, h_cap)?
            }
            Some(1) => {
                if fresh {
                    st.initialize(t, y, h_cap)?;
                } else {
                    st.s.zn[..n].copy_from_slice(y);
                }
                st.ws.starter = false;
                st.step_fixed(t, h_cap)?
            }
            Some(k) => {
                if fresh {
                    st.s.started = true;
                    st.s.tn = t;
                    st.s.start_len = 0;
                }
                if st.s.start_len == 0 {
                    st.s.start_t[0] = t;
                    st.s.start_y[..n].copy_from_slice(y);
                    st.s.start_len = 1;
                }
                if st.s.start_len <= k {
                    // RK4 start step.
                    st.ws.starter = true;
                    st.start_step(t, y, h_cap)?;
                    st.s.tn = t + h_cap;
                    h_cap
                } else {
                    st.ws.starter = false;
                    st.s.zn[..n].copy_from_slice(y);
                    st.step_fixed(t, h_cap)?
                }
            }
        };
        self.last.valid = true;
        self.last.pending = true;
        self.last.t = t;
        self.last.h = h;
        self.last.starter = self.ws.starter;
        // A swap, not a copy: every attempt writes `ws.inc` before reading it (the predictor,
        // or the start step's zeroing), so its old contents are scratch — except at the
        // constant states, which the predictor over the live states leaves alone: there both
        // buffers hold 0 (`check_constant_states` zeroes them in each).
        if self.last.inc.len() == self.ws.inc.len() {
            std::mem::swap(&mut self.last.inc, &mut self.ws.inc);
        } else {
            self.last.inc.clone_from(&self.ws.inc);
        }
        Ok(h)
    }
}

impl Integrator for Bdf {
    fn name(&self) -> &'static str {
        match self.fixed {
            None => "bdf",
            Some(k) => ["bdf1", "bdf2", "bdf3", "bdf4", "bdf5"][k - 1],
        }
    }
    fn order(&self) -> usize {
        self.fixed.unwrap_or(MAX_ORDER)
    }
    fn fixed_step(&self) -> bool {
        self.fixed.is_some()
    }
    fn configure(&mut self, control: &StepControl) {
        self.tolerances = Tolerances::from(control);
    }
    /// Trial steps rejected so far: failed error tests and failed Newton iterations (CVODE's
    /// netf + ncfn), each followed by a retry with a smaller step.
    fn rejected_steps(&self) -> u64 {
        self.stats.error_test_failures + self.stats.convergence_failures
    }
    fn restart(&mut self) {
        self.ws.trial_synced = false;
        self.hist.started = false;
        self.last.valid = false;
        self.last.pending = false;
    }
    fn attempt<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<f64, SolverError> {
        let taken = self.attempt_inner(sys, t, y, h)?;
        inc.copy_from_slice(&self.last.inc);
        Ok(taken)
    }
    fn dense<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        t: f64,
        y: &[f64],
        h: f64,
        inc: &mut [f64],
    ) -> Result<(), SolverError> {
        if !self.last.valid || self.last.t != t || self.last.starter {
            return self.dense_other(sys, t, y, h, inc);
        }
        let n = self.n;
        if h == self.last.h {
            inc.copy_from_slice(&self.last.inc);
            return Ok(());
        }
        // p(t_n+1 + s·h) = Σ z_j s^j with z_0 = y + inc: the increment is inc + Σ_{j≥1} z_j s^j.
        let s = &self.trial;
        let sigma = (h - self.last.h) / s.h;
        let (z, last) = (&s.zn[n..], &self.last.inc);
        match s.q {
            1 => dense_sum::<1>(z, sigma, last, inc, n),
            2 => dense_sum::<2>(z, sigma, last, inc, n),
            3 => dense_sum::<3>(z, sigma, last, inc, n),
            4 => dense_sum::<4>(z, sigma, last, inc, n),
            5 => dense_sum::<5>(z, sigma, last, inc, n),
            q => unreachable!("BDF order {q}"),
        }
        Ok(())
    }
    // Inlined (see `History::assign_live`); `dense` is not: inlined, it made the default
    // method's dispatch dearer (+600 instructions on the vent's `auto` solve).
    #[inline(always)]
    fn commit<S: OdeSystem>(&mut self, sys: &mut S, t_new: f64, y_new: &[f64]) {
        let n = self.n;
        self.ws.trial_synced = false;
        if !self.last.pending {
            self.hist.started = false;
            return;
        }
        self.last.pending = false;
        let end = self.last.t + self.last.h;
        let tol = 8.0 * f64::EPSILON * end.abs().max(self.last.h.abs());
        if (t_new - end).abs() > tol {
            // Accepted inside the step (an event): start afresh from there.
            self.hist.started = false;
            return;
        }
        if self.last.starter {
            let s = &mut self.trial;
            let i = s.start_len;
            s.start_t[i] = t_new;
            s.start_y[i * n..(i + 1) * n].copy_from_slice(y_new);
            s.start_len += 1;
            s.tn = t_new;
            if s.start_len == self.fixed.unwrap_or(0) + 1 {
                // Enough points: the Nordsieck array of BDF-k.
                let mut st = Step {
                    sys,
                    s: &mut self.trial,
                    ws: &mut self.ws,
                    stats: &mut self.stats,
                    tol: &self.tolerances,
                    fixed: self.fixed,
                    n,
                };
                st.nordsieck_from_points();
            }
        } else {
            let s = &mut self.trial;
            s.zn[..n].copy_from_slice(y_new);
            s.tn = t_new;
        }
        // Copy (not swap): the trial stays, so `dense` over the committed step keeps working
        // until the next attempt.
        self.hist.assign_live(&self.trial, self.fixed);
        self.ws.trial_synced = true;
    }
    /// See `check_history` for what each of the committed and working histories must satisfy;
    /// besides: `fixed` is None or 1..=5, `n` is the model's, the tolerances are finite (rtol,
    /// atol ≥ 0; max_step, initial_step > 0), the last step's increment has 0 or n finite
    /// values (n when it is valid) with t and h finite, and while a start step is pending
    /// the working history has room for its point (start_len ≤ k).
    fn validate_state(&self, n: usize) -> Result<(), String> {
        use super::{MAX_RESTORED_COUNT, all_finite, check_len};
        let name = match self.fixed {
            None => "bdf".to_string(),
            Some(k) if (1..=MAX_ORDER).contains(&k) => format!("bdf{k}"),
            Some(k) => return Err(format!("BDF fixed order {k} (1..={MAX_ORDER})")),
        };
        if self.n != n {
            return Err(format!("{name} for {} states, the model has {n}", self.n));
        }
        let tol = &self.tolerances;
        let pos = |x: Option<f64>| x.is_none_or(|h| h.is_finite() && h > 0.0);
        let nonneg = |x: f64| x.is_finite() && x >= 0.0;
        let tolerances_ok =
            nonneg(tol.rtol) && nonneg(tol.atol) && pos(tol.max_step) && pos(tol.initial_step);
        if !tolerances_ok {
            return Err(format!("{name} tolerances {tol:?}"));
        }
        let st = &self.stats;
        if [
            st.steps,
            st.error_test_failures,
            st.convergence_failures,
            st.jacobian_evaluations,
            st.jacobian_rhs_evaluations,
            st.factorizations,
            st.newton_iterations,
        ]
        .iter()
        .chain(&st.steps_at_order)
        .any(|&c| c >= MAX_RESTORED_COUNT)
        {
            return Err(format!("{name} work counters out of range"));
        }
        // Both copies: `dense` reads the working one after a restore, `attempt` the committed.
        check_history(&name, "history", &self.hist, self.fixed, n, true)?;
        check_history(
            &name,
            "working history",
            &self.trial,
            self.fixed,
            n,
            self.last.valid,
        )?;
        let last = &self.last;
        if last.inc.len() != n && (last.valid || !last.inc.is_empty()) {
            check_len(&format!("{name} last increment"), &last.inc, n)?;
        }
        all_finite(&format!("{name} last increment"), &last.inc)?;
        if !last.t.is_finite() || !last.h.is_finite() {
            return Err(format!(
                "{name} last step t = {:?}, h = {:?}",
                last.t, last.h
            ));
        }
        if let Some(k) = self.fixed
            && last.pending
            && last.starter
            && !(1..=k).contains(&self.trial.start_len)
        {
            return Err(format!(
                "{name} start step pending with {} start points (1..={k})",
                self.trial.start_len
            ));
        }
        // What `dense` reads of the last step: the RK4 starter exists only for bdf2..bdf5
        // (`prepare`), and an interpolation in the Nordsieck array needs an order.
        if last.valid && last.starter && self.fixed.is_none_or(|k| k < 2) {
            return Err(format!(
                "{name} last step taken by a starter it does not have"
            ));
        }
        if last.valid && !last.starter && !(1..=MAX_ORDER).contains(&self.trial.q) {
            return Err(format!(
                "{name} last step of order {} (1..={MAX_ORDER})",
                self.trial.q
            ));
        }
        return Ok(());

        /// One Nordsieck history: zn of (MAX_ORDER + 1)·n, jac of none or n..=n², start_y of (k + 1)·n
        /// (fixed order k) or none, start_len ≤ k + 1; q, qprime ≤ 5; nstlp, nstlj ≤ nst and
        /// the counters below 2^53 (so `nst ≥ nstlp + 20` and `+= 1` cannot overflow). When it
        /// is read (`values`: always the committed one, the working one while the last step is
        /// valid): every real and array value finite (start times up to start_len), and once
        /// started: q in 1..=qmax with |qprime − q| ≤ 1 and qprime in 1..=qmax (adaptive), or
        /// q = k once the start is over (fixed; q = 1 for bdf1); qwait ≥ 1 (adaptive);
        /// h, hprime, hscale > 0 where a step uses them.
        fn check_history(
            name: &str,
            which: &str,
            s: &History,
            fixed: Option<usize>,
            n: usize,
            values: bool,
        ) -> Result<(), String> {
            let what = |x: &str| format!("{name} {which}: {x}");
            // A copy that is not read is overwritten whole (`assign`) before any use; before
            // the first attempt the working copy is still unallocated.
            if values {
                check_len(&what("Nordsieck array"), &s.zn, (MAX_ORDER + 1) * n)?;
                // Values over the pattern of M, which has the diagonal: n..=n² of them, or
                // none before the first step (`Bdf::prepare` checks it against the pattern).
                if !s.jac.is_empty() && !(n..=n * n).contains(&s.jac.len()) {
                    return Err(what(&format!(
                        "Jacobian of {} values (n = {n}: n..=n²)",
                        s.jac.len()
                    )));
                }
                check_len(
                    &what("start points"),
                    &s.start_y,
                    fixed.map_or(0, |k| (k + 1) * n),
                )?;
            }
            if s.q > MAX_ORDER || s.qprime > MAX_ORDER {
                return Err(what(&format!("order {} (next {})", s.q, s.qprime)));
            }
            if s.start_len > fixed.map_or(0, |k| k + 1) && fixed.is_some() {
                return Err(what(&format!("{} start points", s.start_len)));
            }
            if s.nst >= MAX_RESTORED_COUNT
                || s.jac_count >= MAX_RESTORED_COUNT
                || s.nstlp > s.nst
                || s.nstlj > s.nst
            {
                return Err(what(&format!(
                    "step counters nst {}, nstlp {}, nstlj {}, jac_count {}",
                    s.nst, s.nstlp, s.nstlj, s.jac_count
                )));
            }
            let scalars = [
                s.tn,
                s.h,
                s.hprime,
                s.hscale,
                s.eta,
                s.etamax,
                s.rl1,
                s.gamma,
                s.gammap,
                s.gamrat,
                s.crate_,
                s.acnrm,
                s.saved_tq5,
            ];
            if !values {
                // Not read before the next attempt overwrites it.
                return Ok(());
            }
            all_finite(&what("step data"), &scalars)?;
            all_finite(&what("step history tau"), &s.tau)?;
            all_finite(&what("coefficients l"), &s.l)?;
            all_finite(&what("error constants tq"), &s.tq)?;
            all_finite(&what("Nordsieck array"), &s.zn)?;
            all_finite(&what("Jacobian"), &s.jac)?;
            all_finite(&what("start points"), &s.start_y)?;
            all_finite(
                &what("start times"),
                &s.start_t[..s.start_len.min(MAX_ORDER + 1)],
            )?;
            if !s.started {
                return Ok(());
            }
            // A started history is stepped from: its order and step sizes are used.
            let nordsieck = match fixed {
                None | Some(1) => true,
                Some(k) => s.start_len > k,
            };
            if !nordsieck {
                return Ok(());
            }
            let qmax = fixed.unwrap_or(MAX_ORDER);
            match fixed {
                Some(k) if s.q != k => {
                    return Err(what(&format!("order {} of a fixed-order-{k} method", s.q)));
                }
                None if !(1..=qmax).contains(&s.q)
                    || !(1..=qmax).contains(&s.qprime)
                    || s.q.abs_diff(s.qprime) > 1 =>
                {
                    return Err(what(&format!("order {}, next order {}", s.q, s.qprime)));
                }
                None if s.qwait == 0 => return Err(what("qwait 0")),
                _ => {}
            }
            let positive = |x: f64| x.is_finite() && x > 0.0;
            if !(positive(s.h) && positive(s.hscale) && positive(s.hprime) && s.tn.is_finite()) {
                return Err(what(&format!(
                    "step sizes h {:?}, hscale {:?}, hprime {:?} at tn {:?}",
                    s.h, s.hscale, s.hprime, s.tn
                )));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        MAX_ORDER, NORDSIECK_BLOCK, SMALL_MAX, SmallSel, band_factor, band_solve, correct_blocked,
        correct_onto_invariants, finite_values, predict_blocked, restore_small, small_factor,
        small_solve,
    };

    /// `finite_values` against the per-value test it replaces, on finite values of every
    /// magnitude and sign (zeros, subnormals, the largest) and with one ±∞ or NaN anywhere.
    #[test]
    fn finite_values_agrees_with_the_per_value_test() {
        let finite = [
            0.0,
            -0.0,
            1.0,
            -2.5e-310,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            -7.25e12,
        ];
        assert!(finite_values(&finite));
        assert!(finite_values(&[]));
        for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN] {
            // Every length (even and odd: the pairs and the odd value), the bad value anywhere.
            for len in 1..=finite.len() {
                assert!(finite_values(&finite[..len]));
                for k in 0..len {
                    let mut v = finite;
                    v[k] = bad;
                    let v = &v[..len];
                    assert!(!finite_values(v), "{bad} at {k} of {len}");
                    assert_eq!(finite_values(v), v.iter().all(|x| x.is_finite()));
                }
            }
        }
    }

    /// The correction onto a conserved sum is the least change in the weighted norm: by
    /// Lagrange, Δ_i = w_i·d/Σw with w_i = 1/ewt_i² on the set, 0 off it, d the shortfall.
    /// Checked against that closed form, and that it leaves the sum exact and other states alone.
    #[test]
    fn the_invariant_correction_is_the_least_weighted_change() {
        let ewt = [1.0, 2.0, 4.0, 0.5, 0.0];
        let x0 = [1.0, -2.0, 3.0, 0.25, 7.0];
        let sets = vec![vec![0, 1, 2], vec![3, 4]];
        let b = [5.0, 1.0];
        let mut x = x0;
        let mut w = [f64::NAN; 3];
        correct_onto_invariants(&mut x, &ewt, &sets, &b, &mut w);
        // The scratch holds the last set's weights, each computed once: (1/0.5², 0).
        assert_eq!(w[..2], [4.0, 0.0]);
        // Set 0: d = 5 − 2 = 3, w = (1, 1/4, 1/16), Σw = 21/16: Δ = (48/21, 12/21, 3/21).
        let want0 = [1.0 + 48.0 / 21.0, -2.0 + 12.0 / 21.0, 3.0 + 3.0 / 21.0];
        // Set 1: d = 1 − 7.25, w = (4, 0) (a zero weight takes nothing): Δ = (−6.25, 0).
        let want1 = [0.25 - 6.25, 7.0];
        println!("corrected {x:?}, want {want0:?} {want1:?}");
        for (a, b) in x[..3].iter().zip(&want0) {
            assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs(), "{a} {b}");
        }
        assert_eq!(x[3], want1[0]);
        assert_eq!(x[4], want1[1]);
        assert!((x[0] + x[1] + x[2] - 5.0).abs() <= 8.0 * f64::EPSILON);
        // A set whose weights are all zero is left as it is.
        let mut y = x0;
        correct_onto_invariants(&mut y, &[0.0; 5], &sets, &b, &mut w);
        assert_eq!(y, x0);
    }

    /// The blocked Nordsieck sweeps give the bits of the column passes they replace (CVODE's
    /// cvPredict and cvCompleteStep loop orders, written out here as the truth), for every order
    /// and sizes below, at and across the block length.
    #[test]
    fn blocked_nordsieck_sweeps_equal_the_column_passes() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut draw = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut checked = 0;
        for n in [
            1,
            4,
            7,
            62,
            NORDSIECK_BLOCK,
            NORDSIECK_BLOCK + 1,
            3 * NORDSIECK_BLOCK - 5,
        ] {
            for q in 1..=MAX_ORDER {
                let zn0: Vec<f64> = (0..(q + 1) * n).map(|_| draw() * 1e3).collect();
                let acor: Vec<f64> = (0..n).map(|_| draw() * 1e-3).collect();
                let mut l = [0.0; MAX_ORDER + 1];
                for v in l.iter_mut().take(q + 1) {
                    *v = draw();
                }
                // Truth: the column passes.
                let mut zt = zn0.clone();
                let mut inct = vec![0.0; n];
                for z in zt[n..].chunks_exact(n) {
                    for (a, b) in inct.iter_mut().zip(z) {
                        *a += *b;
                    }
                }
                for k in 1..=q {
                    for j in (k..=q).rev() {
                        for i in 0..n {
                            zt[(j - 1) * n + i] += zt[j * n + i];
                        }
                    }
                }
                let (mut zb, mut incb) = (zn0.clone(), vec![f64::NAN; n]);
                predict_blocked(&mut zb, &mut incb, n, q, None);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&zb), bits(&zt), "predict n {n} q {q}");
                assert_eq!(bits(&incb), bits(&inct), "increment n {n} q {q}");
                if n <= NORDSIECK_BLOCK {
                    // The predictor undone (`Step::restore`), element by element.
                    let (mut zr, mut zrt) = (zb.clone(), zt.clone());
                    for k in 1..=q {
                        for j in (k..=q).rev() {
                            for i in 0..n {
                                zrt[(j - 1) * n + i] -= zrt[j * n + i];
                            }
                        }
                    }
                    match q {
                        1 => restore_small::<1, 2>(&mut zr, n),
                        2 => restore_small::<2, 3>(&mut zr, n),
                        3 => restore_small::<3, 4>(&mut zr, n),
                        4 => restore_small::<4, 5>(&mut zr, n),
                        _ => restore_small::<5, 6>(&mut zr, n),
                    }
                    assert_eq!(bits(&zr), bits(&zrt), "restore n {n} q {q}");
                    checked += zr.len();
                }
                for (j, &lj) in l.iter().enumerate().take(q + 1) {
                    for i in 0..n {
                        zt[j * n + i] += lj * acor[i];
                    }
                }
                for i in 0..n {
                    inct[i] += acor[i];
                }
                correct_blocked(&mut zb, &l, &acor, &mut incb, n, q, None);
                assert_eq!(bits(&zb), bits(&zt), "correct n {n} q {q}");
                assert_eq!(bits(&incb), bits(&inct), "correct inc n {n} q {q}");
                checked += zb.len() + incb.len();
            }
        }
        println!("blocked sweeps: {checked} values equal to the column passes bit for bit");
        assert!(checked > 0);
    }

    /// The predictor and corrector over the live states only (`Live`: pairs and singles) equal
    /// the passes over every state bit for bit when the skipped states' higher Nordsieck
    /// columns, corrections and increments are 0, for several masks (every third state skipped
    /// as a chamber's volume, runs of odd length, none, all) and every order.
    #[test]
    fn live_sweeps_equal_the_full_passes() {
        use super::Live;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut draw = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let n = 23;
        let masks: [fn(usize) -> bool; 4] = [
            |i| i % 3 == 2,
            |i| matches!(i, 0 | 4 | 5 | 9 | 22),
            |_| false,
            |_| true,
        ];
        let mut checked = 0;
        for mask in masks {
            let constant: Vec<bool> = (0..n).map(mask).collect();
            let live = Live::of(&constant);
            let mut seen: Vec<usize> = live.singles.clone();
            seen.extend(live.pairs.iter().flat_map(|&p| [p, p + 1]));
            seen.sort_unstable();
            let expect: Vec<usize> = (0..n).filter(|&i| !constant[i]).collect();
            assert_eq!(seen, expect, "every live state once");
            for q in 1..=MAX_ORDER {
                let mut zn0: Vec<f64> = (0..(q + 1) * n).map(|_| draw() * 1e3).collect();
                let mut acor: Vec<f64> = (0..n).map(|_| draw() * 1e-3).collect();
                for i in (0..n).filter(|&i| constant[i]) {
                    for j in 1..=q {
                        zn0[j * n + i] = 0.0;
                    }
                    acor[i] = 0.0;
                }
                let mut l = [0.0; MAX_ORDER + 1];
                for v in l.iter_mut().take(q + 1) {
                    *v = draw();
                }
                let (mut zt, mut inct) = (zn0.clone(), vec![f64::NAN; n]);
                predict_blocked(&mut zt, &mut inct, n, q, None);
                let (mut zl, mut incl) = (zn0.clone(), inct.clone());
                for i in (0..n).filter(|&i| !constant[i]) {
                    incl[i] = f64::NAN;
                }
                predict_blocked(&mut zl, &mut incl, n, q, Some(&live));
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&zl), bits(&zt), "predict q {q}");
                assert_eq!(bits(&incl), bits(&inct), "increment q {q}");
                correct_blocked(&mut zt, &l, &acor, &mut inct, n, q, None);
                correct_blocked(&mut zl, &l, &acor, &mut incl, n, q, Some(&live));
                assert_eq!(bits(&zl), bits(&zt), "correct q {q}");
                assert_eq!(bits(&incl), bits(&inct), "correct increment q {q}");
                checked += zl.len();
            }
        }
        println!("live sweeps: {checked} values equal to the full passes bit for bit");
    }

    /// `set_weights`: 1/(rtol·|z_0,i| + atol) for every state and 0 for the quadratures when the
    /// adaptive method keeps them out of its norms (the fixed-order variants weigh them with
    /// their own tolerances), bit for bit, on both of its paths (≤ `SMALL_MAX` states: one
    /// pass with a branch; above: every weight, then the quadratures' set to 0).
    #[test]
    fn error_weights_leave_out_the_quadratures() {
        use super::{Bdf, FIXED_ATOL, FIXED_RTOL, Pattern, Tolerances};
        use crate::ode::OdeSystem;
        struct Quad(usize);
        impl OdeSystem for Quad {
            fn dimension(&self) -> usize {
                self.0
            }
            fn rhs(&mut self, _t: f64, _y: &[f64], dy: &mut [f64]) {
                dy.fill(0.0);
            }
            fn sparsity(&self) -> Option<Pattern> {
                // The last two read the first; nothing reads them.
                let n = self.0;
                let mut e: Vec<(usize, usize)> = (0..n - 2).map(|i| (i, i)).collect();
                e.extend([(0, n - 2), (0, n - 1)]);
                Some(Pattern::from_entries(n, e))
            }
            fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
                [self.0 - 2..self.0 - 1, self.0 - 1..self.0]
            }
        }
        for n in [6, SMALL_MAX + 11] {
            for fixed in [None, Some(2)] {
                let sys = Quad(n);
                let mut bdf = match fixed {
                    None => Bdf::adaptive(n),
                    Some(k) => Bdf::fixed(k, n),
                };
                bdf.tolerances = Tolerances {
                    rtol: 3e-7,
                    atol: 1e-9,
                    ..Tolerances::default()
                };
                bdf.prepare(&sys).expect("prepared");
                let mut sys = sys;
                let mut st = bdf.stepper(&mut sys);
                for (i, z) in st.s.zn[..n].iter_mut().enumerate() {
                    *z = (i as f64 - 3.5) * 1.7e3;
                }
                st.set_weights();
                let (rtol, atol) = match fixed {
                    None => (3e-7, 1e-9),
                    Some(_) => (FIXED_RTOL, FIXED_ATOL.max(1e-9f64.min(1e-14))),
                };
                for i in 0..n {
                    let expect = if i >= n - 2 && fixed.is_none() {
                        0.0
                    } else {
                        1.0 / (rtol * st.s.zn[i].abs() + atol)
                    };
                    assert_eq!(
                        st.ws.ewt[i].to_bits(),
                        expect.to_bits(),
                        "n {n}, {fixed:?}, {i}"
                    );
                }
            }
        }
    }

    /// The Newton iteration's residual and update over the live states only
    /// (`newton_residual_live`, `newton_update_live`: the regular groups and the rest) equal
    /// the passes over every state bit for bit when the constant states' f, z_1 and acor are
    /// ±0 (f_i ≡ 0), y = z_0 and acor = 0 there (as `nls` sets them): the sum of squares, acor,
    /// y and the live states' δ, with and without the drift scaling; for a chain's layout
    /// (every third state constant, then two live accumulators), with a constant state after
    /// the groups, and with a moving volume that ends the groups early. `Live::of` finds the
    /// groups and the rest.
    #[test]
    fn newton_live_passes_equal_the_full_passes() {
        use super::{
            Live, newton_residual, newton_residual_live, newton_update, newton_update_live,
        };
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut draw = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let chain: Vec<bool> = (0..62).map(|i| i < 60 && i % 3 == 2).collect();
        let mut late = chain.clone();
        late[61] = true;
        let mut moving = chain.clone();
        moving[20] = false;
        let cases = [(chain, 20, 2), (late, 20, 1), (moving, 6, 44 - 13)];
        let mut checked = 0;
        for (constant, groups, rest) in cases {
            let n = constant.len();
            let live = Live::of(&constant);
            assert_eq!(
                (live.groups, live.rest.len()),
                (groups, rest),
                "{constant:?}"
            );
            let mut expect: Vec<usize> = (0..groups)
                .flat_map(|k| (0..super::LEAD).map(move |r| super::GROUP * k + r))
                .collect();
            expect.extend(&live.rest);
            let all: Vec<usize> = (0..n).filter(|&i| !constant[i]).collect();
            assert_eq!(expect, all, "every live state once, increasing");
            for (trial, scale) in [(0, false), (1, true), (2, true)] {
                let mut v = |scale: f64| -> Vec<f64> { (0..n).map(|_| draw() * scale).collect() };
                let (mut z1, mut f, mut acor) = (v(1e2), v(1e3), v(1e-3));
                let (z0, w) = (v(1e5), v(1e4));
                for i in (0..n).filter(|&i| constant[i]) {
                    z1[i] = 0.0;
                    acor[i] = 0.0;
                    // f_i ≡ 0, computed as either zero.
                    f[i] = if (i + trial) % 2 == 0 { 0.0 } else { -0.0 };
                }
                let (rl1, gamma, c) = (0.4 + draw().abs(), 1e-3 * draw().abs(), 1.0 + draw());
                let mut tv_full = vec![f64::NAN; n];
                newton_residual(&mut tv_full, &z1, &acor, &f, rl1, gamma, n);
                let mut tv_live = vec![f64::NAN; n];
                newton_residual_live(&mut tv_live, &z1, &acor, &f, rl1, gamma, n, &live);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                for &i in &all {
                    assert_eq!(tv_live[i].to_bits(), tv_full[i].to_bits(), "residual {i}");
                }
                // A linear solve's stand-in: the live states' δ changed, the others kept.
                for &i in &all {
                    tv_full[i] *= 1.0 + 0.5 * draw();
                    tv_live[i] = tv_full[i];
                }
                let (mut a_full, mut y_full) = (acor.clone(), z0.clone());
                let (mut a_live, mut y_live) = (acor.clone(), z0.clone());
                let sum_full =
                    newton_update(&mut a_full, &mut y_full, &mut tv_full, &z0, &w, scale, c, n);
                let sum_live = newton_update_live(
                    &mut a_live,
                    &mut y_live,
                    &mut tv_live,
                    &z0,
                    &w,
                    scale,
                    c,
                    n,
                    &live,
                );
                assert_eq!(sum_live.to_bits(), sum_full.to_bits(), "sum, trial {trial}");
                assert_eq!(bits(&a_live), bits(&a_full), "acor, trial {trial}");
                assert_eq!(bits(&y_live), bits(&y_full), "y, trial {trial}");
                for &i in &all {
                    assert_eq!(tv_live[i].to_bits(), tv_full[i].to_bits(), "δ {i}");
                }
                checked += 3 * n + 1;
            }
        }
        println!("Newton live passes: {checked} values equal to the full passes bit for bit");
    }

    /// The Newton iteration fused with the split (`Workspace::fused`: the residual of the
    /// coupled states written into the LU's right-hand side, the update reading their solution
    /// there) steps a chain of chambers' layout (per group a, b coupled to the neighbours' a, c
    /// constant; two quadratures reading the last group) to the same bits as the unfused live
    /// passes, and as the passes over every state without the declaration; and it is taken.
    #[test]
    fn fused_newton_steps_as_the_unfused() {
        use super::{Bdf, Tolerances};
        use crate::integrators::Integrator;
        use crate::ode::OdeSystem;
        use crate::sparsity::Pattern;
        const K: usize = 8;
        const N: usize = 3 * K + 2;
        struct Chain {
            declared: bool,
        }
        impl OdeSystem for Chain {
            fn dimension(&self) -> usize {
                N
            }
            fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
                for k in 0..K {
                    let up = if k == 0 { 1.0 } else { y[3 * (k - 1)] };
                    let down = if k + 1 == K { 0.0 } else { y[3 * (k + 1)] };
                    let (a, b, c) = (y[3 * k], y[3 * k + 1], y[3 * k + 2]);
                    dy[3 * k] = c * (up - a) - c * (a - down) + 0.5 * b * b;
                    dy[3 * k + 1] = c * (a - b) - b;
                    dy[3 * k + 2] = 0.0;
                }
                dy[3 * K] = y[3 * (K - 1)];
                dy[3 * K + 1] = y[3 * (K - 1) + 1];
            }
            fn sparsity(&self) -> Option<Pattern> {
                let mut e = Vec::new();
                for k in 0..K {
                    let (a, b, c) = (3 * k, 3 * k + 1, 3 * k + 2);
                    e.extend([(a, a), (b, a), (c, a), (a, b), (b, b), (c, b)]);
                    if k > 0 {
                        e.push((a - 3, a));
                    }
                    if k + 1 < K {
                        e.push((a + 3, a));
                    }
                }
                e.extend([(3 * K - 3, 3 * K), (3 * K - 2, 3 * K + 1)]);
                Some(Pattern::from_entries(N, e))
            }
            fn constant_states(&self) -> Vec<usize> {
                if self.declared {
                    (0..K).map(|k| 3 * k + 2).collect()
                } else {
                    Vec::new()
                }
            }
            fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
                [3 * K..3 * K + 1, 3 * K + 1..3 * K + 2]
            }
        }
        let y0: Vec<f64> = (0..K)
            .flat_map(|k| [0.0, 0.1, 20.0 * (1.0 + k as f64)])
            .chain([0.0, 0.0])
            .collect();
        let run = |declared: bool, fuse: bool| {
            let mut sys = Chain { declared };
            let mut b = Bdf::adaptive(N);
            b.tolerances = Tolerances {
                rtol: 1e-7,
                atol: 1e-10,
                ..Tolerances::default()
            };
            b.prepare(&sys).expect("prepared");
            let fused = b.ws.fused;
            b.ws.fused &= fuse;
            let (mut t, mut y, mut inc) = (0.0, y0.clone(), vec![0.0; N]);
            while t < 1.0 {
                let h = b.attempt(&mut sys, t, &y, 1.0 - t, &mut inc).expect("step");
                for (a, d) in y.iter_mut().zip(&inc) {
                    *a += d;
                }
                t += h;
                b.commit(&mut sys, t, &y);
            }
            assert_eq!(b.ws.fused, fused && fuse, "the workspace was rebuilt");
            (y, fused, b.stats.steps, b.stats.newton_iterations)
        };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let (yf, fused, steps, its) = run(true, true);
        assert!(fused, "the chain's layout is fused");
        let (yl, ..) = run(true, false);
        let (ya, fused_all, ..) = run(false, true);
        assert!(!fused_all);
        println!("fused: {steps} steps, {its} Newton iterations; y {yf:?}");
        assert_eq!(bits(&yf), bits(&yl), "fused against the live passes");
        assert_eq!(bits(&yf), bits(&ya), "fused against every state");
        assert!(yf[3 * K] > 0.0 && yf[1] != y0[1], "the chain moved");
    }

    /// Constant states (`OdeSystem::constant_states`) left out of the direct solve give the
    /// same bits as the same system without the declaration: six
    /// uncoupled decays a_j' = −c_j·a_j with b_j' = c_j·a_j, the rates c_j = 10^j (j = 0..5) held
    /// as states with c_j' = 0 (their rows of J empty, their columns not: a fixed volume's
    /// kind), adaptive and bdf3 with its RK4 start, from a_j = 1, b_j = 0 to t = 2. Truth
    /// besides the twin: a_j = e^(−c_j·t), b_j = 1 − a_j. A restored history whose constant
    /// states' higher Nordsieck columns are not 0 is stepped over every state, as the twin.
    #[test]
    fn constant_states_are_skipped_exactly() {
        use super::{Bdf, Tolerances};
        use crate::integrators::Integrator;
        use crate::ode::OdeSystem;
        use crate::sparsity::Pattern;
        const K: usize = 6;
        struct Rates {
            declared: bool,
        }
        impl OdeSystem for Rates {
            fn dimension(&self) -> usize {
                3 * K
            }
            fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
                for j in 0..K {
                    let (a, c) = (y[3 * j], y[3 * j + 2]);
                    dy[3 * j] = -c * a;
                    dy[3 * j + 1] = c * a;
                    dy[3 * j + 2] = 0.0;
                }
            }
            fn sparsity(&self) -> Option<Pattern> {
                let mut entries = Vec::new();
                for j in 0..K {
                    for col in [3 * j, 3 * j + 2] {
                        entries.push((col, 3 * j));
                        entries.push((col, 3 * j + 1));
                    }
                }
                Some(Pattern::from_entries(3 * K, entries))
            }
            fn constant_states(&self) -> Vec<usize> {
                if self.declared {
                    (0..K).map(|j| 3 * j + 2).collect()
                } else {
                    Vec::new()
                }
            }
        }
        let n = 3 * K;
        let y0: Vec<f64> = (0..K)
            .flat_map(|j| [1.0, 0.0, 10f64.powi(j as i32)])
            .collect();
        // (final y, steps, Newton iterations, constants left out, Nordsieck array) of a run; `spoil`: restore, after 5 steps, a copy
        // whose constant state 2 has z_1 ≠ 0.
        let run = |declared: bool, fixed: bool, spoil: bool| {
            let mut sys = Rates { declared };
            let mut b = if fixed {
                Bdf::fixed(3, n)
            } else {
                Bdf::adaptive(n)
            };
            b.tolerances = Tolerances {
                rtol: 1e-8,
                atol: 1e-12,
                ..Tolerances::default()
            };
            let (mut t, mut y, mut inc) = (0.0, y0.clone(), vec![0.0; n]);
            let mut steps = 0;
            while t < 2.0 {
                let h_max = if fixed {
                    1e-4_f64.min(2.0 - t)
                } else {
                    2.0 - t
                };
                let h = b.attempt(&mut sys, t, &y, h_max, &mut inc).expect("step");
                for (a, d) in y.iter_mut().zip(&inc) {
                    *a += d;
                }
                t += h;
                b.commit(&mut sys, t, &y);
                steps += 1;
                if spoil && steps == 5 {
                    let mut c = b.clone();
                    c.hist.zn[n + 2] = 1e-3;
                    b.assign(&c);
                }
            }
            if spoil && declared {
                assert!(
                    b.const_refused,
                    "the spoiled history was stepped with the skip"
                );
            }
            (
                y,
                steps,
                b.stats.newton_iterations,
                !b.ws.constant.is_empty(),
                b.hist.zn.clone(),
            )
        };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (fixed, spoil) in [(false, false), (true, false), (false, true)] {
            let (ya, sa, na, skipped, za) = run(true, fixed, spoil);
            let (yb, sb, nb, _, zb) = run(false, fixed, spoil);
            println!(
                "fixed {fixed}, spoiled {spoil}: {sa} steps, {na} Newton iterations, left out \
                 {skipped}; twin {sb}, {nb}"
            );
            assert_eq!(skipped, !spoil, "the constant states are left out");
            assert_eq!((sa, na), (sb, nb));
            assert_eq!(bits(&ya), bits(&yb), "fixed {fixed}, spoiled {spoil}");
            // The saved history too, to the sign of its zeros.
            assert_eq!(
                bits(&za),
                bits(&zb),
                "history, fixed {fixed}, spoiled {spoil}"
            );
            if spoil {
                continue;
            }
            for j in 0..K {
                let a = (-(10f64.powi(j as i32)) * 2.0).exp();
                let (ea, eb) = ((ya[3 * j] - a).abs(), (ya[3 * j + 1] - (1.0 - a)).abs());
                assert!(
                    ea < 1e-6 && eb < 1e-6,
                    "j {j}: a error {ea:e}, b error {eb:e}"
                );
                assert_eq!(ya[3 * j + 2], y0[3 * j + 2], "c_{j} constant");
            }
        }
    }

    /// A state declared constant whose row of J is not empty (y₀' = −y₀: only its diagonal,
    /// which the off-diagonal peel cannot see) is stepped as any other; the truly constant
    /// y₁' = 0 beside it may be left out. Same bits as the undeclared twin; truth y₀ = e^(−t).
    #[test]
    fn a_declared_constant_state_with_a_row_is_stepped() {
        use super::{Bdf, Tolerances};
        use crate::integrators::Integrator;
        use crate::ode::OdeSystem;
        use crate::sparsity::Pattern;
        struct Decay {
            declared: bool,
        }
        impl OdeSystem for Decay {
            fn dimension(&self) -> usize {
                2
            }
            fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
                dy[0] = -y[0];
                dy[1] = 0.0;
            }
            fn sparsity(&self) -> Option<Pattern> {
                Some(Pattern::from_entries(2, vec![(0, 0)]))
            }
            fn constant_states(&self) -> Vec<usize> {
                if self.declared {
                    vec![0, 1]
                } else {
                    Vec::new()
                }
            }
        }
        let run = |declared: bool| {
            let mut sys = Decay { declared };
            let mut b = Bdf::adaptive(2);
            b.tolerances = Tolerances {
                rtol: 1e-8,
                atol: 1e-12,
                ..Tolerances::default()
            };
            let (mut t, mut y, mut inc) = (0.0, vec![1.0, 3.0], vec![0.0; 2]);
            while t < 2.0 {
                let h = b.attempt(&mut sys, t, &y, 2.0 - t, &mut inc).expect("step");
                for (a, d) in y.iter_mut().zip(&inc) {
                    *a += d;
                }
                t += h;
                b.commit(&mut sys, t, &y);
            }
            y
        };
        let (ya, yb) = (run(true), run(false));
        let err = (ya[0] - (-2.0f64).exp()).abs();
        println!(
            "y0(2) = {:.12} (error {err:.2e}), y1 = {}; twin {:?}",
            ya[0], ya[1], yb
        );
        assert!(err < 1e-6, "y0 was stepped: error {err:e}");
        assert_eq!(ya[1], 3.0);
        assert_eq!(ya[0].to_bits(), yb[0].to_bits());
    }

    /// y' = −y with its quadrature q' = y (q feeds nothing back), from (1, 0) to t = 5: with q
    /// named a quadrature the adaptive BDF leaves it out of its error test, as CVODES does.
    /// Truth: y = e^(−t), q = 1 − e^(−t), and y + q = 1 (a linear invariant every linear
    /// multistep method keeps whatever its steps).
    #[test]
    fn quadratures_leave_the_error_test_and_keep_their_accuracy() {
        use super::{Bdf, Tolerances};
        use crate::integrators::Integrator;
        use crate::ode::OdeSystem;
        struct Decay {
            named: bool,
        }
        impl OdeSystem for Decay {
            fn dimension(&self) -> usize {
                2
            }
            fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
                dy[0] = -y[0];
                dy[1] = y[0];
            }
            fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
                [if self.named { 1..2 } else { 0..0 }, 0..0]
            }
        }
        let rtol = 1e-8;
        let mut steps = [0usize; 2];
        for (k, named) in [false, true].into_iter().enumerate() {
            let mut sys = Decay { named };
            let mut b = Bdf::adaptive(2);
            b.tolerances = Tolerances {
                rtol,
                atol: 1e-15,
                ..Tolerances::default()
            };
            let (mut t, mut y, mut inc) = (0.0, vec![1.0, 0.0], vec![0.0; 2]);
            while t < 5.0 {
                let h = b.attempt(&mut sys, t, &y, 5.0 - t, &mut inc).expect("step");
                for (a, d) in y.iter_mut().zip(&inc) {
                    *a += d;
                }
                t += h;
                b.commit(&mut sys, t, &y);
                steps[k] += 1;
            }
            let exact = (-t).exp();
            let (ey, eq) = ((y[0] - exact).abs() / exact, (y[1] - (1.0 - exact)).abs());
            let inv = (y[0] + y[1] - 1.0).abs();
            println!(
                "quadrature named {named}: {} steps, y error {ey:.2e} (relative), q error \
                 {eq:.2e}, |y + q − 1| {inv:.1e}",
                steps[k]
            );
            assert!(ey < 100.0 * rtol, "y error {ey:e}");
            assert!(eq < 100.0 * rtol, "q error {eq:e}");
            assert!(inv < 1e-14, "invariant {inv:e}");
        }
        // q starts at 0: with atol ≪ 1 its weight is huge at first and holds the steps small.
        assert!(steps[1] < steps[0], "{steps:?}");
    }

    /// A restored state whose last step `dense` could not interpolate (a starter step
    /// without the starter's storage, or an order outside 1..=5) is refused by
    /// `validate_state`, not met by a panic at the next output time.
    #[test]
    fn restored_last_steps_that_dense_cannot_read_are_refused() {
        use super::Bdf;
        use crate::integrators::Integrator;
        use crate::ode::OdeSystem;
        struct Decay;
        impl OdeSystem for Decay {
            fn dimension(&self) -> usize {
                1
            }
            fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
                dy[0] = -y[0];
            }
        }
        let (mut sys, y) = (Decay, vec![1.0]);
        let mut inc = vec![0.0];
        let mut b = Bdf::adaptive(1);
        let h = b.attempt(&mut sys, 0.0, &y, 0.1, &mut inc).expect("step");
        assert!(h > 0.0 && b.last.valid && !b.last.starter);
        assert_eq!(b.validate_state(1), Ok(()));
        let mut starter = b.clone();
        starter.last.starter = true;
        let e = starter
            .validate_state(1)
            .expect_err("adaptive BDF has no starter");
        println!("starter step on adaptive bdf: {e}");
        assert!(e.contains("starter"), "{e}");
        // Started or not: `check_history` checks the order of a started history only.
        for (q, started) in [(0, true), (0, false), (6, false)] {
            let mut bad = b.clone();
            bad.trial.q = q;
            bad.trial.started = started;
            let e = bad.validate_state(1).expect_err("order out of range");
            println!("trial order {q}, started {started}: {e}");
            assert!(e.contains("order"), "{e}");
        }
    }

    /// bdf1 starts from its one point and never reads or writes the start points: the
    /// committed ones are not copied into the working history at each attempt and commit (they
    /// were, 2n values twice a step). Marked committed start points stay out of the working
    /// copy, and the steps are bit for bit those of an unmarked run. Truth: y' = −y,
    /// backward Euler's y_k = (1 + h)^(−k).
    #[test]
    fn bdf1_leaves_its_start_points_alone() {
        use super::Bdf;
        use crate::integrators::Integrator;
        use crate::ode::OdeSystem;
        struct Decay;
        impl OdeSystem for Decay {
            fn dimension(&self) -> usize {
                1
            }
            fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
                dy[0] = -y[0];
            }
        }
        let h = 0.1;
        let mut runs = Vec::new();
        for marked in [false, true] {
            let (mut sys, mut y, mut inc, mut t) = (Decay, vec![1.0], vec![0.0], 0.0);
            let mut b = Bdf::fixed(1, 1);
            let mut ys = Vec::new();
            for k in 0..20 {
                b.attempt(&mut sys, t, &y, h, &mut inc).expect("step");
                y[0] += inc[0];
                t += h;
                b.commit(&mut sys, t, &y);
                if marked && k == 0 {
                    b.hist.start_y.fill(7.0);
                }
                ys.push(y[0]);
            }
            if marked {
                println!("working start points after 20 steps: {:?}", b.trial.start_y);
                assert!(b.trial.start_y.iter().all(|&v| v == 0.0));
                assert!(b.hist.start_y.iter().all(|&v| v == 7.0));
            }
            runs.push(ys);
        }
        assert_eq!(runs[0], runs[1]);
        // Backward Euler solved by Newton on a linear system: exact to round-off.
        let want = (1.0f64 + h).powi(-20);
        println!("y(2) = {}, (1 + h)^-20 = {want}", runs[0][19]);
        assert!((runs[0][19] - want).abs() < 1e-14);
    }

    /// The adaptive method's copies between the committed and the working history leave the
    /// start points (times, count) alone, which it never writes: start points marked in the
    /// committed copy after the first step stay there, the working copy keeps its own, and the
    /// steps are bit for bit those of an unmarked run.
    #[test]
    fn adaptive_copies_leave_the_start_points_alone() {
        use super::Bdf;
        use crate::integrators::Integrator;
        use crate::ode::OdeSystem;
        struct Decay;
        impl OdeSystem for Decay {
            fn dimension(&self) -> usize {
                2
            }
            fn rhs(&mut self, _t: f64, y: &[f64], dy: &mut [f64]) {
                dy[0] = -y[0];
                dy[1] = -50.0 * (y[1] - y[0]);
            }
        }
        let mut runs = Vec::new();
        for marked in [false, true] {
            let (mut sys, mut y, mut inc, mut t) = (Decay, vec![1.0, 0.0], vec![0.0; 2], 0.0);
            let mut b = Bdf::adaptive(2);
            b.tolerances.rtol = 1e-6;
            b.tolerances.atol = 1e-10;
            let mut ys = Vec::new();
            for k in 0..30 {
                let h = b.attempt(&mut sys, t, &y, 1.0, &mut inc).expect("step");
                y[0] += inc[0];
                y[1] += inc[1];
                t += h;
                b.commit(&mut sys, t, &y);
                if marked && k == 0 {
                    b.hist.start_t = [7.0; super::MAX_ORDER + 1];
                    b.hist.start_len = 3;
                }
                ys.push((t, y.clone()));
            }
            if marked {
                println!(
                    "after 30 steps: committed start {:?} ({}), working {:?} ({})",
                    b.hist.start_t, b.hist.start_len, b.trial.start_t, b.trial.start_len
                );
                assert!(b.hist.start_t.iter().all(|&v| v == 7.0) && b.hist.start_len == 3);
                assert!(b.trial.start_t.iter().all(|&v| v == 0.0) && b.trial.start_len == 0);
            }
            runs.push(ys);
        }
        assert_eq!(runs[0], runs[1]);
        let (t, y) = runs[0].last().expect("steps");
        println!("y({t}) = {}, exp(-t) = {}", y[0], (-t).exp());
        assert!((y[0] - (-t).exp()).abs() < 1e-4);
    }

    /// The small dense LU (`small_factor`, `small_solve`) against the band kernels it replaces
    /// for n ≤ SMALL_MAX: the same pivots and the same solution bits (== also equates ±0, the
    /// only difference the extra x − 0·u can make), on band systems with interchanges and with
    /// exact zeros inside the band; and the solution against the x that made b (relative error
    /// ≤ 1e-10, the systems' condition allowing).
    /// A closed chamber's mass (no flow link: `Network::constant_states`) leaves the small LU:
    /// on `cantera_wall` (two closed chambers joined by a wall) the LU runs over (U, V) of each,
    /// 4 states instead of 6, and the masses stay their initial values exactly. Its twin, the
    /// same network with the masses not declared, keeps them in the LU; without heat transfer
    /// (J's columns of the masses then 0) the two give the same bits, with it they agree to
    /// round-off. A vented chamber's mass is not declared, nor one behind a piston.
    #[test]
    fn closed_chamber_masses_leave_the_small_lu() {
        use super::{Bdf, SMALL_SEL, Tolerances};
        use crate::integrators::Integrator;
        use crate::network::Network;
        use crate::ode::OdeSystem;
        use crate::sparsity::Pattern;
        struct Twin {
            net: Network,
            masses: bool,
        }
        impl OdeSystem for Twin {
            fn dimension(&self) -> usize {
                self.net.dimension()
            }
            fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
                self.net.rhs(t, y, dy)
            }
            fn sparsity(&self) -> Option<Pattern> {
                self.net.sparsity()
            }
            fn quadratures(&self) -> [std::ops::Range<usize>; 2] {
                self.net.quadratures()
            }
            fn constant_states(&self) -> Vec<usize> {
                let masses = self.masses;
                let mut c = self.net.constant_states();
                c.retain(|&i| masses || i % crate::components::chamber::STATES != 0);
                c
            }
            fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], f: &mut [f64], jv: &mut [f64]) -> bool {
                self.net.jvp(t, y, v, f, jv)
            }
        }
        let net_of = |src: &str, set: &[&str]| {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let model = crate::model::parse_str(src, "model.toml", &set).unwrap();
            crate::model::build_network(&model.spec)
        };
        let wall = include_str!("../../compliance-tests/peers/models/cantera_wall.toml");
        let vent = include_str!("../../compliance-tests/peers/models/cantera_vent.toml");
        assert_eq!(net_of(wall, &[]).constant_states(), vec![0, 3]);
        assert_eq!(
            net_of(vent, &[]).constant_states(),
            vec![2],
            "the vent's volume only"
        );
        // A piston's chamber, with an exit (its bore opens) or without (a restored state may
        // still say it left): no constant mass.
        let gun = include_str!("../../models/projectile.toml");
        let stuck = gun.replace("x_exit = 0.6", "");
        for src in [gun, &stuck] {
            let c = net_of(src, &[]).constant_states();
            assert!(!c.contains(&0), "the barrel's mass declared: {c:?}");
        }
        let run = |net: Network, masses: bool| {
            let mut sys = Twin { net, masses };
            let n = sys.dimension();
            let mut b = Bdf::adaptive(n);
            b.tolerances = Tolerances {
                rtol: 1e-7,
                atol: 1e-15,
                ..Tolerances::default()
            };
            let y0 = sys.net.initial_state();
            let (mut t, mut y, mut inc) = (0.0, y0.clone(), vec![0.0; n]);
            let mut steps = 0;
            while t < 2.0 {
                let h = b.attempt(&mut sys, t, &y, 2.0 - t, &mut inc).expect("step");
                for (a, d) in y.iter_mut().zip(&inc) {
                    *a += d;
                }
                t += h;
                b.commit(&mut sys, t, &y);
                steps += 1;
                if masses {
                    assert_eq!((y[0], y[3]), (y0[0], y0[3]), "masses at step {steps}");
                }
            }
            let lu = (b.ws.direct.small_kind, b.ws.constant.clone());
            (y, steps, b.stats.newton_iterations, lu)
        };
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for h in ["10", "0"] {
            let set = format!("wall.heat_transfer_coefficient={h}");
            let (ya, sa, na, lua) = run(net_of(wall, &[&set]), true);
            let (yb, sb, nb, lub) = run(net_of(wall, &[&set]), false);
            println!(
                "h {h}: {sa} steps, {na} Newton iterations, LU {lua:?}; twin {sb}, {nb}, {lub:?}"
            );
            assert_eq!(
                lua,
                (SMALL_SEL + 4, vec![0, 3]),
                "the LU over U, V of each chamber"
            );
            assert_eq!(lub, (6, vec![]), "the twin's LU over m, U, V of each");
            if h == "0" {
                assert_eq!((sa, na), (sb, nb));
                assert_eq!(bits(&ya), bits(&yb));
            } else {
                for (a, b) in ya.iter().zip(&yb) {
                    assert!(
                        (a - b).abs() <= 1e-12 * a.abs().max(1e-9),
                        "{a} against {b}"
                    );
                }
            }
        }
    }

    /// The small LU through a selection (`SmallSel`: constant states with an empty row left
    /// out, their columns dropped) gives, on the other states, the bits of the plain small LU of
    /// the matrix without them; the constant states' b (0) is left alone. Constant states
    /// interleaved with the kept ones, with full columns (a closed chamber's mass reaches its
    /// energy's row through the temperature), and a tail of quadratures.
    #[test]
    fn small_selection_equals_the_reduced_lu() {
        use super::small_lu;
        use crate::sparsity::Pattern;
        fn run<const N: usize>(constant: &[usize], tail: usize, seed: &mut u64) {
            let mut next = || {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            };
            let n = N + constant.len() + tail;
            let head = n - tail;
            let kept: Vec<usize> = (0..head).filter(|i| !constant.contains(i)).collect();
            assert_eq!(kept.len(), N);
            // M's pattern (diagonal included): constant rows hold their diagonal only, tail
            // columns theirs only; every other entry present, in rows ascending.
            let mut entries = Vec::new();
            for j in 0..n {
                for i in 0..n {
                    let row_ok = !constant.contains(&i) || i == j;
                    let col_ok = j < head || i == j;
                    if row_ok && col_ok {
                        entries.push((j, i));
                    }
                }
            }
            let p = Pattern::from_entries(n, entries);
            // J small against 1/γ off the diagonal, but large enough that the LU pivots.
            let jac: Vec<f64> = p.rows.iter().map(|_| 3.0 * next()).collect();
            let gamma = 0.7;
            // The reduced system: the kept states, then the tail, in order.
            let order: Vec<usize> = kept.iter().copied().chain(head..n).collect();
            let mut red_entries = Vec::new();
            let mut red_vals = Vec::new();
            for (rj, &j) in order.iter().enumerate() {
                for k in p.col_start[j]..p.col_start[j + 1] {
                    if let Some(ri) = order.iter().position(|&o| o == p.rows[k]) {
                        red_entries.push((rj, ri, jac[k]));
                    }
                }
            }
            red_entries.sort_by_key(|e| (e.0, e.1));
            let rp = Pattern::from_entries(
                order.len(),
                red_entries.iter().map(|e| (e.0, e.1)).collect(),
            );
            red_vals.extend(red_entries.iter().map(|e| e.2));
            let mut sel = SmallSel {
                tail_start: head,
                ..SmallSel::default()
            };
            for (k, &i) in kept.iter().enumerate() {
                sel.state[k] = i;
                sel.row[i] = k;
            }
            for (q, i) in (head..n).enumerate() {
                sel.row[i] = N + q;
            }
            let zero = SmallSel::default();
            let (mut a, mut piv, mut d) = (
                [[0.0; SMALL_MAX]; SMALL_MAX],
                [0; SMALL_MAX],
                [0.0; SMALL_MAX],
            );
            let (mut ra, mut rpiv, mut rd) = (a, piv, d);
            assert!(small_lu::<N, true>(
                &mut a, &mut piv, &mut d, &p, &jac, gamma, &sel
            ));
            assert!(small_lu::<N, false>(
                &mut ra, &mut rpiv, &mut rd, &rp, &red_vals, gamma, &zero
            ));
            assert_eq!(piv[..N], rpiv[..N], "pivots");
            let mut b: Vec<f64> = (0..n).map(|_| next()).collect();
            for &c in constant {
                b[c] = 0.0;
            }
            let mut rb: Vec<f64> = order.iter().map(|&i| b[i]).collect();
            small_solve::<N, true>(&a, &piv, &d, &mut b, &sel);
            small_solve::<N, false>(&ra, &rpiv, &rd, &mut rb, &zero);
            for (k, &i) in order.iter().enumerate() {
                assert_eq!(b[i].to_bits(), rb[k].to_bits(), "N {N}, state {i}");
            }
            for &c in constant {
                assert_eq!(b[c].to_bits(), 0.0f64.to_bits(), "constant {c} moved");
            }
            let swaps = (0..N).filter(|&j| piv[j] != j).count();
            println!("N {N}, constants {constant:?}, tail {tail}: {swaps} swaps, same bits");
        }
        let mut seed = 11u64;
        // The wall's layout (m U V m U V | swept, two accumulators) and the piston's.
        run::<4>(&[0, 3], 3, &mut seed);
        run::<2>(&[0], 3, &mut seed);
        run::<1>(&[1, 2], 0, &mut seed);
        run::<6>(&[0, 3, 6], 3, &mut seed);
        run::<9>(&[2], 2, &mut seed);
    }

    #[test]
    fn small_lu_gives_the_band_lu_bits() {
        fn run<const N: usize>(kl: usize, ku: usize, holes: bool, seed: &mut u64) {
            let n = N;
            let mut next = || {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            };
            let (ld, kv) = (2 * kl + ku + 1, kl + ku);
            let mut ab = vec![0.0; ld * n];
            let mut small = [[0.0; SMALL_MAX]; SMALL_MAX];
            let mut full = vec![vec![0.0; n]; n];
            for (i, row) in full.iter_mut().enumerate() {
                for (j, a) in row.iter_mut().enumerate() {
                    let hole = holes && i != j && (i % 3 == 2 || j % 3 == 2);
                    if i <= j + kl && j <= i + ku && !hole {
                        // Small diagonal: pivoting happens.
                        *a = if i == j { 1e-3 * next() } else { next() };
                        ab[j * ld + kv + i - j] = *a;
                        small[j][i] = *a;
                    }
                }
            }
            let x_true: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / 3.0).collect();
            let b: Vec<f64> = full
                .iter()
                .map(|row| row.iter().zip(&x_true).map(|(a, x)| a * x).sum())
                .collect();
            let (mut ipiv, mut counts, mut piv) = (vec![0; n], vec![0; 2 * n], [0; SMALL_MAX]);
            assert!(band_factor(&mut ab, &mut ipiv, &mut counts, n, kl, ku));
            assert!(small_factor::<N>(&mut small, &mut piv));
            assert_eq!(ipiv[..], piv[..n], "n {n}, kl {kl}, ku {ku}: pivots");
            let (mut xb, mut xs) = (b.clone(), b.clone());
            band_solve(&ab, &ipiv, &counts, n, kl, ku, &mut xb);
            small_solve::<N, false>(
                &small,
                &piv,
                &[0.0; SMALL_MAX],
                &mut xs,
                &SmallSel::default(),
            );
            assert_eq!(xb, xs, "n {n}, kl {kl}, ku {ku}, holes {holes}: solutions");
            let err = xs
                .iter()
                .zip(&x_true)
                .map(|(a, b)| (a - b).abs() / b)
                .fold(0.0, f64::max);
            let swaps = (0..n).filter(|&j| ipiv[j] != j).count();
            println!("n {n}, kl {kl}, ku {ku}, holes {holes}: {swaps} swaps, error {err:.1e}");
            assert!(err < 1e-10, "n {n}: error {err:e}");
        }
        let mut seed = 7u64;
        for holes in [false, true] {
            run::<1>(0, 0, holes, &mut seed);
            run::<2>(1, 1, holes, &mut seed);
            run::<5>(4, 2, holes, &mut seed);
            run::<5>(1, 1, holes, &mut seed);
            run::<6>(5, 5, holes, &mut seed);
            run::<8>(2, 3, holes, &mut seed);
            run::<9>(8, 1, holes, &mut seed);
            run::<12>(11, 11, holes, &mut seed);
            run::<12>(3, 4, holes, &mut seed);
        }
    }

    /// `Peel`'s gather and scatter by groups (`Peel::groups`: the coupled states are the first
    /// two of every three, a chain of chambers with fixed volumes) move the same values as
    /// through `core`: on a 20-chamber chain's pattern (each chamber's mass and energy coupled
    /// to its neighbours', its volume constant, two accumulators reading the last chamber) the
    /// groups are found, and `before` and `after` give the indexed path's bits; a pattern
    /// whose coupled states are not in that layout (a moving volume) has none.
    #[test]
    fn peel_groups_move_the_core_values() {
        use super::{Pattern, Peel};
        let (chambers, n) = (20usize, 62);
        let layout = |moving: Option<usize>| {
            let mut entries = Vec::new();
            for k in 0..chambers {
                for d in [k.wrapping_sub(1), k, k + 1] {
                    if d < chambers {
                        for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (1, 2)] {
                            // Row 3k + r reads column 3d + c (the volume its own only).
                            if c < 2 || d == k {
                                entries.push((3 * d + c, 3 * k + r));
                            }
                        }
                    }
                }
                if moving == Some(k) {
                    entries.push((3 * k, 3 * k + 2));
                }
            }
            for acc in [60, 61] {
                entries.push((57, acc));
                entries.push((58, acc));
            }
            let constant: Vec<bool> = (0..n)
                .map(|i| i < 60 && i % 3 == 2 && moving != Some(i / 3))
                .collect();
            (
                Pattern::from_entries(n, entries).with_diagonal().0,
                constant,
            )
        };
        let (p, constant) = layout(None);
        let mut peel = Peel::of(&p, true, 1, &constant).expect("split");
        assert_eq!((peel.groups, peel.core.len(), peel.last.len()), (20, 40, 2));
        let mut seed = 11u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let jac: Vec<f64> = (0..p.nonzeros()).map(|_| next()).collect();
        assert!(peel.factor(&jac, 0.3, true));
        let b: Vec<f64> = (0..n).map(|_| next()).collect();
        let (mut grouped, mut indexed) = (b.clone(), b.clone());
        peel.before(&mut grouped);
        let gathered = peel.b.clone();
        peel.groups = 0;
        peel.before(&mut indexed);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&gathered), bits(&peel.b), "gather");
        assert_eq!(bits(&grouped), bits(&indexed));
        let x: Vec<f64> = (0..peel.b.len()).map(|_| next()).collect();
        peel.b.copy_from_slice(&x);
        peel.after(&mut indexed);
        peel.groups = 20;
        peel.after(&mut grouped);
        assert_eq!(
            bits(&grouped),
            bits(&indexed),
            "scatter and the last states"
        );
        assert!(grouped != b);
        let (p, constant) = layout(Some(7));
        let peel = Peel::of(&p, true, 1, &constant).expect("split");
        assert_eq!((peel.groups, peel.core.len()), (0, 41));
    }

    /// The direct solves split by `Peel` (first states: empty off-diagonal row of M; last:
    /// empty column) equal a plain dense LU of the whole M = I − γJ to round-off, through each
    /// linear solver (band, small, sparse and dense LU) on random values over patterns with
    /// such states: one that depends only on itself (M_ii ≠ 1), one with no entry at all (both
    /// row- and column-empty), row-empty states that others read, column-empty ones that read
    /// others. The reference: Gaussian elimination with partial pivoting on the dense M.
    #[test]
    fn peeled_solves_equal_the_full_lu() {
        use super::{Bdf, LinearSolver, Pattern};
        use crate::ode::OdeSystem;
        struct Pat(Pattern);
        impl OdeSystem for Pat {
            fn dimension(&self) -> usize {
                self.0.n
            }
            fn rhs(&mut self, _t: f64, _y: &[f64], dy: &mut [f64]) {
                dy.fill(0.0);
            }
            fn sparsity(&self) -> Option<Pattern> {
                Some(self.0.clone())
            }
        }
        fn dense_solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
            let n = b.len();
            for k in 0..n {
                let p = (k..n)
                    .max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs()))
                    .unwrap();
                a.swap(k, p);
                b.swap(k, p);
                for i in k + 1..n {
                    let l = a[i][k] / a[k][k];
                    for j in k..n {
                        a[i][j] -= l * a[k][j];
                    }
                    b[i] -= l * b[k];
                }
            }
            for k in (0..n).rev() {
                let s: f64 = (k + 1..n).map(|j| a[k][j] * b[j]).sum();
                b[k] = (b[k] - s) / a[k][k];
            }
            b
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut checked = 0;
        for (n, trial) in [(24, 0), (24, 1), (40, 2), (10, 3), (8, 4), (14, 5), (9, 6)] {
            // Kinds by index: 0 only itself, 1 nothing, 2.. every 3rd row-empty (read by
            // others), every 5th column-empty (reads others), the rest coupled; in trial 5
            // every state only itself (no LU at all); in trial 6 (small, too few first states
            // to halve the LU) the last three column-empty: the small LU's tail.
            let kind = |i: usize| match i {
                _ if trial == 5 => 's',
                _ if trial == 6 && i >= n - 3 => 'c',
                0 => 's',
                1 => 'o',
                _ if i % 3 == 2 => 'r',
                _ if i % 5 == 4 && n > 12 => 'c',
                _ => 'x',
            };
            let mut entries = Vec::new();
            for i in 0..n {
                for j in 0..n {
                    let dep = if i == j {
                        kind(i) != 'o' && next() < 0.7
                    } else {
                        // Row i reads column j; a narrow band in the small cases.
                        let (ki, kj) = (kind(i), kind(j));
                        let near = i.abs_diff(j) <= 3 || trial == 1;
                        !matches!(ki, 's' | 'o' | 'r')
                            && !matches!(kj, 's' | 'o' | 'c')
                            && near
                            && next() < 0.6
                    };
                    if dep || (i == 0 && j == 0) {
                        entries.push((j, i));
                    }
                }
            }
            let pattern = Pattern::from_entries(n, entries);
            for linear in [
                LinearSolver::Auto,
                LinearSolver::Banded,
                LinearSolver::Sparse,
                LinearSolver::Dense,
            ] {
                let mut sys = Pat(pattern.clone());
                let mut bdf = Bdf::adaptive(n);
                bdf.set_linear_solver(linear);
                bdf.prepare(&sys).expect("prepared");
                let p = bdf.ws.m_pattern.clone().expect("pattern");
                let peel = bdf.ws.peel.as_ref();
                let (nf, nl) = peel.map_or((0, 0), |p| (p.first.len(), p.last.len()));
                let small = bdf.ws.direct.small;
                let (tail, peeled) = (bdf.ws.direct.tail, peel.is_some());
                let bdf_lu_empty = peel.is_some_and(|p| p.core.is_empty())
                    && bdf.ws.direct.band.is_none()
                    && !bdf.ws.direct.sparse
                    && bdf.ws.direct.lu.is_none();
                let gamma = 0.7;
                let jac: Vec<f64> = (0..p.nonzeros()).map(|_| 2.0 * next() - 1.0).collect();
                let b: Vec<f64> = (0..n).map(|_| 2.0 * next() - 1.0).collect();
                let mut m = vec![vec![0.0; n]; n];
                for j in 0..n {
                    for (k, &i) in p.column(j).iter().enumerate() {
                        m[i][j] = -gamma * jac[p.col_start[j] + k];
                    }
                    m[j][j] += 1.0;
                }
                let x_ref = dense_solve(m, b.clone());
                let mut st = bdf.stepper(&mut sys);
                st.s.jac.copy_from_slice(&jac);
                assert!(st.factor(gamma));
                st.ws.tempv.copy_from_slice(&b);
                assert!(st.solve());
                let scale = x_ref.iter().fold(0.0f64, |a, x| a.max(x.abs()));
                let err = st
                    .ws
                    .tempv
                    .iter()
                    .zip(&x_ref)
                    .fold(0.0f64, |a, (x, r)| a.max((x - r).abs() / scale));
                println!(
                    "n {n}, trial {trial}, {linear:?}: {nf} first, {nl} last, small {small}, \
                     tail {tail}, max |x − x_ref|/max |x_ref| {err:.2e}"
                );
                assert!(err < 1e-12, "{err}");
                // The cases: both kinds split off above `SMALL_MAX`, the first ones below.
                if trial == 5 {
                    assert!(nf == n && bdf_lu_empty, "{nf} first");
                } else if trial == 6 {
                    let small_path =
                        linear != LinearSolver::Sparse && linear != LinearSolver::Dense;
                    assert!(!peeled && tail == if small_path { 3 } else { 0 });
                } else if n > SMALL_MAX {
                    assert!(nf >= n / 3 && nl >= 2, "{nf} first, {nl} last");
                } else if linear != LinearSolver::Sparse && linear != LinearSolver::Dense {
                    assert!(small && nf >= n / 2 && nl == 0, "{nf} first, {nl} last");
                }
                checked += 1;
            }
        }
        assert_eq!(checked, 28);
    }
}
