//! Eight instances stepped at once from eight threads give exactly the results of the same runs
//! one after another; an instance freed (and others made and freed) meanwhile disturbs nobody.

use std::ptr;
use std::sync::{Arc, Barrier};

use compliance_tests::*;

const RUNS: [(&str, &str, f64); 8] = [
    ("projectile", "rk4", 1e-4),
    ("projectile", "ab3", 1e-4),
    ("projectile", "euler", 1e-4),
    ("blowdown", "rk4", 0.01),
    ("blowdown", "ab5", 0.01),
    ("two_tanks", "rk4", 0.05),
    ("two_tanks", "ab2", 0.05),
    ("two_tanks", "euler", 0.05),
];
const STEPS: usize = 60;

/// One run: STEPS steps with a store/restore round trip in the middle; every output's bits.
fn run(model: &ModelDir, h: f64, barrier: Option<&Barrier>) -> Vec<Vec<u64>> {
    let f = Fmu::new(model);
    f.initialize(0.0);
    if let Some(b) = barrier {
        b.wait();
    }
    let mut rows = Vec::new();
    let mut t = 0.0;
    let mut s: fmi2FMUstate = ptr::null_mut();
    for k in 0..STEPS {
        if k == STEPS / 2 {
            assert_eq!(f.get_state(&mut s), OK);
            let blob = f.serialize(s);
            assert_eq!(f.do_step(t, h), OK);
            let mut d: fmi2FMUstate = ptr::null_mut();
            assert_eq!(f.deserialize(&blob, &mut d), OK);
            assert_eq!(f.set_state(d), OK);
            assert_eq!(f.free_state(&mut d), OK);
            assert_eq!(f.free_state(&mut s), OK);
        }
        let st = f.do_step(t, h);
        assert!(st == OK || st == DISCARD, "{st}");
        rows.push(f.outputs_bits());
        if st == DISCARD {
            break;
        }
        t += h;
    }
    rows
}

#[test]
fn eight_instances_on_eight_threads_equal_the_same_runs_one_after_another() {
    let models: Vec<Arc<ModelDir>> = RUNS
        .iter()
        .map(|(m, method, _)| {
            Arc::new(ModelDir::new(
                &format!("threads-{m}-{method}"),
                &with_method(&shipped_model(m), method),
            ))
        })
        .collect();
    let sequential: Vec<_> = RUNS
        .iter()
        .zip(&models)
        .map(|((_, _, h), m)| run(m, *h, None))
        .collect();

    let barrier = Arc::new(Barrier::new(RUNS.len() + 1));
    let handles: Vec<_> = RUNS
        .iter()
        .zip(&models)
        .map(|((_, _, h), m)| {
            let (m, b, h) = (Arc::clone(m), Arc::clone(&barrier), *h);
            std::thread::spawn(move || run(&m, h, Some(&b)))
        })
        .collect();
    // A ninth thread's worth of churn from here: instances made, stepped and freed while the
    // eight run, one freed in the middle of its run.
    barrier.wait();
    let churn_model = Arc::clone(&models[0]);
    let mut churned = 0;
    for _ in 0..20 {
        let f = Fmu::new(&churn_model);
        f.initialize(0.0);
        assert_eq!(f.do_step(0.0, 1e-4), OK);
        let mut s: fmi2FMUstate = ptr::null_mut();
        assert_eq!(f.get_state(&mut s), OK);
        drop(f); // freed with a state still held
        // SAFETY: the library keeps states past their instance until the master frees them.
        assert_eq!(
            unsafe { library().fmi2FreeFMUstate(ptr::null_mut(), &mut s) },
            ERROR,
            "a NULL component is refused"
        );
        let g = Fmu::new(&churn_model);
        assert_eq!(g.free_state(&mut s), OK);
        churned += 1;
    }
    let concurrent: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    for (((name, method, _), a), b) in RUNS.iter().zip(&sequential).zip(&concurrent) {
        assert_eq!(a, b, "{name}/{method}: concurrent run differs");
        println!(
            "{name}/{method}: {} steps, {} values, concurrent = sequential bit for bit",
            a.len(),
            a.len() * a[0].len()
        );
    }
    println!(
        "{} instances on {} threads equal their sequential runs; {churned} other instances made \
         and freed meanwhile",
        RUNS.len(),
        RUNS.len()
    );
}
