use super::*;

/// A field section decoded whole, with no limit.
#[track_caller]
fn fields(section: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    decode(section, u64::MAX).expect("decodes")
}

fn owned(list: &[(&[u8], &[u8])]) -> Vec<(Vec<u8>, Vec<u8>)> {
    list.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect()
}

#[test]
fn rfc_9204_b1_literal_with_name_reference_decodes() {
    // B.1, stream 0: `:path /index.html` as a literal with a static name reference.
    let section = [
        0x00, 0x00, 0x51, 0x0b, 0x2f, 0x69, 0x6e, 0x64, 0x65, 0x78, 0x2e, 0x68, 0x74, 0x6d, 0x6c,
    ];
    assert_eq!(fields(&section), owned(&[(b":path", b"/index.html")]));
    // Ours is the same line, its value Huffman-coded (8 bytes, not 11).
    let mut ours = Vec::new();
    encode(&mut ours, [(&b":path"[..], &b"/index.html"[..])]);
    assert_eq!(&ours[..3], &[0x00, 0x00, 0x51]);
    assert_eq!(ours[3] & 0x80, 0x80, "Huffman bit: {ours:02x?}");
    assert!(ours.len() < section.len());
    assert_eq!(fields(&ours), fields(&section));
}

#[test]
fn rfc_9204_b2_sections_that_need_the_dynamic_table_are_refused() {
    // B.2, stream 4: Required Insert Count 2 (encoded 3), a post-base base.
    assert_eq!(
        decode(&[0x03, 0x81, 0x10, 0x11], u64::MAX),
        Err(QpackError::RequiredInsertCount)
    );
    // B.4, stream 8: Required Insert Count 5 (encoded 6).
    assert_eq!(
        decode(&[0x06, 0x00, 0x80], u64::MAX),
        Err(QpackError::RequiredInsertCount)
    );
}

#[test]
fn a_request_is_encoded_from_the_static_table_and_literals() {
    let req = Request {
        method: "GET",
        scheme: "https",
        authority: "example.com",
        path: "/",
        headers: &[("user-agent", "foxbench"), ("x-run", "1")],
    };
    let section = req.encode();
    // Indexed :method GET (17), :scheme https (23); a literal with :authority's name (0);
    // indexed :path / (1).
    assert_eq!(&section[..4], &[0x00, 0x00, 0xc0 | 17, 0xc0 | 23]);
    assert_eq!(section[4], 0x50);
    assert_eq!(
        fields(&section),
        owned(&[
            (b":method", b"GET"),
            (b":scheme", b"https"),
            (b":authority", b"example.com"),
            (b":path", b"/"),
            (b"user-agent", b"foxbench"),
            (b"x-run", b"1"),
        ])
    );
    // Encoded once, the same bytes every time.
    assert_eq!(req.encode(), section);
}

#[test]
fn a_response_is_encoded_with_its_status() {
    let mut section = Vec::new();
    encode_response(&mut section, 200, &[("content-length", "5")]);
    // Indexed :status 200 (25), content-length with its name (4).
    assert_eq!(&section[..4], &[0x00, 0x00, 0xc0 | 25, 0x54]);
    assert_eq!(
        fields(&section),
        owned(&[(b":status", b"200"), (b"content-length", b"5")])
    );
    for (status, digits) in [(302, b"302"), (599, b"599"), (100, b"100")] {
        let mut s = Vec::new();
        encode_response(&mut s, status, &[]);
        assert_eq!(fields(&s), owned(&[(b":status", digits)]));
    }
}

#[test]
fn names_the_static_table_lacks_are_literal_with_huffman_when_shorter() {
    let mut s = Vec::new();
    // "abc" Huffman-codes to 3 bytes (5+5+5 bits = 2 bytes): shorter.
    encode(&mut s, [(&b"abcabc"[..], &b"\xff\x00"[..])]);
    assert_eq!(s[2] & 0xe8, 0x28, "literal name, Huffman: {s:02x?}");
    // The value, two bytes with long codes, is sent as it is.
    assert_eq!(&s[s.len() - 3..], &[0x02, 0xff, 0x00]);
    assert_eq!(fields(&s), owned(&[(b"abcabc", b"\xff\x00")]));
}

#[test]
fn head_keeps_status_and_content_length_only() {
    let mut s = Vec::new();
    encode_response(
        &mut s,
        404,
        &[
            ("server", "a-server-with-a-name-longer-than-twenty"),
            ("content-length", "12345"),
            ("content-length", "7"),
        ],
    );
    let h = head(&s, u64::MAX).unwrap();
    assert_eq!(h.status, Some(404));
    assert_eq!(h.content_length, Some(12345));
    assert_eq!(
        h.size,
        Decoder::default().decode(&s, u64::MAX, |_, _| ()).unwrap()
    );
    // A value that is not a number, and a status that is not three digits.
    let mut s = Vec::new();
    encode(
        &mut s,
        [
            (&b":status"[..], &b"2000"[..]),
            (b":status", b"20x"),
            (b"content-length", b"1 2"),
            (b"content-length", b"123456789012345678901"),
        ],
    );
    assert_eq!(
        head(&s, u64::MAX).unwrap(),
        Head {
            status: None,
            content_length: None,
            size: 7 + 4 + 7 + 3 + 14 + 3 + 14 + 21 + 4 * 32,
        }
    );
}

#[test]
fn every_decoding_error_is_reached() {
    let cases: &[(&[u8], QpackError)] = &[
        (&[], QpackError::Truncated),
        (&[0x00], QpackError::Truncated),
        (&[0x00, 0x7f], QpackError::Truncated),
        (&[0x01, 0x00], QpackError::RequiredInsertCount),
        (&[0xff, 0x00], QpackError::RequiredInsertCount),
        (&[0x00, 0x80], QpackError::NegativeBase),
        // Indexed, dynamic (T=0).
        (&[0x00, 0x00, 0x80], QpackError::DynamicReference),
        // Literal with a dynamic name reference.
        (&[0x00, 0x00, 0x40, 0x00], QpackError::DynamicReference),
        // Indexed with a post-base index; literal with a post-base name reference.
        (&[0x00, 0x00, 0x10], QpackError::PostBaseReference),
        (&[0x00, 0x00, 0x00, 0x00], QpackError::PostBaseReference),
        // Static index 99 (63 + 36), and 15 + 85 = 100 as a name reference.
        (&[0x00, 0x00, 0xff, 0x24], QpackError::BadIndex(99)),
        (&[0x00, 0x00, 0x5f, 0x55, 0x00], QpackError::BadIndex(100)),
        // An index past 2^32 is a bad index; one past 2^62, an overflow.
        (
            &[0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            QpackError::BadIndex((1 << 35) + 62),
        ),
        (
            &[
                0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            QpackError::IntegerOverflow,
        ),
        // A value's length past the section, and a name's.
        (&[0x00, 0x00, 0x51, 0x05, b'/'], QpackError::Truncated),
        (&[0x00, 0x00, 0x23, b'a', b'b'], QpackError::Truncated),
        // A value with no length at all after its name.
        (&[0x00, 0x00, 0x21, b'a'], QpackError::Truncated),
        // Huffman: padding of zeros, and EOS.
        (&[0x00, 0x00, 0x51, 0x81, 0x00], QpackError::BadHuffman),
        (
            &[0x00, 0x00, 0x51, 0x84, 0xff, 0xff, 0xff, 0xff],
            QpackError::BadHuffman,
        ),
        (&[0x00, 0x00, 0x29, 0x00, 0x00], QpackError::BadHuffman),
    ];
    for (section, want) in cases {
        assert_eq!(decode(section, u64::MAX), Err(*want), "{section:02x?}");
        assert_eq!(head(section, u64::MAX).map(|_| ()), Err(*want));
        assert_eq!(want.code(), crate::error::QPACK_DECOMPRESSION_FAILED);
    }
}

#[test]
fn a_field_list_past_the_limit_is_refused() {
    let mut s = Vec::new();
    encode(&mut s, [(&b":path"[..], &b"/"[..]), (b"x", b"yy")]);
    // 5 + 1 + 32, then 1 + 2 + 32: 73 in all.
    assert_eq!(decode(&s, 73).map(|f| f.len()), Ok(2));
    let e = decode(&s, 72).unwrap_err();
    assert_eq!(e, QpackError::TooLarge { limit: 72 });
    assert_eq!(e.code(), crate::error::H3_EXCESSIVE_LOAD);
    // No field is handed over past the limit: the first only.
    let mut seen = 0;
    let r = Decoder::default().decode(&s, 40, |_, _| seen += 1);
    assert_eq!((r, seen), (Err(QpackError::TooLarge { limit: 40 }), 1));
    assert_eq!(head(&s, 37), Err(QpackError::TooLarge { limit: 37 }));
}

#[test]
fn every_prefix_of_a_section_is_truncated_or_fewer_fields() {
    let mut s = Vec::new();
    encode(
        &mut s,
        [
            (&b"x-long-name"[..], &b"a value that is long enough"[..]),
            (b"cookie", b"k=v"),
        ],
    );
    for cut in 0..s.len() {
        match decode(&s[..cut], u64::MAX) {
            Err(QpackError::Truncated) => {}
            // Cut between two field lines.
            Ok(f) => assert!(f.len() < 2, "{cut}"),
            Err(e) => panic!("cut at {cut}: {e:?}"),
        }
    }
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A string: printable text (Huffman-friendly), any bytes, or a long run.
    fn bytes(&mut self) -> Vec<u8> {
        let len = match self.below(10) {
            0 => 0,
            1 => 100 + self.below(300),
            _ => self.below(40),
        } as usize;
        let any = self.below(3) == 0;
        (0..len)
            .map(|_| {
                if any {
                    self.next() as u8
                } else {
                    b"abcdefghijklmnopqrstuvwxyz0123456789-/=; "[self.below(41) as usize]
                }
            })
            .collect()
    }

    /// A field: a static pair, a static name with another value, or anything.
    fn field(&mut self) -> (Vec<u8>, Vec<u8>) {
        let (n, v) = STATIC[self.below(STATIC.len() as u64) as usize];
        match self.below(3) {
            0 => (n.into(), v.into()),
            1 => (n.into(), self.bytes()),
            _ => (self.bytes(), self.bytes()),
        }
    }

    fn section(&mut self) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..self.below(12)).map(|_| self.field()).collect()
    }
}

#[test]
fn generated_sections_round_trip() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..5000 {
        let want = rng.section();
        let mut s = Vec::new();
        encode(&mut s, want.iter().map(|(n, v)| (&n[..], &v[..])));
        assert_eq!(fields(&s), want);
        let size: u64 = want.iter().map(|(n, v)| field_size(n.len(), v.len())).sum();
        assert_eq!(head(&s, u64::MAX).unwrap().size, size);
    }
}

/// h3's QPACK (the `qpack` crate, written by others) decodes what we encode, and we decode
/// what it encodes, for the same generated sections.
#[test]
fn generated_sections_cross_check_with_h3s_qpack() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for _ in 0..2000 {
        let want = rng.section();
        let mut ours = Vec::new();
        encode(&mut ours, want.iter().map(|(n, v)| (&n[..], &v[..])));
        let theirs = qpack::decode_stateless(&mut bytes::Bytes::from(ours.clone()), u64::MAX)
            .unwrap_or_else(|e| panic!("h3's qpack refuses {ours:02x?}: {e:?}"));
        let got: Vec<_> = theirs
            .fields
            .iter()
            .map(|f| (f.name.to_vec(), f.value.to_vec()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(theirs.mem_size, head(&ours, u64::MAX).unwrap().size);

        let mut block = bytes::BytesMut::new();
        let hf: Vec<_> = want
            .iter()
            .map(|(n, v)| qpack::HeaderField::new(n.clone(), v.clone()))
            .collect();
        qpack::encode_stateless(&mut block, hf).unwrap();
        assert_eq!(fields(&block), want, "{block:02x?}");
    }
}

#[test]
fn small_extended_past_its_kept_bytes_counts_without_indexing_past_them() {
    // The client's sink keeps 20 bytes: a run of bytes that starts past them is counted,
    // not copied (the slice it once took started past the end of its array).
    let mut s = Small::default();
    s.extend(&[b'1'; 25]);
    s.extend(b"23");
    s.push(b'4');
    assert_eq!(s.len(), 28);
    assert_eq!(s.head, [b'1'; 20]);
    assert_eq!(s.number(), None);
    let mut s = Small::default();
    s.extend(b"12");
    s.extend(b"34");
    assert_eq!(s.number(), Some(1234));
}

#[test]
fn a_delta_base_past_2_32_decodes_as_qpack_integers_go_to_62_bits() {
    // RFC 9204 4.1.1: QPACK decodes integers up to 62 bits; HPACK's stop at 2^32. With a
    // Required Insert Count of 0 the base is unused, but it must still be read.
    let mut s = vec![0x00];
    h2wire::hpack::put_int(&mut s, 0, 7, (1 << 40) + 5);
    s.push(0xc0 | 17);
    assert_eq!(decode(&s, u64::MAX), Ok(owned(&[(b":method", b"GET")])));
}
