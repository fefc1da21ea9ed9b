//! The importer's arguments: arrays, out-pointers and strings, each checked for NULL and for a
//! length that can be an array's before it is used.

use std::ffi::CString;

use crate::cosim::CallError;

/// `n` elements at `p` (an empty slice for n = 0, whatever `p` is), or an error naming `what`.
///
/// # Safety
/// A non-null `p` points to `n` readable elements (the importer's contract).
pub(crate) unsafe fn slice_in<'a, T>(
    p: *const T,
    n: usize,
    what: &str,
) -> Result<&'a [T], CallError> {
    if n == 0 {
        return Ok(&[]);
    }
    checked_array(p.is_null(), n, std::mem::size_of::<T>(), what)?;
    // SAFETY: non-null, and the importer provides n elements (contract above).
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// `n` writable elements at `p`, as [`slice_in`].
///
/// # Safety
/// A non-null `p` points to `n` writable elements (the importer's contract).
pub(crate) unsafe fn slice_out<'a, T>(
    p: *mut T,
    n: usize,
    what: &str,
) -> Result<&'a mut [T], CallError> {
    if n == 0 {
        return Ok(&mut []);
    }
    checked_array(p.is_null(), n, std::mem::size_of::<T>(), what)?;
    // SAFETY: non-null, and the importer provides n writable elements (contract above).
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

fn checked_array(null: bool, n: usize, size: usize, what: &str) -> Result<(), CallError> {
    if null {
        return Err(CallError(format!("{what} is NULL with {n} elements")));
    }
    if n > isize::MAX as usize / size.max(1) {
        return Err(CallError(format!(
            "{what}: {n} elements is not a valid length"
        )));
    }
    Ok(())
}

/// The value an out-pointer names, or an error naming `what` when it is NULL.
pub(crate) fn out_ptr<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, CallError> {
    if p.is_null() {
        return Err(CallError(format!("{what} is NULL")));
    }
    // SAFETY: non-null pointer to a writable value (the importer's contract).
    Ok(unsafe { &mut *p })
}

/// A value array's length must be its value references' (every variable is a scalar).
pub(crate) fn same_length(what: &str, n_values: usize, n_refs: usize) -> Result<(), CallError> {
    if n_values != n_refs {
        return Err(CallError(format!(
            "{what} is {n_values}, expected {n_refs} (every variable of this model is a scalar)"
        )));
    }
    Ok(())
}

/// A C string of `s`, with any NUL shown as `\0` so nothing is cut off.
pub(crate) fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// A caught panic's message.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}
