//! The Newton matrix M = I − γJ that the implicit methods share, as diffsol's methods share one
//! Newton iteration over one linear-solver trait: J's values over the system's sparsity pattern
//! by groups of structurally orthogonal columns, exact or by forward differences with the
//! method's own increments ([`jacobian_by_groups`], which the BDF calls too), and M factored and
//! solved by the linear solvers of `super::linsolve`, chosen once for M's pattern.
//!
//! [`NewtonMatrix`] holds these for a method that evaluates J and factors M at every Newton
//! iteration (backward Euler). The BDF keeps the same pieces in its own workspace, since it saves
//! J with its history, reuses it over many steps and may solve by GMRES. Both are scratch, not
//! history: built on the first step (the only allocation), never serialized.

use super::linsolve::{LinearSolver, Linsolve};
use super::{SolverError, ensure_len, finite_values};
use crate::ode::OdeSystem;
use crate::sparsity::{Coloring, Pattern, color_columns};

/// The states the system declares constant (`OdeSystem::constant_states`) whose row of J's
/// `pattern` is empty: a direct solve of M x = b may leave them out (their rows of M are those
/// of I, their corrections 0). A declared state whose f_i depends on anything is not one.
pub(crate) fn constant_rows<S: OdeSystem>(sys: &S, pattern: &Pattern) -> Vec<bool> {
    let mut constant = vec![false; pattern.n];
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
    constant
}

/// J at (t, y), f0 = f(t, y), into `jac`, its values over the pattern of M = I − γJ (`jpos[k]`:
/// where the k-th entry of `pattern` goes), one group of structurally orthogonal columns of
/// `coloring` at a time: while `exact`, columns from the system's directional derivative J·v
/// (`OdeSystem::jvp`) with v the indicator of the group; finite differences once the system
/// says it has none (or without `exact`), each state of the group moved by `increment(j)` (the
/// method's own rule) and the increment actually represented in floating point dividing.
/// `evaluations` counts the right-hand sides and products, one each (a J·v costs about one
/// right-hand side). False when a value is not finite (J then partly written). `ypert`,
/// `fpert`, `fjvp`: scratch of n.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn jacobian_by_groups<S: OdeSystem>(
    sys: &mut S,
    t: f64,
    y: &[f64],
    f0: &[f64],
    (pattern, coloring): (&Pattern, &Coloring),
    jpos: &[usize],
    mut exact: bool,
    increment: impl Fn(usize) -> f64,
    (ypert, fpert, fjvp): (&mut [f64], &mut [f64], &mut [f64]),
    jac: &mut [f64],
    evaluations: &mut u64,
) -> bool {
    for g in 0..coloring.n_colors() {
        if exact {
            ypert.fill(0.0);
            for &j in coloring.group(g) {
                ypert[j] = 1.0;
            }
            *evaluations += 1;
            if sys.jvp(t, y, ypert, fjvp, fpert) {
                if !fpert.iter().all(|v| v.is_finite()) {
                    return false;
                }
                for &j in coloring.group(g) {
                    for k in pattern.col_start[j]..pattern.col_start[j + 1] {
                        jac[jpos[k]] = fpert[pattern.rows[k]];
                    }
                }
                continue;
            }
            exact = false;
        }
        ypert.copy_from_slice(y);
        for &j in coloring.group(g) {
            ypert[j] += increment(j);
        }
        *evaluations += 1;
        sys.rhs(t, ypert, fpert);
        if !finite_values(fpert) {
            return false;
        }
        for &j in coloring.group(g) {
            // The increment actually represented in floating point.
            let inc = ypert[j] - y[j];
            for k in pattern.col_start[j]..pattern.col_start[j + 1] {
                let i = pattern.rows[k];
                jac[jpos[k]] = (fpert[i] - f0[i]) / inc;
            }
        }
    }
    true
}

/// M = I − γJ for a method that evaluates J and factors M afresh at every Newton iteration: J's
/// pattern (the system's, all of it: no row is left out, so every state's Newton update is the
/// full one) and its column groups, M's pattern, J's values on it, and the direct linear solver
/// `LinearSolver::Auto` picks for that pattern (GMRES is not taken: such a Newton iteration has
/// no linear tolerance to give it). Scratch: a clone or a default starts empty, and `prepare`
/// builds it for a system on the first step.
#[derive(Default)]
pub(crate) struct NewtonMatrix {
    n: usize,
    groups: Option<(Pattern, Coloring)>,
    /// Pattern of M (J's with the diagonal): where J's values are stored.
    m_pattern: Option<Pattern>,
    /// For each entry of J's pattern its position in `m_pattern`.
    jpos: Vec<usize>,
    jac: Vec<f64>,
    linsolve: Linsolve,
    ypert: Vec<f64>,
    fpert: Vec<f64>,
    fjvp: Vec<f64>,
}

impl Clone for NewtonMatrix {
    /// Scratch: a clone starts empty and is built again on its first step.
    fn clone(&self) -> Self {
        NewtonMatrix::default()
    }
}

impl PartialEq for NewtonMatrix {
    /// Scratch never distinguishes two integrators.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for NewtonMatrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NewtonMatrix({} states)", self.n)
    }
}

impl NewtonMatrix {
    /// Build the pattern, the groups and the linear solver for `sys` (once: nothing when built
    /// for its size already).
    #[inline]
    pub(crate) fn prepare<S: OdeSystem>(&mut self, sys: &S) -> Result<(), SolverError> {
        let n = sys.dimension();
        if self.n == n && self.m_pattern.is_some() {
            return Ok(());
        }
        self.build(sys, n)
    }

    #[cold]
    fn build<S: OdeSystem>(&mut self, sys: &S, n: usize) -> Result<(), SolverError> {
        let pattern = sys
            .sparsity()
            .filter(|p| p.n == n)
            .unwrap_or_else(|| Pattern::dense(n));
        let constant = constant_rows(sys, &pattern);
        let coloring = color_columns(&pattern);
        let (m_pattern, jpos) = pattern.with_diagonal();
        let no_krylov: Option<fn() -> super::linsolve::krylov::KrylovSolver> = None;
        let (linsolve, _) = Linsolve::select(
            LinearSolver::Auto,
            &m_pattern,
            &constant,
            S::BLOCKS,
            no_krylov,
        )?;
        self.linsolve = linsolve;
        self.jac.clear();
        self.jac.resize(m_pattern.nonzeros(), 0.0);
        self.groups = Some((pattern, coloring));
        self.m_pattern = Some(m_pattern);
        self.jpos = jpos;
        for v in [&mut self.ypert, &mut self.fpert, &mut self.fjvp] {
            ensure_len(v, n);
        }
        self.n = n;
        Ok(())
    }

    /// J at (t, y) with f0 = f(t, y) ([`jacobian_by_groups`]). False when a value is not
    /// finite. `evaluations` counts the right-hand sides (and products) it takes.
    pub(crate) fn evaluate<S: OdeSystem>(
        &mut self,
        sys: &mut S,
        (t, y, f0): (f64, &[f64], &[f64]),
        exact: bool,
        increment: impl Fn(usize) -> f64,
        evaluations: &mut u64,
    ) -> bool {
        let Some((pattern, coloring)) = self.groups.as_ref() else {
            return false;
        };
        jacobian_by_groups(
            sys,
            t,
            y,
            f0,
            (pattern, coloring),
            &self.jpos,
            exact,
            increment,
            (&mut self.ypert, &mut self.fpert, &mut self.fjvp),
            &mut self.jac,
            evaluations,
        )
    }

    /// Factor M = I − γJ with the last J. False when M is singular.
    pub(crate) fn factor(&mut self, gamma: f64) -> bool {
        self.linsolve
            .factor(self.m_pattern.as_ref(), &self.jac, gamma)
    }

    /// Solve M x = b in place with the factors of `factor`; false when the solution is not
    /// finite (M singular to working precision).
    pub(crate) fn solve<S: OdeSystem>(&mut self, b: &mut [f64]) -> bool {
        self.linsolve.solve_direct::<S>(b);
        finite_values(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six states: four coupled in a chain, a constant one (declared) and a quadrature:
    /// f0 = −2y0 + y1², f1 = y0 − 3y1 + sin y2, f2 = y1·y2 − y3, f3 = y2 − y3³/2, f4 = 0,
    /// f5 = y0² + y3. Its Jacobian in closed form is the truth.
    struct Chain {
        jvp: bool,
    }

    fn jacobian(y: &[f64]) -> [[f64; 6]; 6] {
        let mut j = [[0.0; 6]; 6];
        j[0][0] = -2.0;
        j[0][1] = 2.0 * y[1];
        j[1][0] = 1.0;
        j[1][1] = -3.0;
        j[1][2] = y[2].cos();
        j[2][1] = y[2];
        j[2][2] = y[1];
        j[2][3] = -1.0;
        j[3][2] = 1.0;
        j[3][3] = -1.5 * y[3] * y[3];
        j[5][0] = 2.0 * y[0];
        j[5][3] = 1.0;
        j
    }

    impl OdeSystem for Chain {
        fn dimension(&self) -> usize {
            6
        }
        fn rhs(&mut self, _t: f64, y: &[f64], f: &mut [f64]) {
            f[0] = -2.0 * y[0] + y[1] * y[1];
            f[1] = y[0] - 3.0 * y[1] + y[2].sin();
            f[2] = y[1] * y[2] - y[3];
            f[3] = y[2] - 0.5 * y[3] * y[3] * y[3];
            f[4] = 0.0;
            f[5] = y[0] * y[0] + y[3];
        }
        fn sparsity(&self) -> Option<Pattern> {
            let mut dep = vec![false; 36];
            let j = jacobian(&[1.0; 6]);
            for r in 0..6 {
                for c in 0..6 {
                    dep[r * 6 + c] = j[r][c] != 0.0;
                }
            }
            Some(Pattern::from_dense(6, &dep))
        }
        fn constant_states(&self) -> Vec<usize> {
            vec![4]
        }
        fn jvp(&mut self, t: f64, y: &[f64], v: &[f64], f: &mut [f64], jv: &mut [f64]) -> bool {
            if !self.jvp {
                return false;
            }
            self.rhs(t, y, f);
            let j = jacobian(y);
            for r in 0..6 {
                jv[r] = (0..6).map(|c| j[r][c] * v[c]).sum();
            }
            true
        }
    }

    const Y: [f64; 6] = [0.7, -1.3, 0.4, 2.1, 5.0, 0.0];

    /// J's values over M's pattern as a dense matrix.
    fn dense(m: &Pattern, vals: &[f64]) -> [[f64; 6]; 6] {
        let mut a = [[0.0; 6]; 6];
        for c in 0..6 {
            for k in m.col_start[c]..m.col_start[c + 1] {
                a[m.rows[k]][c] = vals[k];
            }
        }
        a
    }

    /// J by groups against the closed form: exact through `jvp`, forward differences with
    /// FONSim's increment to √ε; and the grouped differences equal the column-by-column ones
    /// bit for bit (a state outside a column's rows does not move them).
    #[test]
    fn jacobian_by_groups_matches_the_closed_form_and_the_columns_one_by_one() {
        let mut sys = Chain { jvp: true };
        let mut f0 = [0.0; 6];
        sys.rhs(0.0, &Y, &mut f0);
        let truth = jacobian(&Y);
        let p = sys.sparsity().unwrap();
        let groups = color_columns(&p);
        let (m, jpos) = p.with_diagonal();
        let singles = Coloring {
            color: (0..6).collect(),
            group_start: (0..=6).collect(),
            columns: (0..6).collect(),
        };
        let increment = |j: usize| f64::EPSILON.sqrt() * Y[j].abs().max(1.0);
        let run = |sys: &mut Chain, coloring: &Coloring, exact: bool| {
            let (mut yp, mut fp, mut fj) = ([0.0; 6], [0.0; 6], [0.0; 6]);
            // The diagonal entries J's pattern lacks stay 0.
            let mut jac = vec![0.0; m.nonzeros()];
            let mut evaluations = 0;
            let ok = jacobian_by_groups(
                sys,
                0.0,
                &Y,
                &f0,
                (&p, coloring),
                &jpos,
                exact,
                increment,
                (&mut yp, &mut fp, &mut fj),
                &mut jac,
                &mut evaluations,
            );
            assert!(ok);
            (dense(&m, &jac), evaluations)
        };
        let (exact, n_exact) = run(&mut sys, &groups, true);
        let (fd, n_fd) = run(&mut sys, &groups, false);
        let (fd_cols, n_cols) = run(&mut sys, &singles, false);
        sys.jvp = false;
        let (fallback, _) = run(&mut sys, &groups, true);
        println!(
            "{} groups for 6 columns: {n_exact} products, {n_fd} right-hand sides grouped, \
             {n_cols} one by one",
            groups.n_colors()
        );
        assert!(n_fd < n_cols);
        let mut worst: f64 = 0.0;
        for r in 0..6 {
            for c in 0..6 {
                assert!((exact[r][c] - truth[r][c]).abs() <= 1e-15 * truth[r][c].abs());
                let err = (fd[r][c] - truth[r][c]).abs() / truth[r][c].abs().max(1.0);
                worst = worst.max(err);
                assert_eq!(fd[r][c].to_bits(), fd_cols[r][c].to_bits(), "({r}, {c})");
                assert_eq!(fallback[r][c].to_bits(), fd[r][c].to_bits(), "({r}, {c})");
            }
        }
        println!("forward differences: largest error {worst:e} (relative, √ε = 1.5e-8)");
        assert!(worst < 1e-6);
    }

    /// On every shipped network (models/, the gallery, the peer and FONSim networks), at the
    /// initial state and at a state moved off it: the grouped forward differences of the
    /// network's pattern equal the column-by-column ones bit for bit, so backward Euler's J is
    /// FONSim's dense one on the pattern (and exact zeros off it).
    #[test]
    fn grouped_differences_equal_column_by_column_on_every_shipped_network() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in [
            "models",
            "compliance-tests/peers/models",
            "tests/fonsim/models",
        ] {
            for e in std::fs::read_dir(root.join(dir)).unwrap() {
                files.push(e.unwrap().path());
            }
        }
        for e in std::fs::read_dir(root.join("examples")).unwrap() {
            let d = e.unwrap().path();
            for name in ["model.toml", "tank.toml"] {
                if d.join(name).exists() {
                    files.push(d.join(name));
                }
            }
        }
        files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
        files.sort();
        let (mut entries, mut saved) = (0, 0);
        for path in &files {
            let src = std::fs::read_to_string(path).unwrap();
            let model = crate::model::parse_str(&src, "model.toml", &[]).unwrap();
            let mut net = crate::model::build_network(&model.spec);
            let n = net.dimension();
            let p = net.sparsity().expect("a network has a pattern");
            let groups = color_columns(&p);
            let singles = Coloring {
                color: (0..n).collect(),
                group_start: (0..=n).collect(),
                columns: (0..n).collect(),
            };
            let (m, jpos) = p.with_diagonal();
            let y0 = net.initial_state();
            let moved: Vec<f64> = y0
                .iter()
                .enumerate()
                .map(|(i, v)| v * (1.0 + 1e-3 * (i % 7) as f64))
                .collect();
            for y in [&y0, &moved] {
                let mut f0 = vec![0.0; n];
                net.rhs(0.0, y, &mut f0);
                let increment = |j: usize| f64::EPSILON.sqrt() * y[j].abs().max(1e-12);
                let mut run = |coloring: &Coloring| {
                    let (mut yp, mut fp, mut fj) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                    let mut jac = vec![0.0; m.nonzeros()];
                    let mut evaluations = 0;
                    let ok = jacobian_by_groups(
                        &mut net,
                        0.0,
                        y,
                        &f0,
                        (&p, coloring),
                        &jpos,
                        false,
                        increment,
                        (&mut yp, &mut fp, &mut fj),
                        &mut jac,
                        &mut evaluations,
                    );
                    assert!(ok, "{}", path.display());
                    (jac, evaluations)
                };
                let (grouped, n_grouped) = run(&groups);
                let (columns, n_columns) = run(&singles);
                for k in 0..m.nonzeros() {
                    assert_eq!(
                        grouped[k].to_bits(),
                        columns[k].to_bits(),
                        "{}: entry {k}",
                        path.display()
                    );
                }
                entries += m.nonzeros();
                saved += n_columns - n_grouped;
            }
            println!(
                "{}: {n} states, {} groups, {} entries",
                path.strip_prefix(root).unwrap().display(),
                groups.n_colors(),
                m.nonzeros()
            );
        }
        println!(
            "{} networks, {entries} entries equal bit for bit, {saved} right-hand sides saved",
            files.len()
        );
        assert!(files.len() >= 15);
    }

    /// M = I − hJ through the linear solver `NewtonMatrix` picks: the solution's residual, and
    /// the constant state's row of I leaving its right-hand side as it is.
    #[test]
    fn newton_matrix_solves_i_minus_h_j() {
        let mut sys = Chain { jvp: true };
        let mut nm = NewtonMatrix::default();
        nm.prepare(&sys).unwrap();
        let mut f0 = [0.0; 6];
        sys.rhs(0.0, &Y, &mut f0);
        let mut evaluations = 0;
        let increment = |j: usize| f64::EPSILON.sqrt() * Y[j].abs().max(1.0);
        assert!(nm.evaluate(&mut sys, (0.0, &Y, &f0), true, increment, &mut evaluations));
        let h = 0.3;
        assert!(nm.factor(h));
        let b = [1.0, -2.0, 0.5, 3.0, 0.25, -1.0];
        let mut x = b;
        assert!(nm.solve::<Chain>(&mut x));
        let j = dense(nm.m_pattern.as_ref().unwrap(), &nm.jac);
        let mut worst: f64 = 0.0;
        for r in 0..6 {
            let mx: f64 = (0..6)
                .map(|c| (if r == c { 1.0 } else { 0.0 } - h * j[r][c]) * x[c])
                .sum();
            worst = worst.max((mx - b[r]).abs());
        }
        println!("x = {x:?}, largest residual {worst:e}");
        assert!(worst < 1e-14);
        assert_eq!(x[4], b[4]);
    }

    /// A singular M (f = y, h = 1: M = 0) is refused by the factorization or the solve.
    #[test]
    fn a_singular_newton_matrix_is_refused() {
        struct Growth;
        impl OdeSystem for Growth {
            fn dimension(&self) -> usize {
                1
            }
            fn rhs(&mut self, _t: f64, y: &[f64], f: &mut [f64]) {
                f[0] = y[0];
            }
        }
        let mut nm = NewtonMatrix::default();
        nm.prepare(&Growth).unwrap();
        let (y, f0) = ([2.0], [2.0]);
        let mut evaluations = 0;
        assert!(nm.evaluate(
            &mut Growth,
            (0.0, &y, &f0),
            false,
            |_| 1e-3,
            &mut evaluations
        ));
        let mut b = [1.0];
        let refused = !nm.factor(1.0) || !nm.solve::<Growth>(&mut b);
        println!("J = {:?}; M = 1 − 1·J refused: {refused}", nm.jac);
        assert!(refused);
    }
}
