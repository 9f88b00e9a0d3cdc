//! Opaque objects in caller storage: a tagged slot (`tag` names kind and preset, so a
//! handle of the wrong kind, of another preset or to uninitialised memory is refused), the
//! checked casts from C pointers, and the size constants with their compile-time checks
//! against the Rust types.

use core::ffi::c_void;
use core::mem::{align_of, size_of};
use core::ptr;

use zeroize::Zeroize;

use crate::status::{Result, ZeppelinStatus};

/// Alignment every object storage must have (a `uint64_t` array, or
/// `_Alignas(ZEPPELIN_OBJECT_ALIGN)`).
pub const ZEPPELIN_OBJECT_ALIGN: usize = 8;

/// What an object storage holds: the tag, then the Rust value.
#[repr(C)]
pub(crate) struct Slot<T> {
    tag: u64,
    value: T,
}

/// `"ZEPP"` in the upper half of every tag.
const MAGIC: u64 = 0x5A45_5050 << 32;

/// The kinds of object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    SecretKey = 1,
    PublicKey = 2,
    Ciphertext = 3,
    SeededCiphertext = 4,
    Plaintext = 5,
    Workspace = 6,
    Rng = 7,
    KatEntropy = 8,
    RblweMaskedKey = 9,
    RblweCcaMaskedKey = 10,
    RblweCcaKey = 11,
}

impl Kind {
    const ALL: [Kind; 11] = [
        Kind::SecretKey,
        Kind::PublicKey,
        Kind::Ciphertext,
        Kind::SeededCiphertext,
        Kind::Plaintext,
        Kind::Workspace,
        Kind::Rng,
        Kind::KatEntropy,
        Kind::RblweMaskedKey,
        Kind::RblweCcaMaskedKey,
        Kind::RblweCcaKey,
    ];
}

const fn tag(kind: Kind, preset: u8) -> u64 {
    MAGIC | (kind as u64) << 8 | preset as u64
}

/// Checks that `p` is non-null and aligned for `T`.
pub(crate) fn check_ptr<T>(p: *const T) -> Result<()> {
    if p.is_null() {
        Err(ZeppelinStatus::NullPointer)
    } else if !(p as usize).is_multiple_of(align_of::<T>()) {
        Err(ZeppelinStatus::Misaligned)
    } else {
        Ok(())
    }
}

/// The kind and preset byte of an object.
///
/// # Safety
/// `obj` is NULL or valid for reads of 8 bytes.
pub(crate) unsafe fn tag_of(obj: *const c_void) -> Result<(Kind, u8)> {
    let p = obj.cast::<u64>();
    if p.is_null() {
        return Err(ZeppelinStatus::NullPointer);
    }
    if !(p as usize).is_multiple_of(ZEPPELIN_OBJECT_ALIGN) {
        return Err(ZeppelinStatus::Misaligned);
    }
    // SAFETY: non-null, aligned, valid for 8 bytes by the caller's contract.
    let t = unsafe { p.read() };
    if t & !0xFFFF != MAGIC {
        return Err(ZeppelinStatus::BadObject);
    }
    let kind = Kind::ALL
        .iter()
        .copied()
        .find(|k| *k as u64 == (t >> 8) & 0xFF)
        .ok_or(ZeppelinStatus::BadObject)?;
    Ok((kind, (t & 0xFF) as u8))
}

/// The preset byte of an object of `kind`.
///
/// # Safety
/// As [`tag_of`].
pub(crate) unsafe fn preset_of<H>(obj: *const H, kind: Kind) -> Result<u8> {
    // SAFETY: forwarded contract.
    match unsafe { tag_of(obj.cast()) }? {
        (k, preset) if k == kind => Ok(preset),
        _ => Err(ZeppelinStatus::BadObject),
    }
}

/// The one preset of several objects.
pub(crate) fn same_preset(presets: &[Result<u8>]) -> Result<u8> {
    let mut first = None;
    for p in presets {
        let p = (*p)?;
        match first {
            None => first = Some(p),
            Some(f) if f != p => return Err(ZeppelinStatus::PresetMismatch),
            Some(_) => {}
        }
    }
    first.ok_or(ZeppelinStatus::Internal)
}

/// The value of a checked object.
///
/// # Safety
/// `obj` passed [`preset_of`] for the kind and preset whose Rust type is `T`, and no
/// mutable reference to it is alive.
pub(crate) unsafe fn get<'a, T, H>(obj: *const H) -> &'a T {
    // SAFETY: by the contract the storage holds an initialised `Slot<T>`.
    unsafe { &(*obj.cast::<Slot<T>>()).value }
}

/// The value of a checked object, mutably.
///
/// # Safety
/// As [`get`], and no other reference to it is alive.
pub(crate) unsafe fn get_mut<'a, T, H>(obj: *mut H) -> &'a mut T {
    // SAFETY: by the contract the storage holds an initialised `Slot<T>`, unaliased.
    unsafe { &mut (*obj.cast::<Slot<T>>()).value }
}

/// Makes an object of `kind`/`preset` holding `value()` in `storage` and stores the handle
/// in `*out`.
///
/// # Safety
/// `storage` is NULL or valid for writes of `len` bytes; `out` is NULL or valid for a write.
pub(crate) unsafe fn init<T, H>(
    storage: *mut c_void,
    len: usize,
    out: *mut *mut H,
    kind: Kind,
    preset: u8,
    value: impl FnOnce() -> T,
) -> Result<()> {
    check_ptr(out)?;
    let slot = storage.cast::<Slot<T>>();
    check_ptr(slot)?;
    if len < size_of::<Slot<T>>() {
        return Err(ZeppelinStatus::StorageTooSmall);
    }
    // SAFETY: `slot` is non-null, aligned and valid for `size_of::<Slot<T>>()` bytes; the
    // value is written in place (the storage may hold garbage, which is not dropped).
    unsafe {
        ptr::addr_of_mut!((*slot).value).write(value());
        ptr::addr_of_mut!((*slot).tag).write(tag(kind, preset));
        out.write(storage.cast());
    }
    Ok(())
}

/// Drops the value (its `Drop` zeroizes secrets) and wipes the whole slot, tag included.
///
/// # Safety
/// `obj` passed [`tag_of`] with the kind and preset whose Rust type is `T`; no reference to
/// it is alive.
pub(crate) unsafe fn destroy<T>(obj: *mut c_void) {
    let slot = obj.cast::<Slot<T>>();
    // SAFETY: an initialised slot, dropped once; afterwards its bytes are plain memory.
    unsafe {
        ptr::drop_in_place(ptr::addr_of_mut!((*slot).value));
        core::slice::from_raw_parts_mut(obj.cast::<u8>(), size_of::<Slot<T>>()).zeroize();
    }
}

/// Overwrites `value` with zero bytes in place. No temporary: a `*value = T::zeroed()`
/// reserves a stack frame the size of `T` (up to 128 KiB here) even when never executed,
/// which overflows a device stack.
///
/// # Safety
/// The all-zero byte pattern is a valid `T` (every field an integer, an array of them, a
/// `bool`, or an `Option` whose `None` is all zero).
pub(crate) unsafe fn wipe_in_place<T>(value: &mut T) {
    // SAFETY: `value` is valid for a write of one `T`; all-zero is a valid `T` by the contract.
    unsafe { ptr::write_bytes(value as *mut T, 0, 1) }
}

/// A caller's input array (`len` elements; NULL allowed when `len` is 0).
///
/// # Safety
/// `p` is NULL or valid for reads of `len` elements, not mutated during the call.
pub(crate) unsafe fn input<'a, T>(p: *const T, len: usize) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    check_ptr(p)?;
    if len > isize::MAX as usize / size_of::<T>().max(1) {
        return Err(ZeppelinStatus::Length);
    }
    // SAFETY: checked non-null and aligned; valid for `len` elements by the contract.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// A caller's output array (`len` elements; NULL allowed when `len` is 0).
///
/// # Safety
/// `p` is NULL or valid for writes of `len` elements, not aliased during the call.
pub(crate) unsafe fn output<'a, T>(p: *mut T, len: usize) -> Result<&'a mut [T]> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_ptr(p)?;
    if len > isize::MAX as usize / size_of::<T>().max(1) {
        return Err(ZeppelinStatus::Length);
    }
    // SAFETY: checked non-null and aligned; valid for `len` elements by the contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// A 32-byte array the caller passes by pointer.
///
/// # Safety
/// `p` is NULL or valid for reads of 32 bytes.
pub(crate) unsafe fn bytes32(p: *const u8) -> Result<[u8; 32]> {
    check_ptr(p)?;
    // SAFETY: non-null, valid for 32 bytes by the contract (u8 needs no alignment).
    Ok(unsafe { p.cast::<[u8; 32]>().read() })
}

/// Writes `value` to an optional out-parameter (NULL: not wanted).
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
pub(crate) unsafe fn put<T>(p: *mut T, value: T) -> Result<()> {
    if p.is_null() {
        return Ok(());
    }
    check_ptr(p)?;
    // SAFETY: non-null, aligned, valid by the contract.
    unsafe { p.write(value) };
    Ok(())
}

/// Asserts at compile time that `T` fits a storage of `size` bytes at `ZEPPELIN_OBJECT_ALIGN`.
macro_rules! assert_fits {
    ($t:ty, $size:expr) => {
        const _: () = assert!(
            core::mem::size_of::<$crate::object::Slot<$t>>() <= $size
                && core::mem::align_of::<$crate::object::Slot<$t>>()
                    <= $crate::object::ZEPPELIN_OBJECT_ALIGN
                && $size % $crate::object::ZEPPELIN_OBJECT_ALIGN == 0
        );
    };
}
pub(crate) use assert_fits;
