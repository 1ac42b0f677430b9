//! The PDF child (§3.4, worker-pdf/src/child.rs): the in-process part the
//! read's child runs on untrusted bytes (lopdf's parse, the page walk, the
//! text extraction, the frames), without the confinement the child sets up
//! first. Properties: the child's output is frames the worker reads back
//! (frame.rs): a page count, then pages numbered from 1 in order and no
//! more than counted, then one ending; or an ending alone where the parse
//! failed. The inflation bound is set low so a bomb meets the parser's own
//! refusal rather than the fuzzer's memory limit.

use collegium_worker_pdf::child::{ChildLimits, read};
use collegium_worker_pdf::frame::{self, Frame, Incoming};

const LIMITS: ChildLimits = ChildLimits {
    address_space_bytes: 1 << 32,
    cpu_seconds: 10,
    max_inflated_bytes: 16 << 20,
    body_cap_bytes: 64 << 20,
};

fn frames(mut out: &[u8]) -> Vec<Frame> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(async {
        let mut frames = Vec::new();
        loop {
            match frame::read(&mut out, u64::MAX).await {
                Ok(Incoming::Frame(frame)) => frames.push(frame),
                Ok(Incoming::End) => return frames,
                Ok(Incoming::LongPage { number }) => panic!("page {number} read as long"),
                Err(e) => panic!("the worker cannot read what the child wrote: {e}"),
            }
        }
    })
}

pub fn run(data: &[u8]) {
    let mut out = Vec::new();
    read(data, &LIMITS, &mut out).expect("writing to memory does not fail");
    let frames = frames(&out);
    let (last, before) = frames
        .split_last()
        .expect("the child always writes a frame");
    assert!(
        matches!(last, Frame::Done | Frame::OverLimit | Frame::Unparseable(_)),
        "the child ended on {last:?}"
    );
    let Some((first, pages)) = before.split_first() else {
        return;
    };
    let Frame::Total(total) = first else {
        panic!("the child began with {first:?}, not the page count");
    };
    assert!(pages.len() <= *total as usize, "more pages than counted");
    for (index, page) in pages.iter().enumerate() {
        match page {
            Frame::Page { number, .. } => {
                assert_eq!(*number as usize, index + 1, "pages out of order");
            }
            other => panic!("{other:?} between the count and the ending"),
        }
    }
    if matches!(last, Frame::Done) {
        assert_eq!(pages.len(), *total as usize, "done before every page");
    }
}
