//! Mattermost's WebSocket frames and REST bodies as `mattermost-wire` reads
//! them (§4.5, contract §B): a frame parses as an event or a response, an
//! event's JSON-in-a-string fields decode as the feed decodes them, and
//! every REST shape that parses serialises to JSON that parses back to the
//! same value: what the daemon sends of what it read is what it read.

use mattermost_wire::model::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<T>(data) else {
        return;
    };
    let written = match serde_json::to_vec(&value) {
        Ok(written) => written,
        Err(e) => panic!(
            "{}: parsed, and cannot be written back: {e}",
            std::any::type_name::<T>()
        ),
    };
    let again: T = match serde_json::from_slice(&written) {
        Ok(again) => again,
        Err(e) => panic!(
            "{}: its own serialisation does not parse: {e}",
            std::any::type_name::<T>()
        ),
    };
    assert_eq!(
        again,
        value,
        "{}: parse, write, parse changed the value",
        std::any::type_name::<T>()
    );
}

macro_rules! every {
    ($data:expr; $($t:ty),+ $(,)?) => {
        $( round_trip::<$t>($data); )+
    };
}

pub fn run(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(frame) = ServerFrame::parse(text)
    {
        match frame {
            ServerFrame::Event(event) => {
                // The fields the feed decodes a second time (chat/feed.rs).
                let _ = event.decode::<Post>("post");
                let _ = event.decode::<Reaction>("reaction");
                let _ = event.decode::<Vec<String>>("mentions");
                let _ = event.decode::<Channel>("channel");
                let _ = event.decode::<User>("user");
                let _ = event.str("channel_id");
            }
            ServerFrame::Response(response) => {
                assert_ne!(response.seq_reply, 0, "a response is told by its seq_reply");
            }
        }
    }
    every!(data;
        WebSocketEvent, WebSocketRequest, WebSocketResponse, Broadcast,
        Post, PostMetadata, PostList, NewPost, PostPatch, EphemeralPost, Reaction,
        SlackAttachment, AttachmentField, PostAction, PostActionIntegration,
        PostActionOption, PostActionIntegrationRequest, PostActionIntegrationResponse,
        PostActionResponse, Dialog, DialogElement, DialogOption, OpenDialogRequest,
        SubmitDialogRequest, SubmitDialogResponse,
        Command, ExecuteCommand, CommandResponse, AppError, FileInfo, FileUploadResponse,
        StatusOk, Team, TeamMember, Channel, ChannelMember,
        User, NewUser, LoginRequest, Bot, NewBot, UserAccessToken,
    );
}
