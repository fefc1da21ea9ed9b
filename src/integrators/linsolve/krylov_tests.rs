//! Tests of ILU(0) and GMRES: exact factors of a tridiagonal matrix, weighted tolerances met
//! on a grid, caps and zero weights reported.

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
