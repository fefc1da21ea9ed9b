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
    /// The factors: L (unit, strictly lower) and U (upper) in one CSR value array (f64: in
    /// f32 they halve what the preconditioner streams, but the adaptive grid runs then took
    /// 1–5 % more steps and GMRES iterations, see docs/performance.md).
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
    /// case: one per Newton solve on the scale bench's grids, 1.05 on adaptive runs) the update
    /// is g₀·z₀, without a second preconditioner solve.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The 5-point Laplacian of a side × side grid, shifted: A = I + c·L (an M = I − γJ of a
    /// diffusion network), as a CSC pattern and values.
    fn shifted_laplacian(side: usize, c: f64) -> (Pattern, Vec<f64>) {
        let n = side * side;
        let mut entries = Vec::new();
        for j in 0..n {
            let (r, q) = (j / side, j % side);
            let mut nb = vec![j];
            if r > 0 {
                nb.push(j - side);
            }
            if r + 1 < side {
                nb.push(j + side);
            }
            if q > 0 {
                nb.push(j - 1);
            }
            if q + 1 < side {
                nb.push(j + 1);
            }
            for i in nb {
                entries.push((j, i));
            }
        }
        let p = Pattern::from_entries(n, entries);
        let mut vals = vec![0.0; p.nonzeros()];
        for j in 0..n {
            for k in p.col_start[j]..p.col_start[j + 1] {
                let i = p.rows[k];
                // Slightly non-symmetric (upwinding), as the gas networks' J.
                vals[k] = if i == j {
                    1.0 + 4.0 * c
                } else if i < j {
                    -c * 1.1
                } else {
                    -c * 0.9
                };
            }
        }
        (p, vals)
    }

    fn matvec(p: &Pattern, vals: &[f64], u: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        p.mul_add(vals, 1.0, u, out);
    }

    /// GMRES preconditioned by ILU(0) of the matrix, to `tol`: the solution, the iterations
    /// and the solver (to solve again).
    fn ilu_gmres(
        p: &Pattern,
        vals: &[f64],
        b: &[f64],
        ewt: &[f64],
        tol: f64,
    ) -> (Vec<f64>, u64, Gmres) {
        let mut ilu = Ilu0::new(p);
        assert!(ilu.factor(vals));
        let mut gm = Gmres::new(p.n, GmresLimits::default());
        let mut x = b.to_vec();
        let iters = gm
            .solve(
                &mut x,
                ewt,
                tol,
                |u, o| matvec(p, vals, u, o),
                |u| ilu.solve(u),
            )
            .expect("converges");
        (x, iters, gm)
    }

    #[test]
    fn ilu0_of_a_tridiagonal_matrix_is_its_exact_lu() {
        // No fill in a tridiagonal LU, so ILU(0) is exact: P⁻¹A x = x.
        let n: usize = 30;
        let mut entries = Vec::new();
        for j in 0..n {
            for i in j.saturating_sub(1)..(j + 2).min(n) {
                entries.push((j, i));
            }
        }
        let p = Pattern::from_entries(n, entries);
        let vals: Vec<f64> = (0..p.nonzeros()).map(|k| 1.0 + (k % 7) as f64).collect();
        let mut ilu = Ilu0::new(&p);
        assert!(ilu.factor(&vals));
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut b = vec![0.0; n];
        matvec(&p, &vals, &x, &mut b);
        ilu.solve(&mut b);
        let err = b
            .iter()
            .zip(&x)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!("tridiagonal ILU(0) solve: max |x − (LU)⁻¹Ax| = {err:.2e}");
        assert!(err < 1e-12);
    }

    #[test]
    fn gmres_solves_a_grid_to_its_weighted_tolerance() {
        let side = 30;
        let (p, vals) = shifted_laplacian(side, 50.0);
        let n = p.n;
        let x_true: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.11).cos()).collect();
        let mut b = vec![0.0; n];
        matvec(&p, &vals, &x_true, &mut b);
        let ewt: Vec<f64> = (0..n)
            .map(|i| 1.0 / (1e-6 * x_true[i].abs() + 1e-9))
            .collect();
        let tol = 1e-3;
        let (x, iters, mut gm) = ilu_gmres(&p, &vals, &b, &ewt, tol);
        // The true weighted residual, recomputed.
        let mut r = vec![0.0; n];
        matvec(&p, &vals, &x, &mut r);
        let res = (r
            .iter()
            .zip(&b)
            .zip(&ewt)
            .map(|((a, b), w)| ((b - a) * w).powi(2))
            .sum::<f64>()
            / n as f64)
            .sqrt();
        println!("grid {side}²: {iters} iterations, residual {res:.3e} WRMS (tolerance {tol})");
        assert!(res <= tol * (1.0 + 1e-6), "{res}");
        // Without the preconditioner it needs more iterations than with it.
        let mut x2 = b.clone();
        let plain = gm.solve(&mut x2, &ewt, tol, |u, o| matvec(&p, &vals, u, o), |_| {});
        println!("without ILU(0): {plain:?}");
        assert!(plain.map_or(true, |k| k > iters));
    }

    /// A component of weight 0 (the BDF's quadratures: a row that reads other states, a
    /// column nothing reads) stays out of the weighted space: GMRES meets the tolerance on the
    /// others, whose rows do not read it, and its row then gives it from theirs.
    #[test]
    fn a_zero_weight_component_is_left_to_the_caller() {
        let side = 12;
        let (lap, lap_vals) = shifted_laplacian(side, 20.0);
        let n0 = lap.n;
        let q = n0;
        // The Laplacian's entries, and row q: 1 on the diagonal, −0.3 in columns 0..5.
        let mut entries = Vec::new();
        let mut values = std::collections::HashMap::new();
        for j in 0..n0 {
            for k in lap.col_start[j]..lap.col_start[j + 1] {
                entries.push((j, lap.rows[k]));
                values.insert((lap.rows[k], j), lap_vals[k]);
            }
        }
        entries.push((q, q));
        values.insert((q, q), 1.0);
        for j in 0..5 {
            entries.push((j, q));
            values.insert((q, j), -0.3);
        }
        let p = Pattern::from_entries(n0 + 1, entries);
        let n = p.n;
        let mut vals = vec![0.0; p.nonzeros()];
        for j in 0..n {
            for k in p.col_start[j]..p.col_start[j + 1] {
                vals[k] = values[&(p.rows[k], j)];
            }
        }
        let x_true: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect();
        let mut b = vec![0.0; n];
        matvec(&p, &vals, &x_true, &mut b);
        let mut ewt: Vec<f64> = (0..n).map(|i| 1.0 / (1e-6 * x_true[i].abs())).collect();
        ewt[q] = 0.0;
        let tol = 1e-3;
        let (x, iters, _) = ilu_gmres(&p, &vals, &b, &ewt, tol);
        let mut r = vec![0.0; n];
        matvec(&p, &vals, &x, &mut r);
        let res = (r[..n0]
            .iter()
            .zip(&b)
            .zip(&ewt)
            .map(|((a, b), w)| ((b - a) * w).powi(2))
            .sum::<f64>()
            / n0 as f64)
            .sqrt();
        let x_q = b[q] + 0.3 * x[..5].iter().sum::<f64>();
        let err_q = (x_q - x_true[q]).abs() / x_true[q].abs();
        println!(
            "{iters} iterations; x_q left at {} (unspecified); residual of the other rows {res:.3e} WRMS \
             (tolerance {tol}); x_q from its row {x_q} against {} ({err_q:.1e} relative)",
            x[q], x_true[q]
        );
        assert!(res <= tol * (1.0 + 1e-6), "{res}");
        // Each of x_0..x_4 is within about tol·1e-6 relative: so is x_q.
        assert!(err_q <= 1e-8, "{err_q}");
    }

    #[test]
    fn gmres_reports_a_cap_it_cannot_meet() {
        let (p, vals) = shifted_laplacian(20, 200.0);
        let n = p.n;
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let ewt = vec![1.0; n];
        let mut gm = Gmres::new(
            n,
            GmresLimits {
                restart: 2,
                max_restarts: 0,
            },
        );
        let mut x = b.clone();
        let r = gm.solve(&mut x, &ewt, 1e-12, |u, o| matvec(&p, &vals, u, o), |_| {});
        println!("restart 2, no restarts, tolerance 1e-12: {r:?}");
        match r {
            Err(GmresFailure::NotConverged { residual, initial }) => {
                assert!(residual > 1e-12 && residual <= initial)
            }
            other => panic!("expected NotConverged, got {other:?}"),
        }
    }
}
