//! Fuzzes our QPACK decoder against h3's (the `qpack` crate, written by others): on any
//! field section, both decode the same fields or both refuse it, but for two known
//! differences where h3's is lenient and ours follows the RFCs: with a table capacity of 0,
//! h3's decoder skips the prefix, where RFC 9204 4.5.1.1 and 4.5.1.2 make a non-zero
//! Required Insert Count, or a Sign bit of 1 with a Required Insert Count of 0, an error; and
//! it accepts Huffman padding that is not a prefix of EOS, which RFC 7541 5.2 makes an error.
//! Run: `cargo +nightly fuzz run qpack_differential` in crates/h3wire.
#![no_main]

use h3wire::qpack::QpackError;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ours = h3wire::qpack::decode(data, u64::MAX);
    let theirs = qpack::decode_stateless(&mut bytes::Bytes::copy_from_slice(data), u64::MAX);
    match (ours, theirs) {
        (Ok(a), Ok(b)) => {
            let b: Vec<_> = b
                .fields
                .iter()
                .map(|f| (f.name.to_vec(), f.value.to_vec()))
                .collect();
            assert_eq!(a, b, "{data:02x?}");
        }
        (Err(_), Err(_)) => {}
        (
            Err(
                QpackError::RequiredInsertCount | QpackError::NegativeBase | QpackError::BadHuffman,
            ),
            Ok(_),
        ) => {}
        (a, b) => panic!("the decoders disagree on {data:02x?}: ours {a:?}, h3's {b:?}"),
    }
});
