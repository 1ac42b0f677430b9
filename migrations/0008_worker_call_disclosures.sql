-- What a call that made a durable record disclosed (§3.4, §3.6): its
-- description, body, reference and whatever it superseded, as JSON, kept on
-- the call's own row so a trace shows it beside the call (§8.3).
ALTER TABLE worker_calls ADD COLUMN disclosure TEXT
    CHECK (disclosure IS NULL OR json_valid(disclosure));
