//! PDFs the tests read, written byte by byte: ordinary ones, a scan, and
//! the bombs of §3.4.

use std::io::Write;

use super::deflate::repeating_zlib;

/// A PDF's objects, numbered from 1 in the order added.
pub struct Pdf {
    objects: Vec<Vec<u8>>,
}

pub const FONT: &[u8] =
    b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";

impl Pdf {
    pub fn new() -> Self {
        Self {
            objects: Vec::new(),
        }
    }

    /// Adds an object; its number.
    pub fn add(&mut self, body: impl Into<Vec<u8>>) -> usize {
        self.objects.push(body.into());
        self.objects.len()
    }

    /// Sets object `n`'s body (for objects that refer to later ones).
    pub fn set(&mut self, n: usize, body: impl Into<Vec<u8>>) {
        self.objects[n - 1] = body.into();
    }

    pub fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut body = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
        body.extend_from_slice(data);
        body.extend_from_slice(b"\nendstream");
        body
    }

    /// The file, with `root` as its catalog and a cross-reference table
    /// claiming `size` objects (the real count when `None`).
    pub fn finish_with(&self, root: usize, size: Option<u64>) -> Vec<u8> {
        let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
        let mut offsets = Vec::new();
        for (i, body) in self.objects.iter().enumerate() {
            offsets.push(out.len());
            writeln!(out, "{} 0 obj", i + 1).expect("vec");
            out.extend_from_slice(body);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        let count = self.objects.len() + 1;
        let size = size.unwrap_or(count as u64);
        write!(out, "xref\n0 {size}\n0000000000 65535 f \n").expect("vec");
        for offset in offsets {
            writeln!(out, "{offset:010} 00000 n ").expect("vec");
        }
        write!(
            out,
            "trailer\n<< /Size {size} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n"
        )
        .expect("vec");
        out
    }

    pub fn finish(&self, root: usize) -> Vec<u8> {
        self.finish_with(root, None)
    }
}

/// A content stream showing `text` in lines.
pub fn showing(text: &str) -> Vec<u8> {
    let mut content = b"BT /F1 12 Tf 72 720 Td 14 TL\n".to_vec();
    for line in text.lines() {
        let escaped = line
            .replace('\\', "\\\\")
            .replace('(', "\\(")
            .replace(')', "\\)");
        writeln!(content, "({escaped}) Tj T*").expect("vec");
    }
    content.extend_from_slice(b"ET");
    content
}

/// A document of pages whose contents are the given streams (already
/// encoded, with their filter in `filter`).
pub fn pages_of(contents: &[(Vec<u8>, &str)]) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let catalog = pdf.add("");
    let pages = pdf.add("");
    let font = pdf.add(FONT);
    let mut kids = String::new();
    for (data, filter) in contents {
        let content = pdf.add(Pdf::stream(filter, data));
        let page = pdf.add(format!(
            "<< /Type /Page /Parent {pages} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
        ));
        kids.push_str(&format!("{page} 0 R "));
    }
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {pages} 0 R >>"));
    pdf.set(
        pages,
        format!(
            "<< /Type /Pages /Kids [{kids}] /Count {} >>",
            contents.len()
        ),
    );
    pdf.finish(catalog)
}

/// A document whose pages show these texts (an empty text is a page with
/// nothing on it).
pub fn text_pages<S: AsRef<str>>(texts: &[S]) -> Vec<u8> {
    let contents: Vec<(Vec<u8>, &str)> = texts.iter().map(|t| (showing(t.as_ref()), "")).collect();
    pages_of(&contents)
}

/// The same, each content stream compressed as a PDF writer would.
pub fn compressed_text_pages<S: AsRef<str>>(texts: &[S]) -> Vec<u8> {
    let contents: Vec<(Vec<u8>, &str)> = texts
        .iter()
        .map(|t| {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(&showing(t.as_ref())).expect("vec");
            (z.finish().expect("vec"), "/Filter /FlateDecode")
        })
        .collect();
    pages_of(&contents)
}

/// Pages that each draw an image and show no text.
pub fn scan(pages: usize) -> Vec<u8> {
    let mut pdf = Pdf::new();
    let catalog = pdf.add("");
    let tree = pdf.add("");
    let image = pdf.add(Pdf::stream(
        "/Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8",
        &[0, 255, 255, 0],
    ));
    let mut kids = String::new();
    for _ in 0..pages {
        let content = pdf.add(Pdf::stream("", b"q 612 0 0 792 0 0 cm /Im1 Do Q"));
        let page = pdf.add(format!(
            "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 {image} 0 R >> >> /Contents {content} 0 R >>"
        ));
        kids.push_str(&format!("{page} 0 R "));
    }
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{kids}] /Count {pages} >>"),
    );
    pdf.finish(catalog)
}

const GIB: u64 = 1024 * 1024 * 1024;

/// One page whose content stream is a FlateDecode stream of 4 GiB of zeros
/// (about 4 MB on the wire).
pub fn flate_zeros() -> Vec<u8> {
    pages_of(&[(repeating_zlib(b"\0", 4 * GIB), "/Filter /FlateDecode")])
}

/// The same 4 GiB of zeros under two FlateDecode filters: a few kilobytes
/// that inflate to megabytes that inflate to gigabytes.
pub fn chained_filters() -> Vec<u8> {
    let inner = repeating_zlib(b"\0", 4 * GIB);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&inner).expect("vec");
    let outer = z.finish().expect("vec");
    pages_of(&[(outer, "/Filter [/FlateDecode /FlateDecode]")])
}

/// A page whose content is 10^8 text-showing operators (700 MB inflated).
pub fn text_operators() -> Vec<u8> {
    let period = b"(a) Tj\n";
    let body = repeating_zlib(period, 100_000_000 * period.len() as u64);
    pages_of(&[(body, "/Filter /FlateDecode")])
}

/// A page whose content stream, and an object beside it, are arrays
/// nested a million deep.
pub fn nested_arrays() -> Vec<u8> {
    let depth = 1_000_000;
    let mut deep = "[".repeat(depth);
    deep.push_str(&"]".repeat(depth));
    let mut pdf = Pdf::new();
    let catalog = pdf.add("");
    let tree = pdf.add("");
    let content = pdf.add(Pdf::stream("", deep.as_bytes()));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R >>"
    ));
    let beside = pdf.add(deep);
    pdf.set(
        catalog,
        format!("<< /Type /Catalog /Pages {tree} 0 R /Deep {beside} 0 R >>"),
    );
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.finish(catalog)
}

/// A page tree whose intermediate node lists its own parent, and itself,
/// as kids, beside one real page.
pub fn page_tree_cycle() -> Vec<u8> {
    let mut pdf = Pdf::new();
    let catalog = pdf.add("");
    let root = pdf.add("");
    let middle = pdf.add("");
    let font = pdf.add(FONT);
    let content = pdf.add(Pdf::stream("", &showing("the one real page")));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {root} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
    ));
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {root} 0 R >>"));
    pdf.set(
        root,
        format!("<< /Type /Pages /Kids [{middle} 0 R {page} 0 R] /Count 2 >>"),
    );
    pdf.set(
        middle,
        format!("<< /Type /Pages /Parent {root} 0 R /Kids [{root} 0 R {middle} 0 R] /Count 1 >>"),
    );
    pdf.finish(catalog)
}

/// A one-page document with an object stream that holds itself and
/// extends itself.
pub fn self_referencing_object_stream() -> Vec<u8> {
    let mut pdf = Pdf::new();
    let catalog = pdf.add("");
    let tree = pdf.add("");
    let objstm = pdf.add("");
    let inner = format!("{objstm} 0 << /Self {objstm} 0 R >>");
    let first = format!("{objstm} 0 ").len();
    pdf.set(
        objstm,
        Pdf::stream(
            &format!("/Type /ObjStm /N 1 /First {first} /Extends {objstm} 0 R"),
            inner.as_bytes(),
        ),
    );
    let font = pdf.add(FONT);
    let content = pdf.add(Pdf::stream("", &showing("beside the loop")));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R /Loop {objstm} 0 R >>"
    ));
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.finish(catalog)
}

/// A one-page document whose cross-reference table claims 2^31 objects.
pub fn huge_xref() -> Vec<u8> {
    let mut pdf = Pdf::new();
    let catalog = pdf.add("");
    let tree = pdf.add("");
    let font = pdf.add(FONT);
    let content = pdf.add(Pdf::stream("", &showing("small")));
    let page = pdf.add(format!(
        "<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
    ));
    pdf.set(catalog, format!("<< /Type /Catalog /Pages {tree} 0 R >>"));
    pdf.set(
        tree,
        format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"),
    );
    pdf.finish_with(catalog, Some(1 << 31))
}
