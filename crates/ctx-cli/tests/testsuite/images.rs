//! Images made in the tests: a small picture with a gradient, encoded as PNG, GIF and WebP by
//! their encoders, and as a baseline JPEG by [`jpeg`] below, so that every byte the tests
//! send is a whole image a decoder reads, not a header.

/// Width and height of the picture: two by two JPEG blocks.
pub(crate) const SIZE: u32 = 16;

/// The picture, RGB, a diagonal gradient with a block of its own in each quarter.
pub(crate) fn rgb() -> Vec<u8> {
    let mut pixels = Vec::new();
    for y in 0..SIZE {
        for x in 0..SIZE {
            let v = (x * 8 + y * 4) as u8;
            pixels.extend([v, 255 - v, (x * y) as u8]);
        }
    }
    pixels
}

/// `(file name, bytes, media type)` for each format.
pub(crate) fn all() -> [(&'static str, Vec<u8>, &'static str); 4] {
    [
        ("a.png", png(), "image/png"),
        ("b.jpg", jpeg(), "image/jpeg"),
        ("c.gif", gif(), "image/gif"),
        ("d.webp", webp(), "image/webp"),
    ]
}

pub(crate) fn png() -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, SIZE, SIZE);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&rgb()).unwrap();
    writer.finish().unwrap();
    out
}

pub(crate) fn gif() -> Vec<u8> {
    let mut out = Vec::new();
    {
        let side = SIZE as u16;
        let mut encoder = gif::Encoder::new(&mut out, side, side, &[]).unwrap();
        encoder.write_frame(&gif::Frame::from_rgb(side, side, &rgb())).unwrap();
    }
    out
}

pub(crate) fn webp() -> Vec<u8> {
    let mut out = Vec::new();
    image_webp::WebPEncoder::new(&mut out)
        .encode(&rgb(), SIZE, SIZE, image_webp::ColorType::Rgb8)
        .unwrap();
    out
}

/// A baseline JPEG of the picture's luminance: one 8×8 block per block of the picture, each
/// coded by its DC coefficient alone (the block's mean; every quantiser 1), with Huffman tables
/// of its own. Decoders read it as a 16×16 grey image of four flat squares.
pub(crate) fn jpeg() -> Vec<u8> {
    let side = SIZE as usize;
    let pixels = rgb();
    let luma = |x: usize, y: usize| {
        let p = &pixels[(y * side + x) * 3..][..3];
        (299 * u32::from(p[0]) + 587 * u32::from(p[1]) + 114 * u32::from(p[2])) / 1000
    };
    let mut out = vec![0xFF, 0xD8];
    // Quantisation table 0: all ones.
    out.extend([0xFF, 0xDB, 0x00, 0x43, 0x00]);
    out.extend([1u8; 64]);
    // Start of frame: 8-bit, SIZE×SIZE, one component, no subsampling, table 0.
    out.extend([0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, side as u8, 0x00, side as u8, 0x01]);
    out.extend([0x01, 0x11, 0x00]);
    // DC table 0: the twelve categories, each a four-bit code 0000…1011 (codes sorted by
    // length, then in order, as JPEG's canonical Huffman codes are).
    out.extend([0xFF, 0xC4, 0x00, 0x1F, 0x00]);
    out.extend([0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    out.extend(0u8..12);
    // AC table 0: end of block alone, the one-bit code 0.
    out.extend([0xFF, 0xC4, 0x00, 0x14, 0x10]);
    out.extend([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    out.push(0x00);
    // Start of scan: component 1 with tables 0 and 0, full spectral range.
    out.extend([0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]);
    let mut bits = Bits::default();
    let mut previous = 0i32;
    for by in 0..side / 8 {
        for bx in 0..side / 8 {
            let mut sum = 0i32;
            for y in 0..8 {
                for x in 0..8 {
                    sum += luma(bx * 8 + x, by * 8 + y) as i32 - 128;
                }
            }
            // F(0,0) = sum / 8 for JPEG's DCT; quantised by 1.
            let dc = sum / 8;
            let diff = dc - previous;
            previous = dc;
            let category = 32 - diff.unsigned_abs().leading_zeros();
            bits.put(category, 4);
            if category > 0 {
                let value = if diff < 0 { diff - 1 } else { diff };
                bits.put(value as u32 & ((1 << category) - 1), category);
            }
            bits.put(0, 1); // end of block
        }
    }
    out.extend(bits.finish());
    out.extend([0xFF, 0xD9]);
    out
}

/// Entropy-coded bits, most significant first, with 0xFF bytes stuffed.
#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    acc: u32,
    len: u32,
}

impl Bits {
    fn put(&mut self, value: u32, len: u32) {
        for i in (0..len).rev() {
            self.acc = (self.acc << 1) | ((value >> i) & 1);
            self.len += 1;
            if self.len == 8 {
                self.flush_byte();
            }
        }
    }

    fn flush_byte(&mut self) {
        let byte = self.acc as u8;
        self.bytes.push(byte);
        if byte == 0xFF {
            self.bytes.push(0x00);
        }
        self.acc = 0;
        self.len = 0;
    }

    /// The bytes, the last one padded with ones.
    fn finish(mut self) -> Vec<u8> {
        while self.len != 0 {
            self.acc = (self.acc << 1) | 1;
            self.len += 1;
            if self.len == 8 {
                self.flush_byte();
            }
        }
        self.bytes
    }
}
