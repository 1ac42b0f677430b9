//! The PDF worker (§3.4): `PdfText` reads a PDF's text layer in a child
//! process of its own, capped in resident memory, address space, CPU and
//! the read's own deadline, and streams whole pages back as they are read.
//! The parser never runs in the serving process: a PDF's compressed streams
//! are untrusted, and a parse cannot be stopped in the middle of a page
//! without stopping the process running it.

pub mod cgroup;
pub mod child;
pub mod frame;
pub mod limits;
pub mod outcome;
pub mod read;
pub mod service;
pub mod text;
