//! Byte mutation of corpus entries: flips, inserts, deletes, duplicated and spliced
//! chunks, and tokens of the input language, stacked a few at a time.

use crate::rng::Rng;

/// Largest input a mutation may produce: enough for deep nesting and long chains,
/// small enough that each input stays quick.
const MAX_LEN: usize = 256 * 1024;

/// Bytes that stress readers: UTF-8 lead bytes, a BOM, CR, NUL, brackets, quotes.
const SPECIAL: &[&[u8]] = &[
    b"\xef\xbb\xbf",
    b"\r",
    b"\r\n",
    b"\0",
    b"\xc3\xa9",
    b"\xe2\x82",
    b"\xff",
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"//",
    b"/*",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"18446744073709551616",
    b"1e308",
    b"-1",
    b"0",
];

pub fn mutate(base: &[u8], donor: &[u8], rng: &mut Rng, tokens: &[&str]) -> Vec<u8> {
    let mut data = base.to_vec();
    let rounds = 1 + rng.below(6);
    for _ in 0..rounds {
        mutate_once(&mut data, donor, rng, tokens);
        data.truncate(MAX_LEN);
    }
    data
}

fn mutate_once(data: &mut Vec<u8>, donor: &[u8], rng: &mut Rng, tokens: &[&str]) {
    let at = |rng: &mut Rng, data: &Vec<u8>| rng.below(data.len() + 1);
    match rng.below(9) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] = rng.next_u64() as u8;
        }
        2 if !data.is_empty() => {
            let start = rng.below(data.len());
            let end = (start + 1 + rng.below(64)).min(data.len());
            data.drain(start..end);
        }
        3 => {
            let i = at(rng, data);
            let special = *rng.pick(SPECIAL);
            data.splice(i..i, special.iter().copied());
        }
        4 => {
            let i = at(rng, data);
            let token = rng.pick(tokens);
            data.splice(i..i, token.bytes().chain(std::iter::once(b' ')));
        }
        5 if !data.is_empty() => {
            // Repeat a chunk many times: long chains, deep nesting.
            let start = rng.below(data.len());
            let end = (start + 1 + rng.below(32)).min(data.len());
            let chunk = data[start..end].to_vec();
            let most = if rng.chance(1, 8) { 4000 } else { 16 };
            let times = 1 + rng.below(most);
            let i = at(rng, data);
            data.splice(i..i, chunk.iter().copied().cycle().take(chunk.len() * times));
        }
        6 if !donor.is_empty() => {
            let start = rng.below(donor.len());
            let end = (start + 1 + rng.below(512)).min(donor.len());
            let i = at(rng, data);
            data.splice(i..i, donor[start..end].iter().copied());
        }
        7 if !data.is_empty() => {
            // Swap two lines' worth of bytes: calls out of order.
            let a = rng.below(data.len());
            let b = rng.below(data.len());
            data.swap(a, b);
        }
        _ => {
            let i = at(rng, data);
            let digits = rng.next_u64().to_string();
            data.splice(i..i, digits.bytes());
        }
    }
}
