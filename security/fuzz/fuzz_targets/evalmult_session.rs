//! The evalmult server's session state machine on arbitrary byte streams: length-prefixed
//! frames (`frames::read_frame`, the server's reader) fed one after another to
//! `server::Session::handle` (RLPT profile, RLMP / RLMD pair frames, anything else). First
//! byte: the server's ring dimension ([`fuzz_common::SESSION_RING_DIMS`]). Every reply must
//! be a well-formed result, end or error frame.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use zeppelin_evalmult::frames::{self, Incoming};
use zeppelin_evalmult::server::Session;

fuzz_target!(|data: &[u8]| {
    let Some((&select, stream)) = data.split_first() else {
        return;
    };
    let dims = fuzz_common::SESSION_RING_DIMS;
    let mut session = Session::new(dims[usize::from(select) % dims.len()]);
    let mut reader = Cursor::new(stream);
    while let Ok(Incoming::Frame(frame)) = frames::read_frame(&mut reader) {
        for reply in session.handle(&frame) {
            let command = reply.first().map(|&w| frames::lo(w));
            assert!(
                matches!(
                    command,
                    Some(frames::CMD_RLRP | frames::CMD_RLEN | frames::CMD_RLER)
                ),
                "reply {command:?}"
            );
            if command == Some(frames::CMD_RLER) {
                assert!(frames::decode_error(&reply).is_some(), "error frames decode");
            }
        }
    }
});
