use super::*;
use quinn_proto::{Dir, Side};

fn uni(index: u64) -> Uni {
    Uni::new(StreamId::new(Side::Server, Dir::Uni, index))
}

fn control_with(goaways: &[u64]) -> Vec<u8> {
    let mut bytes = Vec::new();
    frame::put_stream_type(&mut bytes, frame::stream_type::CONTROL);
    Settings::default().put(&mut bytes);
    for id in goaways {
        frame::put_goaway(&mut bytes, *id);
    }
    bytes
}

#[test]
fn a_goaway_may_lower_its_id_but_not_raise_it() {
    let mut goaway = None;
    let mut u = uni(0);
    u.pending = control_with(&[16, 8]);
    assert_eq!(u.take(&mut goaway, [false; 3]), Ok(()));
    assert_eq!(goaway, Some(8));
    let mut goaway = None;
    let mut u = uni(0);
    u.pending = control_with(&[8, 16]);
    assert_eq!(
        u.take(&mut goaway, [false; 3]),
        Err(h3err::H3_ID_ERROR),
        "an increased GOAWAY ID is H3_ID_ERROR (RFC 9114 5.2)"
    );
}

/// A server could open a control (or QPACK) stream per stream credit and have us read
/// them all: a second one of a kind is refused.
#[test]
fn a_second_control_stream_is_a_stream_creation_error() {
    let mut u = uni(1);
    u.pending = control_with(&[]);
    let others = kinds(&[Uni {
        kind: Some(UniStream::Control),
        ..uni(0)
    }]);
    assert_eq!(
        u.take(&mut None, others),
        Err(h3err::H3_STREAM_CREATION_ERROR)
    );
}

#[test]
fn an_unknown_stream_type_is_known_as_such_once_its_type_came() {
    let mut u = uni(0);
    frame::put_stream_type(&mut u.pending, 0x21);
    u.pending.extend_from_slice(b"anything");
    assert_eq!(u.take(&mut None, [false; 3]), Ok(()));
    assert!(matches!(u.kind, Some(UniStream::Unknown(_))));
    assert!(u.pending.is_empty());
}

/// Only the control stream's end was an error: an ended QPACK stream was dropped.
#[test]
fn a_qpack_stream_that_ends_is_a_closed_critical_stream() {
    for kind in [
        UniStream::QpackEncoder,
        UniStream::QpackDecoder,
        UniStream::Control,
    ] {
        let u = Uni {
            kind: Some(kind),
            ..uni(0)
        };
        assert_eq!(
            u.ended(),
            Err(h3err::H3_CLOSED_CRITICAL_STREAM),
            "{kind:?} ended"
        );
    }
    let u = Uni {
        kind: Some(UniStream::Unknown(0x21)),
        ..uni(0)
    };
    assert_eq!(u.ended(), Ok(Keep::No));
}
