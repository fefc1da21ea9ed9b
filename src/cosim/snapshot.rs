//! An FMU state ([`Snapshot`]): the dynamic part of a simulation and what an instance needs to
//! go on from it, copied out of and into a running [`Simulation`] without allocating, and its
//! serialized form: a self-checking blob (magic, format version, GUID, body length, CRC-32)
//! around a bincode body.

use serde::{Deserialize, Serialize};

use super::{CallError, ExchangeSnapshot, Phase};
use crate::checks;
use crate::integrators::Method;
use crate::simulation::{Finish, Internal, Simulation, Stats};

/// Everything an FMU state holds: the dynamic part of the simulation only (time, state vectors,
/// integrator history, discrete flags, live inputs, counters, check latches) and what the
/// instance needs to go on from it. The static part (the network's components, the solver
/// settings, the check thresholds) is the instance's own model, rebuilt from `overrides` and
/// `start_time_s` where they differ from the instance's, and never carried: a state stays small
/// (a few hundred bytes for the projectile model) and a restore copies vectors into storage that
/// already has their size (no allocation).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Snapshot {
    /// GUID of the model the state belongs to.
    pub guid: String,
    pub(super) phase: Phase,
    pub(super) overrides: Vec<String>,
    pub(super) start_time_s: f64,
    pub(super) stop_time_s: Option<f64>,
    /// Values of the inputs set during the run (one per input variable, in value-reference
    /// order); `None`: as the model gives it.
    pub(super) inputs: Vec<Option<f64>>,
    pub(super) t_s: f64,
    pub(super) y: Vec<f64>,
    pub(super) y_compensation: Vec<f64>,
    pub(super) rc: u8,
    pub(super) first_fired_s: [Option<f64>; checks::CODES],
    pub(super) finished: Option<Finish>,
    pub(super) stats: Stats,
    pub(super) internal: Internal,
    pub(super) integrator: Method,
    /// The network's discrete state: piston exit flags, the segment start, the counter.
    pub(super) exited: Vec<bool>,
    /// The modes its laws hold (`Network::modes`: a stuck piston's; empty before any is held),
    /// which its state alone does not give (a stuck piston's v off 0 by round-off).
    pub(super) modes: Vec<i8>,
    pub(super) segment_start_s: f64,
    pub(super) rhs_evaluations: u64,
    /// A Model Exchange instance's own part (`None`: a Co-Simulation state). Encoded after the
    /// body above (see [`encode_snapshot_into`]), so a Co-Simulation state's bytes are those
    /// of the format before Model Exchange.
    #[serde(skip)]
    pub(super) exchange: Option<ExchangeSnapshot>,
}

impl Snapshot {
    /// Simulation time of the state, s.
    pub fn time_s(&self) -> f64 {
        self.t_s
    }

    /// For tests that forge states.
    #[cfg(test)]
    pub(crate) fn y_mut(&mut self) -> &mut Vec<f64> {
        &mut self.y
    }
}

/// Copy `src` into `dst`, reusing `dst`'s vectors (no allocation when the lengths agree).
/// Every saved field (a new one fails to compile here until it is copied).
fn copy_internal(dst: &mut Internal, src: &Internal) {
    let Internal {
        t_s,
        y,
        compensation,
        t_prev_s,
        y_prev,
        compensation_prev,
        pending_event,
        at_breakpoint,
        pending_downward,
        restarted_on,
        disarmed,
        switch_crossed,
        located_downward: _,
    } = src;
    dst.t_s = *t_s;
    dst.y.clone_from(y);
    dst.compensation.clone_from(compensation);
    dst.t_prev_s = *t_prev_s;
    dst.y_prev.clone_from(y_prev);
    dst.compensation_prev.clone_from(compensation_prev);
    dst.pending_event = *pending_event;
    dst.at_breakpoint = *at_breakpoint;
    dst.pending_downward = *pending_downward;
    dst.restarted_on = *restarted_on;
    dst.disarmed.clone_from(disarmed);
    dst.switch_crossed = *switch_crossed;
}

/// Copy the integrator's history into storage of the same size (`Method::assign_from`: no
/// allocation once sized, for every method).
fn copy_integrator(dst: &mut Method, src: &Method) {
    dst.assign_from(src);
}

/// The dynamic fields of a [`Snapshot`] and where each lives in a [`Simulation`], as
/// `(how to copy, snapshot field, simulation place)`: one list for both directions
/// ([`take_dynamic`], [`put_dynamic`]), so a field cannot be copied one way and forgotten the
/// other; `take_dynamic` also fails to compile when `Snapshot` gains a field that is in
/// neither this list nor its static part.
macro_rules! dynamic_fields {
    ($m:ident) => {
        $m! {
            (value, t_s, t_s),
            (vec, y, y),
            (vec, y_compensation, y_compensation),
            (value, rc, rc),
            (value, first_fired_s, first_fired_s),
            (value, finished, finished),
            (value, stats, stats),
            (internal, internal, internal),
            (integrator, integrator, integrator),
            (vec, exited, network.exited),
            (vec, modes, network.modes),
            (value, segment_start_s, network.segment_start_s),
            (value, rhs_evaluations, network.rhs_evaluations),
        }
    };
}

/// `dst = src` for one field of [`dynamic_fields`], reusing `dst`'s storage.
macro_rules! copy_field {
    (value, $dst:expr, $src:expr) => {
        $dst = $src
    };
    (vec, $dst:expr, $src:expr) => {
        $dst.clone_from(&$src)
    };
    (internal, $dst:expr, $src:expr) => {
        copy_internal(&mut $dst, &$src)
    };
    (integrator, $dst:expr, $src:expr) => {
        copy_integrator(&mut $dst, &$src)
    };
}

/// The dynamic part of `sim` into `s` (storage reused).
pub(super) fn take_dynamic(s: &mut Snapshot, sim: &Simulation) {
    macro_rules! take {
        ($(($how:ident, $field:ident, $($place:ident).+)),* $(,)?) => {
            // Every field is static (the model's, set when the snapshot is made) or listed.
            let Snapshot {
                guid: _,
                phase: _,
                overrides: _,
                start_time_s: _,
                stop_time_s: _,
                inputs: _,
                exchange: _,
                $($field: _,)*
            } = s;
            $(copy_field!($how, s.$field, sim.$($place).+);)*
        };
    }
    dynamic_fields!(take);
}

/// The dynamic part of `s` into `sim`, whose static part is the state's model (storage reused;
/// the inputs are applied by the caller).
pub(super) fn put_dynamic(sim: &mut Simulation, s: &Snapshot) {
    macro_rules! put {
        ($(($how:ident, $field:ident, $($place:ident).+)),* $(,)?) => {
            $(copy_field!($how, sim.$($place).+, s.$field);)*
        };
    }
    dynamic_fields!(put);
    sim.forget_last_event();
    // The held modes are saved with the state; held again from the restored integrator's
    // point (the ones saved are the modes held before).
    sim.hold_modes();
}

/// Serialized FMU state: `PLNMSTAT`, format version (u32), GUID length (u32) and bytes, body
/// length (u64), CRC-32 of the body (u32), all little-endian, then the bincode body.
pub const STATE_MAGIC: &[u8; 8] = b"PLNMSTAT";
/// Version 2: the body carries the dynamic part of the simulation only (version 1 carried the
/// whole network). Version 3: a BDF history's saved Jacobian is its values over the model's
/// pattern of I − γJ (version 2: n² dense values). Version 4: the first firings of run-time
/// checks 0..=11 (version 3: 0..=9). Version 5: the modes the laws hold. Version 6: the way
/// an adaptive method's restart crossed its event. Version 7: `auto`'s count of DP5 steps
/// accepted after a rejection.
pub const STATE_FORMAT_VERSION: u32 = 8;
/// Longest GUID a header may carry (ours are 38 characters).
const MAX_GUID_LEN: usize = 256;
/// Largest body the decoder accepts (a guard against absurd length claims), bytes.
pub(super) const MAX_STATE_BODY: usize = 1 << 30;

fn bincode_config() -> impl bincode::config::Config {
    bincode::config::standard()
}

/// Encode a state as a self-checking blob.
pub fn encode_snapshot(snapshot: &Snapshot) -> Result<Vec<u8>, CallError> {
    let mut out = Vec::new();
    encode_snapshot_into(snapshot, &mut out)?;
    Ok(out)
}

/// Encode a state into `out` (cleared first; its storage is reused).
pub fn encode_snapshot_into(snapshot: &Snapshot, out: &mut Vec<u8>) -> Result<(), CallError> {
    let guid = snapshot.guid.as_bytes();
    out.clear();
    out.extend_from_slice(STATE_MAGIC);
    out.extend_from_slice(&STATE_FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(guid.len() as u32).to_le_bytes());
    out.extend_from_slice(guid);
    // Body length and CRC are filled in once the body is written behind them.
    let fields = out.len();
    out.extend_from_slice(&[0u8; 12]);
    let body_start = out.len();
    bincode::serde::encode_into_std_write(snapshot, out, bincode_config())
        .map_err(|e| CallError(format!("cannot encode the state: {e}")))?;
    if let Some(x) = &snapshot.exchange {
        bincode::serde::encode_into_std_write(x, out, bincode_config())
            .map_err(|e| CallError(format!("cannot encode the state: {e}")))?;
    }
    let body_len = (out.len() - body_start) as u64;
    let crc = crc32fast::hash(&out[body_start..]);
    out[fields..fields + 8].copy_from_slice(&body_len.to_le_bytes());
    out[fields + 8..fields + 12].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// Split a blob into (GUID, body), checking every header field. `expected_guid` is the GUID of
/// the instance that reads it.
pub(super) fn check_header<'a>(blob: &'a [u8], expected_guid: &str) -> Result<&'a [u8], CallError> {
    let truncated = |need: usize| {
        CallError(format!(
            "state blob is truncated: {} bytes, its header needs at least {need}",
            blob.len()
        ))
    };
    if blob.len() < 8 {
        return Err(truncated(8));
    }
    if &blob[..8] != STATE_MAGIC {
        return Err(CallError(format!(
            "not a Plenum FMU state: it starts with {:?}, expected {:?}",
            String::from_utf8_lossy(&blob[..8]),
            String::from_utf8_lossy(STATE_MAGIC)
        )));
    }
    let u32_at = |o: usize| -> Result<u32, CallError> {
        let b = blob.get(o..o + 4).ok_or_else(|| truncated(o + 4))?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let version = u32_at(8)?;
    if version != STATE_FORMAT_VERSION {
        return Err(CallError(format!(
            "state format version {version}, this FMU reads version {STATE_FORMAT_VERSION}"
        )));
    }
    let guid_len = u32_at(12)? as usize;
    if guid_len > MAX_GUID_LEN {
        return Err(CallError(format!(
            "state header claims a {guid_len}-byte GUID (at most {MAX_GUID_LEN}): corrupted state"
        )));
    }
    let guid_end = 16 + guid_len;
    let guid = blob.get(16..guid_end).ok_or_else(|| truncated(guid_end))?;
    let guid = String::from_utf8_lossy(guid);
    if guid != expected_guid {
        return Err(CallError(format!(
            "state is for model GUID {guid}, this instance is {expected_guid}"
        )));
    }
    let len_bytes = blob
        .get(guid_end..guid_end + 8)
        .ok_or_else(|| truncated(guid_end + 12))?;
    let mut l = [0u8; 8];
    l.copy_from_slice(len_bytes);
    let body_len = u64::from_le_bytes(l);
    let crc = u32_at(guid_end + 8)?;
    let body_start = guid_end + 12;
    if body_len > MAX_STATE_BODY as u64 {
        return Err(CallError(format!(
            "state header claims a body of {body_len} bytes (at most {MAX_STATE_BODY}): \
             corrupted state"
        )));
    }
    let total = body_start + body_len as usize;
    if blob.len() < total {
        return Err(CallError(format!(
            "state blob is truncated: {} bytes, header says {total}",
            blob.len()
        )));
    }
    if blob.len() > total {
        return Err(CallError(format!(
            "state blob has {} bytes, header says {total}: trailing data",
            blob.len()
        )));
    }
    let body = &blob[body_start..];
    let actual = crc32fast::hash(body);
    if actual != crc {
        return Err(CallError(format!(
            "checksum mismatch: header says CRC-32 {crc:08x}, body hashes to {actual:08x} \
             (corrupted state)"
        )));
    }
    Ok(body)
}
