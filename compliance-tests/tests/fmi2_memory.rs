//! FMU-state memory through the master's allocator (one test in its own binary, so the global
//! allocation counters of `c/callbacks.c` see this test alone): handles overwritten in place,
//! every allocation freed with the matching function, no growth over many store/restore cycles
//! (the FMI state procedures' memory check), and freed or foreign handles refused.

use std::ptr;

use compliance_tests::*;

const H: f64 = 1e-4;

#[test]
fn fmu_states_use_the_master_allocator_are_overwritten_in_place_and_do_not_leak() {
    let model = ModelDir::new(
        "projectile-memory",
        &with_method(&shipped_model("projectile"), "ab3"),
    );
    let fmu = Fmu::new(&model);
    fmu.initialize(0.0);
    let live0 = live_allocations();
    let total0 = total_allocations();

    // A new state: one allocation by allocateMemory.
    let mut s: fmi2FMUstate = ptr::null_mut();
    assert_eq!(fmu.get_state(&mut s), OK);
    assert!(!s.is_null());
    assert_eq!(live_allocations(), live0 + 1);
    let handle = s;

    // Overwritten in place: same handle, no allocation, and it now holds the later time.
    let mut t = 0.0;
    for _ in 0..5 {
        assert_eq!(fmu.do_step(t, H), OK);
        t += H;
    }
    let t5 = fmu.time();
    assert_eq!(fmu.get_state(&mut s), OK);
    assert_eq!(
        s, handle,
        "fmi2GetFMUstate with a non-null state reallocated it"
    );
    assert_eq!(live_allocations(), live0 + 1);
    assert_eq!(fmu.do_step(t, H), OK);
    assert_eq!(fmu.set_state(s), OK);
    assert_eq!(fmu.time(), t5, "the overwritten state holds the later time");

    // Deserialize into a new handle (one allocation) and into an existing one (none).
    let blob = fmu.serialize(s);
    let mut d: fmi2FMUstate = ptr::null_mut();
    assert_eq!(fmu.deserialize(&blob, &mut d), OK);
    assert_eq!(live_allocations(), live0 + 2);
    let d_handle = d;
    assert_eq!(fmu.deserialize(&blob, &mut d), OK);
    assert_eq!(d, d_handle, "deserializing into a state reallocated it");
    assert_eq!(live_allocations(), live0 + 2);

    // Freeing returns both to the master; a NULL state is ignored; a freed one is refused.
    assert_eq!(fmu.free_state(&mut s), OK);
    assert!(s.is_null());
    assert_eq!(fmu.free_state(&mut d), OK);
    assert_eq!(live_allocations(), live0);
    let mut null: fmi2FMUstate = ptr::null_mut();
    assert_eq!(fmu.free_state(&mut null), OK);
    assert_eq!(fmu.set_state(handle), ERROR, "a freed state was accepted");
    println!(
        "state handle {handle:p} overwritten in place; {} master allocations, all freed",
        total_allocations() - total0
    );

    // The FMI state procedures' memory check: procedure 1 many times with frees in between.
    let cycles = 200;
    let t_start = fmu.time();
    let mut t = t_start;
    let before = live_allocations();
    for _ in 0..cycles {
        let mut st: fmi2FMUstate = ptr::null_mut();
        assert_eq!(fmu.get_state(&mut st), OK);
        assert_eq!(fmu.do_step(t, H), OK);
        assert_eq!(fmu.set_state(st), OK);
        assert_eq!(fmu.free_state(&mut st), OK);
    }
    assert_eq!(live_allocations(), before, "master allocations leak");
    assert_eq!(fmu.time(), t_start);
    t = t_start;
    assert_eq!(fmu.do_step(t, H), OK);
    println!(
        "{cycles} store/step/restore/free cycles: live master allocations {} → {}",
        before,
        live_allocations()
    );

    // Without an allocator the states are the library's own, and work the same.
    let own = Fmu::with_options(&model, false);
    own.initialize(0.0);
    let count = total_allocations();
    let mut o: fmi2FMUstate = ptr::null_mut();
    assert_eq!(own.get_state(&mut o), OK);
    assert_eq!(own.do_step(0.0, H), OK);
    assert_eq!(own.set_state(o), OK);
    assert_eq!(own.time(), 0.0);
    // A state may be set into another instance of the same model.
    assert_eq!(fmu.set_state(o), OK);
    assert_eq!(fmu.time(), 0.0);
    assert_eq!(own.free_state(&mut o), OK);
    assert_eq!(
        total_allocations(),
        count,
        "no master allocation without an allocator"
    );

    // A freed instance is refused, not dereferenced.
    let c = own.c;
    drop(own);
    // SAFETY: a deliberately stale component pointer, which the library must refuse.
    assert_eq!(unsafe { library().fmi2DoStep(c, 0.0, H, 1) }, ERROR);
    println!("states without allocateMemory work; a freed instance is refused");

    // Hostile-input class 11 (docs/integrators.md): 100 states the master never frees (they lost
    // ~239 kB once the
    // instance was freed and the library unloaded). fmi2FreeInstance gives each back to the
    // master's allocator; a later fmi2FreeFMUstate of one is a refused call, not a double free.
    let third = Fmu::new(&model);
    third.initialize(0.0);
    let live = live_allocations();
    let mut kept = Vec::new();
    for _ in 0..100 {
        let mut st: fmi2FMUstate = ptr::null_mut();
        assert_eq!(third.get_state(&mut st), OK);
        kept.push(st);
    }
    assert_eq!(live_allocations(), live + 100);
    drop(third);
    println!(
        "100 unfreed states: live master allocations {} before fmi2FreeInstance, {} after",
        live + 100,
        live_allocations()
    );
    assert_eq!(live_allocations(), live);
    let mut stale = kept[0];
    assert_eq!(
        fmu.free_state(&mut stale),
        ERROR,
        "a released state was freed again"
    );
    assert_eq!(
        fmu.set_state(kept[1]),
        ERROR,
        "a released state was accepted"
    );
    assert_eq!(live_allocations(), live);
}
