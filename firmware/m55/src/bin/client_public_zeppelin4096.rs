//! Public-key client image, preset Zeppelin4096: its ELF's section sizes are the client's static
//! memory. See `src/client.rs`.
#![no_std]
#![no_main]

#[path = "../client.rs"]
mod client;

use core::mem::MaybeUninit;

#[link_section = ".uninit.client"]
static mut CLIENT: MaybeUninit<client::Public<zeppelin::Zeppelin4096>> = MaybeUninit::uninit();

#[cortex_m_rt::entry]
fn main() -> ! {
    // SAFETY: the only reference to the static, taken once.
    let cell = unsafe { &mut *core::ptr::addr_of_mut!(CLIENT) };
    client::run_public(cell, "client_public_zeppelin4096: keygen (secret + public), encode, public-key encrypt, decrypt + decode")
}
