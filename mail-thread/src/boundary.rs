//! The rules that recognise a boundary, named so a reader of a split knows which one fired.

/// The rule that found a quoted message's boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// Gmail's attribution: "On Tue, 3 Mar 2026 at 10:00, Ana <ana@x.test> wrote:".
    GmailOnWrote,
    /// Apple Mail's attribution ("On 3 Mar 2026, at 10:00, Ana wrote:") or its
    /// "Begin forwarded message:".
    AppleMail,
    /// Thunderbird's attribution ("On 03/03/2026 10:00, Ana wrote:") or its
    /// "-------- Forwarded Message --------" with the header table.
    Thunderbird,
    /// An "On …, Someone wrote:" attribution whose date no client rule names.
    OnWrote,
    /// Outlook's header block: From, Sent or Date, To, Subject.
    OutlookHeaderBlock,
    /// Outlook's "-----Original Message-----".
    OriginalMessage,
    /// A trailing block of `>`-quoted lines with no attribution above it.
    AngleQuoted,
    /// A forward: "---------- Forwarded message ---------" with its header lines.
    Forwarded,
    /// HTML: `<blockquote type="cite">` (Apple Mail, Thunderbird).
    BlockquoteCite,
    /// HTML: `<div class="gmail_quote">`.
    GmailQuote,
    /// HTML: Outlook on the web's `<div id="divRplyFwdMsg">`.
    DivRplyFwdMsg,
    /// HTML: Outlook desktop's header block, a `div` with a top border holding From/Sent/….
    OutlookHtmlHeader,
}

impl Boundary {
    /// Whether the text below the boundary is quoted with `>` that the split strips once.
    pub(crate) fn quotes(self) -> bool {
        matches!(
            self,
            Self::GmailOnWrote
                | Self::AppleMail
                | Self::Thunderbird
                | Self::OnWrote
                | Self::AngleQuoted
                | Self::BlockquoteCite
                | Self::GmailQuote
        )
    }
}
