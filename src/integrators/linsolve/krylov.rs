//! Iterative solution of the BDF's Newton systems M x = b, M = I − γJ, for large sparse patterns
//! whose direct LU fills superlinearly (2-D meshes: George, SIAM J. Numer. Anal. 10 (1973)):
//! restarted GMRES (Saad & Schultz, SIAM J. Sci. Stat. Comput. 7 (1986)) preconditioned on the
//! right by the incomplete LU factorization with no fill, ILU(0), of M over M's own pattern
//! (Saad, *Iterative Methods for Sparse Linear Systems*, 2nd ed., Alg. 10.4), as CVODE's SPGMR
//! (Hindmarsh et al., ACM TOMS 31 (2005); Brown & Hindmarsh, Appl. Math. Comput. 31 (1989)).
//!
//! GMRES runs in the weighted space of the Newton test, S = diag(ewt) (CVODE's scaling
//! s1 = s2 = ewt): it minimizes ‖S(b − Mx)‖₂, so its residual estimate is the weighted RMS norm
//! of the true residual times √n and the stopping test is exactly CVODE's
//! ‖b − Mx‖_WRMS ≤ δ. faer 0.24 has no GMRES (its `operator` module offers CG, BiCGSTAB and
//! LSMR), so it is written here: modified Gram–Schmidt Arnoldi with Givens rotations on the
//! Hessenberg matrix (Saad, Alg. 6.9). Every vector is allocated once, by `new`.

use crate::sparsity::Pattern;

/// Restart length and number of restarts of GMRES.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GmresLimits {
    /// Krylov dimension before a restart (CVODE's maxl; its default is 5, taken larger here so
    /// that the stiffest steps of a 2-D grid converge without restarts).
    pub restart: usize,
    /// Restarts after the first cycle (CVODE's maxrs, default 0).
    pub max_restarts: usize,
}

impl Default for GmresLimits {
    fn default() -> Self {
        GmresLimits {
            restart: 20,
            max_restarts: 2,
        }
    }
}

/// Counters of the iterative solves (not saved with the integrator's state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KrylovStats {
    /// Linear systems attempted (Newton iterations on the Krylov path).
    pub solves: u64,
    /// GMRES iterations (preconditioned matrix–vector products) of the solves that converged.
    pub iterations: u64,
    /// Most iterations one solve took.
    pub max_iterations: u64,
    /// Solves that did not reach the tolerance (each a Newton convergence failure).
    pub failures: u64,
    /// ILU(0) factorizations.
    pub preconditioner_setups: u64,
}

/// ILU(0) of a matrix given by its values over a CSC pattern (with the full diagonal): the
/// factors keep exactly the pattern, computed row by row over its CSR transpose. For the BDF's
/// M = I − γJ (`factor_shifted`, `mul_shifted`) it also keeps the CSC pattern of J for the
/// product M·u. At 100k states these index and value arrays are what a Krylov step streams
/// from memory, so the indices are `u32` (half the bytes of `usize`).
pub struct Ilu0 {
    n: usize,
    /// CSR structure of the pattern: row i's columns (ascending) at `cols[start[i]..start[i+1]]`.
    start: Vec<u32>,
    cols: Vec<u32>,
    /// For each CSR entry, its position in the CSC values.
    csc_pos: Vec<u32>,
    /// CSR position of each row's diagonal.
    diag: Vec<u32>,
    /// The CSC pattern itself: column j's rows at `csc_rows[csc_start[j]..csc_start[j + 1]]`.
    csc_start: Vec<u32>,
    csc_rows: Vec<u32>,
    /// The factors: L (unit, strictly lower) and U (upper) in one CSR value array (f64: f32
    /// factors would halve what the preconditioner streams but weaken it, and the adaptive
    /// runs would take more steps and GMRES iterations).
    vals: Vec<f64>,
    /// 1/U_ii: the backward sweep multiplies (a division's latency would sit on its chain of
    /// dependent rows).
    inv_diag: Vec<f64>,
    /// Row i's CSR position of column j during the elimination of row i, `u32::MAX` if none.
    marker: Vec<u32>,
}

/// An index of the CSR arrays as `usize`.
#[inline(always)]
fn ix(i: u32) -> usize {
    i as usize
}

impl Ilu0 {
    /// The structure of ILU(0) over `p`. Panics past 2³² − 1 nonzeros (the `u32` indices), a
    /// pattern whose values alone would take 34 GB.
    pub fn new(p: &Pattern) -> Ilu0 {
        let n = p.n;
        let nnz = p.nonzeros();
        assert!(
            u32::try_from(nnz).is_ok_and(|v| v < u32::MAX),
            "ILU(0): {nnz} nonzeros exceed the u32 indices"
        );
        let mut start = vec![0u32; n + 1];
        for &i in &p.rows {
            start[i + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut cols = vec![0u32; nnz];
        let mut csc_pos = vec![0u32; nnz];
        // Columns in ascending order, so each row's columns come out ascending.
        for j in 0..n {
            for k in p.col_start[j]..p.col_start[j + 1] {
                let i = p.rows[k];
                cols[ix(next[i])] = j as u32;
                csc_pos[ix(next[i])] = k as u32;
                next[i] += 1;
            }
        }
        let diag = (0..n)
            .map(|i| {
                let row = &cols[ix(start[i])..ix(start[i + 1])];
                let d = row.partition_point(|&j| ix(j) < i);
                debug_assert!(d < row.len() && ix(row[d]) == i, "pattern without diagonal");
                start[i] + d as u32
            })
            .collect();
        Ilu0 {
            n,
            start,
            cols,
            csc_pos,
            diag,
            csc_start: p.col_start.iter().map(|&k| k as u32).collect(),
            csc_rows: p.rows.iter().map(|&i| i as u32).collect(),
            vals: vec![0.0; nnz],
            inv_diag: vec![0.0; n],
            marker: vec![u32::MAX; n],
        }
    }

    /// Factor the matrix with these CSC values. False on a zero or non-finite pivot.
    pub fn factor(&mut self, csc_vals: &[f64]) -> bool {
        self.eliminate(csc_vals, 1.0, 0.0)
    }

    /// Factor M = I − γJ, J given by its CSC values `jac` over the pattern (the values
    /// −γ·J_ij, plus 1 on the diagonal: the bits of the BDF's M). False on a zero or non-finite
    /// pivot.
    pub fn factor_shifted(&mut self, jac: &[f64], gamma: f64) -> bool {
        self.eliminate(jac, -gamma, 1.0)
    }

    /// out = u − γ·J·u, J given by its CSC values `jac` over the pattern: out = u, then for
    /// each column j with −γu_j ≠ 0, out_i += (−γu_j)·J_ij (`Pattern::mul_add`'s additions, and
    /// bits, over the `u32` rows). The columns skipped are not read: on the gas networks the
    /// chambers' volume states, whose entries of u are 0 (their rows of M are rows of I).
    pub fn mul_shifted(&self, jac: &[f64], gamma: f64, u: &[f64], out: &mut [f64]) {
        assert!(
            u.len() == self.n && out.len() == self.n && jac.len() == self.csc_rows.len(),
            "M·u of the wrong length"
        );
        out.copy_from_slice(u);
        let alpha = -gamma;
        for (j, &uj) in u.iter().enumerate() {
            let c = alpha * uj;
            if c != 0.0 {
                let (k0, k1) = (ix(self.csc_start[j]), ix(self.csc_start[j + 1]));
                for (&i, a) in self.csc_rows[k0..k1].iter().zip(&jac[k0..k1]) {
                    out[ix(i)] += c * a;
                }
            }
        }
    }

    /// The elimination (Saad, Alg. 10.4) of the matrix s·A + d·I, A given by its CSC values
    /// over the pattern (s·A_ij, then + d on the diagonal). False on a zero or non-finite pivot.
    fn eliminate(&mut self, csc_vals: &[f64], s: f64, d: f64) -> bool {
        for (v, &k) in self.vals.iter_mut().zip(&self.csc_pos) {
            *v = s * csc_vals[ix(k)];
        }
        if d != 0.0 {
            for &p in &self.diag {
                self.vals[ix(p)] += d;
            }
        }
        for i in 0..self.n {
            let (r0, r1) = (ix(self.start[i]), ix(self.start[i + 1]));
            let di = ix(self.diag[i]);
            for p in r0..r1 {
                self.marker[ix(self.cols[p])] = p as u32;
            }
            // Eliminate with each earlier row k of row i's pattern, in ascending order.
            for p in r0..di {
                let k = ix(self.cols[p]);
                let dk = ix(self.diag[k]);
                let lik = self.vals[p] / self.vals[dk];
                self.vals[p] = lik;
                for q in dk + 1..ix(self.start[k + 1]) {
                    let m = self.marker[ix(self.cols[q])];
                    if m != u32::MAX {
                        self.vals[ix(m)] -= lik * self.vals[q];
                    }
                }
            }
            for p in r0..r1 {
                self.marker[ix(self.cols[p])] = u32::MAX;
            }
            let pivot = self.vals[di];
            if pivot == 0.0 || !pivot.is_finite() {
                return false;
            }
            self.inv_diag[i] = 1.0 / pivot;
        }
        true
    }

    /// x ← (LU)⁻¹ x.
    pub fn solve(&self, x: &mut [f64]) {
        let n = self.n;
        assert_eq!(x.len(), n, "ILU(0) solve of the wrong length");
        // Row slices zipped: one bounds check per entry (x[c]) instead of three.
        for i in 0..n {
            let (r0, d) = (ix(self.start[i]), ix(self.diag[i]));
            let mut s = x[i];
            for (&v, &c) in self.vals[r0..d].iter().zip(&self.cols[r0..d]) {
                s -= v * x[ix(c)];
            }
            x[i] = s;
        }
        for i in (0..n).rev() {
            let (d, r1) = (ix(self.diag[i]) + 1, ix(self.start[i + 1]));
            let mut s = x[i];
            for (&v, &c) in self.vals[d..r1].iter().zip(&self.cols[d..r1]) {
                s -= v * x[ix(c)];
            }
            x[i] = s * self.inv_diag[i];
        }
    }
}

/// Why a GMRES solve stopped without reaching its tolerance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GmresFailure {
    /// Restarts exhausted; the weighted RMS residual reached, and the right-hand side's.
    NotConverged { residual: f64, initial: f64 },
    /// A product or the preconditioner gave a non-finite value.
    NonFinite,
}

/// Restarted right-preconditioned GMRES in the weighted space, with its workspace.
pub struct Gmres {
    n: usize,
    limits: GmresLimits,
    /// Orthonormal Krylov basis, column k at `v[k·n..(k+1)·n]`, restart + 1 columns.
    v: Vec<f64>,
    /// Hessenberg matrix, column k at `h[k·(m+1)..]`, (m + 1) × m.
    h: Vec<f64>,
    cs: Vec<f64>,
    sn: Vec<f64>,
    g: Vec<f64>,
    /// Scratch of n: the preconditioned vector, and the solution so far.
    t: Vec<f64>,
    x: Vec<f64>,
    /// P⁻¹S⁻¹v₀ of the current cycle: when the cycle converges after one iteration (the usual
    /// case on the BDF's Newton systems) the update is g₀·z₀, without a second preconditioner
    /// solve.
    z0: Vec<f64>,
}

impl Gmres {
    pub fn new(n: usize, limits: GmresLimits) -> Gmres {
        let m = limits.restart.max(1);
        let limits = GmresLimits {
            restart: m,
            ..limits
        };
        Gmres {
            n,
            limits,
            v: vec![0.0; n * (m + 1)],
            h: vec![0.0; (m + 1) * m],
            cs: vec![0.0; m],
            sn: vec![0.0; m],
            g: vec![0.0; m + 1],
            t: vec![0.0; n],
            x: vec![0.0; n],
            z0: vec![0.0; n],
        }
    }

    pub fn limits(&self) -> GmresLimits {
        self.limits
    }

    /// Solve M x = b, `bx` holding b on entry and x on return, from x₀ = 0, until
    /// ‖b − Mx‖_WRMS ≤ `tol` (weights `ewt`). `matvec(u, out)`: out = M·u; `psolve(u)`:
    /// u ← P⁻¹u. Returns the iterations taken; on failure `bx` is unspecified. A component of
    /// weight 0 is outside the weighted space: its residual is not minimized and its x is
    /// unspecified; the caller sets it (the BDF's quadratures, whose rows of M give them).
    pub fn solve(
        &mut self,
        bx: &mut [f64],
        ewt: &[f64],
        tol: f64,
        matvec: impl FnMut(&[f64], &mut [f64]),
        psolve: impl FnMut(&mut [f64]),
    ) -> Result<u64, GmresFailure> {
        self.solve_with(bx, ewt, |_| tol, matvec, psolve)
    }

    /// `solve` with the tolerance a function of Σ_i (b_i·ewt_i)² (summed in index order), which
    /// the first pass over b computes anyway: the BDF's tolerance depends on b's norm.
    ///
    /// Each pass over n-vectors does every update it can (at 100k states a pass streams its
    /// vectors from memory): v₀ and its norm; v_k's normalization and S⁻¹v_k; S·(M·z) and its
    /// product with v₀; each Gram–Schmidt update and the next product (or the norm). Each
    /// element sees the operations of the separate passes in the same order: the same bits.
    pub fn solve_with(
        &mut self,
        bx: &mut [f64],
        ewt: &[f64],
        tol: impl FnOnce(f64) -> f64,
        mut matvec: impl FnMut(&[f64], &mut [f64]),
        mut psolve: impl FnMut(&mut [f64]),
    ) -> Result<u64, GmresFailure> {
        let n = self.n;
        debug_assert_eq!(bx.len(), n);
        let m = self.limits.restart;
        let sqrt_n = (n.max(1) as f64).sqrt();
        // b stays in `bx` until the return; x₀ = 0 (`self.x` is written by the first update).
        // r₀ = S·b into v₀, with its squared norm.
        // Sums start from −0.0, as `Iterator::sum` does (the bits of an all-zero sum).
        let mut ss = -0.0;
        for ((v, &b), &w) in self.v[..n].iter_mut().zip(&*bx).zip(ewt) {
            *v = b * w;
            ss += *v * *v;
        }
        let tol2 = tol(ss) * sqrt_n;
        let mut beta = ss.sqrt();
        let initial = beta / sqrt_n;
        if !beta.is_finite() {
            return Err(GmresFailure::NonFinite);
        }
        if beta <= tol2 {
            // CVODE: a right-hand side already within the tolerance gives x = 0.
            bx.fill(0.0);
            return Ok(0);
        }
        let mut iterations = 0u64;
        for cycle in 0..=self.limits.max_restarts {
            // v₀ = r₀/β, and S⁻¹v₀ into `z0` (the first preconditioner input).
            for ((v, z), &e) in self.v[..n].iter_mut().zip(&mut self.z0).zip(ewt) {
                *v /= beta;
                *z = unweight(*v, e);
            }
            self.g.fill(0.0);
            self.g[0] = beta;
            let mut k_end = 0;
            let mut converged = false;
            for k in 0..m {
                iterations += 1;
                let (head, tail) = self.v.split_at_mut((k + 1) * n);
                let w = &mut tail[..n];
                // w = S·M·P⁻¹·S⁻¹·v_k; S⁻¹v_k is in `z0` (k = 0, kept) or `t` already.
                // The first preconditioned vector is kept (`z0`), the others are scratch.
                let t = if k == 0 { &mut self.z0 } else { &mut self.t };
                psolve(t);
                matvec(t, w);
                // S·(M·z) and h₀ₖ = (w, v₀) in one pass.
                let hk = &mut self.h[k * (m + 1)..(k + 1) * (m + 1)];
                let mut d = -0.0;
                for ((a, &e), &b) in w.iter_mut().zip(ewt).zip(&head[..n]) {
                    *a *= e;
                    d += *a * b;
                }
                // Modified Gram–Schmidt: w −= h_ik·v_i, with the next product (w, v_{i+1}),
                // or ‖w‖² after the last, in the same pass.
                for i in 0..=k {
                    hk[i] = d;
                    let vi = &head[i * n..(i + 1) * n];
                    let mut next = -0.0;
                    if i < k {
                        let vn = &head[(i + 1) * n..(i + 2) * n];
                        for ((a, &b), &c) in w.iter_mut().zip(vi).zip(vn) {
                            *a -= d * b;
                            next += *a * c;
                        }
                    } else {
                        for (a, &b) in w.iter_mut().zip(vi) {
                            *a -= d * b;
                            next += *a * *a;
                        }
                    }
                    d = next;
                }
                let hnext = d.sqrt();
                hk[k + 1] = hnext;
                if !hnext.is_finite() {
                    return Err(GmresFailure::NonFinite);
                }
                // Earlier rotations on the new column, then the one that zeroes h[k+1, k].
                for i in 0..k {
                    let (a, b) = (hk[i], hk[i + 1]);
                    hk[i] = self.cs[i] * a + self.sn[i] * b;
                    hk[i + 1] = -self.sn[i] * a + self.cs[i] * b;
                }
                let (a, b) = (hk[k], hk[k + 1]);
                let r = a.hypot(b);
                let (c, s) = if r == 0.0 { (1.0, 0.0) } else { (a / r, b / r) };
                self.cs[k] = c;
                self.sn[k] = s;
                hk[k] = r;
                hk[k + 1] = 0.0;
                self.g[k + 1] = -s * self.g[k];
                self.g[k] *= c;
                k_end = k + 1;
                // |g[k+1]| is ‖S(b − Mx)‖₂ of the minimizing x; a zero h[k+1, k] (lucky
                // breakdown) makes it exact.
                if self.g[k + 1].abs() <= tol2 || hnext == 0.0 {
                    converged = true;
                    break;
                }
                // v_{k+1}, needed only by a next iteration, and S⁻¹v_{k+1} (its
                // preconditioner input) in the same pass; the cycle's last iteration has none.
                if k + 1 < m {
                    for ((a, t), &e) in w.iter_mut().zip(&mut self.t).zip(ewt) {
                        *a /= hnext;
                        *t = unweight(*a, e);
                    }
                }
            }
            // y = H⁻¹g (upper triangular, k_end × k_end), then x += P⁻¹S⁻¹·V·y.
            for i in (0..k_end).rev() {
                let mut s = self.g[i];
                for j in i + 1..k_end {
                    s -= self.h[j * (m + 1) + i] * self.g[j];
                }
                let d = self.h[i * (m + 1) + i];
                if d == 0.0 {
                    return Err(GmresFailure::NonFinite);
                }
                self.g[i] = s / d;
            }
            // The update P⁻¹S⁻¹·V·y into `t`: after one iteration (the usual case) it is g₀·z₀
            // (linear), without a second preconditioner solve.
            if k_end == 1 {
                let g0 = self.g[0];
                if converged && cycle == 0 {
                    // x = g₀·z₀, straight into the solution.
                    let mut finite = true;
                    for (x, &z) in bx.iter_mut().zip(&self.z0) {
                        *x = g0 * z;
                        finite &= x.is_finite();
                    }
                    return if finite {
                        Ok(iterations)
                    } else {
                        Err(GmresFailure::NonFinite)
                    };
                }
                for (a, &z) in self.t.iter_mut().zip(&self.z0) {
                    *a = g0 * z;
                }
            } else {
                self.t.fill(0.0);
                for j in 0..k_end - 1 {
                    let yj = self.g[j];
                    for (a, &v) in self.t.iter_mut().zip(&self.v[j * n..(j + 1) * n]) {
                        *a += yj * v;
                    }
                }
                // The last column's term and S⁻¹ in one pass.
                let (j, yj) = (k_end - 1, self.g[k_end - 1]);
                for ((a, &v), &e) in self.t.iter_mut().zip(&self.v[j * n..(j + 1) * n]).zip(ewt) {
                    *a = unweight(*a + yj * v, e);
                }
                psolve(&mut self.t);
            }
            // x = x₀ + update; x₀ = 0 in the first cycle, whose converged update is x itself.
            if converged && cycle == 0 {
                if !self.t.iter().all(|v| v.is_finite()) {
                    return Err(GmresFailure::NonFinite);
                }
                bx.copy_from_slice(&self.t);
                return Ok(iterations);
            }
            let finite = if cycle == 0 {
                self.x.copy_from_slice(&self.t);
                self.t.iter().all(|v| v.is_finite())
            } else {
                let mut finite = true;
                for (x, &d) in self.x.iter_mut().zip(&self.t) {
                    *x += d;
                    finite &= x.is_finite();
                }
                finite
            };
            if !finite {
                return Err(GmresFailure::NonFinite);
            }
            if converged {
                bx.copy_from_slice(&self.x);
                return Ok(iterations);
            }
            // The true residual, S(b − Mx), starts the next cycle.
            let (v0, _) = self.v.split_at_mut(n);
            matvec(&self.x, v0);
            let mut ss = -0.0;
            for ((r, &b), &e) in v0.iter_mut().zip(&*bx).zip(ewt) {
                *r = (b - *r) * e;
                ss += *r * *r;
            }
            beta = ss.sqrt();
            if !beta.is_finite() {
                return Err(GmresFailure::NonFinite);
            }
            if beta <= tol2 {
                bx.copy_from_slice(&self.x);
                return Ok(iterations);
            }
            if cycle == self.limits.max_restarts {
                return Err(GmresFailure::NotConverged {
                    residual: beta / sqrt_n,
                    initial,
                });
            }
        }
        unreachable!("the last cycle returns")
    }
}

/// S⁻¹ of one component: v/e, and 0 for a weight of 0 (a component the caller keeps out of
/// the weighted space: its entry of every Krylov vector is 0).
#[inline]
fn unweight(v: f64, e: f64) -> f64 {
    if e > 0.0 { v / e } else { 0.0 }
}

/// The Krylov path's solver of M x = b: ILU(0) of M (and J's pattern for M·u), GMRES and its
/// counters, and what GMRES leaves to its caller.
pub(crate) struct KrylovSolver {
    ilu: Ilu0,
    gmres: Gmres,
    pub(crate) stats: KrylovStats,
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

impl KrylovSolver {
    /// The solver for M's pattern `m` (diagonal included): the system's linear invariants
    /// (sets that are empty or name a state past m.n are ignored), and the quadratures out of
    /// the error norms (`quad`: empty when they are in them).
    pub(crate) fn new(
        m: &Pattern,
        limits: GmresLimits,
        invariants: Vec<Vec<usize>>,
        quad: &[std::ops::Range<usize>],
    ) -> KrylovSolver {
        let n = m.n;
        let invariants: Vec<Vec<usize>> = invariants
            .into_iter()
            .filter(|set| !set.is_empty() && set.iter().all(|&i| i < n))
            .collect();
        let mut quad_rows: Vec<(usize, Vec<(usize, usize)>)> = (0..n)
            .filter(|&q| quad.iter().any(|r| r.contains(&q)))
            .map(|q| (q, Vec::new()))
            .collect();
        if !quad_rows.is_empty() {
            for j in 0..n {
                let start = m.col_start[j];
                for (k, &i) in m.column(j).iter().enumerate() {
                    if i != j
                        && let Some(row) = quad_rows.iter_mut().find(|(q, _)| *q == i)
                    {
                        row.1.push((j, start + k));
                    }
                }
            }
        }
        KrylovSolver {
            ilu: Ilu0::new(m),
            gmres: Gmres::new(n, limits),
            stats: KrylovStats::default(),
            inv_b: vec![0.0; invariants.len()],
            inv_w: vec![0.0; invariants.iter().map(Vec::len).max().unwrap_or(0)],
            invariants,
            quad_b: vec![0.0; quad_rows.len()],
            quad_rows,
        }
    }

    /// The preconditioner: ILU(0) of M = I − γJ over M's pattern (`jac`: J's values over it).
    /// False when a pivot is zero or not finite.
    pub(crate) fn factor(&mut self, jac: &[f64], gamma: f64) -> bool {
        self.stats.preconditioner_setups += 1;
        self.ilu.factor_shifted(jac, gamma)
    }

    /// Solve M x = b in place by GMRES, M·u with the current γ (CVODE's cvLsATimes), the
    /// preconditioner from γ_M, to CVODE's linear tolerance eplifac·tq₄ in the weighted RMS norm
    /// (`ewt`, over `n_err` states); then the quadratures from their rows and the correction
    /// onto the invariants. False when GMRES does not converge. Out of line, so that the direct
    /// solves inlined into the Newton iteration do not carry its registers.
    #[inline(never)]
    pub(crate) fn solve(
        &mut self,
        b: &mut [f64],
        ewt: &[f64],
        n_err: f64,
        tq4: f64,
        gamma: f64,
        jac: &[f64],
    ) -> bool {
        // The tolerance from b's weighted RMS norm (`wrms`'s sum, which GMRES's first pass
        // computes).
        let n_err = n_err.max(1.0);
        let eplifac_tol = EPLIFAC * tq4;
        let tol = |ss: f64| eplifac_tol.max(KRYLOV_MIN_REDUCTION * (ss / n_err).sqrt());
        let KrylovSolver {
            ilu,
            gmres,
            stats,
            invariants,
            inv_b,
            inv_w,
            quad_rows,
            quad_b,
        } = self;
        for (s, set) in inv_b.iter_mut().zip(invariants.iter()) {
            *s = set.iter().map(|&i| b[i]).sum();
        }
        for (s, (q, _)) in quad_b.iter_mut().zip(quad_rows.iter()) {
            *s = b[*q];
        }
        let ilu = &*ilu;
        let r = gmres.solve_with(
            b,
            ewt,
            tol,
            |u, out| ilu.mul_shifted(jac, gamma, u, out),
            |u| ilu.solve(u),
        );
        stats.solves += 1;
        match r {
            Ok(it) => {
                // The quadratures from their rows of M (GMRES left them at 0), then the sums.
                for (&s, (q, row)) in quad_b.iter().zip(quad_rows.iter()) {
                    let jx: f64 = row.iter().map(|&(j, pos)| jac[pos] * b[j]).sum();
                    b[*q] = s + gamma * jx;
                }
                correct_onto_invariants(b, ewt, invariants, inv_b, inv_w);
                stats.iterations += it;
                stats.max_iterations = stats.max_iterations.max(it);
                true
            }
            Err(GmresFailure::NotConverged { .. } | GmresFailure::NonFinite) => {
                stats.failures += 1;
                false
            }
        }
    }
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
pub(crate) fn correct_onto_invariants(
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

#[cfg(test)]
#[path = "krylov_tests.rs"]
mod tests;
