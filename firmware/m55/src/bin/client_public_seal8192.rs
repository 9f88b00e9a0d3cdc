//! Public-key client image, preset Seal8192: its ELF's section sizes are the client's static
//! memory. See `src/client.rs`.
#![no_std]
#![no_main]

#[path = "../client.rs"]
mod client;

static mut CLIENT: client::Public<zeppelin::Seal8192> = client::Public::zeroed();

#[cortex_m_rt::entry]
fn main() -> ! {
    // SAFETY: the only reference to the static, taken once.
    let c = unsafe { &mut *core::ptr::addr_of_mut!(CLIENT) };
    client::run_public(c, "client_public_seal8192: keygen (secret + public), encode, public-key encrypt, decrypt + decode")
}
