//! The fuzz property in ordinary `cargo test`: seeded random and mutated inputs through the
//! same entry point as `fuzz/fuzz_targets/respond.rs`.

use avatar::harness::Harness;
use avatar::rng::Rng;

const SEEDS: &[&[u8]] = &[
    b"GET / HTTP/1.1\r\nHost: t\r\n\r\n",
    b"HEAD /ff8800.svg HTTP/1.1\r\nHost: t\r\nIf-None-Match: W/\"x\", *\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n",
    b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbodyGET /random.svg HTTP/1.1\r\nHost: t\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n",
    b"GET http://h/a.svg?q HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
];

const TOKENS: &[&[u8]] = &[
    b"\r\n",
    b"\r\n\r\n",
    b" ",
    b":",
    b"HTTP/1.1",
    b"HTTP/1.0",
    b"Content-Length: ",
    b"Transfer-Encoding: chunked",
    b"Host: x",
    b"Connection: close",
    b"GET ",
    b"/metrics",
    b".svg",
    b"\0",
    b"\xff",
    b"99999999999",
];

fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    for _ in 0..=rng.below(4) {
        let len = data.len() as u64;
        match rng.below(6) {
            0 if len > 0 => {
                let i = rng.below(len) as usize;
                data[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(len + 1) as usize;
                data.insert(i, rng.next_u64() as u8);
            }
            2 if len > 0 => {
                let i = rng.below(len) as usize;
                let n = (rng.below(8) as usize).min(data.len() - i);
                data.drain(i..i + n);
            }
            3 => {
                let i = rng.below(len + 1) as usize;
                let t = TOKENS[rng.below(TOKENS.len() as u64) as usize];
                data.splice(i..i, t.iter().copied());
            }
            4 => {
                let other = SEEDS[rng.below(SEEDS.len() as u64) as usize];
                data.extend_from_slice(other);
            }
            _ => {
                let i = rng.below(len + 1) as usize;
                data.truncate(i);
            }
        }
    }
}

#[test]
fn random_and_mutated_inputs_keep_the_invariants() {
    let harness = Harness::new();
    let mut rng = Rng::from_seed(0x5eed_f0c5);
    let iterations = if cfg!(debug_assertions) {
        200_000
    } else {
        500_000
    };
    for i in 0..iterations {
        let data: Vec<u8> = if i % 8 == 0 {
            // Pure noise, short.
            (0..rng.below(64)).map(|_| rng.next_u64() as u8).collect()
        } else {
            let mut d = SEEDS[rng.below(SEEDS.len() as u64) as usize].to_vec();
            mutate(&mut rng, &mut d);
            d
        };
        let cut = rng.below(data.len() as u64 + 1) as usize;
        harness.check(&data, cut);
    }
}
