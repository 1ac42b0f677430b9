//! What a read's child tells the worker on its stdout: one frame per fact,
//! a tag byte, a little-endian u32 length and the payload. A page's frame
//! is written once the page is read whole, so the worker keeps every page it
//! received whole whenever it stops the child.

use std::io::Write;

use tokio::io::{AsyncRead, AsyncReadExt};

const TOTAL: u8 = 1;
const PAGE: u8 = 2;
const OVER_LIMIT: u8 = 3;
const DONE: u8 = 4;
const UNPARSEABLE: u8 = 5;

/// The longest payload of any frame but a page: a page count, a parser's
/// message.
const SMALL: u32 = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// The document's page count, once its page tree is walked.
    Total(u32),
    /// One page's text, whole.
    Page { number: u32, text: String },
    /// The parser refused a stream as larger than the child may inflate:
    /// the memory cap, met before the kernel had to say so.
    OverLimit,
    /// Every page was read.
    Done,
    /// The parser failed; why, in its words.
    Unparseable(String),
}

/// Writes one frame (the child's side).
pub fn write(out: &mut impl Write, frame: &Frame) -> std::io::Result<()> {
    let (tag, payload): (u8, Vec<u8>) = match frame {
        Frame::Total(n) => (TOTAL, n.to_le_bytes().to_vec()),
        Frame::Page { number, text } => {
            let mut payload = Vec::with_capacity(4 + text.len());
            payload.extend_from_slice(&number.to_le_bytes());
            payload.extend_from_slice(text.as_bytes());
            (PAGE, payload)
        }
        Frame::OverLimit => (OVER_LIMIT, Vec::new()),
        Frame::Done => (DONE, Vec::new()),
        Frame::Unparseable(why) => {
            let mut why = why.as_bytes().to_vec();
            why.truncate(SMALL as usize);
            (UNPARSEABLE, why)
        }
    };
    let len = u32::try_from(payload.len())
        .map_err(|_| std::io::Error::other("a page's text is over 4 GiB"))?;
    out.write_all(&[tag])?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(&payload)?;
    out.flush()
}

/// What the worker takes from the child's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    Frame(Frame),
    /// A page whose text is longer than `max_page_bytes`: not read, since
    /// it cannot be kept whole within the ceiling.
    LongPage {
        number: u32,
    },
    /// The child closed its stdout.
    End,
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("reading the child's output: {0}")]
    Io(#[from] std::io::Error),
    #[error("the child wrote a frame the worker does not know (tag {0})")]
    UnknownTag(u8),
    #[error("the child wrote a {len}-byte frame of a kind that is never over {SMALL}")]
    Oversized { len: u32 },
    #[error("the child wrote a page that is not UTF-8")]
    NotText,
}

/// Reads the next frame (the worker's side). A page longer than
/// `max_page_bytes` is named by number and its text left unread.
pub async fn read(
    input: &mut (impl AsyncRead + Unpin),
    max_page_bytes: u64,
) -> Result<Incoming, FrameError> {
    let mut header = [0u8; 5];
    match input.read_exact(&mut header).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(Incoming::End),
        Err(e) => return Err(e.into()),
    }
    let tag = header[0];
    let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]);
    if tag == PAGE {
        let mut number = [0u8; 4];
        input.read_exact(&mut number).await?;
        let number = u32::from_le_bytes(number);
        let text_len = u64::from(len.saturating_sub(4));
        if text_len > max_page_bytes {
            return Ok(Incoming::LongPage { number });
        }
        let mut text = vec![0u8; text_len as usize];
        input.read_exact(&mut text).await?;
        let text = String::from_utf8(text).map_err(|_| FrameError::NotText)?;
        return Ok(Incoming::Frame(Frame::Page { number, text }));
    }
    if len > SMALL {
        return Err(FrameError::Oversized { len });
    }
    let mut payload = vec![0u8; len as usize];
    input.read_exact(&mut payload).await?;
    let frame = match tag {
        TOTAL => {
            let bytes: [u8; 4] = payload
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .ok_or(FrameError::Oversized { len })?;
            Frame::Total(u32::from_le_bytes(bytes))
        }
        OVER_LIMIT => Frame::OverLimit,
        DONE => Frame::Done,
        UNPARSEABLE => Frame::Unparseable(String::from_utf8_lossy(&payload).into_owned()),
        other => return Err(FrameError::UnknownTag(other)),
    };
    Ok(Incoming::Frame(frame))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn s3_4_frames_read_back_as_written_and_a_long_page_is_left_unread() {
        let mut out = Vec::new();
        let frames = [
            Frame::Total(3),
            Frame::Page {
                number: 1,
                text: "één".into(),
            },
            Frame::Unparseable("bad xref".into()),
            Frame::OverLimit,
            Frame::Done,
        ];
        for frame in &frames {
            write(&mut out, frame).expect("written");
        }
        let mut input = out.as_slice();
        for frame in &frames {
            assert_eq!(
                read(&mut input, 100).await.expect("read"),
                Incoming::Frame(frame.clone())
            );
        }
        assert_eq!(read(&mut input, 100).await.expect("read"), Incoming::End);

        let mut out = Vec::new();
        write(
            &mut out,
            &Frame::Page {
                number: 7,
                text: "x".repeat(101),
            },
        )
        .expect("written");
        assert_eq!(
            read(&mut out.as_slice(), 100).await.expect("read"),
            Incoming::LongPage { number: 7 }
        );
    }
}
