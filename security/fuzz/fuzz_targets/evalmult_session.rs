//! The evalmult server's session state machine on arbitrary byte streams, framed as the
//! server's connection reads them: a length prefix, the first `HEADER_WORDS` words,
//! `Session::admit` (judged before the body is read, nothing allocated), a per-session
//! memory cap on the admitted cost, then the body and `Session::handle_owned` (RLPT profile,
//! RLMP / RLMD pair frames, anything else). A refused frame is skipped and answered with
//! RLER; a fatal refusal ends the stream. First byte: the server's ring dimension
//! ([`fuzz_common::SESSION_RING_DIMS`]). Every reply must be a well-formed result, end or
//! error frame, and what the session keeps must stay under the cap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeppelin_evalmult::frames::{self, codes};
use zeppelin_evalmult::server::Session;

/// The per-session memory cap of the model connection.
const SESSION_CAP: usize = 64 << 20;

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
        .collect()
}

fn check_reply(reply: &[u64]) {
    let command = reply.first().map(|&w| frames::lo(w));
    assert!(
        matches!(
            command,
            Some(frames::CMD_RLRP | frames::CMD_RLEN | frames::CMD_RLER)
        ),
        "reply {command:?}"
    );
    if command == Some(frames::CMD_RLER) {
        assert!(frames::decode_error(reply).is_some(), "error frames decode");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&select, mut stream)) = data.split_first() else {
        return;
    };
    let dims = fuzz_common::SESSION_RING_DIMS;
    let mut session = Session::new(dims[usize::from(select) % dims.len()]);
    while stream.len() >= 8 {
        let len = u64::from_le_bytes(stream[..8].try_into().expect("8 bytes"));
        stream = &stream[8..];
        let head_words = len.min(frames::HEADER_WORDS as u64) as usize;
        let Some(head_bytes) = stream.get(..8 * head_words) else {
            return;
        };
        let head = words(head_bytes);
        let body_bytes = 8 * len.min(frames::MAX_FRAME_WORDS);
        match session.admit(len, &head) {
            Err(refusal) => {
                check_reply(&refusal.to_frame());
                if refusal.code == codes::FATAL {
                    return;
                }
                // Skipped: the body is read and discarded.
                stream = stream.get(body_bytes as usize..).unwrap_or_default();
            }
            Ok(admission) => {
                assert!(admission.frame_bytes as u64 == 8 * len);
                if admission.total().saturating_add(session.held_bytes()) > SESSION_CAP {
                    stream = stream.get(body_bytes as usize..).unwrap_or_default();
                    continue;
                }
                let Some(body) = stream.get(..body_bytes as usize) else {
                    return;
                };
                stream = &stream[body_bytes as usize..];
                for reply in session.handle_owned(words(body)) {
                    check_reply(&reply);
                }
                assert!(session.held_bytes() <= SESSION_CAP, "held bytes under the cap");
            }
        }
        if select & 0x80 != 0 && session.in_progress() && stream.len() % 7 == 0 {
            // An expiring session (the server's session timeout) leaves a usable session.
            session.abandon();
        }
    }
});
