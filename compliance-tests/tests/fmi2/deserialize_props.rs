//! fmi2DeSerializeFMUstate against thousands of damaged blobs (proptest): truncated, bit-flipped
//! (with and without a recomputed checksum, so the decoder and the shape checks are reached too),
//! empty, oversized, random, random behind a valid header, and another model's. Every one is
//! refused with fmi2Error and a message that says what is wrong and no state handle is made, or
//! (a re-checksummed flip that still fits the model: another number somewhere) is set and stepped
//! from without fmi2Fatal; the instance then steps bit for bit as an untouched twin.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ptr;

use compliance_tests::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const H: f64 = 1e-4;

/// The phrases a refusal may use, and the bucket each one counts in.
const REASONS: [&str; 12] = [
    "fatal state",
    "truncated",
    "not a Plenum FMU state",
    "checksum mismatch",
    "state is for model GUID",
    "format version",
    "corrupted state",
    "trailing data",
    "does not decode",
    "does not fit",
    "non-finite",
    "state body has",
];

/// Header length of a blob: magic, version, GUID length, GUID, body length, CRC.
fn header_len(blob: &[u8]) -> usize {
    let guid = u32::from_le_bytes(blob[12..16].try_into().unwrap()) as usize;
    16 + guid + 12
}

/// The blob with its CRC recomputed over the (changed) body.
fn with_crc(mut blob: Vec<u8>, header: usize) -> Vec<u8> {
    let crc = crc32(&blob[header..]);
    blob[header - 4..header].copy_from_slice(&crc.to_le_bytes());
    blob
}

/// CRC-32 (IEEE), as the state header uses.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[derive(Clone, Debug)]
enum Damage {
    Truncated(usize),
    Flips(Vec<(usize, u8)>),
    FlipsWithCrc(Vec<(usize, u8)>),
    Oversized(Vec<u8>),
    Random(Vec<u8>),
    RandomBody(Vec<u8>),
    Foreign(Option<(usize, u8)>),
    Empty,
}

fn damage(len: usize, body: usize) -> impl Strategy<Value = Damage> {
    let flips = prop::collection::vec((0..len, 0u8..8), 1..4);
    prop_oneof![
        (0..len).prop_map(Damage::Truncated),
        flips.clone().prop_map(Damage::Flips),
        prop::collection::vec((body..len, 0u8..8), 1..4).prop_map(Damage::FlipsWithCrc),
        prop::collection::vec(any::<u8>(), 1..256).prop_map(Damage::Oversized),
        prop::collection::vec(any::<u8>(), 0..4096).prop_map(Damage::Random),
        prop::collection::vec(any::<u8>(), 0..2048).prop_map(Damage::RandomBody),
        prop::option::of((0..len, 0u8..8)).prop_map(Damage::Foreign),
        Just(Damage::Empty),
    ]
}

fn apply(d: &Damage, blob: &[u8], foreign: &[u8]) -> Vec<u8> {
    let header = header_len(blob);
    let flip = |mut b: Vec<u8>, flips: &[(usize, u8)]| {
        for &(i, bit) in flips {
            let i = i % b.len();
            b[i] ^= 1 << bit;
        }
        b
    };
    match d {
        Damage::Truncated(n) => blob[..*n].to_vec(),
        Damage::Flips(f) => flip(blob.to_vec(), f),
        Damage::FlipsWithCrc(f) => with_crc(flip(blob.to_vec(), f), header),
        Damage::Oversized(extra) => [blob, extra].concat(),
        Damage::Random(bytes) => bytes.clone(),
        Damage::RandomBody(body) => {
            let mut b = blob[..header].to_vec();
            b[header - 12..header - 4].copy_from_slice(&(body.len() as u64).to_le_bytes());
            b.extend_from_slice(body);
            with_crc(b, header)
        }
        Damage::Foreign(f) => flip(foreign.to_vec(), &f.iter().copied().collect::<Vec<_>>()),
        Damage::Empty => Vec::new(),
    }
}

fn state_blob(model: &ModelDir, steps: usize) -> Vec<u8> {
    let f = Fmu::new(model);
    f.initialize(0.0);
    let mut t = 0.0;
    for _ in 0..steps {
        assert_eq!(f.do_step(t, H), OK);
        t += H;
    }
    let mut s: fmi2FMUstate = ptr::null_mut();
    assert_eq!(f.get_state(&mut s), OK);
    let blob = f.serialize(s);
    assert_eq!(f.free_state(&mut s), OK);
    blob
}

#[test]
fn damaged_state_blobs_are_refused_and_leave_the_instance_untouched() {
    let model = ModelDir::new("props", &with_method(&shipped_model("projectile"), "ab4"));
    let other = ModelDir::new("props-foreign", &shipped_model("two_tanks"));
    let blob = state_blob(&model, 7);
    let foreign = state_blob(&other, 3);
    let header = header_len(&blob);
    set_print_all_logs(false);
    let fmu = Fmu::new(&model);
    let twin = Fmu::new(&model);
    let mut t = 0.0;
    for f in [&fmu, &twin] {
        f.initialize(0.0);
        t = 0.0;
        for _ in 0..5 {
            assert_eq!(f.do_step(t, H), OK);
            t += H;
        }
    }
    let before = fmu.outputs_bits();
    // An existing handle given to fmi2DeSerializeFMUstate must not change either.
    let mut kept: fmi2FMUstate = ptr::null_mut();
    assert_eq!(fmu.get_state(&mut kept), OK);
    let kept_blob = fmu.serialize(kept);

    let cases = std::env::var("PLENUM_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let reasons: RefCell<BTreeMap<&str, usize>> = RefCell::default();
    let accepted = Cell::new(0usize);
    // Status of the fmi2DoStep from each accepted state (100 + status: fmi2SetFMUstate refused).
    let stepped: RefCell<BTreeMap<fmi2Status, usize>> = RefCell::default();
    let kinds: RefCell<BTreeMap<String, usize>> = RefCell::default();
    let result = runner.run(&damage(blob.len(), header), |d| {
        let bytes = apply(&d, &blob, &foreign);
        let kind = format!("{d:?}").split('(').next().unwrap_or("").to_string();
        *kinds.borrow_mut().entry(kind).or_default() += 1;
        // Only this case's lines (a long log makes every look-up slow).
        forget_logs_of(fmu.env);
        let n = 0;
        let mut out: fmi2FMUstate = ptr::null_mut();
        let status = fmu.deserialize(&bytes, &mut out);
        if status == OK && bytes != blob {
            // A flip with a recomputed checksum may still be a state that fits this model
            // (another number somewhere): it is set, read and stepped from, with fmi2Fatal never
            // (fmi2SetFMUstate and fmi2DoStep may refuse it or fail with fmi2Error/fmi2Discard),
            // then the kept state is set back.
            prop_assert!(matches!(d, Damage::FlipsWithCrc(_) | Damage::RandomBody(_)));
            accepted.set(accepted.get() + 1);
            let set = fmu.set_state(out);
            prop_assert_ne!(set, FATAL, "{:?}: {:?}", d, fmu.logs());
            if set == OK {
                let (got, _) = fmu.get_real(&[0]);
                prop_assert_ne!(got, FATAL, "{:?}: {:?}", d, fmu.logs());
                let t0 = fmu.time();
                let step = fmu.do_step(t0, H);
                prop_assert_ne!(step, FATAL, "{:?}: {:?}", d, fmu.logs());
                *stepped.borrow_mut().entry(step).or_default() += 1;
                prop_assert_eq!(fmu.set_state(kept), OK);
            } else {
                *stepped.borrow_mut().entry(set + 100).or_default() += 1;
            }
            prop_assert_eq!(fmu.free_state(&mut out), OK);
        } else if bytes == blob {
            prop_assert_eq!(status, OK);
            prop_assert_eq!(fmu.free_state(&mut out), OK);
        } else {
            prop_assert_eq!(status, ERROR, "{:?}", d);
            prop_assert!(out.is_null(), "a handle was made");
            let logs = fmu.logs();
            let line = logs[n..]
                .iter()
                .find(|r| r.status == ERROR as i32)
                .ok_or_else(|| TestCaseError::fail(format!("no message for {d:?}")))?;
            prop_assert!(line.text.starts_with("fmi2DeSerializeFMUstate: "));
            let reason = REASONS
                .iter()
                .find(|r| line.text.contains(*r))
                .ok_or_else(|| TestCaseError::fail(format!("unclear message: {}", line.text)))?;
            *reasons.borrow_mut().entry(reason).or_default() += 1;
        }
        // Into an existing handle: refused without touching it.
        let mut into = kept;
        let s2 = fmu.deserialize(&bytes, &mut into);
        prop_assert_eq!(into, kept);
        if s2 == OK {
            // Put it back.
            prop_assert_eq!(fmu.deserialize(&kept_blob, &mut into), OK);
        }
        prop_assert_eq!(fmu.outputs_bits(), before.clone());
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The instance: the same outputs, and the same future as the twin.
    assert_eq!(fmu.outputs_bits(), before);
    assert_eq!(
        fmu.serialize(kept),
        kept_blob,
        "the existing handle changed"
    );
    assert_eq!(fmu.free_state(&mut kept), OK);
    for _ in 0..20 {
        assert_eq!(fmu.do_step(t, H), twin.do_step(t, H));
        assert_eq!(fmu.outputs_bits(), twin.outputs_bits());
        t += H;
    }
    let (reasons, kinds, accepted) = (reasons.into_inner(), kinds.into_inner(), accepted.get());
    let stepped = stepped.into_inner();
    let refused: usize = reasons.values().sum();
    println!(
        "{cases} damaged blobs ({}-byte valid state, {header}-byte header): kinds {kinds:?}; \
         {refused} refused with fmi2Error, by reason {reasons:?}; {accepted} re-checksummed \
         flips decoded as states that fit the model, each set and stepped (fmi2DoStep status: \
         count {stepped:?}, none fatal); the instance then ran 20 steps bit for bit as its twin",
        blob.len()
    );
    assert!(refused + accepted >= cases as usize - 1);
}
