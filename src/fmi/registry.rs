//! The registries of live instances and FMU states, one pair per standard: a pointer an
//! importer passes is looked up here before it is dereferenced, so a freed, foreign or made-up
//! pointer is refused instead of followed.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Hashes an address (the registries' keys) by one multiply: every call looks its instance up,
/// and SipHash would be a third of the layer's overhead (docs/performance.md, "FMI overhead").
/// The keys are our own allocations' addresses, not chosen by an attacker.
#[derive(Default, Clone, Copy)]
pub(crate) struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Fibonacci hashing; the high bits (which hashbrown uses) depend on every input bit.
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Hasher = std::hash::BuildHasherDefault<AddressHasher>;

/// One standard's live instances and FMU states, by address. Plain statics (no lazy
/// initialization): an empty set holds no heap storage, and the sets give their storage back
/// when their last entry leaves, so a master that frees what it made and unloads the library
/// leaves nothing allocated behind.
pub(crate) struct Registries {
    components: Mutex<HashSet<usize, Hasher>>,
    /// Live FMU states, each with the instance that handed it out.
    states: Mutex<HashMap<usize, usize, Hasher>>,
    /// Bumped after an instance leaves: a pointer found live at generation g is live while the
    /// generation is still g.
    generation: AtomicU64,
}

thread_local! {
    /// The instance this thread last found live (with its registries and the generation then):
    /// a call on it skips the registry's lock (a master calls one instance from one thread at a
    /// time, mostly the same one in a row).
    static LAST_COMPONENT: Cell<(usize, usize, u64)> = const { Cell::new((0, 0, u64::MAX)) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Registries {
    pub(crate) const fn new() -> Registries {
        Registries {
            components: Mutex::new(HashSet::with_hasher(Hasher::new())),
            states: Mutex::new(HashMap::with_hasher(Hasher::new())),
            generation: AtomicU64::new(0),
        }
    }

    /// Whether `c` is a live instance. The generation is read before the registry, so a free
    /// that the registry did not show yet bumps it after this read and the next call looks
    /// again.
    pub(crate) fn is_live(&self, c: usize) -> bool {
        let me = self as *const Registries as usize;
        let g = self.generation.load(Ordering::SeqCst);
        if LAST_COMPONENT.with(Cell::get) == (me, c, g) {
            return true;
        }
        let live = lock(&self.components).contains(&c);
        if live {
            LAST_COMPONENT.with(|l| l.set((me, c, g)));
        }
        live
    }

    /// Whether `c` is live, always from the registry (the panic path, which must not trust a
    /// cache the unwinding call may have filled).
    pub(crate) fn contains(&self, c: usize) -> bool {
        lock(&self.components).contains(&c)
    }

    pub(crate) fn add_component(&self, c: usize) {
        lock(&self.components).insert(c);
    }

    /// Take `c` out of the registry, then every state it handed out that is still live: those
    /// are returned for the caller to release.
    pub(crate) fn remove_component(&self, c: usize) -> Vec<usize> {
        {
            let mut components = lock(&self.components);
            components.remove(&c);
            if components.is_empty() {
                *components = HashSet::with_hasher(Hasher::new());
            }
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        let mut states = lock(&self.states);
        let owned: Vec<usize> = states
            .iter()
            .filter(|&(_, &owner)| owner == c)
            .map(|(&s, _)| s)
            .collect();
        for s in &owned {
            states.remove(s);
        }
        shrink_if_empty(&mut states);
        owned
    }

    pub(crate) fn add_state(&self, s: usize, owner: usize) {
        lock(&self.states).insert(s, owner);
    }

    pub(crate) fn state_is_live(&self, s: usize) -> bool {
        lock(&self.states).contains_key(&s)
    }

    /// Take state `s` out of the registry if `owner` handed it out (checked and removed under
    /// one lock: a state another instance holds at a reused address is not this one's).
    pub(crate) fn remove_state(&self, s: usize, owner: usize) -> Result<(), StateOwner> {
        let mut states = lock(&self.states);
        match states.get(&s) {
            None => return Err(StateOwner::Unknown),
            Some(&o) if o != owner => return Err(StateOwner::Other),
            Some(_) => {}
        }
        states.remove(&s);
        shrink_if_empty(&mut states);
        Ok(())
    }
}

/// Why a state cannot be freed by an instance.
pub(crate) enum StateOwner {
    Unknown,
    Other,
}

fn shrink_if_empty(map: &mut HashMap<usize, usize, Hasher>) {
    if map.is_empty() {
        *map = HashMap::with_hasher(Hasher::new());
    }
}
